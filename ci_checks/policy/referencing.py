"""Which files of the repository refer to which: what `file:` items' `referenced_by:` asks.

`referrers(workspace)` is the one entry point, built on the repository's file model
(`ci_checks.model.files`, see `docs/model.md`), so that `referenced_by` resolves references as the built-in rules
do:

- jobs, composite actions and Dockerfile stages: every file a command runs, applies, installs from or builds,
  followed to the repository file that is there when it runs (`git apply /tmp/x.patch` refers to the patch a
  `COPY` put at `/tmp/x.patch`, a path after `cd` to the file in that folder);
- workflows and composite actions: local and self-repository `uses:` (`./x`, `$/x`: the action's `action.yml`
  or the reusable workflow), and `docker/build-push-action`'s `file:`;
- shell scripts: the same paths in their commands;
- Dockerfiles: `COPY` and `ADD` sources (a folder stands for every file under it, a glob for what it matches; the
  whole context `.` for nothing in particular);
- Python files: an expression that evaluates to the path of a file of the repository, or a string literal that is
  one.

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

from ci_checks.core.globs import GlobError, compile_glob
from ci_checks.core.repository import FileKind, kind_of
from ci_checks.model import Step, Workflow
from ci_checks.model.files.jobs import JobFlow
from ci_checks.model.files.places import WORKSPACE, Place, Scope, place_of
from ci_checks.model.files.repository import UNSURE, RepositoryFiles
from ci_checks.model.loading import LoadedFile, Workspace
from ci_checks.model.references import command_references
from ci_checks.syntax.pysource import parse
from ci_checks.syntax.shell import Script

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
        """A path outside the repository (`..`) or its root (`.`) may be added: `of` never asks for one."""
        self.named.setdefault(posixpath.normpath(path), set()).add(referrer)


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
    files = RepositoryFiles(workspace, lambda: _workflows(workspace))
    for flow in files.flows:
        for read in flow.reads:
            reference = read.reference
            if reference.kind in _NAMED and reference.word is not None:
                path = flow.origin(reference.place, read.seq, UNSURE).repository_path
                if path is not None:
                    found.add(path, reference.word.span.path)
    for job, flow in files.jobs:
        for named in _steps(flow, job.steps):
            found.add(named, job.workflow.path)
    for action, flow in files.actions:
        for named in _steps(flow, action.steps):
            found.add(named, action.path)
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


def _workflows(workspace: Workspace) -> list[Workflow]:
    loaded = (workspace.load(path, FileKind.WORKFLOW) for path in workspace.repository.workflows)
    return [file.workflow for file in loaded if file.workflow is not None]


def _either(file: LoadedFile, written: str) -> Iterator[str]:
    """A path written relative to an unknown directory: from the repository root, and from the file's folder."""
    yield written
    folder = posixpath.dirname(file.path)
    if folder:
        yield posixpath.join(folder, written)


def _workflow_calls(file: LoadedFile, existing: frozenset[str]) -> Iterator[str]:
    if file.workflow is not None:
        for job in file.workflow.jobs.values():
            if job.uses is not None and job.uses.kind in ("local", "self"):
                yield job.uses.path


def _steps(flow: JobFlow, steps: list[Step]) -> Iterator[str]:
    """The actions and Dockerfiles steps name, as repository paths: where this repository is when each runs."""
    for step in steps:
        ref = step.uses
        start = flow.starts.get(step.index)
        if ref is None or start is None:
            continue
        if ref.kind == "self":
            yield from _action_files(ref.path)
        elif ref.kind == "local":
            path = flow.origin(Place(WORKSPACE).joined(ref.path), start, UNSURE).repository_path
            if path is not None:
                yield from _action_files(path)
        elif ref.kind == "repository" and ref.name.lower() == _BUILD_PUSH:
            entry = step.with_.get("file")
            named = place_of(entry.text, Place(WORKSPACE)) if entry is not None and entry.text else None
            if named is not None and named.base == WORKSPACE and not named.glob and not named.outside:
                path = flow.origin(named, start, UNSURE).repository_path
                if path is not None:
                    yield path


def _action_files(folder: str) -> Iterator[str]:
    """What `uses:` of an action folder reads: its metadata file; the rest is what that file's steps name."""
    yield from (posixpath.join(folder, name) for name in ("action.yml", "action.yaml"))


def _script(script: Script) -> Iterator[str]:
    """The files a shell script's commands name, relative to where it is run from (unknown: the root is taken)."""
    scope = Scope(Place(WORKSPACE))
    for command in script.commands():
        for reference in command_references(command, scope):
            place = reference.place
            if reference.kind in _NAMED and place.base == WORKSPACE and place.path and not place.outside:
                yield place.path


def _shell(file: LoadedFile, existing: frozenset[str]) -> Iterator[str]:
    if file.shell_script is not None:
        for path in _script(file.shell_script):
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
        tree = parse(file.source.text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and 0 < len(node.value) < 300:
            text = node.value.strip()
            if not ("/" in text or "." in text):  # a bare word (`utf-8`, `main`) is too common to name a file
                continue
            for candidate in _either(file, text):
                normal = posixpath.normpath(candidate)
                if normal in existing:
                    yield normal


_REFERRING: dict[FileKind, Callable[[LoadedFile, frozenset[str]], Iterator[str]]] = {
    FileKind.WORKFLOW: _workflow_calls,
    FileKind.SHELL: _shell,
    FileKind.DOCKERFILE: _dockerfile,
    FileKind.PYTHON: _python,
}
