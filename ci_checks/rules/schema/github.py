"""GitHub's reading of a workflow, as data: its events and their activity types, inputs and permissions.

The parts of the workflow schema that the overrides (`overrides.py`) replace
with what GitHub accepts today.
"""

from __future__ import annotations

from ci_checks.rules.schema.vendored import Schema

_EXPRESSION: Schema = {"type": "string", "pattern": r"^\$\{\{(.|[\r\n])*\}\}$"}
TEXT: Schema = {"type": "string"}
NON_EMPTY: Schema = {"type": "string", "minLength": 1}
NON_EMPTY_LIST: Schema = {"anyOf": [NON_EMPTY, {"type": "array", "items": NON_EMPTY}]}
BOOLEAN: Schema = {"anyOf": [{"type": "boolean"}, _EXPRESSION]}
NUMBER: Schema = {"anyOf": [{"type": "number"}, _EXPRESSION]}

ACTIVITY_TYPES: dict[str, tuple[str, ...]] = {
    "branch_protection_rule": ("created", "edited", "deleted"),
    "check_run": ("completed", "created", "rerequested", "requested_action"),
    "check_suite": ("completed",),
    "discussion": (
        "created", "edited", "deleted", "transferred", "pinned", "unpinned", "labeled", "unlabeled", "locked",
        "unlocked", "category_changed", "answered", "unanswered",
    ),
    "discussion_comment": ("created", "edited", "deleted"),
    "image_version": ("created", "ready", "deleted"),
    "issue_comment": ("created", "edited", "deleted"),
    "issues": (
        "opened", "edited", "deleted", "transferred", "pinned", "unpinned", "closed", "reopened", "assigned",
        "unassigned", "labeled", "unlabeled", "locked", "unlocked", "milestoned", "demilestoned", "field_added",
        "field_removed", "typed", "untyped",
    ),
    "label": ("created", "edited", "deleted"),
    "merge_group": ("checks_requested",),
    "milestone": ("created", "closed", "opened", "edited", "deleted"),
    "project": ("created", "closed", "reopened", "edited", "deleted"),
    "project_card": ("created", "moved", "converted", "edited", "deleted"),
    "project_column": ("created", "updated", "moved", "deleted"),
    "pull_request": (
        "assigned", "unassigned", "labeled", "unlabeled", "opened", "edited", "closed", "reopened", "synchronize",
        "converted_to_draft", "locked", "unlocked", "enqueued", "dequeued", "milestoned", "demilestoned",
        "ready_for_review", "review_requested", "review_request_removed", "auto_merge_enabled",
        "auto_merge_disabled", "stacked",
    ),
    "pull_request_comment": ("created", "edited", "deleted"),
    "pull_request_review": ("submitted", "edited", "dismissed"),
    "pull_request_review_comment": ("created", "edited", "deleted"),
    "registry_package": ("published", "updated"),
    "release": ("published", "unpublished", "created", "edited", "deleted", "prereleased", "released"),
    "watch": ("started",),
    "workflow_run": ("requested", "completed", "in_progress"),
}  # fmt: skip
"""Each event's activity types, as GitHub lists them (`pull_request_target` has those of `pull_request`)."""
ACTIVITY_TYPES["pull_request_target"] = ACTIVITY_TYPES["pull_request"]

_EVENT_FILTERS: dict[str, tuple[str, ...]] = {
    "push": ("branches", "branches-ignore", "tags", "tags-ignore", "paths", "paths-ignore"),
    "pull_request": ("branches", "branches-ignore", "paths", "paths-ignore"),
    "pull_request_target": ("branches", "branches-ignore", "paths", "paths-ignore"),
    "merge_group": ("branches", "branches-ignore"),
    "workflow_run": ("branches", "branches-ignore", "workflows"),
    "image_version": ("names", "versions"),
}
_EVENTS_WITHOUT_SETTINGS = (
    "create", "delete", "deployment", "deployment_status", "fork", "gollum", "page_build", "public", "status",
)  # fmt: skip

PERMISSION_LEVELS: dict[str, tuple[str, ...]] = {
    "copilot-requests": ("write", "none"),
    "id-token": ("write", "none"),
    "models": ("read", "none"),
    "vulnerability-alerts": ("read", "none"),
}
"""Scopes that take fewer levels than read, write and none."""
PERMISSION_SCOPES = (
    "actions", "artifact-metadata", "attestations", "checks", "code-quality", "contents", "copilot-requests",
    "deployments", "discussions", "drives", "id-token", "issues", "models", "packages", "pages", "pull-requests",
    "repository-projects", "security-events", "statuses", "vulnerability-alerts",
)  # fmt: skip


def events() -> Schema:
    """`on:` as GitHub reads it: event names, or a mapping of each event to its own settings."""

    def activity(event: str) -> Schema:
        one = {"type": "string", "enum": list(ACTIVITY_TYPES[event])}
        return {"anyOf": [one, {"type": "array", "items": one}]}

    def mapping_or_null(properties: Schema) -> Schema:
        body = {"type": "object", "properties": properties, "additionalProperties": False}
        return {"anyOf": [{"type": "null"}, body]}

    events: Schema = {}
    for event in ACTIVITY_TYPES:
        properties = {"types": activity(event)}
        properties.update(dict.fromkeys(_EVENT_FILTERS.get(event, ()), NON_EMPTY_LIST))
        events[event] = mapping_or_null(properties)
    events["push"] = mapping_or_null(dict.fromkeys(_EVENT_FILTERS["push"], NON_EMPTY_LIST))
    for event in _EVENTS_WITHOUT_SETTINGS:
        events[event] = {"type": "null"}
    events["repository_dispatch"] = mapping_or_null({"types": {"type": "array", "items": NON_EMPTY}})
    events["schedule"] = {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"cron": NON_EMPTY, "timezone": NON_EMPTY},
            "required": ["cron"],
            "additionalProperties": False,
        },
    }
    events["workflow_dispatch"] = mapping_or_null(
        {"inputs": {"type": "object", "additionalProperties": _dispatch_input()}}
    )
    events["workflow_call"] = mapping_or_null(
        {
            "inputs": {"type": "object", "additionalProperties": _call_input()},
            "secrets": {
                "type": "object",
                "additionalProperties": mapping_or_null({"description": TEXT, "required": {"type": "boolean"}}),
            },
            "outputs": {
                "type": "object",
                "additionalProperties": {
                    "type": "object",
                    "properties": {"description": TEXT, "value": TEXT},
                    "required": ["value"],
                    "additionalProperties": False,
                },
            },
        }
    )
    name = {"type": "string", "enum": sorted(events)}
    return {
        "anyOf": [
            name,
            {"type": "array", "items": name},
            {"type": "object", "properties": events, "additionalProperties": False},
        ]
    }


def _dispatch_input() -> Schema:
    """A `workflow_dispatch` input: a boolean one's default is a boolean, a choice needs options.

    A number or boolean default of a string input is read as text, as GitHub's
    service does (its editor's parser alone insists on a YAML string there).
    """
    return {
        "type": "object",
        "properties": {
            "description": TEXT,
            "type": {"type": "string", "enum": ["string", "boolean", "number", "choice", "environment"]},
            "required": {"type": "boolean"},
            "default": {"type": ["string", "boolean", "number"]},
            "options": {"type": "array", "items": TEXT},
        },
        "additionalProperties": False,
        "allOf": [
            {
                "if": {"properties": {"type": {"const": "boolean"}}, "required": ["type"]},
                "then": {"properties": {"default": {"strictType": "boolean"}}},
            },
            {
                "if": {"properties": {"type": {"const": "choice"}}, "required": ["type"]},
                "then": {"required": ["options"]},
            },
        ],
    }


def _call_input() -> Schema:
    """A `workflow_call` input: a required type; a boolean or number one's default of that type, or an expression."""
    by_type = [
        {
            "if": {"properties": {"type": {"const": kind}}, "required": ["type"]},
            "then": {"properties": {"default": {"anyOf": [{"strictType": kind}, _EXPRESSION]}}},
        }
        for kind in ("boolean", "number")
    ]
    return {
        "type": "object",
        "properties": {
            "description": TEXT,
            "type": {"type": "string", "enum": ["boolean", "number", "string"]},
            "required": {"type": "boolean"},
            "default": {"type": ["string", "boolean", "number"]},
        },
        "required": ["type"],
        "additionalProperties": False,
        "allOf": by_type,
    }


def permissions() -> Schema:
    levels = {scope: PERMISSION_LEVELS.get(scope, ("read", "write", "none")) for scope in PERMISSION_SCOPES}
    scopes = {scope: {"type": "string", "enum": list(allowed)} for scope, allowed in levels.items()}
    return {
        "anyOf": [
            {"type": "string", "enum": ["read-all", "write-all"]},
            {"type": "object", "properties": scopes, "additionalProperties": False},
        ]
    }
