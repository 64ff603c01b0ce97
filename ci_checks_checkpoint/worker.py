"""One rank of a run: `python -m ci_checks_checkpoint.worker RUN_FOLDER`, started by `ci-checks checkpoint`
(directly for one rank, through torchrun for several), never by hand.

The rank reads the run's options from the folder, runs, and writes down there the stages it enters
and (rank 0) what it finds; what ends it early is written there too, for the report. A rank whose
owner (the `ci-checks checkpoint` process) is gone, killed with SIGKILL, ends every process of the
run it can find and removes the folder, so that nothing of a killed run lives on for long.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import time
import traceback
from collections.abc import Sequence
from pathlib import Path

from ci_checks_checkpoint import processes, report
from ci_checks_checkpoint.options import Deadline, EnvironmentProblem, Options, UsageError
from ci_checks_checkpoint.runfolder import RankError, RunFolder, RunTimedOut, Stages

_OWNER_POLL_S = 0.5
EXIT_ENDED = 2  # what a rank that did not finish exits with; the run folder says why
# Held while an orphaned rank ends its run and removes the folder, and taken by the rank before it exits: the
# rank's own work fails as the folder goes, and its exit must not cut the removal short.
_ENDING = threading.Lock()


def _end_if_orphaned(folder: RunFolder) -> None:
    owner = folder.owner()
    while owner is not None and owner.alive:
        time.sleep(_OWNER_POLL_S)
    with _ENDING:
        since = owner.started if owner is not None else 0
        below = functools.partial(processes.descendants, os.getpid())
        ended = processes.end(lambda: below() + folder.processes(since))
        processes.remove_shared_memory([os.getpid(), *ended])
        folder.remove()
        os._exit(EXIT_ENDED)


def _kind(failure: BaseException, deadline: Deadline) -> str:
    # A collective times out with the run, and says so in words of its own.
    if isinstance(failure, RunTimedOut) or deadline.expired():
        return "timeout"
    if isinstance(failure, UsageError):
        return "usage"
    if isinstance(failure, EnvironmentProblem) or (isinstance(failure, OSError) and failure.filename is not None):
        return "environment"
    return "internal"


def describe_failure(failure: BaseException, folder: RunFolder) -> str:
    """What ended a run early, in one line: for a file system's error, the path, the file system and its space."""
    if isinstance(failure, OSError) and failure.filename is not None:
        from ci_checks_checkpoint import saving

        problem = saving.environment_problem(failure, folder.saves)
        return problem or f"{failure.strerror or failure}: {failure.filename}"
    if isinstance(failure, RunTimedOut | UsageError | EnvironmentProblem):
        return str(failure)
    return f"internal error: {type(failure).__name__}: {' '.join(str(failure).split())[:500]}"


def main(argv: Sequence[str] | None = None) -> int:
    """0 when the rank finished (its findings are in the run folder), else EXIT_ENDED (its error is)."""
    [named] = argv if argv is not None else sys.argv[1:]
    folder = RunFolder(Path(named))
    record = folder.options()
    options = Options.from_json(record["options"])
    rank = int(os.environ.get("RANK", "0"))
    folder.record_session()  # its parent made it a session leader: torchrun, or ci-checks checkpoint
    threading.Thread(target=_end_if_orphaned, args=(folder,), name="owner watch", daemon=True).start()
    stages = Stages(folder, rank, Deadline(record["deadline"], record["timeout_s"]))
    progress = report.Progress(sys.stderr, bool(record["progress"]) and rank == 0)
    try:
        from ci_checks_checkpoint import harness

        outcome = harness.run(options, stages, progress, options.setups)
        if outcome is not None:
            folder.write_outcome(outcome)
    except BaseException as failure:  # written down in the run folder, which the report is made from
        kind = _kind(failure, stages.deadline)
        if kind == "internal":  # a fault of the harness: where it happened goes with the diagnostics
            traceback.print_exc()
        folder.add_error(RankError(rank, kind, describe_failure(failure, folder), stages.current))
        return EXIT_ENDED
    return 0


if __name__ == "__main__":
    code = main()
    _ENDING.acquire()  # never released: this process exits now, or the owner watch ends it
    if code != 0:
        # Whatever it left running (a writer thread blocked in a write) must not keep it from exiting:
        # the owner ends every process of the run.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
