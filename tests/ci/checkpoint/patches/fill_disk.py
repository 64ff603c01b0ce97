"""Setups (`--setup`) that fill the file system the run saves to, as another job on a shared runner would,
leaving 256 KiB free: no checkpoint fits any more, and the saves meet a real ENOSPC. The file goes
into the run folder, so the run removes it with everything else.

`fill` fills it in every rank; `fill_in_crash_writers` only in the crash test's processes, which the
fork server starts, so that the run gets as far as the crash test first.
"""

import errno
import os
from pathlib import Path

from ci_checks_checkpoint.runfolder import RunFolder

_LEAVE = 256 << 10
_CHUNK = 1 << 20


def fill() -> None:
    folder = RunFolder.of_this_process()
    assert folder is not None, "not a process of a run"
    filler = folder.saves / f"filler-{os.getpid()}"
    chunk = bytes(_CHUNK)
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        while True:
            try:
                os.write(fd, chunk)
            except OSError as error:
                if error.errno != errno.ENOSPC:
                    raise
                break
        stat = os.statvfs(filler)
        free = stat.f_bavail * stat.f_frsize
        os.ftruncate(fd, max(0, os.fstat(fd).st_size - max(0, _LEAVE - free)))
    finally:
        os.close(fd)


def fill_in_crash_writers() -> None:
    parent = Path(f"/proc/{os.getppid()}/cmdline").read_bytes()
    if b"forkserver" in parent:
        fill()
