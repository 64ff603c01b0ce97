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
  else the repository root or the Dockerfile's folder; `ENV` values and
  `ARG`s are substituted (`COPY ${PATCH_DIR}/fix.patch /tmp/` with each
  value the builds pass with `--build-arg` or `build-args:`, else the
  `ARG`'s default), and a source is reported when no build finds it.

Only a checkout is judged (a root with `.git`, or inside a folder with
one): a copy of the workflows alone would make every file look missing. A
path built from a variable whose value cannot be known (a build argument
passed from the environment or an expression) is skipped, not guessed. A
path that leaves the repository (`../x`, or a symbolic link pointing out) is
reported as such and never read. What each step puts where is followed (see
`docs/model.md`): a path the job made before reading it (`git clone`,
`mkdir`, a download, a cache restore, a redirection, a program or action
given the path) is not the repository's, nor is a path inside another
repository's checkout or a git submodule; a Dockerfile's `COPY` source the
building job made in the context before `docker build` exists.

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
import os
import posixpath
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ci_checks.core.diagnostics import Diagnostic, Severity, Span
from ci_checks.core.repository import FileKind, Repository, refused
from ci_checks.model import Action, Step, Workflow
from ci_checks.model.files.jobs import JobFlow
from ci_checks.model.files.places import ACTION, CONTEXT, WORKSPACE, Place, place_of
from ci_checks.model.files.repository import UNSURE, RepositoryFiles
from ci_checks.model.loading import LoadedFile
from ci_checks.model.references import VERBS, Reference
from ci_checks.rules.context import RepositoryContext
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus

if TYPE_CHECKING:
    from ci_checks.model.files.docker import Image, Source

_ACTION_FILES = ("action.yml", "action.yaml")
_BUILD_PUSH = re.compile(r"docker/build-push-action\Z", re.IGNORECASE)
_FILE_KINDS = ("script", "patch", "requirements", "dockerfile", "context")


def check_repository(context: RepositoryContext) -> Iterator[Diagnostic]:
    if not context.whole_checkout:
        return
    repository = context.repository
    files = context.files
    submodules = files.submodules
    for file in context.targets:
        if file.workflow is not None:
            yield from _workflow(repository, files, file.workflow, submodules)
        elif file.action is not None:
            yield from _action(repository, files, file.action)
    for path in repository.dockerfiles:
        if context.covers(path):
            yield from _dockerfile(repository, context.load(path), files)


def _workflow(
    repository: Repository, files: RepositoryFiles, workflow: Workflow, submodules: list[str]
) -> Iterator[Diagnostic]:
    for job in workflow.jobs.values():
        if job.uses is not None and job.uses.kind in ("local", "self") and job.uses_node is not None:
            yield from _missing_path(repository, job.uses.path, job.uses_node.span, f"`uses: {job.uses.raw}` calls")
        if not job.steps:
            continue
        flow = files.job(job)
        for step in job.steps:
            yield from _uses(repository, flow, step, submodules)
        for read in flow.reads:
            if read.reference.kind in _FILE_KINDS and read.reference.place.base == WORKSPACE:
                yield from _read(repository, flow, read.reference, read.seq, submodules)


def _uses(repository: Repository, flow: JobFlow, step: Step, submodules: list[str]) -> Iterator[Diagnostic]:
    if step.uses is None or step.uses_node is None:
        return
    start = flow.starts[step.index]
    if step.uses.kind == "self":  # this repository at the commit that runs, whether or not it is checked out
        yield from _missing_action(repository, posixpath.normpath(step.uses.path), step.uses_node.span, step.uses.raw)
    elif step.uses.kind == "local":
        place = Place(WORKSPACE).joined(step.uses.path)
        if place.outside:  # leaves the repository checked out at the workspace root: reported as such
            path = place.path if _repository_path(flow, Place(WORKSPACE), start) == "" else None
        else:
            path = _repository_path(flow, place, start)
        if path is not None and not _under(path, submodules):
            yield from _missing_action(repository, path, step.uses_node.span, step.uses.raw)
    elif step.uses.kind == "repository" and _BUILD_PUSH.match(step.uses.name):
        entry = step.with_.get("file")
        written = entry.text if entry is not None and entry.text is not None else None
        named = place_of(written, Place(WORKSPACE)) if written else None
        if entry is None or named is None or named.base != WORKSPACE or named.glob or named.outside:
            return
        path = _repository_path(flow, named, start) if "context" in step.with_ else named.path
        if path is not None:
            yield from _missing_path(repository, path, entry.value.span, "`file:` of docker/build-push-action names")


def _repository_path(flow: JobFlow, place: Place, before: int) -> str | None:
    """The repository path of a place, when the checkout of this repository put it there and nothing since may
    have (then a missing file may have been made by the job)."""
    return flow.origin(place, before, UNSURE).repository_path


def _read(
    repository: Repository, flow: JobFlow, reference: Reference, seq: int, submodules: list[str]
) -> Iterator[Diagnostic]:
    place = reference.place
    if place.glob:
        return
    if place.outside:
        if any(found.this_repository and found.step.index < _index(flow, seq) for found in flow.checkouts):
            yield _outside(reference)
        return
    path = _repository_path(flow, place, seq)
    if path is None or _under(path, submodules):
        return
    description = f"`{_shown(reference)}` {VERBS[reference.kind]}"
    yield from _missing_path(repository, path, reference.span, description)


def _index(flow: JobFlow, seq: int) -> int:
    """The index of the step a sequence number falls in."""
    return max((index for index, start in flow.starts.items() if start <= seq), default=0)


def _action(repository: Repository, files: RepositoryFiles, action: Action) -> Iterator[Diagnostic]:
    for step in action.steps:
        if step.uses is not None and step.uses.kind == "self" and step.uses_node is not None:
            yield from _missing_action(
                repository, posixpath.normpath(step.uses.path), step.uses_node.span, step.uses.raw
            )
    flow = next((flow for found, flow in files.actions if found is action), None)
    if flow is None:
        return
    for read in flow.reads:
        reference = read.reference
        if reference.kind not in _FILE_KINDS or reference.place.base != ACTION or reference.place.glob:
            continue
        if reference.place.outside:
            yield _outside(reference)
            continue
        path = _repository_path(flow, reference.place, read.seq)
        if path is not None:
            yield from _missing_path(repository, path, reference.span, f"`{_shown(reference)}` {VERBS[reference.kind]}")


def _dockerfile(repository: Repository, file: LoadedFile, files: RepositoryFiles) -> Iterator[Diagnostic]:
    images = files.images(file.path)
    if not images or any(built.context is None for built in images):
        return  # a context ci-checks cannot know: any source may be there
    contexts = dict.fromkeys(built.context or "" for built in images)
    where = " or ".join(f"`{context}`" if context else "the repository root" for context in contexts)
    readings: dict[Span, list[tuple[Image, Source]]] = {}  # each source word as each reading of the file sees it
    for built in images:
        for source in built.sources:
            readings.setdefault(source.word.span, []).append((built, source))
    missing: dict[tuple[str, Place], bool] = {}  # a source named many times is looked for once
    for found in readings.values():
        places = [
            (built, place)
            for built, source in found
            if (place := source.place) is not None and place.base == CONTEXT and not place.glob and not place.outside
        ]
        if len(places) < len(found):
            continue  # a reading where the source cannot be known (a build argument) may find it
        paths: list[str] = []
        for built, place in places:
            context = built.context or ""
            if (context, place) not in missing:
                missing[(context, place)] = not files.in_context(built, place)
            if not missing[(context, place)]:
                break
            paths.append(posixpath.normpath(posixpath.join(context, place.path)) if place.path else context)
        else:
            named = [str(place) for _, place in places]
            yield _missing_source(repository, found[0][1], list(dict.fromkeys(named)), paths[0], where)


def _missing_source(repository: Repository, source: Source, named: list[str], path: str, where: str) -> Diagnostic:
    """A `COPY` source that no reading of the Dockerfile finds; one written with variables is shown with the
    paths they make (`named`, in the context), `path` is the first as a repository path."""
    written = f"`{source.word.value}`"
    if "$" in source.word.value:
        written += " (" + " or ".join(f"`{name}`" for name in named) + ")"
    message = f"`{source.keyword}` source {written} does not exist in the build context ({where})"
    return RULE.diagnostic(source.word.span, message + _suggestion(repository, path))


def _missing_action(repository: Repository, path: str, span: Span, written: str) -> Iterator[Diagnostic]:
    target = repository.resolve(path)
    if refused(path):
        yield RULE.diagnostic(span, f"`uses: {written}` {_NUL}")
    elif target is None:
        yield RULE.diagnostic(span, f"`uses: {written}` leads outside the repository; it is not followed")
    elif not os.path.isdir(target):  # noqa: PTH112 (False for a name too long for the system; Path.is_dir raises)
        yield RULE.diagnostic(
            span, f"`uses: {written}` names a folder that does not exist" + _suggestion(repository, path)
        )
    elif not any(repository.exists(posixpath.join(path, name)) for name in _ACTION_FILES):
        yield RULE.diagnostic(span, f"`uses: {written}` names a folder without action.yml or action.yaml")


def _missing_path(repository: Repository, path: str, span: Span, description: str) -> Iterator[Diagnostic]:
    if refused(path):
        yield RULE.diagnostic(span, f"{description} `{path}`, a path that {_NUL}")
    elif repository.resolve(path) is None:
        message = f"{description} `{path}`, a symbolic link leading outside the repository; it is not followed"
        yield RULE.diagnostic(span, message, severity=Severity.WARNING)
    elif not repository.exists(path):
        message = f"{description} `{path}`, which does not exist in the repository"
        yield RULE.diagnostic(span, message + _suggestion(repository, path))


_NUL = "holds a NUL byte, which no file system accepts in a name: it names no file"


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


def _under(path: str, folders: list[str]) -> bool:
    return any(path == folder or path.startswith(folder + "/") for folder in folders)


RULE = Rule(
    "CC041",
    "dangling-reference",
    "A repository path that is referenced does not exist",
    Severity.ERROR,
    __doc__,
    frozenset({FileKind.WORKFLOW, FileKind.ACTION, FileKind.DOCKERFILE}),
    None,
    check_repository,
    group=RuleGroup.WORKFLOW,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
