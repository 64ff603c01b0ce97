"""The processes of a run, found by parentage and by session in /proc, ended together, and what they
leave behind. No torch here.

A run's processes are found two ways, never by name:
- below a process: its children, theirs, and so on (the command-line harness is a child subreaper,
  so a process whose parent died is re-parented to it and stays below it);
- by session: every process that makes itself a session leader (torchrun's ranks, the crash
  test's writers) has its session id recorded in the run folder, and a live member of such a
  session that started after the run did, and whose environment names the run folder, belongs to
  the run, wherever it was re-parented. A session id is a pid: once the run is gone it may be an
  unrelated process's, which has no reason to name the run folder.

Where there is no /proc every list is empty: the harness targets Linux runners.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing.forkserver
import multiprocessing.process
import multiprocessing.resource_tracker
import multiprocessing.util
import os
import shutil
import signal
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_PROC = Path("/proc")
_SHARED_MEMORY = Path("/dev/shm")
_BOOT_ID = _PROC / "sys" / "kernel" / "random" / "boot_id"
_PR_SET_CHILD_SUBREAPER = 36
# Killing is repeated while processes are found: one may fork between the listing and the kill.
_KILL_ROUNDS = 20


@dataclass(frozen=True)
class Process:
    pid: int
    parent: int
    session: int
    started: int  # clock ticks after boot: with the boot, a pid's identity


def _read(pid: int | str) -> Process | None:
    try:
        stat = (_PROC / str(pid) / "stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    # After the command, which may contain spaces and parentheses: state ppid pgrp session ... field 22 starttime.
    fields = stat.rpartition(")")[2].split()
    if len(fields) < 20 or fields[0] in ("Z", "X"):
        return None
    return Process(int(pid), int(fields[1]), int(fields[3]), int(fields[19]))


def table() -> dict[int, Process]:
    """Every live process (zombies left out)."""
    found = {}
    for entry in _PROC.glob("[0-9]*"):
        process = _read(entry.name)
        if process is not None:
            found[process.pid] = process
    return found


def started(pid: int) -> int | None:
    """When `pid` started, in clock ticks after boot; None when it is not alive."""
    process = _read(pid)
    return None if process is None else process.started


def ticks_now() -> int:
    """Clock ticks after boot, now: a process that starts from here on has a start at least this."""
    try:
        seconds = float((_PROC / "uptime").read_text(encoding="utf-8").split()[0])
    except (OSError, ValueError, IndexError):
        return 0
    return int(seconds * os.sysconf("SC_CLK_TCK")) - 1


def boot_id() -> str:
    try:
        return _BOOT_ID.read_text(encoding="utf-8").strip()
    except OSError:
        return ""


def alive(pid: int, started_ticks: int, boot: str) -> bool:
    """Whether the process that was `pid`, started at `started_ticks` in boot `boot`, is still running."""
    return boot == boot_id() and started(pid) == started_ticks


def descendants(pid: int, processes: dict[int, Process] | None = None) -> list[int]:
    """Every live process below `pid`, children first."""
    children: dict[int, list[int]] = {}
    for process in (processes if processes is not None else table()).values():
        children.setdefault(process.parent, []).append(process.pid)
    found, frontier = [], [pid]
    while frontier:
        below = [child for parent in frontier for child in children.get(parent, ())]
        found += below
        frontier = below
    return found


def tree(pid: int) -> list[int]:
    """`pid`, while it is alive, and every live process below it."""
    processes = table()
    return ([pid] if pid in processes else []) + descendants(pid, processes)


def members(sessions: Iterable[int], since: int, processes: dict[int, Process] | None = None) -> list[int]:
    """The live members of `sessions` that started at or after `since` (clock ticks after boot): a session id is
    a pid, which may have been reused by an unrelated process since."""
    wanted = set(sessions)
    listed = processes if processes is not None else table()
    return [p.pid for p in listed.values() if p.session in wanted and p.started >= since and p.pid != os.getpid()]


def environment_variable(pid: int, name: str) -> str | None:
    """The value of `name` in the environment `pid` was started with (/proc/PID/environ, which its children
    inherit); None when it has none, or that cannot be read (another user's process, one that has exited)."""
    try:
        environment = (_PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return None
    prefix = name.encode() + b"="
    found = next((entry for entry in environment.split(b"\0") if entry.startswith(prefix)), None)
    return None if found is None else os.fsdecode(found.removeprefix(prefix))


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:  # a real-time signal, which has no name
        return f"signal {number}"


def killed_children(pid: int) -> list[tuple[int, int]]:
    """(pid, signal) of each child of `pid` that a signal killed and that `pid` has not collected yet (a zombie,
    whose /proc/PID/stat still holds its exit status, field 52, as waitpid reports it)."""
    found = []
    for entry in _PROC.glob("[0-9]*"):
        try:
            fields = (entry / "stat").read_text(encoding="utf-8", errors="replace").rpartition(")")[2].split()
        except OSError:
            continue
        if len(fields) < 50 or fields[0] != "Z" or int(fields[1]) != pid:
            continue
        status = int(fields[49])
        if os.WIFSIGNALED(status):
            found.append((int(entry.name), os.WTERMSIG(status)))
    return found


def kill(pids: Iterable[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def end(find: Callable[[], list[int]]) -> list[int]:
    """SIGKILL what `find` lists, again until it lists nothing; every pid that was killed."""
    killed: list[int] = []
    for _ in range(_KILL_ROUNDS):
        found = [pid for pid in find() if pid != os.getpid()]
        if not found:
            break
        kill(found)
        killed += found
    return sorted(set(killed))


def reap_children(within_s: float) -> None:
    """Collect the exit status of every child of this process that has ended, waiting up to `within_s` for those
    killed a moment ago, so that none stays a zombie. Only for a process all of whose children are its
    own business (the command-line harness, a subreaper): it collects any child."""
    until = time.monotonic() + within_s
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            if time.monotonic() >= until or (not descendants(os.getpid()) and not _zombie_children()):
                return
            time.sleep(0.02)


def _zombie_children() -> bool:
    for entry in _PROC.glob("[0-9]*"):
        try:
            fields = (entry / "stat").read_text(encoding="utf-8", errors="replace").rpartition(")")[2].split()
        except OSError:
            continue
        if fields[:1] == ["Z"] and int(fields[1]) == os.getpid():
            return True
    return False


def become_subreaper() -> bool:
    """Make this process the one that adopts every orphan below it (Linux's PR_SET_CHILD_SUBREAPER), so that a
    process whose parent died is still found below it. False where the system does not offer it."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def remove_shared_memory(pids: Iterable[int]) -> None:
    """torch names shared memory `/dev/shm/torch_PID_...` and unlinks it when done with it, which a
    killed process never is; on a long-lived runner those files would pile up."""
    for pid in set(pids):
        for leftover in _SHARED_MEMORY.glob(f"torch_{pid}_*"):
            leftover.unlink(missing_ok=True)


def _multiprocessing_internal(module: object, name: str) -> Any:
    """multiprocessing keeps its per-program helpers in private globals; there is no public way to stop them."""
    return getattr(module, name)


@dataclass(frozen=True)
class Helpers:
    """The helpers multiprocessing starts once per program and keeps until it exits: which were running."""

    forkserver: bool
    resource_tracker: bool
    temp_dir: str | None  # its pymp-* folder

    @classmethod
    def now(cls) -> Helpers:
        forkserver = _multiprocessing_internal(multiprocessing.forkserver, "_forkserver")
        tracker = _multiprocessing_internal(multiprocessing.resource_tracker, "_resource_tracker")
        config = _multiprocessing_internal(multiprocessing.process.current_process(), "_config")
        return cls(forkserver._forkserver_pid is not None, tracker._pid is not None, config.get("tempdir"))

    def stop_since(self) -> None:
        """Stop those that were started since this snapshot: a run in a process that lives on (the Python API)
        must leave no process and no pymp-* folder behind. Call it after every process that uses them
        (the forkserver's children, spawned helpers) has ended."""
        now = Helpers.now()
        if now.forkserver and not self.forkserver:
            _multiprocessing_internal(multiprocessing.forkserver, "_forkserver")._stop()
        if now.resource_tracker and not self.resource_tracker:
            _multiprocessing_internal(multiprocessing.resource_tracker, "_resource_tracker")._stop()
        if now.temp_dir and now.temp_dir != self.temp_dir:
            # multiprocessing removes it when the program exits, through a finalizer that runs once.
            remove = _multiprocessing_internal(multiprocessing.util, "_remove_temp_dir")
            for finalizer in list(_multiprocessing_internal(multiprocessing.util, "_finalizer_registry").values()):
                if getattr(finalizer, "_callback", None) is remove:
                    finalizer()
            shutil.rmtree(now.temp_dir, ignore_errors=True)
            _multiprocessing_internal(multiprocessing.process.current_process(), "_config")["tempdir"] = self.temp_dir
