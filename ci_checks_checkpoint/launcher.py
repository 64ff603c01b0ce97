"""The ranks of a run of several: torchrun (`torch.distributed.run`), run in this process, started by
`ci-checks checkpoint` as `python -m ci_checks_checkpoint.launcher RUN_FOLDER TORCHRUN_ARGUMENTS...`,
never by hand.

torchrun says which rank a signal killed only in the summary it prints when a rank fails; here that is
also written down in the run folder, so that the report names the rank and the signal, not the error
the ranks that survived it met next (gloo's "Connection reset by peer").
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from ci_checks_checkpoint.processes import signal_name
from ci_checks_checkpoint.runfolder import DIED, RankError, RunFolder


def main(argv: Sequence[str] | None = None) -> int:
    """torchrun's exit code: 0 when every rank exited with 0, else 1."""
    named, *arguments = argv if argv is not None else sys.argv[1:]
    from torch.distributed import run as torchrun
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError

    try:
        torchrun.main(arguments)
    except ChildFailedError as failed:
        folder = RunFolder(Path(named))
        killed = {rank: failure for rank, failure in failed.failures.items() if failure.exitcode < 0}
        # torchrun ends the ranks that outlive a failed one with SIGTERM: a rank that died of it is named only
        # when no rank failed otherwise.
        if any(failure.exitcode != -signal.SIGTERM for failure in failed.failures.values()):
            killed = {rank: failure for rank, failure in killed.items() if failure.exitcode != -signal.SIGTERM}
        for rank, failure in sorted(killed.items()):
            died = f"was killed by {signal_name(-failure.exitcode)} (pid {failure.pid})"
            folder.add_error(RankError(rank, DIED, died, None))
        sys.stderr.write(str(failed) + "\n")  # the summary torchrun prints when it is not caught
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
