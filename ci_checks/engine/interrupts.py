"""Interrupts (SIGINT) and SIGTERM while checking: the run unwinds, ending the linters it started and removing its
temporary folders, and the front-end says how it ended (the command line: exit codes 130 and 143)."""

from __future__ import annotations

import signal
from collections.abc import Iterator
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
