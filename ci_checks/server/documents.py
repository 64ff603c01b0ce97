"""Text documents as an editor holds them, and positions as the Language Server Protocol counts them.

An LSP position is a 0-based line and a 0-based offset into it counted in the
code units of the encoding client and server agreed on: UTF-16 unless the
client offers UTF-8 or UTF-32. Lines end at `\\n`, `\\r\\n` and `\\r` only, as
ci-checks ends them (`source`), so line N of an LSP position is line N + 1 of
a span. ci-checks' columns count characters (code points) of the text as read,
where a leading byte-order mark is dropped: a character beyond U+FFFF is one
column, two UTF-16 units and four UTF-8 bytes.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

_BREAK = re.compile(r"\r\n|\r|\n")
BOM = "\ufeff"
ENCODINGS = ("utf-16", "utf-8", "utf-32")


def units(text: str, encoding: str) -> int:
    """How many code units of `encoding` the text takes."""
    if encoding == "utf-32":
        return len(text)
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


def characters(line: str, count: int, encoding: str) -> int:
    """How many characters of `line` its first `count` code units hold: an offset inside a character (half a
    surrogate pair, part of a UTF-8 sequence) counts that character out; past the end is the end."""
    if encoding == "utf-32":
        return min(max(count, 0), len(line))
    taken = 0
    for index, char in enumerate(line):
        taken += units(char, encoding)
        if taken > count:
            return index
    return len(line)


@dataclass
class Document:
    """An open document: its text as the editor holds it (line breaks and byte-order mark as they are)."""

    uri: str
    text: str
    version: int | None = None
    encoding: str = "utf-16"
    _starts: list[int] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        self._index()

    def _index(self) -> None:
        self._starts = [0, *(match.end() for match in _BREAK.finditer(self.text))]

    @property
    def content(self) -> bytes:
        """The text as the bytes of a file that holds it (a lone surrogate is kept, and reads as invalid UTF-8)."""
        return self.text.encode("utf-8", "surrogatepass")

    def line(self, number: int) -> str:
        """Line `number` (0-based) without its line break; "" past the end."""
        if not 0 <= number < len(self._starts):
            return ""
        start = self._starts[number]
        end = self._starts[number + 1] if number + 1 < len(self._starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")

    @property
    def line_count(self) -> int:
        return len(self._starts)

    def offset(self, line: int, character: int) -> int:
        """The index into `text` of an LSP position; a position past a line's end is its end, past the last line
        the end of the text."""
        if line < 0:
            return 0
        if line >= len(self._starts):
            return len(self.text)
        return self._starts[line] + characters(self.line(line), character, self.encoding)

    def position(self, offset: int) -> tuple[int, int]:
        """The LSP position of an index into `text`."""
        offset = min(max(offset, 0), len(self.text))
        line = bisect.bisect_right(self._starts, offset) - 1
        start = self._starts[line]
        within = min(offset - start, len(self.line(line)))
        return line, units(self.text[start : start + within], self.encoding)

    def from_span(self, line: int, column: int) -> tuple[int, int]:
        """The LSP position of a span's 1-based line and column (characters of the text as read)."""
        if line < 1:
            return 0, 0
        if line > len(self._starts):
            last = len(self._starts) - 1
            return last, units(self.line(last), self.encoding)
        text = self.line(line - 1)
        skipped = 1 if line == 1 and text.startswith(BOM) else 0
        index = min(max(column - 1, 0) + skipped, len(text))
        return line - 1, units(text[:index], self.encoding)

    def to_span(self, line: int, character: int) -> tuple[int, int]:
        """The 1-based line and column (characters of the text as read) of an LSP position."""
        if line >= len(self._starts):
            last = len(self._starts) - 1
            line, character = last, units(self.line(last), self.encoding)
        line = max(line, 0)
        text = self.line(line)
        index = characters(text, character, self.encoding)
        skipped = 1 if line == 0 and text.startswith(BOM) else 0
        return line + 1, max(index - skipped, 0) + 1

    def apply(self, text: str, start: tuple[int, int] | None = None, end: tuple[int, int] | None = None) -> None:
        """An editor's change: the text between two LSP positions replaced, or the whole text without them."""
        if start is None or end is None:
            self.text = text
        else:
            first, last = self.offset(*start), self.offset(*end)
            first, last = min(first, last), max(first, last)
            self.text = self.text[:first] + text + self.text[last:]
        self._index()

    @property
    def newline(self) -> str:
        """The line break the document uses: what an inserted line ends with."""
        found = _BREAK.search(self.text)
        return found.group() if found is not None else "\n"
