"""A scope lacks something a policy `require` rule asks for.

## What it does
For a rule of kind `require`, reports each scope its `where` selects (a file,
workflow, trigger, job, step or branch) that does not contain every listed
item, at the scope: the job's key, the step's first line, the branch's
condition. An item with `count` must be found that many times in each scope
(`count: 1`, `count: {min: 1, max: 2}`). A `key:` item with a comparator is
also reported at each selected value that does not satisfy it, and a `file:`
item (in a rule without `where`) at the rule when no file matches.

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

from ci_checks.core.diagnostics import Severity
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus

RULE = Rule(
    "CC102",
    "policy-require",
    "A scope lacks what a policy `require` rule asks for",
    Severity.ERROR,
    __doc__,
    frozenset(),
    None,
    group=RuleGroup.POLICY,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
