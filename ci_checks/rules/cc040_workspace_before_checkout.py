"""A step uses the repository's files before the job checks the repository out.

## What it does
Follows each job's steps in order and reports a step that needs this
repository's files before `actions/checkout` has put them in the workspace:
a local action (`uses: ./...`), or a `run:` script that runs, applies or
installs a repository path (`bash scripts/x.sh`, `python tools/y.py`,
`./run.sh`, `source env.sh`, `git apply fix.patch`, `pip install -e .`,
`pip install -r requirements.txt`, `docker build -f docker/Dockerfile .`,
`make`, `cd python`), directly or through `$GITHUB_WORKSPACE` or
`${{ github.workspace }}`. Paths are taken relative to the step's
`working-directory`. When the checkout does come later in the job, that
checkout is reported too, with the steps that came before it.

What each step puts in the workspace is followed path by path (see
`docs/model.md`): a checkout of another repository (`repository:
org/other`) puts that repository's files under its `path:`, and a path that
an earlier command made (`git clone URL dir && cd dir`, `mkdir`, `curl -o`,
`cp`, `tar -x`, a redirection, a download or cache restore) or may have made
(an action that is not a known setup action, a program that names the path)
is not the repository's. The working directory is followed through
`working-directory:`, `cd` (`cd x && ...`, subshells), `$GITHUB_WORKSPACE`,
`${{ github.workspace }}` and `env:` values; a command that works in
another folder (`cd /opt/other && git fetch ...`) leaves the workspace as
it was. A script fed on standard input (`python3 - <<'PY'`) reads no file.
Container jobs are judged the same way: their workspace is mounted from the
runner. Reusable-workflow calls have no steps and are not judged; paths
built from variables are skipped, not guessed.

## Why it matters
Before the checkout the workspace is empty (or, on a self-hosted runner,
holds whatever the previous job left there). The step fails with "No such
file or directory", or worse, runs a stale script from an earlier run.

## Example
```yaml
steps:
  - run: pip install -r requirements.txt
  - uses: actions/checkout@v4
```

## Fix
Move `actions/checkout` before the first step that needs the repository.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ci_checks.core.diagnostics import Diagnostic, Related, Severity, Span
from ci_checks.core.repository import FileKind
from ci_checks.model import Job
from ci_checks.model.files.jobs import JobFlow, checkout
from ci_checks.model.files.places import WORKSPACE, Place
from ci_checks.model.files.repository import RepositoryFiles
from ci_checks.model.references import VERBS, Reference
from ci_checks.rules.context import RepositoryContext
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus


@dataclass(frozen=True)
class _Use:
    span: Span
    text: str


def check_repository(context: RepositoryContext) -> Iterator[Diagnostic]:
    for file in context.targets:
        if file.workflow is None:
            continue
        for job in file.workflow.jobs.values():
            if not job.is_call and job.steps:
                yield from _job(job, context.files)


def _job(job: Job, files: RepositoryFiles) -> Iterator[Diagnostic]:
    late = next((step for step in job.steps if (found := checkout(step)) is not None and found.this_repository), None)
    flow = files.job(job, late.index + 1 if late is not None else None)  # what comes after the checkout does not matter
    uses = list(_uses_before(job, flow, late.index if late is not None else len(job.steps)))
    if late is not None and late.uses_node is not None:
        related = [Related(use.span, f"{use.text}, before the checkout") for use in uses]
        where = Related(late.uses_node.span, "the repository is checked out only here")
        for use in uses:
            yield RULE.diagnostic(
                use.span, f"{use.text} before `actions/checkout` puts the repository in the workspace", [where]
            )
        if uses:
            count = f"{len(uses)} use{'s' if len(uses) != 1 else ''}"
            message = f"`actions/checkout` comes after {count} of the repository's files in job '{job.id}'"
            message += "; move it before them"
            yield RULE.diagnostic(late.uses_node.span, message, related)
        return
    for use in uses:
        yield RULE.diagnostic(use.span, f"{use.text}, but job '{job.id}' never checks the repository out")


def _uses_before(job: Job, flow: JobFlow, late: int) -> Iterator[_Use]:
    """Each use of a workspace path in the steps before step `late` (the checkout) that nothing put there."""
    found: list[tuple[int, _Use]] = []
    for step in job.steps[:late]:
        if step.uses is not None and step.uses.kind == "local" and step.uses_node is not None:
            place = Place(WORKSPACE).joined(step.uses.path)
            if flow.origin(place, flow.starts[step.index], folder=True).write is None:
                found.append(
                    (flow.starts[step.index], _Use(step.uses_node.span, f"`uses: {step.uses.raw}` runs a local action"))
                )
    for read in flow.reads:
        reference = read.reference
        if read.step is None or read.step.index >= late or not _judged(reference):
            continue
        if flow.origin(reference.place, read.seq, folder=reference.kind == "cd").write is None:
            found.append((read.seq, _Use(reference.span, _describe(reference))))
    for _, use in sorted(found, key=lambda item: item[0]):
        yield use


def _judged(reference: Reference) -> bool:
    place = reference.place
    mounted = reference.kind in ("volume", "bind-mount")  # a container's folder, which may be its output
    return place.base == WORKSPACE and not place.outside and not mounted


def _describe(reference: Reference) -> str:
    command = " ".join(reference.command.argv)
    shown = command if len(command) <= 60 else command[:57] + "..."
    if reference.kind in ("make", "install"):
        target = f"`{reference.place.path}`" if reference.place.path else "the repository"
        return f"`{shown}` {VERBS[reference.kind]} {target}"
    return f"`{shown}` {VERBS[reference.kind]} `{reference.place.path}`"


RULE = Rule(
    "CC040",
    "workspace-before-checkout",
    "A step uses the repository's files before `actions/checkout`",
    Severity.ERROR,
    __doc__,
    frozenset({FileKind.WORKFLOW}),
    None,
    check_repository,
    group=RuleGroup.WORKFLOW,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
