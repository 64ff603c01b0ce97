"""SIGTERM and SIGINT end the run cleanly: writers killed, the run's folder and shared memory removed.

`timeout`, a cancelled CI job and torchrun send SIGTERM; a terminal sends SIGINT. Python runs
its signal handlers only in the main thread between bytecodes, which may be seconds away when
the main thread waits in a collective or in C++ code. So the signal is taken from a wake-up
file descriptor, which the interpreter's C-level handler writes at once, by a thread of its
own: once the main thread has stopped in the Python-level handler (or after two seconds, if it
is held in C++ code), it kills every process the run started, removes the run's folders and
the shared memory those processes made, and ends the process with 128 + the signal's number
(143, 130).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

from ci_checks.checkpoint import processes

SIGNALS = (signal.SIGTERM, signal.SIGINT)


class Cleanup:
    """What a signal must remove; folders are added as the run creates them."""

    def __init__(self) -> None:
        self.folders: list[Path] = []
        self._lock = threading.Lock()

    def add(self, folder: Path) -> None:
        with self._lock:
            self.folders.append(folder)

    def now(self, signum: int) -> None:
        killed = processes.kill_descendants(os.getpid())
        processes.remove_shared_memory([os.getpid(), *killed])
        with self._lock:
            folders = list(self.folders)
        for folder in folders:
            # Renamed first: threads of this process still writing find the path gone instead of
            # refilling the folder while it is removed.
            doomed = folder.with_name(folder.name + ".removing")
            with contextlib.suppress(OSError):
                folder.rename(doomed)
                folder = doomed
            shutil.rmtree(folder, ignore_errors=True)
        name = signal.Signals(signum).name
        sys.stderr.write(f"ci-checks checkpoint: {name}: writers ended, run folder removed\n")
        sys.stderr.flush()


# Set once the main thread has stopped, so that it cannot create again what is being removed.
_parked = threading.Event()
# How long the watcher waits for that: the main thread may be inside C++ code (a collective, a
# write) and run no Python until it returns; what it does then dies with the process.
_PARK_WAIT_S = 2.0


def _park(signum: int, frame: FrameType | None) -> None:
    """The Python-level handler stops the main thread for good: the watcher ends the process."""
    _parked.set()
    while True:
        time.sleep(3600)


# The pid of the process whose signals are taken over, while they are.
_armed: set[int] = set()


def _forked_child() -> None:
    # A process forked from the run (Megatron-Core's writer) must not report its signals into the
    # parent's descriptor, nor ignore them.
    if _armed:
        _armed.clear()
        with contextlib.suppress(ValueError):
            signal.set_wakeup_fd(-1)
        for signum in SIGNALS:
            with contextlib.suppress(ValueError):
                signal.signal(signum, signal.SIG_DFL)


os.register_at_fork(after_in_child=_forked_child)


@contextlib.contextmanager
def cleaned_up_on_signal() -> Iterator[Cleanup]:
    """Outside the main thread signals cannot be taken over; the run then goes without."""
    cleanup = Cleanup()
    if threading.current_thread() is not threading.main_thread():
        yield cleanup
        return
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)

    def watch() -> None:
        # The interpreter writes every signal that has a Python handler here; only ours end the run.
        while received := os.read(read_end, 1):
            if received[0] in SIGNALS:
                _parked.wait(_PARK_WAIT_S)
                cleanup.now(received[0])
                os._exit(128 + received[0])

    previous = {signum: signal.signal(signum, _park) for signum in SIGNALS}
    previous_fd = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    _armed.add(os.getpid())
    watcher = threading.Thread(target=watch, name="ci-checks signal watcher", daemon=True)
    watcher.start()
    try:
        yield cleanup
    finally:
        _armed.clear()
        signal.set_wakeup_fd(previous_fd)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        os.close(write_end)  # the watcher reads end of file and returns
        watcher.join()
        os.close(read_end)
