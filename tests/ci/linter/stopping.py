"""A linter still running when a run is stopped: the stop tests wait for events, never for a time.

The real shellcheck ends when it likes, so a test that stops a run "while shellcheck runs" by watching the
process table passes or fails with the machine's load: on a busy machine the linter may be done before the test
looks, or two workers' linters may never run at the same moment. `HeldLinter` is a test double for that one
state, which the real binary cannot be made to hold: named by `$CI_CHECKS_SHELLCHECK`, as a user names a
binary, it answers the version question with the real shellcheck's answer; asked to check files, it says so
through a FIFO and then waits, on another FIFO that nothing ever writes, until it is killed. The test reads who
started (a blocking read; the limit only turns a hang into a failure) and stops the run. Everything the run does
then, ending its workers and linters and removing its copies, is real, and the test waits for each process it
saw to end (a pidfd becomes readable when its process exits).
"""

from __future__ import annotations

import contextlib
import os
import select
import shlex
import shutil
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

HANG = 300.0
"""Seconds after which a wait for a run to start a linter counts as a hang: a guard, never the thing tested."""
KILLED = 60.0
"""Seconds after which a process sent SIGKILL that has not ended counts as never sent it."""


@dataclass
class HeldLinter:
    folder: Path
    processes: dict[int, int] = field(default_factory=dict)  # pid -> pidfd, of the linters and their parents
    _announcements: int = -1

    def __post_init__(self) -> None:
        self.folder.mkdir()
        started, held, script = self.folder / "started", self.folder / "held", self.folder / "shellcheck"
        os.mkfifo(started)
        os.mkfifo(held)
        real = shutil.which("shellcheck")
        assert real is not None, "the linters extra provides shellcheck"
        script.write_text(
            "#!/bin/sh\n"
            f'case "$1" in --version|-V) exec {shlex.quote(real)} "$@" ;; esac\n'
            f'echo "$$ $PPID" > {shlex.quote(str(started))}\n'
            f"read -r _ < {shlex.quote(str(held))}\n",
            encoding="utf-8",
        )
        script.chmod(0o755)
        # Opened for reading and writing, the FIFO never blocks an announcement and never reads as closed.
        self._announcements = os.open(started, os.O_RDWR)

    @property
    def environment(self) -> dict[str, str]:
        return {**os.environ, "CI_CHECKS_SHELLCHECK": str(self.folder / "shellcheck")}

    def started(self, run: subprocess.Popen[str], workers: int = 1) -> tuple[set[int], set[int]]:
        """Wait until linters of `workers` different processes of the run have started; their pids, and those
        processes'. A run that ends before that fails the test with what it printed."""
        linters: dict[int, int] = {}
        buffered = b""
        ended = os.pidfd_open(run.pid)
        try:
            while len(set(linters.values())) < workers:
                readable, _, _ = select.select([self._announcements, ended], [], [], HANG)
                if ended in readable and self._announcements not in readable:
                    out, err = run.communicate()
                    raise AssertionError(f"the run ended ({run.returncode}) before its linters started: {out}{err}")
                assert readable, f"linters of {workers} processes did not start within {HANG:g} s: {linters}"
                buffered += os.read(self._announcements, 4096)
                *lines, buffered = buffered.split(b"\n")
                for line in lines:
                    pid, parent = map(int, line.split())
                    linters[pid] = parent
        finally:
            os.close(ended)
        for pid in {*linters, *linters.values()}:
            self.processes.setdefault(pid, os.pidfd_open(pid))
        return set(linters), set(linters.values())

    def ended(self, pids: set[int]) -> bool:
        """Whether each of these processes (seen by `started`) ends, waiting for them."""
        waiting = [self.processes[pid] for pid in pids]
        while waiting:
            readable, _, _ = select.select(waiting, [], [], KILLED)
            if not readable:
                return False
            waiting = [fd for fd in waiting if fd not in readable]
        return True

    def running(self, pids: set[int]) -> bool:
        """Whether every one of these processes (seen by `started`) is still running, now."""
        readable, _, _ = select.select([self.processes[pid] for pid in pids], [], [], 0)
        return not readable

    def __enter__(self) -> HeldLinter:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """End what the run left waiting (a linter a broken run did not kill waits forever), and close the FIFO."""
        for fd in self.processes.values():
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(fd, signal.SIGKILL)
            os.close(fd)
        os.close(self._announcements)
