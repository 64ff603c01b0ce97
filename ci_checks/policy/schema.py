"""The policy part of the configuration schema, assembled from each rule kind's and item kind's own fragment.

`precise` builds the schema editors use (every item described by its kind);
the loader validates rules with `precise=False`, where items are only
mappings, and then validates each item against its own kind, which gives a
message about that item instead of a `oneOf` summary.
"""

from __future__ import annotations

from typing import Any

from ci_checks.policy.items import ITEM_KINDS, item_schema
from ci_checks.policy.kinds import RULE_KINDS
from ci_checks.policy.scopes import WHERE_SCHEMA

RULE_ID = {
    "description": "Names the rule in diagnostics and in `# ci-checks: ignore[id]` comments.",
    "type": "string",
    "pattern": "^[A-Za-z0-9][A-Za-z0-9._-]*$",
}
_COMMON = {
    "id": RULE_ID,
    "kind": {"description": "What the rule says about its items.", "enum": [kind.name for kind in RULE_KINDS]},
    "message": {"description": "Why the rule exists; shown with every finding.", "type": "string", "minLength": 1},
    "severity": {"enum": ["error", "warning", "info"], "default": "error"},
}


def rule_defs(precise: bool) -> dict[str, Any]:
    """`$defs` for `rules`: `rule` (dispatching on `kind`), one definition per kind, `where`, and the items."""
    defs: dict[str, Any] = {
        "rule": {
            "type": "object",
            "required": ["id", "kind"],
            "properties": {"id": RULE_ID, "kind": _COMMON["kind"]},
            "allOf": [
                {
                    "if": {"required": ["kind"], "properties": {"kind": {"const": kind.name}}},
                    "then": {"$ref": f"#/$defs/{kind.name}Rule"},
                }
                for kind in RULE_KINDS
            ],
        },
        "where": WHERE_SCHEMA,
    }
    for counts in (False, True):
        name = "countedItem" if counts else "item"
        if precise:
            defs[name] = {"oneOf": [item_schema(kind, counts, own_where=True) for kind in ITEM_KINDS]}
        else:
            defs[name] = {"type": "object"}
    for kind in RULE_KINDS:
        properties: dict[str, Any] = dict(_COMMON)
        if kind.items is not None:
            properties["where"] = {
                "oneOf": [
                    {"type": "object", "$ref": "#/$defs/where"},
                    {
                        "description": "Several scopes, each looked into for every item.",
                        "type": "array",
                        "minItems": 1,
                        "items": {"$ref": "#/$defs/where"},
                    },
                ]
            }
        for key, value in kind.properties.items():
            properties[key] = dict(value)
            if key == kind.items:
                properties[key]["items"] = {"$ref": f"#/$defs/{'countedItem' if kind.counts else 'item'}"}
        defs[f"{kind.name}Rule"] = {
            "description": kind.docs.strip().split("\n\n")[0].replace("\n", " "),
            "type": "object",
            "additionalProperties": False,
            "required": ["id", "kind", *kind.required],
            "properties": properties,
        }
    return defs
