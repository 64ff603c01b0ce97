"""A policy rule's `where`, a `key:` PATH, or a parity rule's workflow matches nothing in the repository.

## What it does
Reports a policy rule whose `where` selects no scope at all, at the rule's
`where` in the policy file, naming the part that selected nothing (no file
matches the glob, no job or step has that name, no `if`, `else` or `case` arm
has that condition) and what exists instead. A `parity` rule naming a
workflow that does not exist is reported at that name.

An item that finds nothing is not a CC104 finding: a `forbid` rule then holds
(`forbid: [{key: jobs.docker-decide}]` says the job must not exist), and a
`require` rule reports the scope that lacks it (CC102).

## Why it matters
A rule that silently matches nothing passes forever. Renaming a step, moving a
workflow or rewording an `if` condition would otherwise switch a check off
without anyone noticing; this is the failure mode of string-splitting tests
that ci-checks exists to remove.

## Example
```yaml
where: {workflow: .github/workflows/_run-ci-rocm.yml, step: "Install Megatron"}
```
after the step was renamed to `Install Megatron-LM`.

## Fix
Update the rule to the new name, path or condition, or delete the rule if
what it guarded is gone for good.
"""

from __future__ import annotations

from ci_checks.core.diagnostics import Severity
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus

RULE = Rule(
    "CC104",
    "policy-no-match",
    "A policy rule selects nothing",
    Severity.ERROR,
    __doc__,
    frozenset(),
    None,
    group=RuleGroup.POLICY_INPUT,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
