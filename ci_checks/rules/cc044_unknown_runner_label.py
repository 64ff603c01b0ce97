"""A `runs-on` label that no runner of the configured inventory carries.

## What it does
With a `runners:` inventory in the configuration, checks every label a job
may ask for: labels written in `runs-on`, matrix values it takes, and JSON
lists passed by callers into a reusable workflow
(`runs_on: '["self-hosted", "amd", "mi300x"]'`, followed into
`runs-on: ${{ fromJSON(inputs.runs_on) }}`). A label must belong to a runner
of the inventory, be one every self-hosted runner has (`self-hosted`,
`linux`, `x64`, `arm64` ...) or name a GitHub-hosted runner
(`ubuntu-24.04`, `windows-latest`, `macos-14`). Each unknown label is
reported where it is written, the character inside a JSON string included.
Without an inventory the rule is silent.

The same inventory is given to actionlint as its self-hosted labels, so its
`runner-label` findings for them go away.

## Why it matters
A job whose labels no runner has is never picked up: it waits in the queue
until GitHub gives up after a day, and nothing says why. A typo (`mi300`
for `mi300x`) or a retired machine class is enough.

## Example
```yaml
# .github/ci-checks.yml
runners:
  mi300x: {vendor: amd, labels: [self-hosted, amd, mi300x]}
# workflow
runs-on: [self-hosted, amd, mi300]
```

## Fix
Use a label of the inventory, or add the new runner to `runners:`.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from ci_checks.context import RepositoryContext
from ci_checks.diagnostics import Diagnostic, Severity, Span
from ci_checks.model.runners import is_github_hosted
from ci_checks.repository import FileKind
from ci_checks.rule import Rule


def check_repository(context: RepositoryContext) -> Iterator[Diagnostic]:
    inventory = context.runners
    if not inventory:
        return
    reported: set[tuple[Span, str]] = set()
    for workflow in context.workflows:
        for job in workflow.jobs.values():
            for choice in context.resolver.runners(job).choices:
                for label in choice.labels:
                    if inventory.knows(label.value) or is_github_hosted(label.value):
                        continue
                    if (label.span, label.value) in reported:
                        continue
                    reported.add((label.span, label.value))
                    close = difflib.get_close_matches(label.value.lower(), inventory.labels, n=1, cutoff=0.6)
                    hint = f" (did you mean `{close[0]}`?)" if close else ""
                    message = f"job '{job.id}' asks for runner label `{label.value}`, which no runner in the "
                    message += f"`runners:` inventory has{hint}"
                    yield RULE.diagnostic(label.span, message, label.via)


RULE = Rule(
    "CC044",
    "unknown-runner-label",
    "A `runs-on` label that no runner of the `runners:` inventory carries",
    Severity.ERROR,
    __doc__,
    frozenset({FileKind.WORKFLOW}),
    None,
    check_repository,
)
