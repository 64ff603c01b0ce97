"""`require`: every scope `where` selects has every item (or `count` of it), at the scope when it lacks one.

A `key:` item holds when its PATH selects at least one node (or `count` of
them) and each selected node satisfies its comparator; every node that does
not is a finding at its value. `count` counts what the item selects in each
scope: steps, commands, nodes, occurrences, files.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ci_checks.diagnostics import Diagnostic
from ci_checks.policy.compiling import RuleContext
from ci_checks.policy.model import PolicyRule, RuleKind
from ci_checks.policy.scopes import Scope
from ci_checks.rules import cc102_policy_require


def _compile(raw: Mapping[str, Any], context: RuleContext) -> None:
    return None


def _check(rule: PolicyRule, scope: Scope) -> Iterator[Diagnostic]:
    for item in rule.items:
        found = item.find(scope)
        for hit in found:
            if not hit.satisfied:
                yield rule.finding(hit.span, f"{hit.text} {hit.failure}")
        if item.count is not None:
            if not item.count.holds(len(found)):
                times = "time" if len(found) == 1 else "times"
                detail = f"{scope.label} has {item.description} {len(found)} {times}, not {item.count}"
                yield rule.finding(scope.anchor, detail)
        elif not found:
            because = item.absent_because(scope)
            detail = f"{scope.label} lacks {item.description}" + (f": {because}" if because else "")
            yield rule.finding(scope.anchor, detail, fix=item.fix(scope))


KIND = RuleKind(
    "require",
    cc102_policy_require.RULE,
    {"require": {"description": "What every scope must have.", "type": "array", "minItems": 1}},
    ("require",),
    _compile,
    __doc__ or "",
    items="require",
    counts=True,
    check_scope=_check,
)
