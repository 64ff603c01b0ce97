"""A workflow, action or Dockerfile names a repository file that does not exist.

## What it does
Checks that the repository paths a job names after checking the repository
out exist:

- local `uses: ./path` (a folder with `action.yml` or `action.yaml`) and
  reusable workflows `uses: ./.github/workflows/x.yml`, and the same written
  `$/path` (this repository at the commit that runs: judged with or without a
  checkout);
- scripts run from `run:` (`bash x.sh`, `sh x`, `python x.py`, `./x`,
  `source x`), patches given to `git apply`, `git am`, `patch -i` and
  `patch <`, `docker build -f FILE` and its context, `pip install -r FILE`,
  also written through `$GITHUB_WORKSPACE/...`; the step's
  `working-directory`, the checkout's `path:` and the script's own `cd`s are
  followed;
- in a composite action, paths under `$GITHUB_ACTION_PATH`;
- in Dockerfiles, `COPY`/`ADD` sources, relative to the build context: the
  context a workflow's `docker build` or `docker/build-push-action` gives,
  else the repository root or the Dockerfile's folder.

Only a checkout is judged (a root with `.git`, or inside a folder with
one): a copy of the workflows alone would make every file look missing. A
path built from a variable is skipped, not guessed. A path that leaves the
repository (`../x`, or a symbolic link pointing out) is reported as such and
never read. A path the job may have created itself (named earlier in the
job, in a `git clone`, a download or a redirection) and paths inside git
submodules are not judged.

## Why it matters
A script, patch or local action that was renamed or deleted breaks the job
only when it runs, which for nightly and release workflows can be days after
the change; a Dockerfile that copies a deleted patch breaks every image
build.

## Example
```dockerfile
COPY docker/amd_patch/latest/megatron.patch /tmp/amd_patch/megatron.patch
```
(the patch was deleted when it stopped applying)

## Fix
Restore the file, point the reference at its new place, or remove the
reference together with the file.
"""

from __future__ import annotations

import difflib
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from ci_checks.context import RepositoryContext
from ci_checks.diagnostics import Diagnostic, Severity, Span
from ci_checks.loading import LoadedFile
from ci_checks.model import Action, Job, Step, Workflow
from ci_checks.model.references import VERBS, Reference, checkout, references, start_directory
from ci_checks.repository import FileKind, Repository
from ci_checks.rule import Rule
from ci_checks.source import SourceFile

_ACTION_FILES = ("action.yml", "action.yaml")
_BUILD_PUSH = re.compile(r"docker/build-push-action\Z", re.IGNORECASE)
_VARIABLE = re.compile(r"[$`*?\[{~]")
_FILE_KINDS = ("script", "patch", "requirements", "dockerfile", "context")


@dataclass
class _Builds:
    """The build contexts workflows give each Dockerfile; `unknown` holds Dockerfiles built from a variable context."""

    contexts: dict[str, set[str]] = field(default_factory=dict)
    unknown: set[str] = field(default_factory=set)

    def add(self, dockerfile: str | None, context: str | None) -> None:
        if dockerfile is None:
            return
        if context is None:
            self.unknown.add(dockerfile)
        else:
            self.contexts.setdefault(dockerfile, set()).add(context)


def check_repository(context: RepositoryContext) -> Iterator[Diagnostic]:
    if not context.whole_checkout:
        return
    repository = context.repository
    submodules = _submodules(repository)
    builds = _Builds()
    for workflow in context.workflows:
        for job in workflow.jobs.values():
            _collect_builds(job, builds)
    for file in context.targets:
        if file.workflow is not None:
            yield from _workflow(repository, file.workflow, submodules)
        elif file.action is not None:
            yield from _action(repository, file.action)
    for path in repository.dockerfiles:
        if context.covers(path) and path not in builds.unknown:
            dockerfile = context.load(path)
            yield from _dockerfile(repository, dockerfile, builds.contexts.get(path))


def _workflow(repository: Repository, workflow: Workflow, submodules: list[str]) -> Iterator[Diagnostic]:
    for job in workflow.jobs.values():
        if job.uses is not None and job.uses.kind in ("local", "self") and job.uses_node is not None:
            yield from _missing_path(repository, job.uses.path, job.uses_node.span, f"`uses: {job.uses.raw}` calls")
        yield from _own_actions(repository, job.steps)
        root, steps, others = _checked_out(job)
        if root is None:
            continue
        produced = _Mentions(workflow.source, steps)
        for step in steps:
            yield from _step(repository, step, root, produced, [*submodules, *others])


def _checked_out(job: Job) -> tuple[str | None, list[Step], list[str]]:
    """Where this repository is checked out in the workspace, the steps after that, and where other repositories are.

    None when the job does not check this repository out, or its place is unknown, or another repository is
    checked out in the workspace root (then a path there could be either's).
    """
    root: str | None = None
    after: list[Step] = []
    others: list[str] = []
    for index, step in enumerate(job.steps):
        found = checkout(step)
        if found is None:
            continue
        if found.this_repository and root is None and not after:
            if found.path is None:
                return None, [], []
            root, after = found.path, job.steps[index + 1 :]
        elif not found.this_repository:
            if not found.path:
                return None, [], []
            others.append(found.path)
    return root, after, others


def _step(
    repository: Repository, step: Step, root: str, produced: _Mentions, elsewhere: list[str]
) -> Iterator[Diagnostic]:
    """`elsewhere`: workspace folders that hold other repositories (checkouts, submodules)."""
    if step.uses is not None and step.uses_node is not None:
        if step.uses.kind == "local":
            workspace_path = posixpath.normpath(step.uses.path)
            path = _in_repository(workspace_path, root)
            if path is not None and not _under(workspace_path, elsewhere) and not _under(path, elsewhere):
                yield from _missing_action(repository, path, step.uses_node.span, step.uses.raw)
        elif step.uses.kind == "repository" and _BUILD_PUSH.match(step.uses.name):
            entry = step.with_.get("file")
            written = entry.text if entry is not None and entry.text is not None else None
            if written is not None and not _VARIABLE.search(written) and not written.startswith("/"):
                path = _in_repository(posixpath.normpath(written), root)
                if path is not None and entry is not None:
                    yield from _missing_path(
                        repository, path, entry.value.span, "`file:` of docker/build-push-action names"
                    )
        return
    script = step.script
    if script is None:
        return
    for reference in references(script, start_directory(step)):
        if reference.kind not in _FILE_KINDS or reference.base != "workspace" or reference.path is None:
            continue
        if reference.outside:
            yield _outside(reference)
            continue
        path = _in_repository(reference.path, root)
        if path is None or _under(reference.path, elsewhere) or _under(path, elsewhere) or produced.before(reference):
            continue
        yield from _missing_path(repository, path, reference.span, f"`{_shown(reference)}` {VERBS[reference.kind]}")


def _own_actions(repository: Repository, steps: list[Step]) -> Iterator[Diagnostic]:
    """`uses: $/path`: an action of this repository at the commit that runs, whether or not it is checked out."""
    for step in steps:
        if step.uses is not None and step.uses.kind == "self" and step.uses_node is not None:
            path = posixpath.normpath(step.uses.path)
            yield from _missing_action(repository, path, step.uses_node.span, step.uses.raw)


def _action(repository: Repository, action: Action) -> Iterator[Diagnostic]:
    yield from _own_actions(repository, action.steps)
    folder = posixpath.dirname(action.path)
    for step in action.steps:
        script = step.script
        if script is None:
            continue
        for reference in references(script, None):
            if reference.kind not in _FILE_KINDS or reference.base != "action" or reference.path is None:
                continue
            if reference.outside:
                yield _outside(reference)
                continue
            path = posixpath.normpath(posixpath.join(folder, reference.path))
            description = f"`{_shown(reference)}` {VERBS[reference.kind]}"
            yield from _missing_path(repository, path, reference.span, description)


def _dockerfile(repository: Repository, file: LoadedFile, contexts: set[str] | None) -> Iterator[Diagnostic]:
    parsed = file.dockerfile
    if parsed is None:
        return
    folder = posixpath.dirname(file.path)
    candidates = sorted(contexts) if contexts else ["", folder] if folder else [""]
    for command in parsed.commands():
        words = command.words
        if not words or words[0].value not in ("COPY", "ADD"):
            continue
        if any(word.value.startswith(("--from", "<<")) for word in words[1:]):
            continue
        sources = [word for word in words[1:-1] if not word.value.startswith("--")]
        for word in sources:
            value = word.value
            if _VARIABLE.search(value) or "://" in value or value.startswith(("git@", "/")):
                continue
            paths = [posixpath.normpath(posixpath.join(context, value)) for context in candidates]
            if any(repository.exists(path) for path in paths):
                continue
            where = " or ".join(f"`{context}`" if context else "the repository root" for context in candidates)
            message = f"`{words[0].value}` source `{value}` does not exist in the build context ({where})"
            yield RULE.diagnostic(word.span, message + _suggestion(repository, paths[0]))


def _missing_action(repository: Repository, path: str, span: Span, written: str) -> Iterator[Diagnostic]:
    target = repository.resolve(path)
    if target is None:
        yield RULE.diagnostic(span, f"`uses: {written}` leads outside the repository; it is not followed")
    elif not target.is_dir():
        yield RULE.diagnostic(
            span, f"`uses: {written}` names a folder that does not exist" + _suggestion(repository, path)
        )
    elif not any(repository.exists(posixpath.join(path, name)) for name in _ACTION_FILES):
        yield RULE.diagnostic(span, f"`uses: {written}` names a folder without action.yml or action.yaml")


def _missing_path(repository: Repository, path: str, span: Span, description: str) -> Iterator[Diagnostic]:
    if repository.resolve(path) is None:
        message = f"{description} `{path}`, a symbolic link leading outside the repository; it is not followed"
        yield RULE.diagnostic(span, message, severity=Severity.WARNING)
    elif not repository.exists(path):
        message = f"{description} `{path}`, which does not exist in the repository"
        yield RULE.diagnostic(span, message + _suggestion(repository, path))


def _outside(reference: Reference) -> Diagnostic:
    message = f"`{_shown(reference)}` names `{reference.written}`, outside the repository; ci-checks does not read it"
    return RULE.diagnostic(reference.span, message, severity=Severity.WARNING)


def _suggestion(repository: Repository, path: str) -> str:
    """A file of a close name in the same folder: the likely new name of a renamed file.

    A file of the same name elsewhere is not offered: it is as likely a stale copy as the intended one.
    """
    folder, name = posixpath.split(path)
    siblings = [posixpath.basename(p) for p in repository.files if posixpath.dirname(p) == folder]
    close = difflib.get_close_matches(name, siblings, n=1, cutoff=0.8)
    return f" (did you mean `{posixpath.join(folder, close[0])}`?)" if close else ""


def _shown(reference: Reference) -> str:
    written = reference.command.text
    command = written if written and "\n" not in written else " ".join(reference.command.argv)
    word = reference.word
    if word is not None and all(item is not word for item in reference.command.words):
        command += f" < {word.text}"  # a redirection, which the command's own text leaves out
    return command if len(command) <= 60 else command[:57] + "..."


def _in_repository(path: str, root: str) -> str | None:
    """A workspace path as a repository path, when the repository is checked out at `root`; None elsewhere."""
    if not root:
        return path
    if path == root:
        return ""
    prefix = root.rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) else None


def _under(path: str, folders: list[str]) -> bool:
    return any(path == folder or path.startswith(folder + "/") for folder in folders)


def _submodules(repository: Repository) -> list[str]:
    """The paths of git submodules (from `.gitmodules`): their files are not part of this repository's tree."""
    if not repository.exists(".gitmodules"):
        return []
    text = repository.read(".gitmodules").text
    return [match.group(1).strip().strip("/") for match in re.finditer(r"^\s*path\s*=\s*(.+)$", text, re.MULTILINE)]


def _collect_builds(job: Job, builds: _Builds) -> None:
    """The Dockerfiles a job builds and the contexts it builds them in (repository paths; None when unknown)."""
    root, steps, _ = _checked_out(job)
    if root is None:
        return
    for step in steps:
        if step.uses is not None and _BUILD_PUSH.match(step.uses.name):
            file_entry, context_entry = step.with_.get("file"), step.with_.get("context")
            context = _literal(context_entry.text if context_entry is not None else "", root)
            dockerfile = _literal(file_entry.text if file_entry is not None else None, root)
            if dockerfile is None and file_entry is None and context is not None:
                dockerfile = posixpath.join(context, "Dockerfile") if context else "Dockerfile"
            builds.add(dockerfile, context)
        script = step.script
        if script is None:
            continue
        found = [r for r in references(script, start_directory(step)) if r.kind in ("dockerfile", "context")]
        for command in {id(r.command): r.command for r in found}.values():
            mine = [r for r in found if r.command is command]
            file_ref = next((r for r in mine if r.kind == "dockerfile"), None)
            context_ref = next((r for r in mine if r.kind == "context"), None)
            context = _in_repository(context_ref.path, root) if context_ref and context_ref.path is not None else None
            dockerfile = _in_repository(file_ref.path, root) if file_ref and file_ref.path is not None else None
            if file_ref is None and context is not None:
                dockerfile = posixpath.join(context, "Dockerfile") if context else "Dockerfile"
            builds.add(dockerfile, context)


def _literal(text: str | None, root: str) -> str | None:
    """A `with:` path as a repository path; None for a variable, an absolute path, a URL or another checkout."""
    if text is None or _VARIABLE.search(text) or text.startswith("/") or "://" in text:
        return None
    path = posixpath.normpath(text) if text else "."
    return _in_repository("" if path == "." else path, root)


class _Mentions:
    """Whether a path a job reads was named earlier in the job, other than where it is read: then the job may have
    made it (downloaded, generated, unpacked) and its absence from the repository proves nothing."""

    def __init__(self, source: SourceFile, steps: list[Step]) -> None:
        self.source = source
        self.start = source.offset(steps[0].span.line, steps[0].span.column) if steps else 0
        self.read_at: list[tuple[int, int]] = []
        for step in steps:
            script = step.script
            for reference in references(script, start_directory(step)) if script is not None else ():
                span = reference.span
                self.read_at.append(
                    (source.offset(span.line, span.column), source.offset(span.end_line, span.end_column))
                )

    def before(self, reference: Reference) -> bool:
        if reference.path is None:
            return False
        span = reference.span
        end = self.source.offset(span.line, span.column)
        text = self.source.text
        names = {posixpath.basename(reference.path), reference.path.split("/", 1)[0]} - {"", "."}
        for name in names:
            for match in re.finditer(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", text[self.start : end]):
                offset = self.start + match.start()
                if not any(start <= offset < stop for start, stop in self.read_at):
                    return True
        return False


RULE = Rule(
    "CC041",
    "dangling-reference",
    "A repository path that is referenced does not exist",
    Severity.ERROR,
    __doc__,
    frozenset({FileKind.WORKFLOW, FileKind.ACTION, FileKind.DOCKERFILE}),
    None,
    check_repository,
)
