"""A scope lacks something a policy `require` rule asks for.

## What it does
For a rule of kind `require`, reports each scope its `where` selects (a file,
workflow, job, step or branch) that does not contain every listed item, at the
scope: the job's key, the step's first line, the branch's condition.

## Why it matters
Some settings must be on every instance of something: `persist-credentials:
false` on each checkout of a workflow that runs untrusted code, a
`--no-deps` install in each image. A new job or step copied from elsewhere
silently lacks them; a require rule notices.

## Example
```yaml
rules:
  - id: checkout-no-credentials
    kind: require
    where: {workflow: .github/workflows/_run-ci-rocm.yml, step: {uses: actions/checkout}}
    require:
      - with: {persist-credentials: false}
```

## Fix
Add the missing item to the scope that lacks it.
"""

from __future__ import annotations

from ci_checks.diagnostics import Severity
from ci_checks.rule import Rule

RULE = Rule(
    "CC102",
    "policy-require",
    "A scope lacks what a policy `require` rule asks for",
    Severity.ERROR,
    __doc__,
    frozenset(),
    None,
)
