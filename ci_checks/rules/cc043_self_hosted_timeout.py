"""A job on a self-hosted runner has no `timeout-minutes`.

## What it does
Reports a job that runs on a self-hosted runner and sets no
`timeout-minutes` (and not every one of its steps has one). A runner is
self-hosted when `runs-on` has the `self-hosted` label or a label of a
self-hosted runner in the runner inventory, also when the labels come from a
matrix or from a caller of a reusable workflow
(`runs_on: '["self-hosted", "amd", "mi300x"]'` feeding
`runs-on: ${{ fromJSON(inputs.runs_on) }}`). The inventory is the
configuration's `runners:`, and for the machines it does not name, the one
the workflows imply: labels written beside `self-hosted` elsewhere, declared
in `.github/actionlint.yaml`, or naming a GPU (`h200`, `mi300x`, `4gpu`; GPU
machines are self-hosted, or named in `runners:` with `self-hosted: false`).
The finding is at the job; its notes show where the labels are written.
Only the legs of a job that may run count (see `docs/values.md`): a job with
`if: false`, or whose every leg needs a job that never runs, is not judged.
Workflows with no `on:` never run and are not judged.

## Why it matters
Without a limit GitHub cancels a job after 360 minutes. A test that hangs
on a GPU (a deadlocked collective, a wedged driver) holds the machine for six
hours, and every other job waiting for that runner waits with it.

## Example
```yaml
jobs:
  test:
    runs-on: [self-hosted, amd, mi300x]
    steps:
      - run: pytest tests/gpu
```

## Fix
Set `timeout-minutes` on the job to a little more than its longest normal
run: `timeout-minutes: 90`. `--fix` writes `timeout-minutes: 360`, GitHub's own
limit, so that nothing changes until the team lowers it; with
`fixes: {timeout-minutes: 90}` in the configuration it writes 90, an unsafe fix
(`--unsafe-fixes`) since a longer run is then cancelled.
"""

from __future__ import annotations

from collections.abc import Iterator

from ci_checks.core.diagnostics import Diagnostic, Edit, Fix, Severity, Span
from ci_checks.core.repository import FileKind
from ci_checks.model import Job
from ci_checks.rules.context import GITHUB_TIMEOUT_MINUTES, RepositoryContext
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus


def check_repository(context: RepositoryContext) -> Iterator[Diagnostic]:
    for workflow in context.target_workflows:
        if not workflow.triggers:
            continue  # a workflow with no `on:` never runs
        for job in workflow.jobs.values():
            if job.is_call or job.timeout_minutes is not None:
                continue
            if job.steps and all(step.timeout_minutes is not None for step in job.steps):
                continue
            if context.resolver.runners(job, running=False).self_hosted(context.runners) is None:
                continue  # no leg asks for a self-hosted runner: which of them may run need not be known
            choice = context.resolver.runners(job).self_hosted(context.runners)
            if choice is None:
                continue
            labels = ", ".join(choice.values)
            message = (
                f"job '{job.id}' runs on a self-hosted runner (`{labels}`) without `timeout-minutes`; "
                "a hung job holds the machine for GitHub's default of 360 minutes"
            )
            fix = _fix(job, context.fix_timeout_minutes)
            yield RULE.diagnostic(job.key.span, message, choice.related(context.runners), fix)


def _fix(job: Job, minutes: int) -> Fix | None:
    """`timeout-minutes:` as the job's first key, at its keys' indentation; safe when it is GitHub's own 360."""
    first = job.node.pairs[0][0].span  # there is one: the job asks for a self-hosted runner in `runs-on:`
    if first.line == job.key.span.line:  # a flow mapping, `job: {runs-on: ...}`
        return None
    edit = Edit(
        Span(first.path, first.line, 1, first.line, 1), f"{' ' * (first.column - 1)}timeout-minutes: {minutes}\n"
    )
    safe = minutes == GITHUB_TIMEOUT_MINUTES
    return Fix(f"set timeout-minutes: {minutes}" + ("" if safe else " (the job is cancelled sooner)"), (edit,), safe)


RULE = Rule(
    "CC043",
    "self-hosted-timeout",
    "A job on a self-hosted runner has no `timeout-minutes`",
    Severity.WARNING,
    __doc__,
    frozenset({FileKind.WORKFLOW}),
    None,
    check_repository,
    group=RuleGroup.WORKFLOW,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
