"""A `run:` step's working directory is a folder that is not there when the step starts.

## What it does
Follows each job's steps in order (see `docs/model.md`) and reports a
`run:` step whose `working-directory:` (its own, or the job's or workflow's
`defaults.run.working-directory`, reported once at the first step it fails)
names a folder that:

- lies in the workspace, with every part known: `${{ github.workspace }}`
  and `${{ env.X }}` are read; a matrix value, an input, a shell variable
  (which GitHub does not expand there) or a Windows path leave it unknown;
- the checkout of this repository put there (the step runs after
  `actions/checkout` of this repository into the workspace) but the
  repository does not have, in any case of its letters;
- no earlier step makes: nothing was cloned, created (`mkdir -p`), copied,
  downloaded, restored from a cache or artifact, unpacked or `git init`ed
  there or inside it, no action that may write anything in the workspace
  ran since the checkout, and no earlier step's script, local action, or
  repository script or Makefile it runs names the part of the folder the
  repository lacks (it may make it in a way that is not followed:
  `python tools/gen.py`, `cmake -Bbuild`).

In a composite action, a `working-directory` under
`${{ github.action_path }}` is judged against the action's own folder; one
in the workspace only when the action's jobs in the repository (and no
other action) run it, each after checking the repository out there and
making nothing at that path. A checkout of another ref than the run's own
commit (`ref: gh-pages`, `ref: ${{ inputs.release }}`) may hold another
tree, one with `clean: false` keeps what an earlier run left, and a git
submodule's files are not this repository's: none of them is judged.

## Why it matters
The runner starts the step's shell in that folder; when it is missing, the
step fails before its first command runs ("No such file or directory"). A
folder renamed or moved in the repository breaks the workflow only when it
next runs: for nightly and release workflows, days after the change.

## Example
```yaml
steps:
  - uses: actions/checkout@v4
  - working-directory: csrc/kernels   # moved to kernels/ last week
    run: make -j
```

## Fix
Point `working-directory` at the folder's new place, or make the folder in
an earlier step (`mkdir -p build`) when the job builds it.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator

from ci_checks.core.diagnostics import Diagnostic, Related, Severity, Span
from ci_checks.core.repository import FileKind
from ci_checks.model import Action, Job, Step
from ci_checks.model.files.flow import Origin
from ci_checks.model.files.jobs import JobFlow
from ci_checks.model.files.places import ACTION, WORKSPACE, Place
from ci_checks.model.files.repository import RepositoryFiles
from ci_checks.model.values import mapping
from ci_checks.rules._checkout import Lacking, lacking, mentioned
from ci_checks.rules.context import RepositoryContext
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus
from ci_checks.syntax.yamlpos import Mapping, Node

_SHELL_VARIABLE = re.compile(r"\$(?!\{\{)")
"""A `$` that starts no expression: GitHub does not expand shell variables in `working-directory`, so the
folder is one the model cannot read."""
_NOT_POSIX = re.compile(r"\\|^[A-Za-z]:")
"""A Windows path (`build\\Release`, `C:/x`)."""

_Before = tuple[list[Step], JobFlow, int]
"""The steps of a job before one that runs an action, the job's flow, and where that step starts in it."""


def check_repository(context: RepositoryContext) -> Iterator[Diagnostic]:
    if not context.whole_checkout:
        return
    files = context.files
    seen: set[Span] = set()
    for file in context.targets:
        found: Iterator[Diagnostic]
        if file.workflow is not None:
            found = (
                diagnostic
                for job in file.workflow.jobs.values()
                if job.steps and not job.is_call
                for diagnostic in _job(files, job)
            )
        elif file.action is not None and file.action.is_composite:
            found = _action(files, file.action)
        else:
            continue
        for diagnostic in found:
            if diagnostic.span not in seen:  # a default is reported once, at the first step it fails
                seen.add(diagnostic.span)
                yield diagnostic


def _job(files: RepositoryFiles, job: Job) -> Iterator[Diagnostic]:
    flow = files.job(job)
    for step in job.steps:
        written, node, owner = _written(step, job)
        place = flow.directories.get(step.index)
        if written is None or node is None or place is None or not _judged(written, place, WORKSPACE):
            continue
        start = flow.starts[step.index]
        origin = flow.origin(place, start, folder=True)
        missing = lacking(files, origin, folders_only=True)
        if missing is None or origin.write is None or mentioned(files, job.steps[: step.index], flow, start, missing):
            continue
        checkout = Related(origin.write.span, "the repository is checked out here")
        yield _finding(node.span, written, owner, step, missing, [checkout])


def _action(files: RepositoryFiles, action: Action) -> Iterator[Diagnostic]:
    flow = next((flow for known, flow in files.actions if known is action), None)
    if flow is None:
        return
    folder = posixpath.dirname(action.path)
    for step in action.steps:
        written = step.working_directory
        node = step.node.get("working-directory")
        place = flow.directories.get(step.index)
        if written is None or node is None or place is None:
            continue
        start = flow.starts[step.index]
        earlier = action.steps[: step.index]
        if _judged(written, place, ACTION):
            missing = lacking(files, flow.origin(place, start, folder=True), folders_only=True)
            if missing is not None and not mentioned(files, earlier, flow, start, missing):
                yield _finding(node.span, written, None, step, missing, [])
        elif _judged(written, place, WORKSPACE) and flow.origin(place, start, folder=True).kind == "checkout":
            callers = _callers(files, folder, place)  # the action's flow stands for its callers' checkouts
            missing = _missing_everywhere(files, [origin for origin, _ in callers])
            if missing is None or mentioned(files, earlier, flow, start, missing):
                continue
            if any(mentioned(files, steps, caller, at, missing) for _, (steps, caller, at) in callers):
                continue
            note = "the repository is checked out here, before a step runs the action"
            checkouts = [Related(origin.write.span, note) for origin, _ in callers if origin.write is not None]
            yield _finding(node.span, written, None, step, missing, checkouts)


def _callers(files: RepositoryFiles, folder: str, place: Place) -> list[tuple[Origin, _Before]]:
    """What put the folder there in each job that runs the action from `folder`, with what ran before; none when
    another action runs it (whose callers are further away)."""
    if any(_runs(step, folder) for action, _ in files.actions for step in action.steps):
        return []
    return [
        (
            flow.origin(place, flow.starts[step.index], folder=True),
            (job.steps[: step.index], flow, flow.starts[step.index]),
        )
        for job, flow in files.jobs
        for step in job.steps
        if _runs(step, folder)
    ]


def _runs(step: Step, folder: str) -> bool:
    uses = step.uses
    return uses is not None and uses.kind == "local" and posixpath.normpath(uses.path) == folder


def _missing_everywhere(files: RepositoryFiles, origins: list[Origin]) -> Lacking | None:
    """The folder that each of these checkouts lacks (the same repository path in each)."""
    found = [lacking(files, origin, folders_only=True) for origin in origins]
    first = found[0] if found else None
    return first if first is not None and all(missing == first for missing in found) else None


def _written(step: Step, job: Job) -> tuple[str | None, Node | None, str | None]:
    """The working directory of a `run:` step as written, the YAML value it is written in, and whose default it
    is when it is not the step's own (`job 'test'`, `the workflow`)."""
    if step.run is None or step.working_directory is not None:
        return step.working_directory, step.node.get("working-directory"), None
    if job.defaults.working_directory:
        return job.defaults.working_directory, _default(job.node), f"job '{job.id}'"
    if job.workflow.defaults.working_directory:
        return job.workflow.defaults.working_directory, _default(job.workflow.node), "the workflow"
    return None, None, None


def _default(node: Mapping) -> Node | None:
    defaults = mapping(node.get("defaults"))
    run = mapping(defaults.get("run")) if defaults is not None else None
    return run.get("working-directory") if run is not None else None


def _judged(written: str, place: Place, base: str) -> bool:
    """Whether a working directory is a known folder below `base` (not the base itself, not outside it)."""
    if _SHELL_VARIABLE.search(written) or _NOT_POSIX.search(written.strip()):
        return False
    return place.base == base and bool(place.path) and not place.outside and not place.glob


def _finding(
    span: Span, written: str, owner: str | None, step: Step, missing: Lacking, related: list[Related]
) -> Diagnostic:
    key = "working-directory" if owner is None else "defaults.run.working-directory"
    whose = f"step '{step.label}'" if owner is None else owner
    shown = written.strip()
    folder = "a folder" if posixpath.normpath(shown) == missing.path else f"`{missing.path}`, a folder"
    if owner is None:
        fails = "no earlier step makes: the step fails before its script runs"
    else:
        fails = f"no step before '{step.label}' makes: that step fails before its script runs"
    message = f"`{key}: {shown}` of {whose} is {folder} that the repository does not have and {fails}"
    return RULE.diagnostic(span, message + missing.suggestion, related)


RULE = Rule(
    "CC051",
    "missing-working-directory",
    "A step's working directory is a folder that is not there when the step starts",
    Severity.ERROR,
    __doc__,
    frozenset({FileKind.WORKFLOW, FileKind.ACTION}),
    None,
    check_repository,
    group=RuleGroup.WORKFLOW,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
