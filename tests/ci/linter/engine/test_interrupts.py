"""A signal ends a run that waits for its linters, whichever thread of the process the kernel hands it to.

The kernel delivers a process's signal to any of its threads that does not
block it. Python's handler always runs in the main thread, but a signal taken
by another thread cannot wake the main thread from a lock it waits on: a run
waiting for a linter held for its whole time limit would only then stop.
`signal.pthread_kill` hands the signal to a chosen thread, so the case is made
for real rather than left to chance.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from ci_checks.backends import tools
from ci_checks.core.diagnostics import Diagnostic
from ci_checks.engine.check import _Linters

LINTER_S = 20.0
"""How long the stand-in linter runs unless it is ended: far longer than a stop takes."""


@pytest.fixture
def interruptible() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt, as in `ci-checks check`; linters may start again afterwards."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    tools.allow_runs()  # whatever a test before left
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        tools.allow_runs()


@pytest.mark.parametrize("stopping", ["interrupt", "terminate"])
def test_a_signal_taken_by_another_thread_stops_the_linters_at_once(
    interruptible: None, tmp_path: Path, stopping: str
) -> None:
    from ci_checks.engine.interrupts import Terminated, unwinding

    exits: list[int] = []
    started = tmp_path / "started"

    def linter() -> list[Diagnostic]:
        command = [sys.executable, "-c", f"import time; open({str(started)!r}, 'w'); time.sleep({LINTER_S})"]
        exits.extend(finished.returncode for finished in tools.run([command], tmp_path, tools.TimeLimit(60)))
        return []

    def signal_from_elsewhere() -> None:
        for _ in range(3000):  # once the linter runs (a stop must end it, not prevent it); at most 30 s
            if started.exists():
                break
            threading.Event().wait(0.01)
        number = signal.SIGINT if stopping == "interrupt" else signal.SIGTERM
        signal.pthread_kill(threading.get_ident(), number)  # this thread takes it, not the main one

    with unwinding(), pytest.raises(KeyboardInterrupt if stopping == "interrupt" else Terminated):
        running = _Linters(linter)
        threading.Thread(target=signal_from_elsewhere).start()
        running.result()
    assert exits == [-signal.SIGKILL]  # ended by the stop, not run to its end before the signal was seen
