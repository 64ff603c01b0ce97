"""A private copy of what actionlint and zizmor may read: the checked files as ci-checks read them, nothing else.

The linters are pointed at this copy, never at the repository: each
workflow and action as decoded (UTF-8, `\\n` line breaks, no byte-order mark,
so their positions are ci-checks' own), the local actions and reusable
workflows they use that ci-checks could read inside the repository, and
zizmor's `.github/workflows/actions.lock` when it is a regular file. A `.git`
folder marks the copy's root, so that neither linter looks above it for a
project or a configuration.

A local `uses:` that leads outside the repository (`./../../x`, or through a
symbolic link) is rewritten in the copy, in place and at the same length, to a
path that does not exist, so that no linter opens a file outside the
repository for it (ci-checks reports it: CC041). Positions do not move.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ci_checks.backends import tools
from ci_checks.core.repository import Repository
from ci_checks.core.source import SourceFile, printable
from ci_checks.model.loading import LoadedFile
from ci_checks.syntax.yamlpos import Scalar

LOCK_FILE = ".github/workflows/actions.lock"
_ACTION_FILES = ("action.yml", "action.yaml")
_LOCAL_PREFIXES = ("./", "$/")


@dataclass
class Mirror:
    root: Path
    files: dict[str, LoadedFile] = field(default_factory=dict)
    """The copied checked files, by the `path_key` of their copy."""
    lock: SourceFile | None = None
    """zizmor's lock file as read (None: there is none); copied only when it is a regular file that reads."""

    def path_of(self, file: LoadedFile) -> str:
        """Where the copy is: a name that is not UTF-8 is written `%XX` (see `source.printable`), which every
        linter can be given as an argument."""
        return str(self.root / printable(file.path))

    def has(self, file: LoadedFile) -> bool:
        return tools.path_key(self.path_of(file)) in self.files

    def file_of(self, printed: str) -> LoadedFile | None:
        """The checked file a linter names by its copy's path (absolute, or relative to the copy's root)."""
        return self.files.get(tools.path_key(self.root / printed))

    def rewrite(self, file: LoadedFile, text: str) -> None:
        """Replace a checked file's copy (before any linter reads it)."""
        _write(self.root, printable(file.path), text)

    def shown(self, text: str) -> str:
        """A linter's message with the copy's paths written repo-relative."""
        return text.replace(f"{self.root}/", "").replace(str(self.root), ".")


def build(folder: Path, files: Iterable[LoadedFile], repository: Repository) -> Mirror:
    mirror = Mirror(folder)
    (folder / ".git").mkdir(parents=True)
    written: set[str] = set()
    for file in files:
        text = _with_outside_uses_cut(file, repository)
        if text is None:
            continue
        _write(folder, printable(file.path), text)
        written.add(file.path)
        mirror.files[tools.path_key(mirror.path_of(file))] = file
    for file in list(mirror.files.values()):
        for relative in _local_targets(file, repository):
            if relative in written:
                continue
            target = repository.read(relative)
            if target.problem is None:
                _write(folder, printable(relative), target.text)
                written.add(relative)
    mirror.lock = repository.read_regular(LOCK_FILE)
    if mirror.lock is not None and mirror.lock.problem is None and LOCK_FILE not in written:
        _write(folder, LOCK_FILE, mirror.lock.text)
    return mirror


def _write(folder: Path, relative: str, text: str) -> None:
    path = folder / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="\n")


def _uses_nodes(file: LoadedFile) -> list[Scalar]:
    nodes = [step.uses_node for step in file.steps if step.uses_node is not None]
    if file.workflow is not None:
        nodes += [job.uses_node for job in file.workflow.jobs.values() if job.uses_node is not None]
    return nodes


def _local_path(value: str) -> str | None:
    return value[2:].rstrip("/") if value.startswith(_LOCAL_PREFIXES) else None


def _local_targets(file: LoadedFile, repository: Repository) -> list[str]:
    """The repo-relative files a linter reads for the local `uses:` of a file: action metadata, called workflows."""
    targets: list[str] = []
    for node in _uses_nodes(file):
        path = _local_path(node.value)
        if path is None or repository.escapes(path) is not None:
            continue
        if path.endswith((".yml", ".yaml")):
            targets.append(path)
        else:
            targets += [f"{path}/{name}" if path else name for name in _ACTION_FILES]
    return targets


def _with_outside_uses_cut(file: LoadedFile, repository: Repository) -> str | None:
    """The file's text with each local `uses:` that leaves the repository replaced by one that names nothing.

    None when such a value cannot be found verbatim in the text (written over several lines, or with escapes):
    the file is then not handed to the linters at all.
    """
    text = file.source.text
    for node in _uses_nodes(file):
        path = _local_path(node.value)
        if path is None or repository.escapes(path) is None:
            continue
        start = file.source.offset(node.span.line, node.span.column) + (1 if node.style in ("'", '"') else 0)
        value = node.value
        if text[start : start + len(value)] != value:
            return None
        filler = value[:2] + "_" * (len(value) - 2)
        text = text[:start] + filler + text[start + len(value) :]
    return text
