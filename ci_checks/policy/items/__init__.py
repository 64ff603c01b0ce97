"""Item kinds: what a rule looks for. `ITEM_KINDS` is the registry table, one module per kind."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from ci_checks.policy.compiling import count
from ci_checks.policy.items import command, file, key, pairs, python, regex, step, text
from ci_checks.policy.model import Item, ItemContext, ItemKind, Unreadable, UnreadableItem
from ci_checks.policy.validation import validate

ITEM_KINDS: tuple[ItemKind, ...] = (
    command.ITEM,
    step.ITEM,
    text.ITEM,
    regex.ITEM,
    python.ITEM,
    pairs.WITH,
    pairs.ENV,
    key.ITEM,
    file.ITEM,
)
BY_KEY = {kind.key: kind for kind in ITEM_KINDS}
COUNT = {
    "description": "How many times the item is found in each scope: N, or {min: A, max: B}.",
    "oneOf": [
        {"type": "integer", "minimum": 0},
        {
            "type": "object",
            "additionalProperties": False,
            "minProperties": 1,
            "properties": {"min": {"type": "integer", "minimum": 0}, "max": {"type": "integer", "minimum": 0}},
        },
    ],
}


OWN_WHERE = {
    "$ref": "#/$defs/where",
    "description": "Where this item is looked for instead: the rule's `where` with these keys replaced.",
}


def item_schema(kind: ItemKind, counts: bool, own_where: bool = False) -> dict[str, Any]:
    """The schema of an item of `kind`; `own_where` adds the item's own `where` (validated on its own otherwise)."""
    properties = dict(kind.properties)
    if counts:
        properties["count"] = COUNT
    if own_where and kind.scoped:
        properties["where"] = OWN_WHERE
    return {
        "type": "object",
        "description": kind.summary,
        "additionalProperties": False,
        "required": [kind.key],
        "properties": properties,
    }


def compile_item(raw: Mapping[str, Any], context: ItemContext) -> Item:
    place = context.place
    named = [name for name in raw if name in BY_KEY]
    choices = ", ".join(BY_KEY)
    if len(named) > 1:
        raise place.error(f"an item takes exactly one of {choices}; found: {', '.join(named)}")
    if not named:
        unknown = [name for name in raw if name not in _MODIFIERS]
        if unknown:
            close = difflib.get_close_matches(unknown[0], list(BY_KEY), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            message = f"unknown item {unknown[0]!r}{hint}; an item is one of {choices}"
            raise place.error(message, unknown[0], key=True)
        raise place.error(f"an item needs one of {choices}; found only {', '.join(raw) or 'nothing'}")
    kind = BY_KEY[named[0]]
    if "count" in raw and not context.kind.counts:
        raise place.error(
            f"`count` applies to the items of `require` rules; a `{context.kind.name}` rule cannot count",
            "count",
            key=True,
        )
    if not kind.scoped and context.where is not None:
        raise place.error(f"a `{kind.key}` item is judged over the whole repository; its rule takes no `where`")
    if kind.scoped and context.where is None:
        raise place.error(f"a `{kind.key}` item looks inside the scopes of the rule's `where`, which is missing")
    unscoped = {key: value for key, value in raw.items() if key != "where"}  # the rule compiled its own `where`
    validate(unscoped, item_schema(kind, context.kind.counts), place, f"a `{kind.key}` item")
    try:
        item = kind.compile(raw, context)
    except Unreadable as problem:
        return UnreadableItem(kind.key, problem)
    if "count" in raw:
        item.count = count(raw["count"], place.at("count"))
    return item


_MODIFIERS = {name for kind in ITEM_KINDS for name in kind.properties if name != kind.key} | {"count", "where"}
