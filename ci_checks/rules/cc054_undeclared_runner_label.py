"""A `runs-on` label the repository's own list of runner labels lacks.

## What it does
Where the repository lists its self-hosted runner labels to actionlint
(`self-hosted-runner.labels` in `.github/actionlint.yaml` or
`.github/actionlint.yml`, globs such as `gpu-*` included), checks every label
a job may ask for against that list: labels written in `runs-on`, matrix
values it takes, and JSON lists passed by callers into a reusable workflow
(`runs_on: '["self-hosted", "mi300x"]'`, followed into
`runs-on: ${{ fromJSON(inputs.runs_on) }}`), each reported where it is
written. A label is known when the list declares it (without case, as GitHub
compares labels), when every self-hosted runner has it (`self-hosted`,
`linux`, `x64`, `arm64` ...), when a runner of the configuration's `runners:`
inventory carries it, or when it is GitHub's (labels that look like GitHub's,
`ubuntu-…`, `windows-…`, `macos-…`, are left to actionlint, which knows the
whole list). Any other label is an error, with a "did you mean" that stays
within one vendor and class of machine (see unknown-runner-label).

actionlint reports the labels it can follow (literal ones, matrix values) as
well (`runner-label`): ci-checks adds only the `runners:` inventory's labels
to a list the repository keeps. Where both report one label, the two are one
finding. (actionlint compares the list's labels with case: a `Linux-H100-8`
in the list does not cover `linux-h100-8` for it, and it reports that label
alone.) Without such a list, unknown-runner-label does this work from the
workflows alone; with one, it leaves every label to this rule.

Workflows with no `on:` never run and are not judged.

## Why it matters
A job whose labels no runner has waits in the queue until GitHub gives up
after a day, and nothing says why. A repository that keeps a list of its
runner labels has said which machines exist: a label it lacks is a retired
machine class, a typo, or a runner added without updating the list, which
actionlint then reports on every change.

## Example
```yaml
# .github/actionlint.yaml
self-hosted-runner:
  labels: [linux-mi300x-8, linux-h100-8]
# .github/workflows/ci.yml
jobs:
  rocm:
    runs-on: [self-hosted, linux-mi250-8]   # retired: no runner carries it
```

## Fix
Use a label the runners have, or add the new runner's label to
`self-hosted-runner.labels`.
"""

from __future__ import annotations

from collections.abc import Iterator

from ci_checks.core.diagnostics import Diagnostic, Related, Severity, Span
from ci_checks.core.repository import FileKind
from ci_checks.rules._common import did_you_mean
from ci_checks.rules.context import RepositoryContext
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus


def check_repository(context: RepositoryContext) -> Iterator[Diagnostic]:
    declared = context.runner_label_list
    if declared is None:
        return
    exact = [label.lower() for label in declared.labels if not any(char in label for char in "*?[")]
    known = sorted({*exact, *context.configured_runners.labels})
    inventory = " and no runner of the `runners:` inventory carries" if context.configured_runners else ""
    where = Related(declared.span, f"the runner labels `{declared.path}` declares")
    reported: set[tuple[Span, str]] = set()
    for workflow in context.workflows:
        if not workflow.triggers:
            continue  # a workflow with no `on:` never runs
        for job in workflow.jobs.values():
            for choice in context.resolver.runners(job, running=False).choices:
                for label in choice.labels:
                    if (label.span, label.value) in reported or not context.undeclared(label.value):
                        continue
                    if not context.resolver.asks(job, label):
                        continue  # no leg that may run asks for it
                    reported.add((label.span, label.value))
                    message = (
                        f"job '{job.id}' asks for runner label `{label.value}`, which `{declared.path}` does not "
                        f"declare{inventory}, so no runner picks up the job{did_you_mean(label.value, known)}"
                    )
                    yield RULE.diagnostic(label.span, message, [*label.via, where])


RULE = Rule(
    "CC054",
    "undeclared-runner-label",
    "A `runs-on` label the repository's own list of runner labels lacks",
    Severity.ERROR,
    __doc__,
    frozenset({FileKind.WORKFLOW}),
    None,
    check_repository,
    group=RuleGroup.WORKFLOW,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
