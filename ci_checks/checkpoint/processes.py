"""The processes a run started, read from /proc, and what they leave behind. No torch here.

Where there is no /proc every list is empty: the harness targets Linux runners.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterable
from pathlib import Path

_SHARED_MEMORY = Path("/dev/shm")


def _table() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, session id) of every live process (zombies left out)."""
    table = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        # After the command, which may contain spaces and parentheses: state ppid pgrp session.
        state, parent, _, session = stat.rpartition(")")[2].split()[:4]
        if state != "Z":
            table[int(entry.name)] = (int(parent), int(session))
    return table


def descendants(pid: int) -> list[int]:
    """Every live process below `pid`, children first."""
    children: dict[int, list[int]] = {}
    for child, (parent, _) in _table().items():
        children.setdefault(parent, []).append(child)
    found, frontier = [], [pid]
    while frontier:
        below = [child for parent in frontier for child in children.get(parent, ())]
        found += below
        frontier = below
    return found


def session(leader: int) -> list[int]:
    """The live processes of a session."""
    return [pid for pid, (_, sid) in _table().items() if sid == leader]


def kill(pids: Iterable[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def kill_descendants(pid: int) -> list[int]:
    """SIGKILL everything below `pid`, again until nothing is left (a process may fork meanwhile);
    every pid that was killed, so that what they left can be removed."""
    killed: list[int] = []
    for _ in range(10):
        below = descendants(pid)
        if not below:
            break
        kill(below)
        killed += below
    return killed


def remove_shared_memory(pids: Iterable[int]) -> None:
    """torch names shared memory `/dev/shm/torch_PID_...` and unlinks it when done with it, which a
    killed process never is; on a long-lived runner those files would pile up."""
    for pid in set(pids):
        for leftover in _SHARED_MEMORY.glob(f"torch_{pid}_*"):
            leftover.unlink(missing_ok=True)
