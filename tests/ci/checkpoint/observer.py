"""Runs a command and says what it left running: `python observer.py RESULT.json -- COMMAND...`.

The observer makes itself a child subreaper (Linux's PR_SET_CHILD_SUBREAPER), so that every process
the command starts, at any depth and whatever session it makes, is re-parented to the observer
when its parent dies instead of escaping to init; and it starts the command in a session of its
own. Once the command has exited, every process still below the observer, and every process still
in the command's session, was left behind by it: both are listed by pid and command line, then
killed. While the command runs, the pids below the observer are sampled, so that a test can look
for what they left in /dev/shm. Processes are found by parentage and by session, never by name.

RESULT.json.pid holds the command's pid as soon as it runs, for a test that signals it.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

_SAMPLE_S = 0.1


def _table() -> dict[int, tuple[int, int]]:
    """pid -> (parent, session) of every live process."""
    found = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            fields = (entry / "stat").read_text(encoding="utf-8", errors="replace").rpartition(")")[2].split()
        except OSError:
            continue
        if fields[0] not in ("Z", "X"):
            found[int(entry.name)] = (int(fields[1]), int(fields[3]))
    return found


def _below(pid: int, table: dict[int, tuple[int, int]]) -> set[int]:
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, (parent, _) in table.items() if parent in frontier} - found
        found |= frontier
    return found


def _command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def _reap() -> None:
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            return


def main() -> int:
    result = Path(sys.argv[1])
    command = sys.argv[sys.argv.index("--") + 1 :]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
        raise OSError(ctypes.get_errno(), "cannot become a child subreaper")
    begun = time.monotonic()
    child = subprocess.Popen(command, start_new_session=True)
    Path(f"{result}.pid").write_text(str(child.pid), encoding="utf-8")
    seen: set[int] = set()
    while child.poll() is None:
        seen |= _below(os.getpid(), _table())
        time.sleep(_SAMPLE_S)
    wall = time.monotonic() - begun
    time.sleep(0.2)  # a process killed a moment ago may still be on its way out
    table = _table()
    below = sorted(_below(os.getpid(), table))
    in_session = sorted(pid for pid, (_, session) in table.items() if session == child.pid)
    left = {pid: _command_line(pid) for pid in sorted(set(below) | set(in_session))}
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    time.sleep(0.2)
    _reap()
    report = {
        "code": child.returncode,
        "wall_s": wall,
        "left_below": [f"{pid} {left[pid]}" for pid in below],
        "left_in_session": [f"{pid} {left[pid]}" for pid in in_session],
        "pids_seen": sorted(seen),
    }
    result.write_text(json.dumps(report), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
