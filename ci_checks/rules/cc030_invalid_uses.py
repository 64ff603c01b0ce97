"""A `uses:` value is not a reference GitHub can resolve.

## What it does
Checks every `uses:` of a step (in `parallel` groups too) or of a
reusable-workflow job. It must be `owner/repo@ref`, `owner/repo/path@ref`,
`./local/path`, `$/path` (this repository at the commit that runs, GitHub's
self-repository reference) or `docker://image`, and it cannot contain `${{ }}`
expressions.

## Why it matters
GitHub resolves every `uses:` before the first job starts; one without a ref
or with an expression fails the whole run ("the workflow is not valid").

## Example
```yaml
steps:
  - uses: actions/checkout
  - uses: ${{ inputs.setup-action }}@v1
```

## Fix
Pin a ref (ideally a full commit SHA): `actions/checkout@v4`. To choose an
action at run time, use `if:` on alternative steps.
"""

from __future__ import annotations

from collections.abc import Iterator

from ci_checks.core.diagnostics import Diagnostic, Severity
from ci_checks.model import ActionRef
from ci_checks.model.loading import LoadedFile
from ci_checks.rules.rule import YAML_KINDS, Rule, RuleGroup, RuleStatus
from ci_checks.syntax.yamlpos import Scalar


def check(file: LoadedFile) -> Iterator[Diagnostic]:
    nodes: list[Scalar] = [step.uses_node for step in file.steps if step.uses_node is not None]
    if file.workflow is not None:
        nodes += [job.uses_node for job in file.workflow.jobs.values() if job.uses_node is not None]
    for node in nodes:
        parsed = ActionRef.parse(node.value)
        if isinstance(parsed, str):
            yield RULE.diagnostic(node.span, parsed)


RULE = Rule(
    "CC030",
    "invalid-uses",
    "`uses:` is not a valid reference",
    Severity.ERROR,
    __doc__,
    YAML_KINDS,
    check,
    group=RuleGroup.WORKFLOW,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
