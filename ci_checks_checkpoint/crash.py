"""Crash consistency: SIGKILL real writers at random points while a previous checkpoint exists, then
load what they left with the library's own loader.

Writers are process groups of their own, as many ranks as the run has (under torchrun), started
from a fork server that has torch and DCP loaded, so that each kill costs a fork rather than an
import. Each writer makes itself a session leader and every session is killed, so helpers it
started (DCP's checkpoint process, Megatron-Core's forked writers) die with it. One verifier per
backend, a one-rank process of its own, loads every checkpoint whole, whatever the number of
ranks that saved it.

After each kill:
- the previous checkpoint must load bit-exact;
- the newest committed checkpoint must be the previous one, or the new one complete and bit-exact;
- the killed save's partial folder, loaded with the library's own loader, must fail with an error
  or be the new save complete and bit-exact: never other data without an error.

The in-place hazard (what the atomic commit prevents) is demonstrated too: a save over an
existing checkpoint directory, killed just before it would write its `.metadata`.
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import multiprocessing.connection
import os
import random
import shutil
import signal
import time
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from multiprocessing.context import ForkServerContext
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from torch.distributed.checkpoint.filesystem import FileSystemWriter
from torch.distributed.checkpoint.metadata import Metadata
from torch.distributed.checkpoint.state_dict_saver import save as dcp_save
from torch.distributed.checkpoint.storage import WriteResult

from ci_checks_checkpoint import commit, processes, project, report, runtime, saving
from ci_checks_checkpoint.backends import Backends
from ci_checks_checkpoint.options import DCP_SYNC, Deadline
from ci_checks_checkpoint.runfolder import RunFolder, RunTimedOut, Stages
from ci_checks_checkpoint.state import LiveState, TensorSpec, batches, layout, resharded

# What the fork server imports before it forks anything: nothing that initialises a GPU driver.
FORK_SERVER_PRELOAD = ("ci_checks_checkpoint.preload",)

_READY = "ready"
_COMMITTED = "committed"
_FAILED = "failed"
_BEFORE_METADATA = "before .metadata"
_BEFORE_COMMIT = "after .metadata but before commit"
_AFTER_COMMIT = "after commit"

# (loaded, problem) for one checkpoint: see saving.load_and_compare.
Loaded = tuple[bool, str | None]
Expected = Callable[[TensorSpec], Any]


class CrashTestError(Exception):
    def __init__(self, message: str, environment: str | None = None) -> None:
        super().__init__(message)
        self.environment = environment  # the file system was the reason: where, and why


@dataclass(frozen=True)
class Job:
    """What a writer or verifier process does; it is sent to the process, so plain data only (a setup of the
    Python API is a callable that pickles: a module's function, or a functools.partial of one)."""

    backend: str
    size: int
    tensors: int
    threads: int
    timeout_s: float  # of one save or one answer
    deadline: Deadline  # of the whole run
    area: Path  # the backend's folder: logs, process-group stores, warm-up folders
    run_folder: Path  # where a process that makes a session of its own records it
    platform: str | None = None
    imports: tuple[str, ...] = ()
    setups: tuple[project.Setup, ...] = ()
    stub_missing_imports: bool = False
    setup_may_raise: bool = False
    world_size: int = 1  # ranks of every writer group
    verifier_ranks: int = 1  # ranks that load each checkpoint again: each its part of every tensor
    root: Path = Path()  # where the checkpoints go
    name: str = ""
    seed: int = 0
    rank: int = 0
    in_place: bool = False  # the hazard demonstration: save over the committed `root/name`

    @property
    def log(self) -> Path:
        return self.area / "processes.log"

    @property
    def scratch(self) -> Path:
        """The folder of this save's warm-up; name and seed tell every save of a crash test apart."""
        return self.area / f"warm-up-{self.name}-{self.seed}"

    def group(self, rank: int, store: str) -> runtime.Group:
        return runtime.Group(rank, self.world_size, self.area / f"store-{store}")

    def layout(self) -> list[TensorSpec]:
        return layout(self.size, self.tensors, self.world_size, self.verifier_ranks)


def _start(job: Job, group: runtime.Group) -> Backends:
    # Output goes to a log: DCP's checkpoint process logs every request.
    log = os.open(job.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    # After the fork, as in training: the project's platform, modules and setups, then (on first use) Megatron-Core.
    project.emulate(job.platform, job.run_folder, project.project_packages(job.imports, job.setups))
    project.prepare(job.platform, job.imports, job.setups, job.stub_missing_imports, job.setup_may_raise)
    runtime.leave_torchrun()
    rt = runtime.start(job.deadline.remaining(), group)
    return Backends(rt, job.threads, job.timeout_s, job.deadline)


class _KilledBeforeMetadata(FileSystemWriter):
    """Only for the hazard demonstration: this process really receives SIGKILL at the moment
    DCP would write `.metadata`, after every data file has been written and fsynced; no
    random kill lands there reliably."""

    def finish(self, metadata: Metadata, results: list[list[WriteResult]]) -> None:
        os.kill(os.getpid(), signal.SIGKILL)


def _save_in_place(job: Job, saver: Backends, live: LiveState) -> None:
    with warnings.catch_warnings():  # DCP warns that it is overwriting a checkpoint: that is the point
        warnings.simplefilter("ignore")
        writer = _KilledBeforeMetadata(job.root / job.name, thread_count=job.threads, sync_files=True)
        dcp_save(saver.state_dict(DCP_SYNC, list(live.items())), storage_writer=writer)
    raise CrashTestError("the in-place save finished without writing its .metadata through finish()")


def _said_on_failure(body: Callable[[Job, Any], None]) -> Callable[[Job, Any], None]:
    """Run a writer or verifier so that whatever ends it early is sent to the test before it exits: the
    error in one line and, when the file system was the reason, where."""

    @functools.wraps(body)
    def run(job: Job, connection: Any) -> None:
        try:
            body(job, connection)
        except BaseException as failure:
            said = failure.environment if isinstance(failure, CrashTestError) else None
            problem = said or saving.environment_problem(failure, job.area)
            with contextlib.suppress(OSError):
                connection.send((_FAILED, saving.describe(failure), problem))
            raise

    return run


@_said_on_failure
def _writer(job: Job, connection: multiprocessing.connection.Connection) -> None:
    os.setsid()
    RunFolder(job.run_folder).record_session()
    saver = _start(job, job.group(job.rank, f"{job.name}-{job.seed}"))
    live = LiveState(job.layout(), job.seed, job.rank, job.world_size, saver.runtime.device)
    warmed = saving.warm_up(saver, job.backend, job.scratch)
    if warmed.error is not None:
        raise CrashTestError(f"warm-up save failed: {warmed.error}", warmed.environment)
    connection.send(_READY)
    if job.in_place:
        _save_in_place(job, saver, live)
    saved = saving.save_and_commit(saver, job.backend, live, job.root, job.name)
    if saved.error is not None:
        raise CrashTestError(saved.error, saved.environment)
    connection.send(_COMMITTED)
    saver.close()
    runtime.stop()


def _load_in_batches(
    saver: Backends, backend: str, specs: list[TensorSpec], directory: Path, expected: Expected, budget: int
) -> Loaded:
    """Load and compare a few tensors at a time, never holding more than `budget` bytes of them."""
    for batch in batches(specs, saver.runtime.world_size, budget):
        loaded, problem = saving.load_and_compare(saver, backend, batch, directory, expected)
        if not loaded or problem is not None:
            return loaded, problem
    return True, None


@_said_on_failure
def _verifier(job: Job, connection: multiprocessing.connection.Connection) -> None:
    ranks = job.verifier_ranks
    saver = _start(job, runtime.Group(job.rank, ranks, job.area / f"store-verifiers-{ranks}"))
    specs = job.layout()
    budget = sum(spec.local_nbytes(job.world_size) for spec in specs)  # what one saving rank held
    while (request := connection.recv()) is not None:
        backend, checkpoints = request
        found = [
            _load_in_batches(saver, backend, specs, directory, resharded(seed, job.world_size, job.rank, ranks), budget)
            for directory, seed in checkpoints
        ]
        connection.send(found)
    runtime.stop()


def fork_server(preload: tuple[str, ...] = FORK_SERVER_PRELOAD) -> ForkServerContext:
    """The context that forks writers and verifiers from a server that has torch and DCP loaded."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(preload))
    return context


def _log_tail(path: Path) -> str:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    return f" (last log line: {lines[-1]})" if lines else ""


def _kill_sessions(writers: list[BaseProcess]) -> None:
    """SIGKILL writers and every process of their sessions, and remove the shared memory they made."""
    # The writers are not yet reaped, so their session ids cannot have been reused.
    leaders = [process.pid for process in writers if process.pid is not None]
    since = min((processes.started(pid) or 0 for pid in leaders), default=0)
    killed = processes.end(functools.partial(processes.members, leaders, since))
    for process in writers:
        process.join()
    processes.remove_shared_memory(killed)


def _receive(process: BaseProcess, connection: Any, what: str, job: Job) -> Any:
    """The next answer of a writer or verifier: CrashTestError when it failed, died or said nothing in time."""
    limit = job.deadline.bound(job.timeout_s)
    try:
        if connection.poll(limit):
            answer = connection.recv()
            if isinstance(answer, tuple) and answer[:1] == (_FAILED,):
                _, message, problem = answer  # the file system as the reason, else the error itself
                raise CrashTestError(f"{what} failed: {problem or message}", problem)
            return answer
    except (EOFError, OSError):
        process.join(limit)
        raise CrashTestError(f"{what} exited with code {process.exitcode}{_log_tail(job.log)}") from None
    if job.deadline.expired():
        raise RunTimedOut(f"{what} gave no answer before the run's --timeout")
    raise CrashTestError(f"{what} gave no answer within {limit:.0f} s{_log_tail(job.log)}")


class Verifiers:
    """`base.verifier_ranks` processes, a process group of their own, that load checkpoints `base.world_size`
    ranks saved, each rank its part of every tensor (all of it on one rank), with the library's own loader,
    and compare it bit for bit. Started on first use; one group serves every backend."""

    def __init__(self, context: ForkServerContext, base: Job) -> None:
        self.context = context
        self.base = base
        self._started: list[tuple[BaseProcess, Any]] = []

    def verify(self, backend: str, checkpoints: list[tuple[Path, int]]) -> list[Loaded]:
        """(loaded, problem) for each (directory, seed): loaded by every rank, and the first problem found."""
        if not self._started:
            for rank in range(self.base.verifier_ranks):
                ours, theirs = self.context.Pipe(duplex=True)
                started = self.context.Process(target=_verifier, args=(replace(self.base, rank=rank), theirs))
                started.start()
                theirs.close()
                self._started.append((started, ours))
        for _, connection in self._started:
            connection.send((backend, checkpoints))
        ranks = len(self._started)
        answers: list[list[Loaded]] = [
            _receive(process, connection, "the verifier" + (f" rank {rank}" if ranks > 1 else ""), self.base)
            for rank, (process, connection) in enumerate(self._started)
        ]
        combined = []
        for found in zip(*answers, strict=True):
            problems = [(rank, problem) for rank, (_, problem) in enumerate(found) if problem is not None]
            problem = None
            if problems:
                rank, problem = problems[0]
                problem = problem if ranks == 1 else f"rank {rank}: {problem}"
            combined.append((all(loaded for loaded, _ in found), problem))
        return combined

    def close(self) -> None:
        for _, connection in self._started:
            with contextlib.suppress(OSError):
                connection.send(None)
        for process, connection in self._started:
            process.join(self.base.deadline.bound(self.base.timeout_s))
            if process.is_alive():
                process.kill()
                process.join()
            connection.close()
        self._started = []


class _Runner:
    """Starts writer groups, for one backend, and has them verified by `verifiers` (a verifier of its own by
    default; one verifier serves the crash tests of every backend of a run)."""

    def __init__(self, context: ForkServerContext, base: Job, verifiers: Verifiers | None = None) -> None:
        self.context = context
        self.base = base
        self.verifiers = verifiers or Verifiers(context, base)
        self._own_verifiers = verifiers is None

    def write(self, job: Job, kill_after_s: float | None) -> float:
        """Run a writer group; kill every session `kill_after_s` after all are ready, or let them
        finish. The seconds from ready to committed when they finish."""
        job.scratch.mkdir()
        writers = []
        try:
            for rank in range(job.world_size):
                receive, send = self.context.Pipe(duplex=False)
                process = self.context.Process(target=_writer, args=(replace(job, rank=rank), send))
                process.start()
                send.close()
                writers.append((process, receive))
            for rank, (process, receive) in enumerate(writers):
                _receive(process, receive, f"writer rank {rank}", job)
            ready = time.perf_counter()
            if kill_after_s is not None:
                time.sleep(kill_after_s)
                early = [(rank, p.exitcode) for rank, (p, _) in enumerate(writers) if not p.is_alive()]
                _kill_sessions([p for p, _ in writers])
                failed = [(rank, code) for rank, code in early if code != 0]
                if failed:  # it failed before the kill; after it, a rank may fail first on its peer's death
                    rank, code = failed[0]
                    process, receive = writers[rank]
                    if receive.poll(0):  # it said why
                        _receive(process, receive, f"writer rank {rank}", job)
                    raise CrashTestError(f"writer rank {rank} exited with code {code}{_log_tail(job.log)}")
                return kill_after_s
            for rank, (process, receive) in enumerate(writers):
                if _receive(process, receive, f"writer rank {rank}", job) != _COMMITTED:
                    raise CrashTestError(f"writer rank {rank} did not commit")
            return time.perf_counter() - ready
        finally:
            _kill_sessions([process for process, _ in writers if process.is_alive()])
            for process, receive in writers:
                process.join()
                receive.close()
            shutil.rmtree(job.scratch, ignore_errors=True)

    def verify(self, checkpoints: list[tuple[Path, int]]) -> list[Loaded]:
        return self.verifiers.verify(self.base.backend, checkpoints)

    def close(self) -> None:
        if self._own_verifiers:
            self.verifiers.close()


def _phase(root: Path, name: str) -> str:
    if (root / name).is_dir():
        return _AFTER_COMMIT
    if any((p / commit.METADATA).exists() for p in commit.partials(root)):
        return _BEFORE_COMMIT
    return _BEFORE_METADATA


@dataclass
class _Tally:
    kills: int
    previous_ok: int = 0
    newest_ok: int = 0
    partial_errors: int = 0  # partial folders whose load raised
    partial_complete: int = 0  # partial folders that loaded the new save bit-exact
    partial_wrong: int = 0  # partial folders that loaded other data without an error

    def judge_partial(self, outcome: Loaded) -> str | None:
        loaded, problem = outcome
        if not loaded:
            self.partial_errors += 1
            return None
        if problem is None:
            self.partial_complete += 1
            return None
        self.partial_wrong += 1
        return f"a partial folder loaded without an error but is not the new save: {problem}"

    @property
    def passed(self) -> bool:
        return self.previous_ok == self.kills and self.newest_ok == self.kills and self.partial_wrong == 0


def crash_test(
    base: Job, kills: int, seed: int, progress: report.Progress, stages: Stages, verifiers: Verifiers
) -> tuple[report.Result, str | None]:
    """`kills` writer groups of new checkpoints SIGKILLed at random points after a complete one, verified by
    `verifiers` (whole, on one rank); with the result, what the file system did wrong, if it was the reason
    the test could not run."""
    runner = _Runner(fork_server(), base, verifiers)
    previous = replace(base, name="ckpt-0000", seed=seed + 1)
    tally = _Tally(kills)
    phases: Counter[str] = Counter()
    failures: list[str] = []
    try:
        stages.enter(f"{base.backend} crash test: the complete save before the kills", base.backend)
        duration = runner.write(previous, kill_after_s=None)
        choose = random.Random(seed)
        for kill in range(1, kills + 1):
            stages.enter(f"{base.backend} crash test: SIGKILL {kill}/{kills}", base.backend)
            progress.show(f"{base.backend}: crash test, SIGKILL {kill}/{kills}")
            job = replace(base, name=f"ckpt-{kill:04d}", seed=seed + 1 + kill)
            runner.write(job, kill_after_s=choose.uniform(0, duration))
            phase = _phase(base.root, job.name)
            phases[phase] += 1
            newest = commit.committed(base.root)[-1]
            partial = commit.partials(base.root)
            checks = [(base.root / previous.name, previous.seed)]
            checks += [(newest, job.seed)] if newest.name == job.name else []
            found = runner.verify(checks + [(folder, job.seed) for folder in partial])
            previous_found, newest_found, partial_found = found[0], found[1 : len(checks)], found[len(checks) :]
            problems = [previous_found[1]] + [problem for _, problem in newest_found]
            tally.previous_ok += previous_found == (True, None)
            if newest.name == previous.name or newest_found == [(True, None)]:
                tally.newest_ok += 1
            elif newest.name != job.name:
                problems.append(f"unexpected checkpoint {newest.name}")
            problems += [tally.judge_partial(outcome) for outcome in partial_found]
            failures += [f"kill {kill} ({phase}): {p}" for p in problems if p is not None]
            for leftover in [*partial, *commit.committed(base.root)]:
                if leftover.name != previous.name:
                    shutil.rmtree(leftover)
    except CrashTestError as error:
        failed = report.Result(base.backend, report.CRASH, False, f"crash test could not run: {error}")
        return failed, error.environment
    finally:
        runner.close()
    where = "; ".join(f"{phases[p]} {p}" for p in (_BEFORE_METADATA, _BEFORE_COMMIT, _AFTER_COMMIT))
    partials = tally.partial_errors + tally.partial_complete + tally.partial_wrong
    detail = (
        f"{kills} SIGKILLs of {base.world_size}-rank writers at random points of a {duration:.2f} s save: "
        f"previous checkpoint bit-exact {tally.previous_ok}/{kills}, newest committed one valid "
        f"{tally.newest_ok}/{kills}; {partials} partial folder(s) loaded: {tally.partial_errors} failed with an "
        f"error, {tally.partial_complete} complete and bit-exact, {tally.partial_wrong} other data without an "
        f"error (killed: {where})"
    )
    if failures:
        detail += "; first failure: " + failures[0]
    return report.Result(base.backend, report.CRASH, tally.passed and not failures, detail), None


def in_place_hazard(base: Job, seed: int) -> tuple[report.Result, str | None]:
    """Demonstrate what an in-place save risks; the harness itself never saves in place."""
    old = replace(base, backend=DCP_SYNC, world_size=1, name="ckpt-in-place", seed=seed + 1)
    new = replace(old, seed=seed + 2, in_place=True)
    runner = _Runner(fork_server(), old)
    failed = "in-place hazard demonstration could not run"
    try:
        runner.write(old, kill_after_s=None)
        with contextlib.suppress(CrashTestError):  # the in-place writer is meant to die
            runner.write(new, kill_after_s=None)
        directory = base.root / old.name
        (_, as_old), (_, as_new) = runner.verify([(directory, old.seed), (directory, new.seed)])
    except CrashTestError as error:
        return report.Result(report.IN_PLACE, report.CRASH, False, f"{failed}: {error}"), error.environment
    finally:
        runner.close()
    prefix = "in-place hazard (the harness never saves in place): a save over a checkpoint, killed before its .metadata"
    if as_old is not None and as_new is None:
        detail = (
            f"{prefix}, left the old .metadata over the new data files; loading returned the new save's data "
            "with no error. Demonstrated."
        )
    else:
        detail = f"{prefix}: not reproduced (as old: {as_old or 'bit-exact'}; as new: {as_new or 'bit-exact'})"
    return report.Result(report.IN_PLACE, report.CRASH, True, detail), None
