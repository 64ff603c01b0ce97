"""`require`: every scope `where` selects has every item (or `count` of it), at the scope when it lacks one.

A `key:` item holds when its PATH selects at least one node and each selected
node satisfies its comparator; every node that does not is a finding at its
value. `count` counts what the item finds in each scope that satisfies it:
steps, commands, occurrences, files, and the nodes whose value satisfies the
comparator (all selected nodes without one), so `{key: '[*].cron', equals: X,
count: 1}` says one cron of several is X, and `count: {min: 1}` "at least one
of them". A count that fails names what was counted, and for a comparator
what was selected instead.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ci_checks.core.diagnostics import Diagnostic, Related, Severity
from ci_checks.policy.model import Hit, Item, PolicyRule, RuleContext, RuleKind, Scope
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus

RULE_DOCS = """\
A scope lacks something a policy `require` rule asks for.

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

RULE = Rule(
    "CC102",
    "policy-require",
    "A scope lacks what a policy `require` rule asks for",
    Severity.ERROR,
    RULE_DOCS,
    frozenset(),
    None,
    group=RuleGroup.POLICY,
    status=RuleStatus.STABLE,
    since="0.1.0",
)


_LISTED = 5
"""How many of the hits a count finding names in its message; its notes point at every counted one."""


def _compile(raw: Mapping[str, Any], context: RuleContext) -> None:
    return None


def _check(rule: PolicyRule, scope: Scope) -> Iterator[Diagnostic]:
    for item in rule.items:
        found = item.find(scope)
        if item.count is not None:
            counted = [hit for hit in found if hit.satisfied]
            if not item.count.holds(len(counted)):
                yield _miscounted(rule, scope, item, counted, [hit for hit in found if not hit.satisfied])
            continue
        for hit in found:
            if not hit.satisfied:
                yield rule.finding(hit.span, f"{hit.text}{hit.context} {hit.failure}")
        if not found:
            because = item.absent_because(scope)
            detail = f"{scope.label} lacks {item.description}" + (f": {because}" if because else "")
            yield rule.finding(scope.anchor, detail, fix=item.fix(scope))


def _miscounted(rule: PolicyRule, scope: Scope, item: Item, counted: list[Hit], others: list[Hit]) -> Diagnostic:
    assert item.count is not None
    times = "time" if len(counted) == 1 else "times"
    detail = f"{scope.label} has {item.description} {len(counted)} {times}, not {item.count}"
    if counted:
        detail += f": {_names(counted)}"
    if others:
        detail += f" ({'also ' if counted else ''}selected: {_names(others)})"
    related = tuple(Related(hit.span, f"{hit.text} is counted here") for hit in counted)
    return rule.finding(scope.anchor, detail, related)


def _names(hits: list[Hit]) -> str:
    """Sorted: what a finding says must not depend on the order of keys in a file."""
    named = ", ".join(sorted(hit.named for hit in hits)[:_LISTED])
    return named + (f" and {len(hits) - _LISTED} more" if len(hits) > _LISTED else "")


KIND = RuleKind(
    "require",
    RULE,
    {"require": {"description": "What every scope must have.", "type": "array", "minItems": 1}},
    ("require",),
    _compile,
    __doc__ or "",
    items="require",
    counts=True,
    check_scope=_check,
)
