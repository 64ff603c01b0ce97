"""From a validated configuration's `rules:` to `PolicyRule`s, each part checked where it is written."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ci_checks.core.diagnostics import Related, Severity, Span
from ci_checks.core.repository import Repository
from ci_checks.policy.items import compile_item
from ci_checks.policy.kinds import BY_NAME
from ci_checks.policy.model import (
    Item,
    ItemContext,
    Locate,
    Part,
    Place,
    PolicyError,
    PolicyRule,
    RuleContext,
    RuleKind,
    Where,
)
from ci_checks.policy.scopes import WHERE_SCHEMA, compile_where, narrowed
from ci_checks.policy.validation import validate


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
    spec = kind.compile(raw, RuleContext(place, kind))
    wheres = _wheres(raw, place)
    parts = tuple(_parts(raw, place, kind, spec, wheres)) if kind.items is not None else ()
    items = tuple(item for part in parts for item in part.items)
    where = parts[0].where if parts else None
    severity = Severity(raw.get("severity", "error"))
    return PolicyRule(raw["id"], kind, id_span, severity, raw.get("message"), where, items, spec, parts)


Written = tuple[Mapping[str, Any] | None, Place | None]
"""A mapping of a rule's `where` as written, and its place; (None, None) for a rule without `where`."""


def _wheres(raw: Mapping[str, Any], place: Place) -> list[Written]:
    written = raw.get("where")
    if written is None:
        return [(None, None)]
    if isinstance(written, list):
        return [(where, place.at("where", index)) for index, where in enumerate(written)]
    return [(written, place.at("where"))]


def _parts(raw: Mapping[str, Any], place: Place, kind: RuleKind, spec: Any, wheres: list[Written]) -> Iterator[Part]:
    """One part per mapping of the rule's `where` with the items that have no `where` of their own, then one per
    item that has (for each mapping of the rule's)."""
    assert kind.items is not None
    written = list(enumerate(raw[kind.items]))
    shared = [(index, item) for index, item in written if not (isinstance(item, Mapping) and "where" in item)]
    own = [(index, item) for index, item in written if isinstance(item, Mapping) and "where" in item]
    for where_raw, where_place in wheres:
        where = compile_where(where_raw, where_place) if where_raw is not None and where_place is not None else None
        items = tuple(_item(item, place.at(kind.items, index), kind, spec, where) for index, item in shared)
        if items:
            yield Part(where, items)
    for index, item in own:
        item_place = place.at(kind.items, index)
        if kind.name == "order":
            raise item_place.error(
                "the items of an `order` rule are ordered within each scope of the rule's `where`; "
                "they take no `where` of their own",
                "where",
                key=True,
            )
        validate(item["where"], WHERE_SCHEMA, item_place.at("where"), "an item's `where`")
        for where_raw, where_place in wheres:
            merged, merged_place = narrowed(where_raw, where_place, item["where"], item_place.at("where"))
            where = compile_where(merged, merged_place)
            yield Part(where, (_item(item, item_place, kind, spec, where),))


def _item(raw: Mapping[str, Any], place: Place, kind: RuleKind, spec: Any, where: Where | None) -> Item:
    relative_to = kind.item_shapes(spec, where) if kind.item_shapes is not None and where is not None else ()
    if not relative_to and where is not None:
        relative_to = where.shapes
    return compile_item(raw, ItemContext(place, kind, where, relative_to))
