"""Findings written down by hand: what a fixture must produce, decided by reading it, not by running ci-checks.

An expectation file (`err/X.expected` beside a golden, `corpus/<repository>.expected` beside a repository) is a
table, one finding a line: code, path, line, column, and why it is a finding. Lines starting with `#` are comments.
Paths are written as the text output prints them. Two findings of one code at one place are two lines.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple


class Finding(NamedTuple):
    code: str
    path: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: {self.code}"


def expected(path: Path) -> list[Finding]:
    """The findings an expectation file lists, sorted; each line must name a code, a place and a reason."""
    found = []
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not text.strip() or text.startswith("#"):
            continue
        fields = text.split(maxsplit=4)
        if len(fields) < 5 or not (fields[2].isdigit() and fields[3].isdigit()):
            raise ValueError(f"{path}:{number}: want `code path line column why`, got {text!r}")
        code, where, line, column, _ = fields
        found.append(Finding(code, where, int(line), int(column)))
    return sorted(found)


def printed(output: str) -> list[Finding]:
    """The findings of text output (each `path:line:col: CODE message` line), sorted."""
    found = []
    for text in output.splitlines():
        head, _, rest = text.partition(": ")
        where = head.rsplit(":", 2)
        if rest and len(where) == 3 and where[1].isdigit() and where[2].isdigit():
            found.append(Finding(rest.split(" ", 1)[0], where[0], int(where[1]), int(where[2])))
    return sorted(found)
