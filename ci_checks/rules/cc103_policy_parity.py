"""Two workflows that should match differ, as a policy `parity` rule defines it.

## What it does
For a rule of kind `parity`, compares the listed workflows by the aspects in
`compare`: `inputs` (of `workflow_call` and `workflow_dispatch`), `secrets`
and `outputs` (of `workflow_call`), `jobs` (by id) and `steps` (by name, else
id, else what they use or run). Each name present in one workflow and absent
from another is reported where it is defined, unless `allow` lists it.

## Why it matters
CUDA and ROCm paths of the same CI drift: an input added to one reusable
workflow and not the other, a step fixed in one copy only. Parity makes every
difference either fixed or written down in `allow` as intended.

## Example
```yaml
rules:
  - id: rocm-parity
    kind: parity
    workflows: [.github/workflows/_run-ci.yml, .github/workflows/_run-ci-rocm.yml]
    compare: [inputs, secrets, steps]
    allow: {steps: ["Wait for GPU ready"]}
```

## Fix
Add the missing input, secret or step to the other workflow, or list the name
under `allow` when the difference is intended.
"""

from __future__ import annotations

from ci_checks.core.diagnostics import Severity
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus

RULE = Rule(
    "CC103",
    "policy-parity",
    "Workflows that a policy `parity` rule pairs differ",
    Severity.ERROR,
    __doc__,
    frozenset(),
    None,
    group=RuleGroup.POLICY,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
