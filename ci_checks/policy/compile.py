"""From a validated configuration's `rules:` to `PolicyRule`s, each part checked where it is written."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ci_checks.diagnostics import Related, Severity, Span
from ci_checks.policy.compiling import ItemContext, Locate, Place, RuleContext
from ci_checks.policy.items import compile_item
from ci_checks.policy.kinds import BY_NAME
from ci_checks.policy.model import Item, PolicyError, PolicyRule
from ci_checks.policy.scopes import compile_where
from ci_checks.repository import Repository


def compile_rules(
    data: Sequence[Mapping[str, Any]],
    locate: Locate,
    reserved: set[str],
    repository: Repository | None = None,
) -> list[PolicyRule]:
    """The rules of a validated configuration; `reserved` holds built-in codes and names an id may not take.

    `repository` is where `from: {python: ...}` values are read.
    """
    rules: list[PolicyRule] = []
    seen: dict[str, Span] = {}
    for index, raw in enumerate(data):
        place = Place(locate, ["rules", index], repository)
        rule_id = raw["id"]
        id_span = place.span("id")
        if rule_id in seen:
            first = seen[rule_id]
            raise PolicyError(f"duplicate rule id {rule_id!r}", id_span, (Related(first, "first used here"),))
        if rule_id.upper() in reserved or rule_id in reserved:
            raise PolicyError(f"rule id {rule_id!r} is taken by a built-in rule; choose another", id_span)
        seen[rule_id] = id_span
        rules.append(_rule(raw, place, id_span))
    return rules


def _rule(raw: Mapping[str, Any], place: Place, id_span: Span) -> PolicyRule:
    kind = BY_NAME[raw["kind"]]
    where = compile_where(raw["where"], place.at("where")) if "where" in raw else None
    spec = kind.compile(raw, RuleContext(place, kind))
    items: tuple[Item, ...] = ()
    if kind.items is not None:
        relative_to = kind.item_shapes(spec, where) if kind.item_shapes is not None and where is not None else ()
        if not relative_to and where is not None:
            relative_to = where.shapes
        items = tuple(
            compile_item(item, ItemContext(place.at(kind.items, index), kind, where, relative_to))
            for index, item in enumerate(raw[kind.items])
        )
    severity = Severity(raw.get("severity", "error"))
    return PolicyRule(raw["id"], kind, id_span, severity, raw.get("message"), where, items, spec)
