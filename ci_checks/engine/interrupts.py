"""Interrupts (SIGINT) and SIGTERM while checking: the run unwinds, ending the linters it started and removing its
temporary folders, and the front-end says how it ended (the command line: exit codes 130 and 143)."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from types import FrameType

from ci_checks.backends import tools


class Terminated(BaseException):
    """SIGTERM, raised in the main thread as KeyboardInterrupt is for SIGINT."""


def terminate(signum: int, frame: FrameType | None) -> None:
    raise Terminated


@contextmanager
def unwinding() -> Iterator[None]:
    """While checking, SIGTERM unwinds the run instead of killing it on the spot (only the main thread can install
    a handler, and one installed by the caller is kept); a run unwound by either signal ends the linters at once."""
    installed = False
    with suppress(ValueError):  # not the main thread
        installed = signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
        if installed:
            signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    except (KeyboardInterrupt, Terminated):
        tools.stop_all()
        raise
    finally:
        if installed:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


SIGNAL_SLICE_S = 0.1
"""How long the main thread waits at a stretch for work done elsewhere before it looks for a signal."""


def wait_for(done: Callable[[float], bool]) -> None:
    """Wait until `done(timeout)` says the awaited work is done, in slices of `SIGNAL_SLICE_S`.

    The kernel hands a signal to any thread of the process. One handed to another thread sets Python's flag but
    cannot wake the main thread from a lock it waits on without a timeout; the handler, which runs only in the main
    thread, would wait as long as the work (a linter held for its whole time limit). Between two slices Python runs
    it, and the wait ends in KeyboardInterrupt or `Terminated`."""
    while not done(SIGNAL_SLICE_S):
        pass
