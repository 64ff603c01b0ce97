"""`forbid`: every occurrence of every item in the scopes `where` selects is a finding, at its exact span.

A `key:` item with a comparator reports the selected nodes that satisfy it;
a `file:` item (in a rule without `where`) each matching file.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ci_checks.core.diagnostics import Diagnostic
from ci_checks.policy.model import PolicyRule, RuleContext, RuleKind, Scope
from ci_checks.rules import cc101_policy_forbid


def _compile(raw: Mapping[str, Any], context: RuleContext) -> None:
    return None


def _check(rule: PolicyRule, scope: Scope) -> Iterator[Diagnostic]:
    for item in rule.items:
        for hit in item.find(scope):
            if hit.satisfied:
                if hit.value:
                    detail = f"{hit.text}{hit.context} is {hit.value}, which is forbidden here ({item.description})"
                elif item.kind in ("key", "file"):
                    detail = f"{hit.text}{hit.context} is forbidden here"
                else:
                    found = f" (found {hit.text!r})" if item.kind in ("regex", "python") else ""
                    detail = f"{item.description} is forbidden here{found}"
                yield rule.finding(hit.span, detail)


KIND = RuleKind(
    "forbid",
    cc101_policy_forbid.RULE,
    {"forbid": {"description": "What must not occur in any scope.", "type": "array", "minItems": 1}},
    ("forbid",),
    _compile,
    __doc__ or "",
    items="forbid",
    check_scope=_check,
)
