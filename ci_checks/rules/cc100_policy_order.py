"""Things happen in the wrong order, as a policy `order` rule defines it.

## What it does
For a rule of kind `order` in the policy file, looks in every scope its
`where` selects (a job, a step, or the then-branch of an `if` in a step's
script) and checks that the first occurrence of each listed item comes after
the first occurrence of the item before it. Items are shell commands, steps,
text, regular expressions, Python facts, `with`/`env` pairs or `key:` nodes.
A whole workflow is checked job by job, since steps only have an order within
a job; with `across: jobs`, items are ordered across jobs by the `needs:`
graph, and items in jobs that `needs:` does not order are reported as such. An
item missing from a scope is reported too, unless the rule says `missing:
ignore`.

## Why it matters
The order of steps and commands is where real CI bugs hide: installing a tree
before checking out the ref that should be installed, applying a patch before
the fetch it patches. String-splitting tests (`text.index(a) < text.index(b)`)
break when the file is re-indented and never see a command moved into another
branch; this rule compares positions in the parsed command tree.

## Example
```yaml
# .github/ci-checks.yml
rules:
  - id: megatron-override-order
    kind: order
    where: {workflow: .github/workflows/_run-ci-rocm.yml, step: Install Megatron, branch: '[ -n "$MEGATRON_PR" ]'}
    order:
      - command: git checkout -f FETCH_HEAD
      - command: pip install -e .
```
reports a branch that runs `pip install -e .` before `git checkout -f FETCH_HEAD`.

## Fix
Move the later item below the earlier one, or, if the order really is
intended, change the rule or add `# ci-checks: ignore[rule-id] reason` on the
line.
"""

from __future__ import annotations

from ci_checks.core.diagnostics import Severity
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus

RULE = Rule(
    "CC100",
    "policy-order",
    "A policy `order` rule is broken",
    Severity.ERROR,
    __doc__,
    frozenset(),
    None,
    group=RuleGroup.POLICY,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
