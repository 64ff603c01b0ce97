"""Reading files safely: a size cap, UTF-8 (with or without BOM), normalised line breaks.

A file that cannot be used as text is not an exception: `SourceFile.problem`
says what is wrong and where, and rules turn that into a diagnostic.

Lines are split the same way for every kind of file, the way editors, Python
and GitHub count them: at `\n`, `\r\n` and `\r` (the last two become `\n`
when a file is read). YAML libraries also break lines at U+0085, U+2028 and
U+2029; positions they report are converted with `from_yaml_position`.
"""

from __future__ import annotations

import bisect
import enum
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from ci_checks.core.diagnostics import Span

DEFAULT_MAX_BYTES = 4 * 1024 * 1024
_SIZE = re.compile(r"(?P<number>[0-9]+) ?(?P<unit>[KMG]i?B|B)?\Z", re.IGNORECASE)
_UNITS = {"": 1, "B": 1, "KB": 1000, "MB": 1000**2, "GB": 1000**3, "KIB": 1 << 10, "MIB": 1 << 20, "GIB": 1 << 30}

# YAML libraries (libyaml, Go's yaml) break lines at these besides "\n"; only their reported positions count them.
_YAML_BREAK = re.compile("[\n\x85\u2028\u2029]")
_YAML_ONLY_BREAKS = ("\x85", "\u2028", "\u2029")
_UTF8_BOM = b"\xef\xbb\xbf"
_OTHER_BOMS = {
    b"\xff\xfe\x00\x00": "UTF-32",
    b"\x00\x00\xfe\xff": "UTF-32",
    b"\xff\xfe": "UTF-16",
    b"\xfe\xff": "UTF-16",
}


class ProblemKind(enum.Enum):
    TOO_LARGE = "too-large"
    BINARY = "binary"
    ENCODING = "encoding"
    UNREADABLE = "unreadable"


@dataclass(frozen=True, slots=True)
class SourceProblem:
    kind: ProblemKind
    message: str
    line: int = 1
    column: int = 1


@dataclass(eq=False)
class SourceFile:
    """The text of one file. `path` is repo-relative with forward slashes."""

    path: str
    text: str
    problem: SourceProblem | None = None

    @cached_property
    def line_starts(self) -> list[int]:
        starts = [0]
        text = self.text
        found = text.find("\n")
        while found >= 0:
            starts.append(found + 1)
            found = text.find("\n", found + 1)
        return starts

    @cached_property
    def _yaml_line_starts(self) -> list[int]:
        return [0] + [m.end() for m in _YAML_BREAK.finditer(self.text)]

    def from_yaml_position(self, line: int, column: int) -> tuple[int, int]:
        """Our (line, column) of a 1-based position counted by a YAML library, which also breaks at U+2028 & co."""
        if not any(char in self.text for char in _YAML_ONLY_BREAKS):
            return line, column
        starts = self._yaml_line_starts
        index = min(max(line, 1), len(starts)) - 1
        return self.position(min(starts[index] + max(column, 1) - 1, len(self.text)))

    @property
    def last_line(self) -> int:
        """The last line that exists: a final line break ends the last line rather than starting another."""
        count = len(self.line_starts)
        return count - 1 if count > 1 and self.text.endswith("\n") else count

    def clamp(self, span: Span) -> Span:
        """The span with each end moved, where it lies past a line's end or the file's, to the nearest place inside."""
        line, column = self._inside(span.line, span.column)
        end_line, end_column = self._inside(span.end_line, span.end_column)
        end_line, end_column = max((end_line, end_column), (line, column))
        if (line, column, end_line, end_column) == (span.line, span.column, span.end_line, span.end_column):
            return span
        return Span(span.path, line, column, end_line, end_column)

    def _inside(self, line: int, column: int) -> tuple[int, int]:
        """A 1-based position moved into the text: at most the last line, at most one column past its end."""
        last = self.last_line
        if line > last:
            return last, len(self.line_text(last)) + 1
        line = max(line, 1)
        return line, min(max(column, 1), len(self.line_text(line)) + 1)

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a character offset into `text`."""
        starts = self.line_starts
        index = bisect.bisect_right(starts, offset) - 1
        return index + 1, offset - starts[index] + 1

    def offset(self, line: int, column: int) -> int:
        """Character offset of a 1-based (line, column)."""
        return self.line_starts[line - 1] + column - 1

    def span(self, start: int, end: int) -> Span:
        """The span of the characters `start:end` of `text`."""
        line, column = self.position(start)
        end_line, end_column = self.position(max(end, start))
        return Span(self.path, line, column, end_line, end_column)

    def line_text(self, line: int) -> str:
        starts = self.line_starts
        if not 1 <= line <= len(starts):
            return ""
        start = starts[line - 1]
        end = starts[line] - 1 if line < len(starts) else len(self.text)
        return self.text[start:end]


class FileLocator:
    """Maps offsets in a text taken from a file (a shell script, a Dockerfile instruction) to spans in that file.

    `offsets[i]` is the file offset of the text's character i; without `offsets`
    the text is the file's own text from `base` on.
    """

    __slots__ = ("source", "offsets", "base")

    def __init__(self, source: SourceFile, offsets: Sequence[int] | None = None, base: int = 0) -> None:
        self.source = source
        self.offsets = offsets
        self.base = base

    def span(self, start: int, end: int) -> Span:
        if self.offsets is None:
            return self.source.span(self.base + start, self.base + end)
        if not self.offsets:
            return self.source.span(self.base, self.base)
        last = len(self.offsets) - 1
        first = self.offsets[min(start, last)]
        after = self.offsets[min(end, len(self.offsets)) - 1] + 1 if end > start else first
        return self.source.span(first, after)


def parse_size(text: str) -> int:
    """Bytes in `4MiB`, `512KiB`, `2MB` or `1000`; ValueError otherwise."""
    match = _SIZE.match(text.strip())
    if match is None or int(match.group("number")) <= 0:
        raise ValueError(f"{text!r} is not a size such as 4MiB, 512KiB or 1000000")
    return int(match.group("number")) * _UNITS[(match.group("unit") or "").upper()]


def decode(path: str, data: bytes) -> SourceFile:
    """Decode bytes into a `SourceFile`, or one with a problem that says why not."""
    nul = data.find(b"\x00")
    for bom, name in _OTHER_BOMS.items():
        if data.startswith(bom):
            return _failed(path, ProblemKind.ENCODING, f"file is {name}-encoded; only UTF-8 is supported")
    if nul >= 0:
        line, column = _byte_position(data, nul)
        return _failed(path, ProblemKind.BINARY, "binary file (contains a NUL byte)", line, column)
    if data.startswith(_UTF8_BOM):
        data = data[len(_UTF8_BOM) :]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line, column = _byte_position(data, error.start)
        byte = data[error.start]
        return _failed(
            path, ProblemKind.ENCODING, f"file is not valid UTF-8 (byte 0x{byte:02x} cannot be decoded)", line, column
        )
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return SourceFile(path, text)


def read(
    path: str, filename: str | os.PathLike[str], max_bytes: int = DEFAULT_MAX_BYTES, follow_links: bool = True
) -> SourceFile:
    """Read a regular file of at most `max_bytes` bytes without blocking on FIFOs or devices.

    Without `follow_links`, a file that became a symbolic link since it was looked at is not opened.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(filename, flags)
    except OSError as error:
        return _failed(path, ProblemKind.UNREADABLE, f"cannot open file: {error.strerror}")
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return _failed(path, ProblemKind.UNREADABLE, f"{kind_of_mode(info.st_mode)}, not a regular file; not read")
        if info.st_size > max_bytes:
            return _too_large(path, info.st_size, max_bytes)
        chunks: list[bytes] = []
        remaining = max_bytes + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    except OSError as error:
        return _failed(path, ProblemKind.UNREADABLE, f"cannot read file: {error.strerror}")
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > max_bytes:
        return _too_large(path, len(data), max_bytes)
    return decode(path, data)


def given(path: str, data: bytes, max_bytes: int = DEFAULT_MAX_BYTES) -> SourceFile:
    """A file's content given rather than read (an editor's, standard input's), read as `read` reads a file's."""
    if len(data) > max_bytes:
        return _too_large(path, len(data), max_bytes)
    return decode(path, data)


_UNDECODED = re.compile("[\udc80-\udcff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def printable(text: str) -> str:
    """A file name with each byte that is not UTF-8 (read by Python as a lone surrogate) written as `%XX`."""
    if not _SURROGATE.search(text):
        return text
    text = _UNDECODED.sub(lambda match: f"%{ord(match.group()) - 0xDC00:02X}", text)
    return _SURROGATE.sub("\ufffd", text)


def kind_of_mode(mode: int) -> str:
    """What a file that is not a regular one is, for messages."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


def format_size(size: int) -> str:
    for unit, factor in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= factor:
            return f"{size / factor:.1f} {unit}".replace(".0 ", " ")
    return f"{size} bytes"


def _too_large(path: str, size: int, max_bytes: int) -> SourceFile:
    message = (
        f"file is larger than the {format_size(max_bytes)} limit ({format_size(size)}); raise it with --max-file-size"
    )
    return _failed(path, ProblemKind.TOO_LARGE, message)


def _failed(path: str, kind: ProblemKind, message: str, line: int = 1, column: int = 1) -> SourceFile:
    return SourceFile(path, "", SourceProblem(kind, message, line, column))


def _byte_position(data: bytes, index: int) -> tuple[int, int]:
    before = data[:index].replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    line_start = before.rfind(b"\n") + 1
    column = len(before[line_start:].decode("utf-8", errors="replace")) + 1
    return before.count(b"\n") + 1, column
