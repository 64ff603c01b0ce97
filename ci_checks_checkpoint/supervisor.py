"""`ci-checks checkpoint` itself: the process that owns a run. No torch here.

It removes what runs killed with SIGKILL left in the same place, makes the run folder, starts the
ranks (one directly, several through torchrun, `torch.distributed.run`, run by launcher.py), each
in a session of its own, and waits for them, for at most `--timeout`. However the wait ends (the
ranks finish or die, the timeout, SIGTERM, SIGINT) it ends every process of the run and removes
the folder; then, but for a signal, it makes the outcome from what the ranks wrote down, naming
the stage a timeout or a dead rank stopped the run in, and the signal that killed a rank.

It is a child subreaper (Linux's PR_SET_CHILD_SUBREAPER): a process of the run whose parent died
is re-parented to it rather than to init, so that everything the run started is still below it.
"""

from __future__ import annotations

import importlib.util
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TextIO

from ci_checks_checkpoint import facts, processes, report, runfolder
from ci_checks_checkpoint.options import (
    ACCELERATOR_SIZE_PER_RANK,
    BACKENDS,
    CPU_DEFAULT_SIZE,
    CRASH_SIZE_LIMIT,
    Deadline,
    Options,
    UsageError,
    default_run_timeout,
)
from ci_checks_checkpoint.runfolder import RankError, RunFolder, Stage

# After the deadline, the ranks stop at the next stage they would begin and write down where they were.
GRACE_S = 5.0
# After the ranks exit, the helpers they stopped (Megatron-Core's manager, multiprocessing's resource
# tracker) are given this long to exit by themselves before they are killed.
SETTLE_S = 2.0
_POLL_S = 0.05
_SIGNALS = (signal.SIGTERM, signal.SIGINT)
_VERSION_FIELD = re.compile(r"^(cuda|hip)\s*(?::[^=\n]*)?=\s*(.+?)\s*$", re.MULTILINE)


class Interrupted(Exception):
    """SIGTERM or SIGINT ended the run; every process of it was ended and its folder removed."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def visible_gpus() -> int:
    """The GPUs torch sees: 0 for a build of torch without CUDA or HIP, found from its version.py without
    importing torch; otherwise torch.cuda.device_count()."""
    try:
        spec = importlib.util.find_spec("torch")
        text = Path(spec.origin).with_name("version.py").read_text(encoding="utf-8") if spec and spec.origin else ""
    except (ImportError, ValueError, OSError):
        text = ""
    built_for = dict(_VERSION_FIELD.findall(text))
    if built_for and all(built_for.get(name, "None") == "None" for name in ("cuda", "hip")):
        return 0
    import torch

    return int(torch.cuda.device_count()) if torch.cuda.is_available() else 0


def human(size: int) -> str:
    return f"{size / (1 << 30):.1f} GiB" if size >= 1 << 30 else f"{size / (1 << 20):.1f} MiB"


@dataclass
class _Plan:
    """What the run is to do, decided before it starts."""

    options: Options
    parent: Path
    ranks: int
    gpus: int
    deadline: Deadline

    def platform(self) -> dict[str, object]:
        return facts.base_platform(self.options, self.parent, self.ranks, self.deadline.limit_s)


def plan(options: Options, begun: float) -> _Plan:
    """The ranks, the timeout and the folder of the run; UsageError for a combination that cannot run."""
    gpus = visible_gpus()
    ranks = options.nproc_per_node or max(gpus, 1)
    if gpus and ranks > gpus:
        raise UsageError(f"--nproc-per-node {ranks}: {gpus} GPU(s) are visible, one per rank")
    if gpus and options.reshard_ranks is not None and options.reshard_ranks > gpus:
        raise UsageError(f"--reshard-ranks {options.reshard_ranks}: {gpus} GPU(s) are visible, one per rank")
    largest = options.size or (ACCELERATOR_SIZE_PER_RANK * ranks if gpus else CPU_DEFAULT_SIZE)
    crash_size = options.crash_size or min(largest, CRASH_SIZE_LIMIT)
    backends = len(options.backends or BACKENDS)
    timeout = options.timeout_s or default_run_timeout(largest, backends, options.crash_test, crash_size)
    parent = options.workdir or Path(tempfile.gettempdir())
    return _Plan(options, parent, ranks, gpus, Deadline(begun + timeout, timeout))


def _too_big(plan: _Plan) -> str | None:
    """Why --size cannot fit on this machine (the disk under the run folder, the host's memory), or None. The
    crash test keeps two checkpoints of --crash-size: a disk that fills up then is reported where it does."""
    options = plan.options
    size = options.size or (None if plan.gpus else CPU_DEFAULT_SIZE)
    if size is None:  # on an accelerator the ranks choose what their memory allows
        return None
    free = facts.free_bytes(plan.parent)
    if free is not None and size > free:  # a checkpoint at a time, or the reference's files
        return f"--size {human(size)}: the run keeps a checkpoint of that size on disk, in {facts.where(plan.parent)}"
    available = facts.host_memory_available()
    if available is not None and size > available:
        return (
            f"--size {human(size)}: the ranks hold the state dict in host memory (generated, staged, loaded back), "
            f"and this host has {human(available)} available"
        )
    return None


def _launch_command(folder: RunFolder, ranks: int) -> list[str]:
    worker = ["-m", "ci_checks_checkpoint.worker", str(folder.path)]
    if ranks == 1:
        return [sys.executable, *worker]
    # torchrun, through a launcher that writes down which rank a signal killed
    launcher = ["-m", "ci_checks_checkpoint.launcher", str(folder.path)]
    return [sys.executable, *launcher, "--standalone", f"--nproc-per-node={ranks}", *worker]


@contextmanager
def _signals_noted() -> Iterator[list[int]]:
    """SIGTERM and SIGINT are noted, not acted on at once: the wait notices and ends the run."""
    received: list[int] = []

    def note(signum: int, frame: FrameType | None) -> None:
        received.append(signum)

    previous = {signum: signal.signal(signum, note) for signum in _SIGNALS}
    try:
        yield received
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _stage_text(stages: list[Stage], now: float) -> str:
    if not stages:
        return "start-up, before any rank began"
    if len({stage.what for stage in stages}) == 1:
        ranks = "every rank" if len(stages) > 1 else f"rank {stages[0].rank}"
        return f"{stages[0].what} ({ranks}, for {now - min(s.since for s in stages):.1f} s)"
    return "; ".join(f"rank {stage.rank}: {stage.what} (for {now - stage.since:.1f} s)" for stage in stages)


def _backend_of(stages: list[Stage]) -> str:
    return next((stage.backend for stage in stages if stage.backend), report.RUN)


def _exit_status(code: int) -> str:
    if code < 0:
        return f"was killed by {processes.signal_name(-code)}"
    return f"exited with code {code}"


@dataclass
class _Ending:
    code: int | None  # the launcher's exit code; None when it was ended
    timed_out: bool
    signum: int | None
    ended: int  # processes killed at the end


def _wait(child: subprocess.Popen[bytes], deadline: Deadline, received: list[int]) -> tuple[bool, int | None]:
    """(timed out, the signal received)."""
    while child.poll() is None:
        if received:
            return False, received[0]
        if time.time() >= deadline.at + GRACE_S:
            return True, None
        time.sleep(_POLL_S)
    return False, None


def _end_run(folder: RunFolder, child: subprocess.Popen[bytes] | None, since: int, settle: bool) -> int:
    """End every process of the run: below this process (orphans are re-parented here) and in the sessions the
    run recorded. Those that are exiting by themselves are given SETTLE_S first. How many were killed."""
    me = os.getpid()
    if child is not None and settle:
        child.wait()
        processes.reap_children(SETTLE_S)
    ended = processes.end(lambda: processes.descendants(me) + folder.processes(since))
    if child is not None:
        child.wait()
    processes.reap_children(SETTLE_S)
    processes.remove_shared_memory(ended)
    return len(ended)


def _launch(plan: _Plan, folder: RunFolder, err: TextIO) -> _Ending:
    environment = {**os.environ, "TMPDIR": str(folder.tmp), runfolder.ENVIRONMENT: str(folder.path)}
    processes.become_subreaper()
    since = processes.started(os.getpid()) or 0
    child = None
    timed_out, signum = False, None
    try:
        output = err.fileno() if hasattr(err, "fileno") else None
    except (OSError, ValueError):  # a stream without a descriptor (a test's StringIO)
        output = None
    with _signals_noted() as received:
        try:
            child = subprocess.Popen(
                _launch_command(folder, plan.ranks),
                env=environment,
                stdin=subprocess.DEVNULL,
                stdout=output,  # the ranks' output is diagnostics; stdout is the report's
                start_new_session=True,
            )
            (folder.path / "sessions" / str(child.pid)).touch()
            timed_out, signum = _wait(child, plan.deadline, received)
        finally:
            ended = _end_run(folder, child, since, settle=not (timed_out or signum or received))
            signum = signum or (received[0] if received else None)
    code = None if timed_out or signum else (child.returncode if child is not None else None)
    return _Ending(code, timed_out, signum, ended)


def _timed_out_row(deadline: Deadline, stages: list[Stage], ended: int) -> report.Result:
    where = _stage_text(stages, min(time.time(), deadline.at))
    return report.Result(
        _backend_of(stages),
        report.TIMEOUT,
        False,
        f"--timeout {deadline.limit_s:g} s reached during {where}; no process of the run is left ({ended} had to "
        "be killed)",
    )


@dataclass(frozen=True)
class Journal:
    """What the ranks wrote down in the run folder, read once every process of the run has ended."""

    stages: list[Stage]
    errors: list[RankError]
    platform: dict[str, object]
    results: list[report.Result]
    outcome: report.Outcome | None

    @classmethod
    def of(cls, folder: RunFolder) -> Journal:
        return cls(folder.stages(), folder.errors(), folder.platform(), folder.results(), folder.outcome())

    def timed_out(self, deadline: Deadline, ended: int, platform: dict[str, object]) -> report.Outcome:
        """The outcome of a run that reached its deadline: what was found until then, and the stage it was in."""
        outcome = report.Outcome(self.platform or platform, list(self.results))
        outcome.results.append(_timed_out_row(deadline, self.stages, ended))
        return outcome


# How much of what the ranks that outlived a dead one said goes into its row.
_AFTERMATH_CHARACTERS = 200


def _died_rows(died: list[RankError], survivors: list[RankError], stages: list[Stage]) -> list[report.Result]:
    """An `aborted` row for each rank a signal killed, in the stage it was in; what the ranks that outlived it
    then said (a peer's death breaks their collectives) is its consequence, said once, not an error of theirs."""
    stage_of = {stage.rank: stage for stage in stages}
    aftermath = "; ".join(f"rank {error.rank}: {error.message}"[:_AFTERMATH_CHARACTERS] for error in survivors)
    rows: list[report.Result] = []
    for error in died:
        stage = stage_of.get(error.rank)
        where = f"during {stage.what}" if stage is not None else "before it began"
        detail = f"rank {error.rank} {error.message} {where}, without a report"
        if aftermath and not rows:
            detail += f"; the other ranks then failed ({aftermath})"
        backend = stage.backend if stage is not None and stage.backend else _backend_of(stages)
        rows.append(report.Result(backend, report.ABORTED, False, detail))
    return rows


def _outcome(plan: _Plan, ending: _Ending, journal: Journal) -> report.Outcome:
    stages, errors = journal.stages, journal.errors
    usage = next((error for error in errors if error.kind == "usage"), None)
    if usage is not None:
        raise UsageError(usage.message)
    timed_out = ending.timed_out or any(error.kind == "timeout" for error in errors)
    if journal.outcome is not None and not timed_out:
        return journal.outcome
    if timed_out:
        return journal.timed_out(plan.deadline, ending.ended, plan.platform())
    outcome = report.Outcome(journal.platform or plan.platform(), list(journal.results))
    if plan.ranks == 1 and ending.code is not None and ending.code < 0:
        errors = [*errors, RankError(0, runfolder.DIED, _exit_status(ending.code), None)]
    died = [error for error in errors if error.kind == runfolder.DIED]
    if died:
        outcome.results += _died_rows(died, [error for error in errors if error.kind != runfolder.DIED], stages)
        return outcome
    for error in errors:
        where = f" during {error.stage}" if error.stage else ""
        outcome.environment_errors.append(f"rank {error.rank}{where}: {error.message}")
    if not errors:
        status = _exit_status(ending.code) if ending.code is not None else "was ended"
        launcher = "the rank" if plan.ranks == 1 else "torchrun (its summary is above)"
        outcome.results.append(
            report.Result(
                _backend_of(stages),
                report.ABORTED,
                False,
                f"{launcher} {status} without a report, during {_stage_text(stages, time.time())}",
            )
        )
    return outcome


def run(options: Options, err: TextIO, progress: bool, begun: float | None = None) -> report.Outcome:
    """Run and end the run; the outcome to report. Raises UsageError, or Interrupted after a signal."""
    the_plan = plan(options, begun if begun is not None else time.time())
    removed = runfolder.remove_left_behind(the_plan.parent)
    for path, ended in removed:
        err.write(f"ci-checks checkpoint: removed {path}, left by a killed run, and ended {ended} of its processes\n")
    cleanup = {"processes_ended": 0, "left_behind": [str(path) for path, _ in removed]}
    record = {
        "options": options.to_json(),
        "deadline": the_plan.deadline.at,
        "timeout_s": the_plan.deadline.limit_s,
        "progress": progress,
    }
    try:
        folder = RunFolder.create(the_plan.parent, record)
    except OSError as error:
        problem = f"cannot make the run folder in {facts.where(the_plan.parent)}: {error.strerror or error}"
        return report.Outcome(the_plan.platform(), [], [problem], cleanup)
    too_big = _too_big(the_plan)
    if too_big is not None:
        folder.remove()
        return report.Outcome(the_plan.platform(), [], [too_big], cleanup)
    try:
        ending = _launch(the_plan, folder, err)
        journal = Journal.of(folder)
    finally:
        folder.remove()
    if ending.signum is not None:
        name = signal.Signals(ending.signum).name
        err.write(f"ci-checks checkpoint: {name}: every process of the run ended, run folder removed\n")
        raise Interrupted(ending.signum)
    outcome = _outcome(the_plan, ending, journal)
    outcome.cleanup = {**cleanup, "processes_ended": ending.ended}
    return outcome
