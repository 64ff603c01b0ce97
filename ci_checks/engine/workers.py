"""Several repositories checked side by side, one forked worker process each at a time.

Each worker runs exactly what the serial run does (`Runs.run_one`) and hands
back its outcome and notes. A repository whose check raised is missing from
the answer: the session checks it again itself, where the error is reported
as a serial run reports it. Fixing is never done in workers (its passes
rewrite files). An interrupt or SIGTERM ends the workers, whose own handlers
end their linters.
"""

from __future__ import annotations

import gc
import os
import signal
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from ci_checks.core.repository import Repository
from ci_checks.engine import interrupts
from ci_checks.engine.interrupts import Terminated
from ci_checks.engine.options import Options
from ci_checks.engine.outcome import Outcome, Request
from ci_checks.engine.runs import Runs

if TYPE_CHECKING:
    from multiprocessing.pool import AsyncResult

EXIT_TERMINATED = 128 + signal.SIGTERM


def in_workers(runs: Runs, groups: list[tuple[Repository, Request]]) -> tuple[dict[int, Outcome], set[int]]:
    """The outcomes of several repositories, by their index: kept runs reused here, the others checked side by
    side; and the indexes of those found to have no kept run."""
    options = runs.options
    if min(len(groups), options.jobs or usable_cpus()) < 2 or options.fix or options.diff or not hasattr(os, "fork"):
        return {}, set()
    checked: dict[int, Outcome] = {}
    if not options.no_cache and options.config_ref is None:  # else no run is kept: nothing to look for
        for index, (repository, request) in enumerate(groups):
            kept = runs.reused(repository, request)
            if kept is not None:
                checked[index] = kept
    left = [index for index in range(len(groups)) if index not in checked]
    workers = min(len(left), options.jobs or usable_cpus())
    if workers < 2:
        return checked, set(left)
    import multiprocessing

    # What every check imports, imported once here and shared, rather than once in each worker.
    from ci_checks.engine import check  # noqa: F401

    pool = multiprocessing.get_context("fork").Pool(workers, initializer=_quiet_worker)
    # The largest first, so that no worker is left with a large one while the others have finished.
    order = sorted(left, key=lambda index: -_workflow_bytes(groups[index][0].root))
    try:
        pending = {
            index: pool.apply_async(
                _check_in_worker, (options, groups[index][0].root, groups[index][1], dict(groups[index][0].documents))
            )
            for index in order
        }
        for index in left:
            interrupts.wait_for(_answered(pending[index]))
        answers = {index: pending[index].get() for index in left}
        pool.close()
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()
    for index, answer in answers.items():
        if answer is not None:
            checked[index], notes = answer
            runs.notes.extend(notes)
    return checked, set(left)


def _answered(result: AsyncResult[Any]) -> Callable[[float], bool]:
    """Whether a worker has answered, asked with a time limit (see `interrupts.wait_for`)."""

    def answered(slice_s: float) -> bool:
        result.wait(slice_s)
        return result.ready()

    return answered


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity, which a container or `taskset` may narrow)."""
    sched_getaffinity = getattr(os, "sched_getaffinity", None)
    return len(sched_getaffinity(0)) if sched_getaffinity is not None else os.cpu_count() or 1


def _workflow_bytes(root: Path) -> int:
    """How large a repository's workflows are (links not followed), as a guess at how long checking it takes."""
    total = 0
    for relative in Repository(root).workflows:
        with suppress(OSError):
            total += os.lstat(root / relative).st_size
    return total


_WORKER = {"checking": False}
"""Whether this worker is checking a repository (SIGTERM then unwinds the check) or waiting for one."""

_STARTED_AT: dict[str, int | None] = {"resident": None}
"""A worker's resident size when it started."""


def _quiet_worker() -> None:
    """A worker leaves interrupts to the parent, which ends it with SIGTERM: a check under way unwinds (its
    linters ended, its copies removed), then the worker exits without a word, as it does when idle."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _worker_terminate)
    gc.freeze()  # what the parent built is never garbage here: collections look only at what each check builds
    _STARTED_AT["resident"] = _resident_bytes()


def _worker_terminate(signum: int, frame: FrameType | None) -> None:
    if _WORKER["checking"]:
        raise Terminated
    os._exit(EXIT_TERMINATED)


def _check_in_worker(
    options: Options, root: Path, request: Request, documents: dict[str, bytes]
) -> tuple[Outcome, list[str]] | None:
    notes: list[str] = []
    _WORKER["checking"] = True
    try:
        # the parent found no kept run
        _, part = Runs(options, notes).run_one(Repository(root, documents=documents), request, reuse=False)
    except Terminated:
        os._exit(EXIT_TERMINATED)
    except Exception:  # checked again by the parent, which reports it
        return None
    finally:
        _WORKER["checking"] = False
        _collect_when_grown()
    return part, notes


GARBAGE_BYTES = 64 << 20
"""How much a worker may grow before the repositories it checked are collected.

A checked repository's models, YAML nodes and command trees hold cycles that
only a full collection frees, and one takes tens of milliseconds: a worker
collects when it has grown by this much since it started (or after every
repository where its size cannot be read), not after each repository.
"""


def _collect_when_grown() -> None:
    resident = _resident_bytes()
    if resident is None or resident - (_STARTED_AT["resident"] or 0) > GARBAGE_BYTES:
        gc.collect()


def _resident_bytes() -> int | None:
    """This process's resident size now (Linux), or None."""
    try:
        return int(Path("/proc/self/statm").read_bytes().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None
