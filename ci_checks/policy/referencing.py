"""Which files of the repository refer to which: what `file:` items' `referenced_by:` asks.

`referrers(workspace)` is the one entry point, so that `referenced_by` follows the repository's reference
resolution wherever it lives. Today it is built on `ci_checks.model.references` (the files a `run:` script runs,
applies, installs from or builds) and on `uses:`:

- workflows and composite actions: local and self-repository `uses:` (`./x`, `$/x`: the action's `action.yml`
  or the reusable workflow), `docker/build-push-action`'s `file:`, and the script, patch, requirements and Dockerfile
  paths of their `run:` scripts (relative to where the job checks this repository out, or to a composite action's
  own folder for `$GITHUB_ACTION_PATH`);
- shell scripts: the same paths in their commands;
- Dockerfiles: `COPY` and `ADD` sources (a folder stands for every file under it, a glob for what it matches; the
  whole context `.` for nothing in particular);
- Python files: a string literal that is the path of a file of the repository.

A path written relative to an unknown directory is taken from the repository root and from the referring file's
own folder, whichever exists. A reference that may be wrong counts: `referenced_by: false` is for files nothing
names, and calls a file an orphan only when no file names it at all.
"""

from __future__ import annotations

import ast
import posixpath
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from ci_checks.globs import GlobError, compile_glob
from ci_checks.loading import LoadedFile, Workspace
from ci_checks.model import Step
from ci_checks.model.references import checkout, references, start_directory
from ci_checks.repository import FileKind, kind_of
from ci_checks.shell import Script

_NAMED = ("script", "patch", "requirements", "dockerfile")
"""Reference kinds that name one file; a build context, an install or a `cd` names the tree or a folder."""
_BUILD_PUSH = "docker/build-push-action"
_PLACEHOLDER = ("$", "{", "}", "~", "@")
_GLOB = ("*", "?", "[")


@dataclass
class Referrers:
    """For each path something refers to (a file, or a folder standing for every file under it), who does."""

    named: dict[str, set[str]] = field(default_factory=dict)

    def of(self, path: str) -> frozenset[str]:
        """The files that refer to `path`, directly or through a folder that holds it (never `path` itself)."""
        found: set[str] = set(self.named.get(path, ()))
        folder = posixpath.dirname(path)
        while folder:
            found |= self.named.get(folder, set())
            folder = posixpath.dirname(folder)
        found.discard(path)
        return frozenset(found)

    def add(self, path: str, referrer: str) -> None:
        normal = posixpath.normpath(path)
        if normal not in (".", "") and not normal.startswith("../") and normal != "..":
            self.named.setdefault(normal, set()).add(referrer)


_BUILT: weakref.WeakKeyDictionary[Workspace, Referrers] = weakref.WeakKeyDictionary()


def referrers(workspace: Workspace) -> Referrers:
    """Who refers to what in the repository of `workspace`, found once per workspace."""
    found = _BUILT.get(workspace)
    if found is None:
        found = _BUILT[workspace] = _build(workspace)
    return found


def _build(workspace: Workspace) -> Referrers:
    repository = workspace.repository
    found = Referrers()
    existing = frozenset(repository.files)
    for path in repository.files:
        kind = kind_of(path)
        if repository.excluded(path) or kind not in _REFERRING:
            continue
        file = workspace.load(path, kind)
        if not file.readable:
            continue
        for named in _REFERRING[kind](file, existing):
            found.add(named, path)
    return found


def _either(file: LoadedFile, written: str) -> Iterator[str]:
    """A path written relative to an unknown directory: from the repository root, and from the file's folder."""
    yield written
    folder = posixpath.dirname(file.path)
    if folder:
        yield posixpath.join(folder, written)


def _yaml(file: LoadedFile, existing: frozenset[str]) -> Iterator[str]:
    if file.workflow is not None:
        for job in file.workflow.jobs.values():
            if job.uses is not None and job.uses.kind in ("local", "self"):
                yield job.uses.path
            yield from _steps(job.steps, None)
    elif file.action is not None:
        yield from _steps(file.action.steps, posixpath.dirname(file.path))


def _steps(steps: list[Step], action_folder: str | None) -> Iterator[str]:
    """What steps name, relative to the repository: after this repository's checkout (`path:` stripped), or in a
    composite action, whose `$GITHUB_ACTION_PATH` is its own folder."""
    root = ""
    for step in steps:
        found = checkout(step)
        if found is not None and found.this_repository and found.path is not None:
            root = found.path
        ref = step.uses
        if ref is not None and ref.kind == "self":
            yield from _action_files(ref.path)
        elif ref is not None and ref.kind == "local":
            for path in _in_root(ref.path, root):
                yield from _action_files(path)
        elif ref is not None and ref.kind == "repository" and ref.name.lower() == _BUILD_PUSH:
            entry = step.with_.get("file")
            if entry is not None and entry.text and not entry.text.startswith(("/", *_PLACEHOLDER)):
                yield from _in_root(entry.text, root)
        if step.script is not None:
            yield from _script(step.script, start_directory(step), root, action_folder)


def _action_files(folder: str) -> Iterator[str]:
    """What `uses:` of an action folder reads: its metadata file; the rest is what that file's steps name."""
    yield from (posixpath.join(folder, name) for name in ("action.yml", "action.yaml"))


def _script(script: Script, start: str | None, root: str, action_folder: str | None) -> Iterator[str]:
    for reference in references(script, start):
        if reference.kind not in _NAMED or reference.path is None or reference.outside:
            continue
        if reference.base == "action":
            if action_folder is not None:
                yield posixpath.join(action_folder, reference.path)
        else:
            yield from _in_root(reference.path, root)


def _in_root(path: str, root: str) -> Iterator[str]:
    """A workspace path as a repository path, when it lies in the checkout at `root`."""
    normal = posixpath.normpath(path)
    if not root:
        yield normal
    elif normal == root or normal.startswith(root + "/"):
        yield normal[len(root) + 1 :]


def _shell(file: LoadedFile, existing: frozenset[str]) -> Iterator[str]:
    if file.shell_script is not None:
        for path in _script(file.shell_script, "", "", None):
            yield from _either(file, path)


def _dockerfile(file: LoadedFile, existing: frozenset[str]) -> Iterator[str]:
    parsed = file.dockerfile
    if parsed is None:
        return
    for command in parsed.commands():
        words = [word.value for word in command.words]
        if not words or words[0] not in ("COPY", "ADD") or any(word.startswith("--from") for word in words):
            continue
        for source in words[1:-1]:
            if source.startswith("--") or any(mark in source for mark in _PLACEHOLDER) or "://" in source:
                continue
            if any(mark in source for mark in _GLOB):
                yield from _globbed(file, source, existing)
            elif posixpath.normpath(source) != ".":
                yield from _either(file, source)


def _globbed(file: LoadedFile, pattern: str, existing: frozenset[str]) -> Iterator[str]:
    """The files a `COPY` glob copies, from the root or from the Dockerfile's folder."""
    folder = posixpath.dirname(file.path)
    for base in dict.fromkeys(("", folder)):
        try:
            glob = compile_glob(posixpath.normpath(posixpath.join(base, pattern)))
        except GlobError:
            continue
        yield from (path for path in sorted(existing) if glob.matches(path))


def _python(file: LoadedFile, existing: frozenset[str]) -> Iterator[str]:
    try:
        tree = ast.parse(file.source.text, filename=file.path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and 0 < len(node.value) < 300:
            text = node.value.strip().removeprefix("./")
            if "\n" in text or text.startswith("/") or not ("/" in text or "." in text):
                continue
            for candidate in _either(file, text):
                normal = posixpath.normpath(candidate)
                if normal in existing:
                    yield normal


_REFERRING: dict[FileKind, Callable[[LoadedFile, frozenset[str]], Iterator[str]]] = {
    FileKind.WORKFLOW: _yaml,
    FileKind.ACTION: _yaml,
    FileKind.SHELL: _shell,
    FileKind.DOCKERFILE: _dockerfile,
    FileKind.PYTHON: _python,
}
