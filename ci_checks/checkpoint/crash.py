"""Crash consistency: SIGKILL a real writer at random points while a previous checkpoint exists.

Writers and verifiers are separate one-rank processes started from a fork server that has
torch, DCP and Megatron-Core loaded, so that each kill costs a fork rather than an import. A
writer makes itself a session leader and the whole session is killed, so helpers it started
(DCP's checkpoint process, Megatron-Core's forked writers) die with it.

After each kill: the previous checkpoint must load bit-exact, and the newest committed
checkpoint must be either the previous one or the new one, complete and bit-exact: a partial
save is never taken for a checkpoint.

The in-place hazard (what the atomic commit prevents) is demonstrated too: a save over an
existing checkpoint directory, killed just before it would write its `.metadata`.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.connection
import os
import random
import shutil
import signal
import time
import warnings
from collections import Counter
from dataclasses import dataclass, replace
from multiprocessing.context import ForkServerContext
from pathlib import Path
from typing import Any

from torch.distributed.checkpoint.filesystem import FileSystemWriter
from torch.distributed.checkpoint.metadata import Metadata
from torch.distributed.checkpoint.state_dict_saver import save as dcp_save
from torch.distributed.checkpoint.storage import WriteResult

from ci_checks.checkpoint import commit, report, runtime, saving
from ci_checks.checkpoint.backends import Backends
from ci_checks.checkpoint.options import DCP_SYNC
from ci_checks.checkpoint.state import LiveState, TensorSpec, first_difference, layout

_READY = "ready"
_COMMITTED = "committed"
_BEFORE_METADATA = "before .metadata"
_BEFORE_COMMIT = "after .metadata but before commit"
_AFTER_COMMIT = "after commit"


class CrashTestError(Exception):
    pass


@dataclass(frozen=True)
class Job:
    """What a writer or verifier process does; it is sent to the process, so plain data only."""

    backend: str
    size: int
    tensors: int
    threads: int
    timeout_s: float
    log: Path
    root: Path = Path()
    name: str = ""
    seed: int = 0
    in_place: bool = False  # the hazard demonstration: save over the committed `root/name`
    checkpoints: tuple[tuple[Path, int], ...] = ()  # for a verifier: (directory, seed) pairs


def _start_single_rank(job: Job) -> tuple[Backends, list[TensorSpec]]:
    # A writer's output goes to a log: DCP's checkpoint process logs every request.
    log = os.open(job.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    # The crash test runs on rank 0 alone, so its device is local rank 0's as well.
    runtime.leave_torchrun()
    rt = runtime.start(job.timeout_s)
    return Backends(rt, job.threads, job.timeout_s), layout(job.size, job.tensors, 1)


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


def _writer(job: Job, connection: multiprocessing.connection.Connection) -> None:
    os.setsid()
    saver, specs = _start_single_rank(job)
    live = LiveState(specs, job.seed, 0, 1, saver.runtime.device)
    scratch = job.log.parent / f"warm-up-{os.getpid()}"
    scratch.mkdir()
    error = saving.warm_up(saver, job.backend, scratch)
    if error is not None:
        raise CrashTestError(error)
    shutil.rmtree(scratch)
    connection.send(_READY)
    if job.in_place:
        _save_in_place(job, saver, live)
    saved = saving.save_and_commit(saver, job.backend, live, job.root, job.name)
    if saved.error is not None:
        raise CrashTestError(saved.error)
    connection.send(_COMMITTED)
    runtime.stop()


def _verifier(job: Job, connection: multiprocessing.connection.Connection) -> None:
    saver, specs = _start_single_rank(job)
    findings: list[str | None] = []
    for directory, seed in job.checkpoints:
        try:
            loaded = saver.load(job.backend, specs, directory)
        except Exception as error:
            findings.append(f"{directory.name} does not load: {type(error).__name__}: {error}")
            continue
        difference = first_difference(specs, loaded, seed, 0, 1)
        findings.append(None if difference is None else f"{directory.name}: {difference}")
    connection.send(findings)
    runtime.stop()


def _context() -> ForkServerContext:
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["ci_checks.checkpoint.preload"])
    return context


def _log_tail(path: Path) -> str:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    return f" (last log line: {lines[-1]})" if lines else ""


def _session(leader: int) -> list[int]:
    """The processes of a session, from /proc; none where there is no /proc."""
    members = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        state, _, _, session = stat.rpartition(")")[2].split()[:4]  # after the command: state ppid pgrp session
        if int(session) == leader and state != "Z":
            members.append(int(entry.name))
    return members


def _kill_session(process: multiprocessing.process.BaseProcess) -> None:
    """SIGKILL the writer and every process it started, and remove the shared memory they made.

    torch names shared memory `/dev/shm/torch_PID_...` and unlinks it when done with it, which
    a killed process never is; on a long-lived runner those files would pile up.
    """
    # The writer is not yet reaped, so its process group id cannot have been reused.
    assert process.pid is not None
    members = _session(process.pid)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.join()
    for pid in members:
        for leftover in Path("/dev/shm").glob(f"torch_{pid}_*"):
            leftover.unlink(missing_ok=True)


class _Runner:
    def __init__(self, context: ForkServerContext, timeout_s: float) -> None:
        self.context = context
        self.timeout_s = timeout_s

    def _start(self, target: Any, job: Job) -> tuple[multiprocessing.process.BaseProcess, Any]:
        receive, send = self.context.Pipe(duplex=False)
        process = self.context.Process(target=target, args=(job, send))
        process.start()
        send.close()
        return process, receive

    def _receive(self, process: multiprocessing.process.BaseProcess, receive: Any, job: Job, what: str) -> Any:
        try:
            if receive.poll(self.timeout_s):
                return receive.recv()
        except EOFError:
            process.join()
            raise CrashTestError(f"{what} exited with code {process.exitcode}{_log_tail(job.log)}") from None
        raise CrashTestError(f"{what} gave no answer within {self.timeout_s:.0f} s{_log_tail(job.log)}")

    def write(self, job: Job, kill_after_s: float | None) -> float:
        """Run a writer; kill its session `kill_after_s` after it is ready, or let it finish.
        The seconds from ready to committed when it finishes."""
        process, receive = self._start(_writer, job)
        try:
            self._receive(process, receive, job, "the writer")
            ready = time.perf_counter()
            if kill_after_s is not None:
                time.sleep(kill_after_s)
                _kill_session(process)
                if process.exitcode not in (0, -signal.SIGKILL):  # it failed before the kill
                    raise CrashTestError(f"the writer exited with code {process.exitcode}{_log_tail(job.log)}")
                return kill_after_s
            if self._receive(process, receive, job, "the writer") != _COMMITTED:
                raise CrashTestError("the writer did not commit")
            return time.perf_counter() - ready
        finally:
            if process.is_alive():
                _kill_session(process)
            process.join()
            receive.close()

    def verify(self, job: Job) -> list[str | None]:
        process, receive = self._start(_verifier, job)
        try:
            findings: list[str | None] = self._receive(process, receive, job, "the verifier")
            return findings
        finally:
            if process.is_alive():
                process.kill()
            process.join()
            receive.close()


def _phase(root: Path, name: str) -> str:
    if (root / name).is_dir():
        return _AFTER_COMMIT
    if any((p / commit.METADATA).exists() for p in commit.partials(root)):
        return _BEFORE_COMMIT
    return _BEFORE_METADATA


def crash_test(base: Job, kills: int, seed: int, progress: report.Progress) -> report.Result:
    """`kills` writers of new checkpoints SIGKILLed at random points after a complete one."""
    runner = _Runner(_context(), base.timeout_s)
    previous = replace(base, name="ckpt-0000", seed=seed + 1)
    try:
        duration = runner.write(previous, kill_after_s=None)
        choose = random.Random(seed)
        previous_ok = partial_never_valid = 0
        phases: Counter[str] = Counter()
        failures: list[str] = []
        for kill in range(1, kills + 1):
            progress.show(f"{base.backend}: crash test, SIGKILL {kill}/{kills}")
            job = replace(base, name=f"ckpt-{kill:04d}", seed=seed + 1 + kill)
            runner.write(job, kill_after_s=choose.uniform(0, duration))
            phase = _phase(base.root, job.name)
            phases[phase] += 1
            newest = commit.committed(base.root)[-1]
            checks = [(base.root / previous.name, previous.seed)]
            if newest.name == job.name:
                checks.append((newest, job.seed))
            findings = runner.verify(replace(base, checkpoints=tuple(checks)))
            previous_ok += findings[0] is None
            new_ok = newest.name == previous.name or (newest.name == job.name and findings[-1] is None)
            partial_never_valid += new_ok
            failures += [f"kill {kill} ({phase}): {f}" for f in findings if f is not None]
            if not new_ok and newest.name not in (previous.name, job.name):
                failures.append(f"kill {kill} ({phase}): unexpected checkpoint {newest.name}")
            for leftover in [*commit.partials(base.root), *commit.committed(base.root)]:
                if leftover.name != previous.name:
                    shutil.rmtree(leftover)
    except CrashTestError as error:
        return report.Result(base.backend, report.CRASH, False, f"crash test could not run: {error}")
    where = "; ".join(f"{phases[p]} {p}" for p in (_BEFORE_METADATA, _BEFORE_COMMIT, _AFTER_COMMIT))
    detail = (
        f"{kills} SIGKILLs at random points of a {duration:.2f} s save: previous checkpoint bit-exact "
        f"{previous_ok}/{kills}, partial never valid {partial_never_valid}/{kills} (killed: {where})"
    )
    if failures:
        detail += "; first failure: " + failures[0]
    passed = previous_ok == kills and partial_never_valid == kills
    return report.Result(base.backend, report.CRASH, passed, detail)


def in_place_hazard(base: Job, seed: int) -> report.Result:
    """Demonstrate what an in-place save risks; the harness itself never saves in place."""
    runner = _Runner(_context(), base.timeout_s)
    old = replace(base, backend=DCP_SYNC, name="ckpt-in-place", seed=seed + 1)
    new = replace(old, seed=seed + 2, in_place=True)
    failed = "in-place hazard demonstration could not run"
    try:
        runner.write(old, kill_after_s=None)
    except CrashTestError as error:
        return report.Result(report.IN_PLACE, report.CRASH, False, f"{failed}: {error}")
    with contextlib.suppress(CrashTestError):  # the in-place writer is meant to die
        runner.write(new, kill_after_s=None)
    directory = base.root / old.name
    try:
        as_old, as_new = runner.verify(replace(old, checkpoints=((directory, old.seed), (directory, new.seed))))
    except CrashTestError as error:
        return report.Result(report.IN_PLACE, report.CRASH, False, f"{failed}: {error}")
    prefix = "in-place hazard (the harness never saves in place): a save over a checkpoint, killed before its .metadata"
    if as_old is not None and as_new is None:
        detail = (
            f"{prefix}, left the old .metadata over the new data files; loading returned the new save's data "
            "with no error. Demonstrated."
        )
    else:
        detail = f"{prefix}: not reproduced (as old: {as_old or 'bit-exact'}; as new: {as_new or 'bit-exact'})"
    return report.Result(report.IN_PLACE, report.CRASH, True, detail)
