"""`--new-since REF`: the findings a change brought, compared with its base commit REF.

A finding counts as new when either holds:

- it lies on a line the change touched: each file is compared with its
  content at REF (`line_diff`; a file that did not exist there is new on every
  line, and a removed line counts as a change of the line that now stands
  where it was; a link, a FIFO or a binary file, then or now, has no lines to
  compare, and the second test decides);
- the same check of REF's files does not report it: REF's files are written
  to a private folder from the git objects and checked with the same options
  and the same configuration, and the two sets of findings are compared as a
  baseline compares them (code, rule, file, and a fingerprint of the line's
  text, the span's text and the message), so a finding the change caused on a
  line it did not touch (a removed `permissions: {}`, a changed local action
  or policy input) is new.

A linter's failure (CC091) is always kept. When REF's files cannot be
checked (more than `MAX_FILES` files or `MAX_BYTES` of them, or git cannot
read the commit's objects), every finding is kept and a note says why:
reporting too much is safe, too little is not. git runs on the repository's
objects only, as `--config-ref` runs it: no hook and no configuration of the
checked repository runs, and nothing of REF's is run either.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from ci_checks.core.config_source import ConfigSourceError, GitRef, TreeEntry
from ci_checks.core.diagnostics import Diagnostic
from ci_checks.core.linters import LINTER_FAILED
from ci_checks.core.repository import Repository, walked
from ci_checks.core.source import SourceFile
from ci_checks.engine.outcome import Outcome, Request
from ci_checks.syntax.line_diff import Budget, changed_lines

MAX_FILES = 100_000
"""The most files of REF that are written out to be checked."""
MAX_BYTES = 256 << 20
"""The most bytes of REF's files that are written out to be checked."""
_LINK = "120000"
_SUBMODULE = "160000"


class BaseUnavailable(Exception):
    """REF's files cannot be checked; the message says why."""


def new_since(
    repository: Repository,
    ref: str,
    outcome: Outcome,
    request: Request,
    check_base: Callable[[Repository, Request], Outcome],
    max_bytes: int,
) -> tuple[list[Diagnostic], str | None]:
    """The findings of `outcome` that are new since `ref` (see the module), and a note when REF could not be
    checked. `check_base` checks the files of REF written out (with a `.git` marker) as the work tree was checked.

    ConfigSourceError when `ref` names no commit.
    """
    commit = GitRef(repository.root, ref, option="--new-since")
    try:
        _ = commit.commit  # a bad ref is an error before any finding is judged
        note = None
        try:
            absent = _absent_from_base(commit, outcome, request, check_base, max_bytes)
        except BaseUnavailable as unavailable:
            absent, note = None, f"--new-since {ref}: {unavailable}; every finding is reported"
        lines: dict[str, set[int] | None] = {}
        budget = Budget()
        kept = []
        for diagnostic in outcome.diagnostics:
            path = diagnostic.span.path
            if path not in lines:
                lines[path] = _changed(commit, path, outcome.sources.get(path), budget)
            if (
                absent is None
                or id(diagnostic) in absent
                or diagnostic.code == LINTER_FAILED
                or _on(lines[path], diagnostic)
            ):
                kept.append(diagnostic)
        return kept, note
    finally:
        commit.close()


def _on(touched: set[int] | None, diagnostic: Diagnostic) -> bool:
    span = diagnostic.span
    return touched is None or any(line in touched for line in range(span.line, span.end_line + 1))


def _changed(commit: GitRef, path: str, now: SourceFile | None, budget: Budget) -> set[int] | None:
    """Lines changed in one file; None when the whole file is new. A file that cannot be compared line by line
    (a link, a FIFO, a binary file, then or now) has none: the base's findings decide."""
    then = commit.read(path)
    if then is None:
        return None
    if now is None or now.problem is not None or then.problem is not None:
        return set()
    return changed_lines(then.text, now.text, budget)


def _absent_from_base(
    commit: GitRef,
    outcome: Outcome,
    request: Request,
    check_base: Callable[[Repository, Request], Outcome],
    max_bytes: int,
) -> set[int]:
    """The ids of the findings of `outcome` that the same check of the commit's files does not report."""
    from ci_checks.backends import tools
    from ci_checks.engine import baseline

    with tools.scratch_folder("base") as folder:
        root = folder / "repository"
        try:
            write_tree(commit, root, max_bytes, lambda relative: walked(relative) or relative in request.files)
        except ConfigSourceError as error:
            raise BaseUnavailable(str(error)) from None
        base_request = Request(folders=list(request.folders), files=list(request.files))
        base = check_base(Repository(root), base_request)
    accepted = baseline.entries(base.diagnostics, base.sources)
    comparison = baseline.compare(outcome.diagnostics, outcome.sources, accepted, lambda relative: False)
    return {id(diagnostic) for diagnostic in comparison.new}


def write_tree(commit: GitRef, root: Path, max_bytes: int, wanted: Callable[[str], bool]) -> None:
    """Write the files of the commit that `wanted` names under `root` (made here, with a `.git` marker).

    Files larger than `max_bytes` are written as sparse files of their size (they are reported as too large
    either way); links are written as links, submodules as empty folders. A path that would leave `root` (a
    tree git itself would refuse) is passed over. BaseUnavailable past `MAX_FILES` or `MAX_BYTES`.
    """
    entries = [entry for entry in commit.tree() if _safe(entry.path) and wanted(entry.path)]
    if len(entries) > MAX_FILES:
        raise BaseUnavailable(f"its {len(entries)} files are more than the {MAX_FILES} that are checked")
    read = [entry for entry in entries if (entry.regular and entry.size <= max_bytes) or entry.mode == _LINK]
    if sum(entry.size for entry in read) > MAX_BYTES:
        raise BaseUnavailable(f"its files are larger than the {MAX_BYTES >> 20} MiB that are checked")
    object_ids = [entry.object_id for entry in read]
    contents = dict(zip(object_ids, commit.blobs(object_ids), strict=True))
    (root / ".git").mkdir(parents=True)
    for entry in entries:
        folder = _folder_of(root, entry.path)
        if folder is None:
            continue
        with contextlib.suppress(FileExistsError):  # a name the tree lists twice (git would refuse it): the first
            _write_entry(folder / PurePosixPath(entry.path).name, entry, contents.get(entry.object_id))


def _folder_of(root: Path, relative: str) -> Path | None:
    """The folder of a file to write, made as needed; None when one of its folders is a link or a file (a tree
    git would refuse), so that nothing is ever written through a link."""
    folder = root
    for name in PurePosixPath(relative).parts[:-1]:
        folder = folder / name
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            return None
        folder.mkdir(exist_ok=True)
    return folder


def _write_entry(path: Path, entry: TreeEntry, content: bytes | None) -> None:
    if entry.mode == _SUBMODULE:
        path.mkdir(exist_ok=True)
    elif entry.mode == _LINK and content is not None:
        path.symlink_to(os.fsdecode(content))
    elif entry.regular:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL  # O_EXCL: never through a link, never over a file
        with os.fdopen(os.open(path, flags, stat.S_IRUSR | stat.S_IWUSR), "wb") as stream:
            if content is None:
                stream.truncate(entry.size)
            else:
                stream.write(content)


def _safe(relative: str) -> bool:
    """A path with no empty part (so not absolute, nor empty), no `.` or `..`, and no `.git` folder or file."""
    return all(part not in ("", ".", "..") and part.lower() != ".git" for part in relative.split("/"))
