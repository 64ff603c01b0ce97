"""Writing reports, baselines and starter configurations to files, never through a checked repository's links.

A pull request controls every entry of the checkout: a report path there that
is a symbolic link (`ci-checks.sarif -> ~/.bashrc`), or that lies under a
linked folder, or a hard link to a file elsewhere, would have ci-checks write
outside the checkout. So inside a *protected* folder (each checked repository,
and each git checkout that holds one of them or the working directory):

- every folder of the path below the protected folder, and the file itself,
  must be no symbolic link, and the file a regular one or absent; anything else
  is an `OutputError` (exit code 2), before anything is written;
- the folders are opened one by one without following links (`O_NOFOLLOW`),
  and the content is written to a new file beside the target and renamed over
  it, so that a link put in place meanwhile, or a hard link, is replaced, never
  written through. Appending (the job summary) copies what is there first.

Outside protected folders a path is the caller's own: links there are
followed; a regular file is replaced the same way (a reader never sees half a
report), appended to in place, and a FIFO or a device (`/dev/stdout`) is
written to as it is.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ci_checks.core import source

_DIRECTORY_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
_MAX_LINKS = 40
"""Links followed outside protected folders before the path is taken for a loop (as the kernel's ELOOP)."""


class OutputError(Exception):
    """A file that cannot or must not be read or written here; the message names it and says why (exit code 2)."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def protected_folders(roots: Iterable[Path], working_directory: Path | None = None) -> list[Path]:
    """The real paths of the checked repositories, and of the git checkout that holds each of them and the working
    directory (the nearest folder holding `.git`): every entry under them may have been written by a pull request."""
    found: dict[Path, None] = {}
    starts = [Path(os.path.realpath(root)) for root in roots]
    for root in starts:
        found[root] = None
    if working_directory is not None:
        starts.append(Path(os.path.realpath(working_directory)))
    for start in starts:
        checkout = next((folder for folder in (start, *start.parents) if os.path.lexists(folder / ".git")), None)
        if checkout is not None:
            found[checkout] = None
    return list(found)


def check(path: Path, protected: Iterable[Path]) -> None:
    """Fail (`OutputError`) now when `path` could not be written later: a link or a special file where the
    protected folders allow none, or a folder that is not there."""
    _cannot_write(lambda: locate(path, protected))


def write(path: Path, content: str, protected: Iterable[Path], append: bool = False) -> None:
    """Write (or append) `content` as UTF-8 at `path` (see the module for what is refused)."""
    target = _cannot_write(lambda: locate(path, protected))
    data = content.encode("utf-8", "surrogateescape")
    try:
        if target.protected_by is not None:
            below = target.real.parent.relative_to(target.protected_by).parts
            _replace(target.protected_by, below, target.real.name, data, append)
        elif append or not target.regular_or_absent:
            with open(target.real, "ab" if append else "wb") as stream:  # noqa: PTH123
                stream.write(data)
        else:
            _replace(target.real.parent, (), target.real.name, data, append)
    except OSError as error:
        raise OutputError(path, f"cannot write output: {error.strerror or error}") from None


@dataclass(frozen=True)
class Place:
    """Where a path leads: its real path (no link in it), and the protected folder it lies in (None: none)."""

    real: Path
    protected_by: Path | None
    regular_or_absent: bool = True


def locate(path: Path, protected: Iterable[Path]) -> Place:
    """Where `path` leads, following links outside the protected folders and refusing any inside them
    (`OutputError`), as reading a baseline and writing a report must."""
    folders = list(protected)
    absolute = Path.cwd() / path  # links and `..` kept as written
    parts = list(absolute.parts[1:])
    folder = Path(absolute.anchor)
    links = 0
    while parts:
        name = parts.pop(0)
        if name in ("", "."):
            continue
        if name == "..":
            folder = folder.parent
            continue
        candidate = folder / name
        guard = _guard(candidate, folders)
        try:
            mode = os.lstat(candidate).st_mode
        except FileNotFoundError:
            if parts:
                raise OutputError(path, f"the folder {candidate} does not exist") from None
            return Place(candidate, guard)
        except OSError as error:
            raise OutputError(path, str(error.strerror)) from None
        if stat.S_ISLNK(mode):
            if guard is not None:
                raise OutputError(
                    path,
                    f"{candidate} is a symbolic link inside {guard}, which the checked code controls; "
                    "ci-checks follows no link there",
                )
            links += 1
            if links > _MAX_LINKS:
                raise OutputError(path, "too many levels of symbolic links")
            target = candidate.readlink()
            parts = [*(target.parts[1:] if target.is_absolute() else target.parts), *parts]
            folder = Path(target.anchor) if target.is_absolute() else folder
            continue
        if parts:
            if not stat.S_ISDIR(mode):
                raise OutputError(path, f"{candidate} is not a folder")
            folder = candidate
            continue
        if guard is not None and not stat.S_ISREG(mode):
            raise OutputError(
                path,
                f"{candidate} is {source.kind_of_mode(mode)} inside {guard}, which the checked code "
                "controls; ci-checks reads and writes only regular files there",
            )
        return Place(candidate, guard, stat.S_ISREG(mode))
    raise OutputError(path, "not a file name")


def _cannot_write(find: Callable[[], Place]) -> Place:
    try:
        return find()
    except OutputError as error:
        raise OutputError(error.path, f"cannot write output: {error.reason}") from None


def _guard(path: Path, protected: list[Path]) -> Path | None:
    """The protected folder a real path lies strictly under, if any (the innermost)."""
    inside = [folder for folder in protected if folder in path.parents]
    return max(inside, key=lambda folder: len(folder.parts)) if inside else None


def _replace(top: Path, below: tuple[str, ...], name: str, data: bytes, append: bool) -> None:
    """Write `name` beside itself and rename it over, in the folder `below` the real folder `top`, reached
    without following links."""
    with _opened_folder(top, below) as folder:
        if append:
            data = _existing(folder, name) + data
        temporary = f".{name}.{secrets.token_hex(6)}.tmp"
        descriptor = os.open(temporary, _NEW_FILE_FLAGS, 0o666, dir_fd=folder)
        try:
            with os.fdopen(descriptor, "wb") as stream:
                stream.write(data)
            os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=folder)
            raise


@contextlib.contextmanager
def _opened_folder(top: Path, below: tuple[str, ...]) -> Iterator[int]:
    descriptor = os.open(top, _DIRECTORY_FLAGS & ~getattr(os, "O_NOFOLLOW", 0))
    try:
        for name in below:
            try:
                inner = os.open(name, _DIRECTORY_FLAGS, dir_fd=descriptor)
            except OSError as error:
                if error.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise OutputError(
                        top / name, "became a link or a file while ci-checks wrote; not written"
                    ) from None
                raise
            os.close(descriptor)
            descriptor = inner
        yield descriptor
    finally:
        os.close(descriptor)


def _existing(folder: int, name: str) -> bytes:
    """What a regular file holds now (nothing when there is none), read without following a link."""
    try:
        descriptor = os.open(name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK, dir_fd=folder)
    except FileNotFoundError:
        return b""
    with os.fdopen(descriptor, "rb") as stream:
        if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
            raise OutputError(Path(name), "not a regular file; not appended to")
        return stream.read()
