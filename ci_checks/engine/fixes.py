"""Applying the fixes findings carry: `--fix` writes them, `--diff` shows them.

A fix is a set of edits at exact spans, safe or unsafe. Edits are made to the
file's bytes as they are (a byte-order mark, CRLF line breaks, a missing final
newline and every other byte outside the edits stay), fixes whose edits
overlap are never applied in one pass (the next pass, after a fresh check,
takes the rest), and a fixed YAML file must still parse with no new problem.
zizmor's fixes carry no edits: zizmor applies them itself to a private copy of
the file, with only the audits of the selected findings enabled.

A file is written only when it is a regular file inside the repository, its
bytes have not changed since the check read them, and through a temporary file
in the same folder renamed over it, with its mode kept.
"""

from __future__ import annotations

import difflib
import os
import stat
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ci_checks.backends import tools
from ci_checks.core import source as sources
from ci_checks.core.diagnostics import Diagnostic, Edit, Fix
from ci_checks.core.repository import FileKind, Repository, kind_of
from ci_checks.syntax import yamlpos

ZIZMOR_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Change:
    """New bytes for one file of a repository, and the findings whose fixes made them."""

    relative: str
    before: bytes
    after: bytes
    fixed: tuple[Diagnostic, ...]

    def diff(self) -> str:
        old = self.before.decode().splitlines(keepends=True)  # both are UTF-8: nothing else is fixed
        new = self.after.decode().splitlines(keepends=True)
        lines = difflib.unified_diff(old, new, f"a/{self.relative}", f"b/{self.relative}")
        return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def fixable(diagnostic: Diagnostic, unsafe: bool) -> Fix | None:
    fix = diagnostic.fix
    if fix is None or (not fix.safe and not unsafe):
        return None
    return fix


def plan(
    repository: Repository, diagnostics: Iterable[Diagnostic], unsafe: bool, zizmor: str | None = None
) -> list[Change]:
    """The changes the fixes of `diagnostics` make, one per file, each verified.

    Edits of ci-checks' own fixes are made first; a file whose findings have
    only zizmor's fixes left goes to one `zizmor --fix` run for all such files.
    """
    by_file: dict[str, list[Diagnostic]] = {}
    for diagnostic in diagnostics:
        if fixable(diagnostic, unsafe) is not None:
            by_file.setdefault(diagnostic.span.path, []).append(diagnostic)
    changes = []
    for_zizmor: dict[str, tuple[bytes, str, list[Diagnostic]]] = {}
    for relative, found in sorted(by_file.items()):
        path = _writable(repository, relative)
        if path is None:
            continue
        before = path.read_bytes()
        text = _decoded(before)
        if text is None:
            continue
        after, chosen = _edited(text, [d for d in found if d.fix is not None and d.fix.edits])
        if chosen:
            changes.append(_verified(relative, before, after.encode(), chosen))
        elif zizmor is not None:  # every fix left is a linter's, without edits: zizmor makes them
            for_zizmor[relative] = (before, text, found)
    if for_zizmor and zizmor is not None:
        rewritten = _zizmor_fixed(
            zizmor, {relative: text for relative, (_, text, _) in for_zizmor.items()}, for_zizmor, unsafe
        )
        for relative, (before, text, linter_fixes) in for_zizmor.items():
            fixed_text = rewritten.get(relative)
            if fixed_text is not None:
                changes.append(_verified(relative, before, _same_layout(text, fixed_text).encode(), linter_fixes))
    return [change for change in changes if change is not None]


def _edited(text: str, found: list[Diagnostic]) -> tuple[str, list[Diagnostic]]:
    """The text with the edits of as many fixes as do not overlap, in file order, and the findings they fix."""
    chosen: list[Diagnostic] = []
    taken: list[tuple[int, int]] = []
    edits: list[tuple[int, int, str]] = []
    positions = _Positions(text)
    for diagnostic in sorted(found, key=lambda d: d.sort_key()):
        assert diagnostic.fix is not None
        ranges = [
            (positions.offset(e.span.line, e.span.column), positions.offset(e.span.end_line, e.span.end_column))
            for e in diagnostic.fix.edits
        ]
        if any(_overlaps(r, t) for r in ranges for t in taken):
            continue
        taken.extend(ranges)
        edits.extend(
            (start, end, _with_newlines(edit, text))
            for (start, end), edit in zip(ranges, diagnostic.fix.edits, strict=True)
        )
        chosen.append(diagnostic)
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text, chosen


def _verified(relative: str, before: bytes, after: bytes, fixed: list[Diagnostic]) -> Change | None:
    if after == before or not _still_reads(relative, before, after):
        return None
    return Change(relative, before, after, tuple(fixed))


def _plain(text: str) -> str:
    """The text zizmor fixes: no byte-order mark (zizmor 1.33 fails on one) and `\\n` line breaks (it reads a
    file whose lines end at `\\r` as one line, and writes what it adds at the wrong indentation)."""
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def _same_layout(before: str, after: str) -> str:
    """zizmor's rewrite of the plain text, with the file's own line breaks, byte-order mark and (missing) final
    newline."""
    ending = "\r\n" if "\r\n" in before else "\r" if "\r" in before else "\n"
    body = after.replace("\n", ending)
    if not before.endswith(("\n", "\r")) and body.endswith(ending):
        body = body[: -len(ending)]
    return ("\ufeff" if before.startswith("\ufeff") else "") + body


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return (a[0] < b[1] and b[0] < a[1]) or a == b


def _with_newlines(edit: Edit, text: str) -> str:
    """The replacement with the file's own line breaks."""
    return edit.replacement.replace("\n", "\r\n") if "\r\n" in text else edit.replacement


def _decoded(data: bytes) -> str | None:
    try:
        return data.decode()
    except UnicodeDecodeError:
        return None


class _Positions:
    """From the 1-based line and column of a `SourceFile` (BOM dropped, line breaks normalised) to raw offsets."""

    def __init__(self, raw: str) -> None:
        self.raw = raw
        self.starts: list[int] = []
        start = 1 if raw.startswith("\ufeff") else 0
        self.starts.append(start)
        index = start
        while index < len(raw):
            char = raw[index]
            if char == "\r":
                index += 2 if raw.startswith("\r\n", index) else 1
                self.starts.append(index)
                continue
            if char in "\n\x85\u2028\u2029":
                self.starts.append(index + 1)
            index += 1

    def offset(self, line: int, column: int) -> int:
        start = self.starts[min(line, len(self.starts)) - 1]
        return min(start + column - 1, len(self.raw))


def _writable(repository: Repository, relative: str) -> Path | None:
    """The file, when it is a regular file inside the repository (never a link, a FIFO or a folder)."""
    path = repository.root / relative
    if repository.resolve(relative) is None:
        return None
    try:
        mode = path.lstat().st_mode
    except OSError:
        return None
    return path if stat.S_ISREG(mode) else None


def _still_reads(relative: str, before: bytes, after: bytes) -> bool:
    """A fixed YAML file parses as well as it did: no new syntax error, duplicate key or limit."""
    if kind_of(relative) not in (FileKind.WORKFLOW, FileKind.ACTION):
        return True
    old = yamlpos.parse(sources.decode(relative, before))
    new = yamlpos.parse(sources.decode(relative, after))
    old_problems = {issue.kind for issue in old.issues}
    return new.root is not None and all(issue.kind in old_problems for issue in new.issues)


def _zizmor_fixed(
    binary: str, texts: dict[str, str], fixes_of: dict[str, tuple[bytes, str, list[Diagnostic]]], unsafe: bool
) -> dict[str, str]:
    """The files after `zizmor --fix` on private plain copies, with only the audits of the findings to fix enabled."""
    audits = sorted({d.code.removeprefix("ZZ-") for _, _, found in fixes_of.values() for d in found})
    plain = {relative: _plain(text) for relative, text in texts.items()}
    with tempfile.TemporaryDirectory(prefix="ci-checks-fix-") as folder:
        copies = {}
        for relative, text in plain.items():
            copy = Path(folder, "repository", relative)
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_bytes(text.encode())
            copies[relative] = copy
        config = Path(folder) / "zizmor-only.yml"
        config.write_text(_only(audits), encoding="utf-8")
        argv = [binary, "--offline", "--no-progress", "--config", str(config), f"--fix={'all' if unsafe else 'safe'}"]
        try:
            tools.run([[*argv, "--", *map(str, copies.values())]], Path(folder), tools.TimeLimit(ZIZMOR_TIMEOUT_S))
        except (tools.BackendFailed, OSError):
            return {}
        rewritten = {relative: _decoded(copy.read_bytes()) for relative, copy in copies.items()}
        return {relative: text for relative, text in rewritten.items() if text is not None and text != plain[relative]}


def _only(audits: list[str]) -> str:
    """A zizmor configuration that disables every audit but these."""
    from ci_checks.core.linters import LINTERS

    disabled = sorted(set(LINTERS["zizmor"].checks) - set(audits))
    return "rules:\n" + "".join(f"  {audit}:\n    disable: true\n" for audit in disabled)


def write(repository: Repository, change: Change) -> bool:
    """Write one change atomically; False when the file changed since it was read (nothing is written then)."""
    path = _writable(repository, change.relative)
    if path is None or path.read_bytes() != change.before:
        return False
    mode = stat.S_IMODE(path.stat().st_mode)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(change.after)
        Path(temporary).chmod(mode)
        Path(temporary).replace(path)
    except OSError:
        Path(temporary).unlink(missing_ok=True)
        raise
    return True
