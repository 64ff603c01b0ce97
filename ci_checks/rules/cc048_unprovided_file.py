"""A command reads a file at a path that nothing in the job, the image or the repository puts there.

## What it does
Follows what each job, composite action and Dockerfile stage puts on the
file system (see `docs/model.md`) and reports a command that applies a patch
(`git apply`, `git am`, `patch`), runs a script (`bash x.sh`, `python x.py`,
`source x`) or installs requirements (`pip install -r`) from a path that:

- nothing earlier put there: no `COPY`/`ADD` (of this stage or the stage it
  is built from), `RUN --mount`, `WORKDIR`, clone, download, copy, unpacking,
  redirection, or program given the path;
- no Dockerfile of the repository puts there either (the job or stage may
  run in an image built from it);
- the repository holds a file of that name, which is what the command
  means to read (its `COPY` was dropped, or points elsewhere).

Paths are read with the variables known where the command runs: in a
Dockerfile, `ENV` values and `ARG`s (`git apply /tmp/${PATCH}` with the
value a build passes, else the `ARG`'s default); one whose value cannot be
known is not judged.

Only places the base image or the runner cannot be expected to hold are
judged: in a Dockerfile, `/tmp` and `/var/tmp`, and any patch; in a job,
`/tmp`, `/var/tmp` and `$RUNNER_TEMP`. Paths in the workspace are
dangling-reference's (CC041).

## Why it matters
The image build or the job fails at that command ("No such file or
directory") when the file it reads was never put in place; on a machine
that kept the file from an earlier run it applies a stale copy instead, and
the failure appears later, somewhere else.

## Example
```dockerfile
FROM rocm/pytorch:latest
RUN git clone https://github.com/radixark/Megatron-LM /opt/Megatron-LM
RUN cd /opt/Megatron-LM && git apply /tmp/amd_patch/megatron.patch
```
(the `COPY docker/amd_patch/latest/megatron.patch /tmp/amd_patch/megatron.patch`
line above it was dropped)

## Fix
Put the file there before the command reads it (restore the `COPY`), or
read it from where it is.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ci_checks.core.diagnostics import Diagnostic, Severity
from ci_checks.core.repository import FileKind
from ci_checks.model.files.flow import Read
from ci_checks.model.files.places import ROOT, TEMP, Place
from ci_checks.model.files.repository import Owned, RepositoryFiles
from ci_checks.model.references import VERBS
from ci_checks.rules.context import RepositoryContext
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus

if TYPE_CHECKING:
    from ci_checks.model.files.docker import Image

_JUDGED_KINDS = ("patch", "script", "requirements")
_SCRATCH = ("tmp", "var/tmp")
_MAY_HAVE_WRITTEN_ANYWHERE = frozenset({"opaque"})


def check_repository(context: RepositoryContext) -> Iterator[Diagnostic]:
    if not context.whole_checkout:
        return
    files = context.files
    seen: set[tuple[object, ...]] = set()
    for owned in files.flows_of(context.targets, context.covers):
        for read in owned.flow.reads:
            diagnostic = _judged(files, owned, read)
            if diagnostic is not None and (diagnostic.span, diagnostic.message) not in seen:
                seen.add((diagnostic.span, diagnostic.message))
                yield diagnostic


def _judged(files: RepositoryFiles, owned: Owned, read: Read) -> Diagnostic | None:
    reference = read.reference
    place = reference.place
    if reference.kind not in _JUDGED_KINDS or place.glob or not _in_scope(place, reference.kind, owned.image):
        return None
    if owned.flow.origin(place, read.seq, _MAY_HAVE_WRITTEN_ANYWHERE).write is not None:
        return None
    if any(place.within(made) is not None for made in _image_places(files, owned.image)):
        return None
    named = files.by_name.get(posixpath.basename(place.path))
    if not named:
        return None
    command = " ".join(reference.command.argv)
    command = command if len(command) <= 60 else command[:57] + "..."
    others = f" (and {len(named) - 1} more)" if len(named) > 1 else ""
    if owned.image is not None:
        nothing, hint = "no instruction of the image puts a file there", "was the `COPY` of it dropped?"
    else:
        nothing, hint = f"no step of {owned.owner} puts a file there", "copy it there before this command"
    message = (
        f"`{command}` {VERBS[reference.kind]} `{place}`, but {nothing}; the repository's `{named[0]}`{others} "
        f"has that name: {hint}"
    )
    return RULE.diagnostic(reference.span, message)


def _in_scope(place: Place, kind: str, image: Image | None) -> bool:
    """Places neither a base image nor a runner is expected to hold: scratch folders (and, in an image, patches)."""
    if place.base == TEMP:
        return image is None
    if place.base != ROOT:
        return False
    scratch = any(place.within(Place(ROOT, folder)) is not None for folder in _SCRATCH)
    return scratch or (image is not None and kind == "patch")


def _image_places(files: RepositoryFiles, image: Image | None) -> list[Place]:
    """What the repository's Dockerfiles put in images, but the one being judged: a job or stage may run in it."""
    if image is None:
        return files.image_places
    return [place for built in files.all_images if built.path != image.path for place in built.places()]


RULE = Rule(
    "CC048",
    "unprovided-file",
    "A command reads a file that nothing in the job, the image or the repository puts there",
    Severity.ERROR,
    __doc__,
    frozenset({FileKind.WORKFLOW, FileKind.ACTION, FileKind.DOCKERFILE}),
    None,
    check_repository,
    group=RuleGroup.WORKFLOW,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
