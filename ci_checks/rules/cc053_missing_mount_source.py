"""A bind mount's source is a path that is not there when the mount is made.

## What it does
Reports two kinds of mount whose source does not exist:

- in a Dockerfile, `RUN --mount=type=bind,source=X`: X is judged against
  the build context, as `COPY` sources are (the context a workflow's
  `docker build` or `docker/build-push-action` gives, else the repository
  root or the Dockerfile's folder; a path the building job made in the
  context before the build is there). With `from=` a stage of the same
  Dockerfile, X is judged in that stage only when the stage is built `FROM
  scratch` (else its image may hold it); `from=` an image is not judged;
- in a job's `run:` script, `docker run --mount type=bind,source=SRC,...`
  and `docker run -v SRC:DST` (`--volume`; `docker create` too) whose SRC
  is a known path in the workspace (`./x`, `$PWD/x`, `$(pwd)/x`,
  `$GITHUB_WORKSPACE/x`, `${{ github.workspace }}/x`) that this repository's
  checkout put there but the repository does not have, and that no earlier
  step (nor the rest of the mount's own step) makes or names (as for
  missing-working-directory, CC051: what is made, restored, unpacked or may
  have been written by an action or a script counts as made). A `-v` folder
  may be one docker makes for the container to write its output in, so a
  `-v` is judged only when the container can only read it (`:ro`), when it
  names a file (`configs/eval.yaml`: docker makes a folder of that name), or
  when the repository has a close name beside it (it was renamed). In a
  composite action, only paths under `$GITHUB_ACTION_PATH` are judged.

Paths outside the workspace (`/data/models`, `/dev/shm`, `$HOME/.cache`,
`/var/run/docker.sock`) are the runner's and are never judged; a volume's
name (`-v hf-cache:/root/.cache`) is no path. A job that runs in a
container is not judged (its `docker run` names the host's paths, not the
container's).

## Why it matters
A `RUN --mount=type=bind` of a missing source fails the image build. For
`docker run -v`, docker does not fail: it creates the missing host path as
an empty folder owned by root, so the container starts with an empty
folder where the test data, the configuration or the checked-out code
should be, and fails later (or, worse, passes with nothing to test).

## Example
```yaml
steps:
  - uses: actions/checkout@v4
  - run: docker run --gpus all -v ./tests/fixtures:/fixtures ci:latest pytest /fixtures
    # tests/fixtures was moved to tests/data
```

## Fix
Point the mount at the path's new place, or make the path in an earlier
step when the job produces it (`mkdir -p out`).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator

from ci_checks.core.diagnostics import Diagnostic, Related, Severity
from ci_checks.core.repository import FileKind
from ci_checks.model import Action, Job, Step
from ci_checks.model.files.docker import Image, Mount
from ci_checks.model.files.flow import Read
from ci_checks.model.files.jobs import JobFlow
from ci_checks.model.files.places import ACTION, CONTEXT, ROOT, WORKSPACE, Place
from ci_checks.model.files.repository import RepositoryFiles
from ci_checks.model.references import Reference, docker_run_mounts, unwrapped
from ci_checks.rules._checkout import Lacking, close_name, lacking, mentioned
from ci_checks.rules.context import RepositoryContext
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus

_MOUNTS = ("volume", "bind-mount")
_FILE_NAME = re.compile(r"(\A|/)[^/.][^/]*\.[A-Za-z][A-Za-z0-9]{0,7}\Z")
"""A path whose last name has an extension (`configs/model.yaml`): a file."""


def check_repository(context: RepositoryContext) -> Iterator[Diagnostic]:
    if not context.whole_checkout:
        return
    files = context.files
    for file in context.targets:
        if file.workflow is not None:
            for job in file.workflow.jobs.values():
                if job.steps and not job.is_call and job.container is None:
                    yield from _job(files, job)
        elif file.action is not None and file.action.is_composite:
            yield from _action(files, file.action)
    for path in files.repository.dockerfiles:
        if context.covers(path):
            context.load(path)
            yield from _dockerfile(files, path)


def _job(files: RepositoryFiles, job: Job) -> Iterator[Diagnostic]:
    flow = files.job(job)
    for read in flow.reads:
        missing = _missing(files, flow, read, WORKSPACE, job.steps)
        write = flow.origin(read.reference.place, read.seq, folder=True).write if missing is not None else None
        if missing is not None and write is not None:
            yield _mounted(read, missing, [Related(write.span, "the repository is checked out here")])


def _action(files: RepositoryFiles, action: Action) -> Iterator[Diagnostic]:
    for known, flow in files.actions:
        if known is action:
            for read in flow.reads:
                missing = _missing(files, flow, read, ACTION, action.steps)
                if missing is not None:
                    yield _mounted(read, missing, [])


def _missing(files: RepositoryFiles, flow: JobFlow, read: Read, base: str, steps: list[Step]) -> Lacking | None:
    """The repository path a mount's source is, when the checkout put it there, the repository lacks it, and no
    step before it names it (the mount's own step, but for the mount's command, included)."""
    reference = read.reference
    place = reference.place
    step = read.step
    if reference.kind not in _MOUNTS or step is None or place.base != base:
        return None
    if not place.path or place.outside or place.glob:
        return None
    missing = lacking(files, flow.origin(place, read.seq, folder=True))
    if missing is None or mentioned(files, steps[: step.index], flow, read.seq, missing):
        return None
    script = step.run.value if step.run is not None else ""
    rest = script.replace(reference.command.text, "", 1) if reference.command.text else script
    if any(name in rest for name in missing.names):
        return None
    if reference.kind == "volume" and not _an_input(reference, missing):
        return None  # a folder docker makes for the container to write its output in
    return missing


def _an_input(reference: Reference, missing: Lacking) -> bool:
    """Whether a `-v` host path is one the container reads: mounted read-only, a file (docker makes a folder of
    that name), or a close name of a path the repository has (it was renamed)."""
    if missing.suggestion or _FILE_NAME.search(missing.path):
        return True
    words = unwrapped(reference.command.words)
    return any(
        mount.read_only
        for mount in docker_run_mounts(words[2:])
        if reference.word is not None and mount.word.start == reference.word.start
    )


def _mounted(read: Read, missing: Lacking, related: list[Related]) -> Diagnostic:
    reference = read.reference
    command = " ".join(reference.command.argv)
    shown = command if len(command) <= 60 else command[:57] + "..."
    lacks = f"`{shown}` mounts `{missing.path}`, which the repository does not have and no earlier step makes"
    if reference.kind == "volume":
        happens = "docker creates it as an empty folder owned by root, so the container sees an empty folder"
    else:
        happens = 'the run fails ("bind source path does not exist")'
    return RULE.diagnostic(reference.span, f"{lacks}: {happens}{missing.suggestion}", related)


def _dockerfile(files: RepositoryFiles, path: str) -> Iterator[Diagnostic]:
    images = files.images(path)
    if not images:
        return
    for mount in images[0].mounts:
        place = mount.place
        if place is None or place.glob or place.outside or not place.path:
            continue
        if mount.stage is None:
            yield from _in_context(files, images, mount, place)
        else:
            yield from _in_stage(images[0], mount, place)


def _in_context(files: RepositoryFiles, images: list[Image], mount: Mount, place: Place) -> Iterator[Diagnostic]:
    if place.base != CONTEXT or any(built.context is None for built in images):
        return  # a context ci-checks cannot know: any source may be there
    if any(files.in_context(built, place) for built in images):
        return
    contexts = [built.context or "" for built in images]
    where = " or ".join(f"`{context}`" if context else "the repository root" for context in contexts)
    first = posixpath.normpath(posixpath.join(contexts[0], place.path))
    message = (
        f"`RUN --mount=type=bind` source `{mount.written}` does not exist in the build context ({where}): the build "
        "fails at this instruction"
    )
    yield RULE.diagnostic(mount.span, message + close_name(files.repository, first))


def _in_stage(built: Image, mount: Mount, place: Place) -> Iterator[Diagnostic]:
    """A source in another stage, judged when that stage starts from nothing (`FROM scratch`): then only its own
    instructions (and the stages it is built from) put files there."""
    stage = built.stage(mount.stage or "")
    root = stage
    seen = 0
    while root is not None and built.stage(root.image) is not None and seen < len(built.stages):
        root = built.stage(root.image)
        seen += 1
    if stage is None or root is None or root.image.lower() != "scratch":
        return
    if stage.flow.origin(Place(ROOT, place.path), stage.flow.end).write is not None:
        return
    message = (
        f"`RUN --mount=type=bind,from={mount.stage}` source `{mount.written}` is not in stage `{mount.stage}`: "
        "nothing of that stage, built from scratch, puts it there, and the build fails at this instruction"
    )
    yield RULE.diagnostic(mount.span, message)


RULE = Rule(
    "CC053",
    "missing-mount-source",
    "A bind mount's source is a path that is not there",
    Severity.ERROR,
    __doc__,
    frozenset({FileKind.WORKFLOW, FileKind.ACTION, FileKind.DOCKERFILE}),
    None,
    check_repository,
    group=RuleGroup.WORKFLOW,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
