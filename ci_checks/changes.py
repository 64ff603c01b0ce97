"""`--new-since REF`: the lines a change touched, so that only findings on them are reported.

Each file is compared with its content at REF, read from the git objects as
`--config-ref` reads configuration (no hook, no configuration of the checked
repository runs); a file that did not exist at REF is new on every line. A
removed line counts as a change of the line that now stands where it was.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from ci_checks.backends.names import LINTER_FAILED
from ci_checks.config_source import GitRef
from ci_checks.diagnostics import Diagnostic
from ci_checks.repository import Repository
from ci_checks.source import SourceFile


def changed_lines(before: str, after: str) -> set[int]:
    """The 1-based lines of `after` that differ from `before`."""
    old, new = before.splitlines(), after.splitlines()
    changed: set[int] = set()
    for tag, _, _, start, end in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag in ("replace", "insert"):
            changed.update(range(start + 1, end + 1))
        elif tag == "delete":
            changed.add(start + 1)
    return changed


def new_since(
    repository: Repository, ref: str, diagnostics: Iterable[Diagnostic], sources: dict[str, SourceFile]
) -> list[Diagnostic]:
    """The findings on lines changed since `ref` (ConfigSourceError when `ref` names no commit)."""
    commit = GitRef(repository.root, ref)
    try:
        _ = commit.commit  # a bad ref is an error before any finding is judged
        lines: dict[str, set[int] | None] = {}
        kept = []
        for diagnostic in diagnostics:
            path = diagnostic.span.path
            if path not in lines:
                lines[path] = _changed(commit, path, sources.get(path))
            touched = lines[path]
            span = diagnostic.span
            if (
                touched is None
                or diagnostic.code == LINTER_FAILED
                or any(line in touched for line in range(span.line, span.end_line + 1))
            ):
                kept.append(diagnostic)
        return kept
    finally:
        commit.close()


def _changed(commit: GitRef, path: str, now: SourceFile | None) -> set[int] | None:
    """Lines changed in one file; None when the whole file is new (or cannot be compared)."""
    if now is None or now.problem is not None:
        return None
    then = commit.read(path)
    if then is None or then.problem is not None:
        return None
    return changed_lines(then.text, now.text)
