"""A job on a self-hosted runner has no `timeout-minutes`.

## What it does
Reports a job that runs on a self-hosted runner and sets no
`timeout-minutes` (and not every one of its steps has one). A runner is
self-hosted when `runs-on` has the `self-hosted` label or a label of a
self-hosted runner in the configuration's `runners:` inventory, also when
the labels come from a matrix or from a caller of a reusable workflow
(`runs_on: '["self-hosted", "amd", "mi300x"]'` feeding
`runs-on: ${{ fromJSON(inputs.runs_on) }}`). The finding is at the job;
its notes show where the labels are written.

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
run: `timeout-minutes: 90`.
"""

from __future__ import annotations

from collections.abc import Iterator

from ci_checks.context import RepositoryContext
from ci_checks.diagnostics import Diagnostic, Severity
from ci_checks.repository import FileKind
from ci_checks.rule import Rule


def check_repository(context: RepositoryContext) -> Iterator[Diagnostic]:
    for workflow in context.target_workflows:
        for job in workflow.jobs.values():
            if job.is_call or job.timeout_minutes is not None:
                continue
            if job.steps and all(step.timeout_minutes is not None for step in job.steps):
                continue
            choice = context.resolver.runners(job).self_hosted(context.runners)
            if choice is None:
                continue
            labels = ", ".join(choice.values)
            message = (
                f"job '{job.id}' runs on a self-hosted runner (`{labels}`) without `timeout-minutes`; "
                "a hung job holds the machine for GitHub's default of 360 minutes"
            )
            yield RULE.diagnostic(job.key.span, message, choice.related(context.runners))


RULE = Rule(
    "CC043",
    "self-hosted-timeout",
    "A job on a self-hosted runner has no `timeout-minutes`",
    Severity.WARNING,
    __doc__,
    frozenset({FileKind.WORKFLOW}),
    None,
    check_repository,
)
