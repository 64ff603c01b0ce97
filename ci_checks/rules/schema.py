"""JSON-schema validation of workflows and composite actions, read the way GitHub reads them.

The SchemaStore schemas come from the `check-jsonschema` package, which ships
and updates them as package data (`builtin_schemas/vendor`, Apache-2.0). Only
the files are read: importing its CLI would cost more than the validation.
Each validator is built once per process.

Where SchemaStore and GitHub disagree, GitHub wins. Every difference is one
entry of `OVERRIDES`, with the workflow shape that shows it; GitHub's own
parser (`@actions/workflow-parser`) has judged every one of those shapes, and
the test against its recorded verdicts (`tests/ci/linter/model/test_github_verdicts.py`)
keeps them true. The first entry is not an edit of the schema but how values
are read: where GitHub wants a string it reads null, booleans and numbers as
their text (`run: true`, `env: {X: }`, `working-directory:`), so the
validator's `type` does the same (null is the empty string, so it still fails
where GitHub requires a non-empty one, as in `runs-on:`).

`CHECKS` are what GitHub verifies beyond any schema: identifiers, `needs`,
cron expressions. They report on the positioned YAML directly.

Messages say what a person would: "step has both `uses` and `run`; a step is
either an action or a script", at the second of the two keys.

Where every alternative of a `oneOf` accepts a different JSON type, at most
one can match, so the loaded copy says `anyOf` instead: the result is the
same and validation stops at the first alternative that fits.
"""

from __future__ import annotations

import copy
import difflib
import importlib.util
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import jsonschema_rs

from ci_checks.core.diagnostics import Related, Span
from ci_checks.core.repository import FileKind
from ci_checks.model import reading
from ci_checks.model.reading import github_string
from ci_checks.syntax.yamlpos import Document, IssueKind, Mapping, Node, Plain, Scalar, Sequence, node_at, to_plain

SCHEMA_FILES = {FileKind.WORKFLOW: "github-workflows.json", FileKind.ACTION: "github-actions.json"}

Schema = dict[str, Any]

if TYPE_CHECKING:
    import jsonschema
    from jsonschema.exceptions import ValidationError


class SchemaUnavailable(RuntimeError):
    pass


@cache
def vendor_directory() -> Path:
    spec = importlib.util.find_spec("check_jsonschema")
    if spec is None or not spec.submodule_search_locations:
        raise SchemaUnavailable("the check-jsonschema package, which ships the GitHub schemas, is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "builtin_schemas" / "vendor"


# ---------------------------------------------------------------------------
# GitHub's reading, as data


_EXPRESSION: Schema = {"type": "string", "pattern": r"^\$\{\{(.|[\r\n])*\}\}$"}
_TEXT: Schema = {"type": "string"}
_NON_EMPTY: Schema = {"type": "string", "minLength": 1}
_NON_EMPTY_LIST: Schema = {"anyOf": [_NON_EMPTY, {"type": "array", "items": _NON_EMPTY}]}
_BOOLEAN: Schema = {"anyOf": [{"type": "boolean"}, _EXPRESSION]}
_NUMBER: Schema = {"anyOf": [{"type": "number"}, _EXPRESSION]}

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


def _events() -> Schema:
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
        properties.update(dict.fromkeys(_EVENT_FILTERS.get(event, ()), _NON_EMPTY_LIST))
        events[event] = mapping_or_null(properties)
    events["push"] = mapping_or_null(dict.fromkeys(_EVENT_FILTERS["push"], _NON_EMPTY_LIST))
    for event in _EVENTS_WITHOUT_SETTINGS:
        events[event] = {"type": "null"}
    events["repository_dispatch"] = mapping_or_null({"types": {"type": "array", "items": _NON_EMPTY}})
    events["schedule"] = {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"cron": _NON_EMPTY, "timezone": _NON_EMPTY},
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
                "additionalProperties": mapping_or_null({"description": _TEXT, "required": {"type": "boolean"}}),
            },
            "outputs": {
                "type": "object",
                "additionalProperties": {
                    "type": "object",
                    "properties": {"description": _TEXT, "value": _TEXT},
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
            "description": _TEXT,
            "type": {"type": "string", "enum": ["string", "boolean", "number", "choice", "environment"]},
            "required": {"type": "boolean"},
            "default": {"type": ["string", "boolean", "number"]},
            "options": {"type": "array", "items": _TEXT},
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
            "description": _TEXT,
            "type": {"type": "string", "enum": ["boolean", "number", "string"]},
            "required": {"type": "boolean"},
            "default": {"type": ["string", "boolean", "number"]},
        },
        "required": ["type"],
        "additionalProperties": False,
        "allOf": by_type,
    }


def _permissions() -> Schema:
    levels = {scope: PERMISSION_LEVELS.get(scope, ("read", "write", "none")) for scope in PERMISSION_SCOPES}
    scopes = {scope: {"type": "string", "enum": list(allowed)} for scope, allowed in levels.items()}
    return {
        "anyOf": [
            {"type": "string", "enum": ["read-all", "write-all"]},
            {"type": "object", "properties": scopes, "additionalProperties": False},
        ]
    }


# ---------------------------------------------------------------------------
# The overrides

_BOTH = "step has both `uses` and `run`; a step is either an action or a script"
_NEITHER = "step has neither `uses` nor `run`; a step runs an action or a script"


@dataclass(frozen=True)
class Override:
    """One place where ci-checks follows GitHub rather than the vendored schema.

    `shape` is a workflow that shows the difference; `apply` edits the loaded
    copy of the schema (None for a difference in how values are read, which
    the validator applies).
    """

    name: str
    reason: str
    shape: str
    apply: Callable[[Schema], None] | None


def _workflow(top: str = "", on: str = "on: push\n", job: str = "", step: str = "      - run: make\n") -> str:
    return f"{top}{on}jobs:\n  build:\n    runs-on: ubuntu-latest\n{job}    steps:\n{step}"


def _definitions(schema: Schema) -> Schema:
    return cast(Schema, schema["definitions"])


def _replace_triggers(schema: Schema) -> None:
    schema["properties"]["on"] = _events()


def _replace_permissions(schema: Schema) -> None:
    _definitions(schema)["permissions"] = _permissions()


def _top_level_keys(schema: Schema) -> None:
    properties = schema["properties"]
    properties.pop("cache-mode", None)
    properties["description"] = _TEXT


def _job_keys(schema: Schema) -> None:
    definitions = _definitions(schema)
    normal = definitions["normalJob"]["properties"]
    normal.pop("cache-mode", None)
    normal["cancel-timeout-minutes"] = _NUMBER
    normal["steps"].pop("minItems", None)
    normal.pop("outputs")
    normal["outputs"] = {"type": "object", "additionalProperties": _TEXT}
    normal["runs-on"] = {
        "anyOf": [
            _NON_EMPTY,
            {"type": "array", "items": _NON_EMPTY},
            {
                "type": "object",
                "properties": {"group": _NON_EMPTY, "labels": _NON_EMPTY_LIST},
                "additionalProperties": False,
            },
        ]
    }
    reusable = definitions["reusableWorkflowCallJob"]
    reusable["properties"].pop("cache-mode", None)
    reusable["properties"]["uses"] = _NON_EMPTY
    reusable["x-unknown-key"] = "{key!r} is not allowed in a job that calls a reusable workflow (`uses`)"
    jobs = schema["properties"]["jobs"]
    jobs.pop("patternProperties", None)
    jobs.pop("minProperties", None)
    jobs["additionalProperties"] = {
        "if": {"type": "object", "required": ["uses"]},
        "then": {"$ref": "#/definitions/reusableWorkflowCallJob"},
        "else": {"$ref": "#/definitions/normalJob"},
    }


def _strategy(schema: Schema) -> None:
    definitions = _definitions(schema)
    for job in ("normalJob", "reusableWorkflowCallJob"):
        definitions[job]["properties"]["strategy"] = {
            "type": "object",
            "properties": {"matrix": {"$ref": "#/definitions/matrix"}, "fail-fast": _BOOLEAN, "max-parallel": _NUMBER},
            "additionalProperties": False,
        }
    definitions["configuration"] = {}


def _one_kind_of_step(*kinds: str, neither: str = _NEITHER) -> list[Schema]:
    """A step has `uses` or `run` (or another of `kinds`), and not both `uses` and `run`."""
    return [
        {"not": {"type": "object", "required": ["uses", "run"]}, "x-message": _BOTH},
        {"anyOf": [{"required": [kind]} for kind in kinds], "x-message": neither},
    ]


_STEP_KINDS = ("uses", "run", "parallel", "wait", "wait-all", "cancel")
_WAITING = ("wait", "wait-all", "cancel")
_GROUPED_AWAY = ("background", *_WAITING, "parallel")
"""What a step inside a `parallel` group cannot have: it runs in the background already, and groups do not nest."""


def _without(kind: str, keys: list[str], message: str) -> Schema:
    """What a step that has `kind` must not have (checked only on such steps: the others pay nothing)."""
    return {"allOf": [{"not": {"required": [key]}, "x-message": message.format(key=key)} for key in keys]}


def _step_kinds(schema: Schema) -> None:
    definitions = _definitions(schema)
    step = definitions["step"]
    del step["oneOf"]
    keys = list(step["properties"])
    kinds = ", ".join(f"`{kind}`" for kind in _STEP_KINDS)
    other_kinds = "step has both `{kind}` and `{{key}}`; a step is one of " + kinds
    step["dependencies"] = {"working-directory": ["run"], "shell": ["run"], "with": ["uses"]}
    for kind in _WAITING:
        takes = ("name", "id", "continue-on-error", kind)
        message = f"a `{kind}` step takes only `name`, `id` and `continue-on-error`, not `{{key}}`"
        others = [key for key in keys if key not in takes and key not in _STEP_KINDS]
        step["dependencies"][kind] = {
            "allOf": [
                _without(kind, [other for other in _STEP_KINDS if other != kind], other_kinds.format(kind=kind)),
                _without(kind, others, message),
            ]
        }
    step["dependencies"]["parallel"] = {
        "allOf": [
            _without("parallel", ["uses", "run"], other_kinds.format(kind="parallel")),
            _without(
                "parallel",
                [key for key in keys if key not in _STEP_KINDS],
                "a `parallel` step holds only its steps; `{key}` goes on a step inside it",
            ),
        ]
    }
    neither = (
        "step has none of `uses`, `run`, `parallel`, `wait`, `wait-all` or `cancel`; a step runs an action or a "
        "script, groups steps, or waits for or cancels background steps"
    )
    step["allOf"] = _one_kind_of_step(*_STEP_KINDS, neither=neither)
    step["properties"]["uses"] = _NON_EMPTY
    step["properties"]["wait-all"] = {
        "anyOf": [{"type": "null"}, {"const": True}],
        "x-message": "`wait-all` takes no value (or `true`): it waits for every background step started before it",
    }
    step["properties"]["parallel"] = {
        "type": "array",
        "items": {
            "allOf": [
                {"$ref": "#/definitions/step"},
                _without(
                    "parallel",
                    list(_GROUPED_AWAY),
                    "`{key}` is not allowed inside a `parallel` group: its steps run in the background already, "
                    "and groups do not nest",
                ),
            ]
        },
    }


def _empty_values(schema: Schema) -> None:
    definitions = _definitions(schema)
    definitions["shell"] = _NON_EMPTY
    definitions["defaults"]["properties"]["run"]["properties"]["working-directory"] = _NON_EMPTY
    for container in ("jobContainer", "serviceContainer"):
        properties = definitions[container]["properties"]
        properties["image"] = _NON_EMPTY
        properties["credentials"]["properties"] = {"username": _NON_EMPTY, "password": _NON_EMPTY}
    definitions["snapshot"]["oneOf"][1]["properties"]["version"] = _NON_EMPTY
    with_expression = {"$ref": "#/definitions/stringContainingExpressionSyntax"}
    definitions["env"] = {"anyOf": [{"type": "object", "additionalProperties": _TEXT}, with_expression]}
    definitions["globs"] = {"anyOf": [_NON_EMPTY, {"type": "array", "items": _NON_EMPTY}]}


OVERRIDES: tuple[Override, ...] = (
    Override(
        "scalars-as-strings",
        "GitHub reads null, a boolean or a number as its text where it wants a string (null as the empty string)",
        _workflow(top="name: 5\nenv:\n  TOKEN:\n", step="      - run: true\n        working-directory:\n"),
        None,
    ),
    Override(
        "triggers",
        "events, their settings and activity types as GitHub lists them today: `image_version`, "
        "`pull_request_comment`, `stacked` pull requests; `check_suite` is only `completed`; `tags` only on "
        "`push`; `workflow_dispatch: []` is not a trigger; a `workflow_call` secret may be null; a dispatch "
        "input's default has the input's type",
        _workflow(
            on="on:\n  pull_request:\n    types: [opened, stacked]\n  image_version:\n  workflow_call:\n"
            "    secrets:\n      TOKEN:\n"
        ),
        _replace_triggers,
    ),
    Override(
        "permissions",
        "every scope GitHub accepts (`code-quality`, `drives`, `copilot-requests`, `vulnerability-alerts`) "
        "and the levels each takes (`id-token` and `copilot-requests` write or none; `models` read or none)",
        _workflow(top="permissions:\n  code-quality: read\n  drives: read\n  id-token: write\n"),
        _replace_permissions,
    ),
    Override(
        "top-level-keys",
        "a workflow may have a `description`; GitHub has no `cache-mode`",
        _workflow(top="description: Builds and tests\n"),
        _top_level_keys,
    ),
    Override(
        "job-keys",
        "`cancel-timeout-minutes`; `steps: []`; `runs-on: []`; no `cache-mode`; a job with `uses` is a reusable "
        "workflow call, judged as one",
        _workflow(job="    cancel-timeout-minutes: 5\n"),
        _job_keys,
    ),
    Override(
        "strategy",
        "a `strategy` without `matrix` (only `fail-fast`); `fail-fast` a boolean and `max-parallel` a number, "
        "not strings; matrix values of any kind, null included",
        _workflow(job="    strategy:\n      fail-fast: false\n"),
        _strategy,
    ),
    Override(
        "step-kinds",
        "`with` only on `uses` steps; background steps (`background: true` on a `run` or `uses` step, `wait`, "
        "`wait-all` and `cancel` steps that take only `name`, `id` and `continue-on-error`) and `parallel` groups "
        "of plain steps, as GitHub runs them since 2026-06-25",
        _workflow(
            step="      - id: server\n        run: ./serve\n        background: true\n      - parallel:\n"
            "          - run: a\n          - run: b\n      - cancel: server\n"
        ),
        _step_kinds,
    ),
    Override(
        "empty-and-string-values",
        "`env` and `with` values that are null, while a default `working-directory`, a `shell`, a container's "
        "`image` and credentials must not be empty; `branches`, `tags` and `paths` filters given as one string; "
        "a snapshot `version` is any text",
        _workflow(on="on:\n  push:\n    branches: '**'\n", job="    env:\n      A:\n"),
        _empty_values,
    ),
)


def _clarify_action_schema(schema: Schema) -> None:
    """A composite step: `run` or `uses` but not both, `run` with `shell`, said in words rather than a oneOf; of the
    top-level keys only `runs` required, as by the runner (`name` and `description` are the Marketplace's)."""
    schema["required"] = [key for key in schema.get("required", []) if key == "runs"]
    step = schema.get("definitions", {}).get("runs-composite", {}).get("properties", {}).get("steps", {}).get("items")
    if not isinstance(step, dict) or "oneOf" not in step:
        return
    del step["oneOf"]
    step["allOf"] = [{"if": {"required": ["run"]}, "then": {"required": ["shell"]}}, *_one_kind_of_step("uses", "run")]


# ---------------------------------------------------------------------------
# The validator


def _types(alternative: Schema, definitions: Schema) -> set[str] | None:
    ref = alternative.get("$ref", "")
    if ref.startswith("#/definitions/"):
        alternative = definitions.get(ref[len("#/definitions/") :], {})
    declared = alternative.get("type")
    if declared is None:
        return None
    types = {declared} if isinstance(declared, str) else set(declared)
    return types | {"integer"} if "number" in types else types


def _disjoint_one_of_to_any_of(node: object, definitions: Schema) -> None:
    if isinstance(node, list):
        for item in node:
            _disjoint_one_of_to_any_of(item, definitions)
        return
    if not isinstance(node, dict):
        return
    alternatives = node.get("oneOf")
    if isinstance(alternatives, list) and "anyOf" not in node:
        types = [_types(a, definitions) if isinstance(a, dict) else None for a in alternatives]
        known = [t for t in types if t is not None]
        if len(known) == len(types) and sum(map(len, known)) == len(set().union(*known)):
            node["anyOf"] = node.pop("oneOf")
    for value in node.values():
        _disjoint_one_of_to_any_of(value, definitions)


def _as_string_holds(validator: jsonschema.Draft7Validator, text: str, schema: Schema) -> bool:
    constraints = {key: schema[key] for key in ("minLength", "maxLength", "pattern", "enum", "const") if key in schema}
    return validator.evolve(schema=constraints).is_valid(text)


def _github_type(
    validator: jsonschema.Draft7Validator, types: object, instance: object, schema: Schema
) -> Iterator[ValidationError]:
    wanted = cast(list[str], types if isinstance(types, list) else [types])
    if any(validator.is_type(instance, kind) for kind in wanted):
        return
    scalar = instance is None or isinstance(instance, bool | int | float)
    if "string" in wanted and scalar and _as_string_holds(validator, github_string(cast(Plain, instance)), schema):
        return
    from jsonschema.exceptions import ValidationError

    yield ValidationError(f"{instance!r} is not of type {', '.join(map(repr, wanted))}")


def _strict_type(
    validator: jsonschema.Draft7Validator, kind: str, instance: object, schema: Schema
) -> Iterator[ValidationError]:
    """A type GitHub checks without reading scalars as text (an input's default)."""
    if not validator.is_type(instance, kind):
        from jsonschema.exceptions import ValidationError

        yield ValidationError(f"{instance!r} is not of type {kind!r}")


@cache
def validator(kind: FileKind) -> jsonschema.Draft7Validator:
    """The explaining validator: only documents the fast pass rejects need it, so it is imported for them."""
    import jsonschema

    extended = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
        jsonschema.Draft7Validator, {"type": _github_type, "strictType": _strict_type}
    )
    return cast(jsonschema.Draft7Validator, extended(_schema(kind)))


@cache
def _fast(kind: FileKind) -> jsonschema_rs.Draft7Validator:
    """The same schema in a validator written in Rust, with every type strict: it accepts less than `validator`.

    Reading a scalar as text where GitHub wants one (`run: true`) is the one
    thing `validator` accepts beyond plain JSON Schema; here `type` is plain
    and `strictType` is `type`, so a document this accepts, `validator`
    accepts too, and only the others need the slow, explaining pass.
    """
    return jsonschema_rs.Draft7Validator(cast(Schema, _strict(_schema(kind))), validate_formats=False)


def _as_github_reads(value: object, path: tuple[str | int, ...] = ()) -> object:
    """The document with each scalar as text where GitHub reads it as text (`model.reading`), for `_fast`.

    A scalar is text to the slow pass where the schema wants text and its text
    form fits; turning it into that text lets the strict pass agree. Where the
    schema wants something else, the text fails the strict pass and the slow
    one decides, so the fast pass never accepts what the slow one would not. A reusable workflow's inputs
    keep their YAML type, but the schema wants text for them, which is how the slow pass reads a scalar there:
    so they are text here too.
    """
    if isinstance(value, dict):
        return {key: _as_github_reads(item, (*path, key)) for key, item in value.items()}
    if isinstance(value, list):
        return [_as_github_reads(item, (*path, index)) for index, item in enumerate(value)]
    if value is None or isinstance(value, str) or (reading.is_typed(path) and not reading.is_call_input(path)):
        return value  # a null stays one: where GitHub wants text, the slow pass judges the empty text
    return github_string(cast(Plain, value))


def _strict(node: object) -> object:
    if isinstance(node, dict):
        strict = {key: _strict(value) for key, value in node.items() if key != "strictType"}
        if "strictType" in node:
            strict["type"] = node["strictType"]
        return strict
    if isinstance(node, list):
        return [_strict(item) for item in node]
    return node


@cache
def _schema(kind: FileKind) -> Schema:
    path = vendor_directory() / SCHEMA_FILES[kind]
    try:
        schema = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise SchemaUnavailable(f"cannot read {path.name} from check-jsonschema: {error.strerror}") from None
    schema = copy.deepcopy(schema)
    if kind is FileKind.WORKFLOW:
        for override in OVERRIDES:
            if override.apply is not None:
                override.apply(schema)
    else:
        _clarify_action_schema(schema)
    _disjoint_one_of_to_any_of(schema, schema.get("definitions", {}))
    return cast(Schema, schema)


@dataclass(frozen=True)
class SchemaError:
    message: str
    span: Span
    related: tuple[Related, ...] = ()


def validate(document: Document, kind: FileKind) -> list[SchemaError]:
    """Schema violations and GitHub's further checks; none for a document GitHub would not read as ci-checks does.

    That is a document with YAML features GitHub does not support (merge keys,
    custom tags): it is reported once for those, not again for their effects.
    """
    root = document.root
    if root is None or not document.usable or any(i.kind is IssueKind.UNSUPPORTED for i in document.issues):
        return []
    instance = to_plain(root)
    found: dict[Span, SchemaError] = {}
    valid = _fast(kind).is_valid(_as_github_reads(instance))
    for error in () if valid else validator(kind).iter_errors(instance):
        for explained in _explain(root, error):
            # A value reached through several aliases is one mistake, reported where it is written.
            found.setdefault(explained.span, explained)
    if kind is FileKind.WORKFLOW and isinstance(root, Mapping):
        for check in CHECKS:
            for explained in check.run(root):
                found.setdefault(explained.span, explained)
    return list(found.values())


# ---------------------------------------------------------------------------
# What GitHub checks beyond its schema


@dataclass(frozen=True)
class Check:
    name: str
    shape: str
    """A workflow GitHub rejects for this reason alone."""
    run: Callable[[Mapping], Iterator[SchemaError]]


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")
_MAX_IDENTIFIER = 100


def _identifier_problem(value: str, what: str) -> str | None:
    if not _IDENTIFIER.match(value) or len(value) >= _MAX_IDENTIFIER:
        return (
            f"{what} {value!r} is not a valid identifier: it must start with a letter or `_`, "
            f"hold only letters, digits, `-` and `_`, and be shorter than {_MAX_IDENTIFIER} characters"
        )
    return None


def _jobs(root: Mapping) -> list[tuple[Scalar, Mapping]]:
    jobs = root.get("jobs")
    if not isinstance(jobs, Mapping):
        return []
    return [(key, value) for key, value in jobs.items() if isinstance(value, Mapping)]


def _job_ids(root: Mapping) -> Iterator[SchemaError]:
    jobs, key = root.get("jobs"), root.key_node("jobs")
    if isinstance(jobs, Mapping) and not jobs.index:
        yield SchemaError("a workflow needs at least one job", key.span if key is not None else jobs.span)
    for key, _ in jobs.items() if isinstance(jobs, Mapping) else ():
        problem = _identifier_problem(key.value, "job id")
        if problem is not None:
            yield SchemaError(problem, key.span)


def _step_ids(root: Mapping) -> Iterator[SchemaError]:
    for _, job in _jobs(root):
        steps = job.get("steps")
        seen: dict[str, Scalar] = {}
        for step in steps.items if isinstance(steps, Sequence) else ():
            node = step.get("id") if isinstance(step, Mapping) else None
            if not isinstance(node, Scalar) or node.resolved is None or "${{" in node.value:
                continue
            problem = _identifier_problem(node.value, "step id")
            if problem is None and node.value.startswith("__"):
                problem = f"step id {node.value!r} is reserved: ids starting with `__` are GitHub's"
            if problem is None and node.value in seen:
                message = f"step id {node.value!r} is already used by an earlier step of this job"
                yield SchemaError(message, node.span, (Related(seen[node.value].span, "first used here"),))
            seen.setdefault(node.value, node)
            if problem is not None:
                yield SchemaError(problem, node.span)


def _background_targets(root: Mapping) -> Iterator[SchemaError]:
    for _, job in _jobs(root):
        yield from _targets(job.get("steps"))


def _targets(steps: Node | None) -> Iterator[SchemaError]:
    """`wait` and `cancel` name steps of the same list (a job's, or a `parallel` group's) that come before them."""
    known: list[str] = []
    for step in steps.items if isinstance(steps, Sequence) else ():
        if not isinstance(step, Mapping):
            continue
        own = step.get("id")
        own_id = own.value if isinstance(own, Scalar) and own.resolved is not None else None
        for kind in ("wait", "cancel"):
            node = step.get(kind)
            for target in node.items if isinstance(node, Sequence) else [node] if node is not None else []:
                if not isinstance(target, Scalar) or target.resolved is None or "${{" in target.value:
                    continue
                if own_id is not None and target.value.lower() == own_id.lower():
                    yield SchemaError(f"step {own_id!r} cannot {kind} for itself", target.span)
                elif target.value not in known:
                    listed = ", ".join(known) or "none"
                    message = f"`{kind}: {target.value}` names no earlier step of this list (ids before it: {listed})"
                    yield SchemaError(message, target.span)
        yield from _targets(step.get("parallel"))
        if own_id is not None:
            known.append(own_id)


def _needs(root: Mapping) -> Iterator[SchemaError]:
    jobs = _jobs(root)
    needs: dict[str, list[Scalar]] = {}
    for key, job in jobs:
        node = job.get("needs")
        items = node.items if isinstance(node, Sequence) else [node] if node is not None else []
        needs[key.value] = [item for item in items if isinstance(item, Scalar) and item.resolved is not None]
    for key, _ in jobs:
        for need in needs[key.value]:
            if need.value not in needs:
                close = difflib.get_close_matches(need.value, list(needs), n=1, cutoff=0.6)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                yield SchemaError(
                    f"job {key.value!r} needs {need.value!r}, which is not a job of this workflow{hint}", need.span
                )
    yield from _cycles(jobs, needs)


def _cycles(jobs: list[tuple[Scalar, Mapping]], needs: dict[str, list[Scalar]]) -> Iterator[SchemaError]:
    if jobs and all(needs[key.value] for key, _ in jobs):
        yield SchemaError(
            "every job needs another one, so none can start: one job must have no `needs`", jobs[0][0].span
        )
        return
    state: dict[str, int] = {}  # 1 while its needs are being followed, 2 once done

    def visit(job: str) -> Iterator[SchemaError]:
        state[job] = 1
        for need in needs.get(job, []):
            if state.get(need.value) == 1:
                yield SchemaError(f"job {job!r} needs {need.value!r}, which needs it in turn: a cycle", need.span)
            elif need.value in needs and need.value not in state:
                yield from visit(need.value)
        state[job] = 2

    for key, _ in jobs:
        if key.value not in state:
            yield from visit(key.value)


_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_CRON_FIELDS: tuple[tuple[str, int, int, dict[str, int]], ...] = (
    ("minute", 0, 59, {}),
    ("hour", 0, 23, {}),
    ("day of month", 1, 31, {}),
    ("month", 1, 12, {name: n + 1 for n, name in enumerate(_MONTHS)}),
    ("day of week", 0, 6, {name: n for n, name in enumerate(_DAYS)}),
)


def _cron_part(value: str, low: int, high: int, names: dict[str, int], separators: bool = True) -> bool:
    """GitHub's reading of one cron field: `*`, numbers or names, `a-b`, `x/step` and `,` lists."""
    if value.lower() in names or value == "*":
        return True
    if "," in value:
        return separators and all(part and _cron_part(part, low, high, names) for part in value.split(","))
    if "/" in value:
        start, _, step = value.partition("/")
        return (
            separators
            and bool(start)
            and step.isdigit()
            and int(step) > 0
            and "/" not in step
            and _cron_part(start, low, high, names)
            and _cron_part(step, low, high, names, separators=False)
        )
    if "-" in value:
        start, _, end = value.partition("-")
        if not separators:  # an empty end, or a second `-`, fails as a plain value below
            return False
        ends = [names.get(part.lower(), int(part) if part.isdigit() else -1) for part in (start, end)]
        return all(_cron_part(part, low, high, names, False) for part in (start, end)) and ends[1] >= ends[0]
    return value.isdigit() and low <= int(value) <= high


def _crons(root: Mapping) -> Iterator[SchemaError]:
    on = root.get("on")
    schedule = on.get("schedule") if isinstance(on, Mapping) else None
    for item in schedule.items if isinstance(schedule, Sequence) else ():
        cron = item.get("cron") if isinstance(item, Mapping) else None
        if not isinstance(cron, Scalar) or cron.resolved is None or not cron.value:
            continue
        parts = re.split(r" +", cron.value)
        valid = len(parts) == len(_CRON_FIELDS) and all(
            _cron_part(part, low, high, names) for part, (_, low, high, names) in zip(parts, _CRON_FIELDS, strict=True)
        )
        if not valid:
            message = (
                f"{cron.value!r} is not a cron expression GitHub accepts: five fields (minute hour day-of-month "
                "month day-of-week) of numbers, names, `*`, ranges, steps and lists; no `@daily` macros"
            )
            yield SchemaError(message, cron.span)


CHECKS: tuple[Check, ...] = (
    Check("job-ids", _workflow().replace("  build:", "  1build:"), _job_ids),
    Check("step-ids", _workflow(step="      - id: a\n        run: x\n      - id: a\n        run: y\n"), _step_ids),
    Check(
        "needs",
        "on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - run: x\n"
        "  b:\n    runs-on: x\n    needs: [a, bulid]\n    steps:\n      - run: x\n",
        _needs,
    ),
    Check("cron", _workflow(on="on:\n  schedule:\n    - cron: '0 25 * * *'\n"), _crons),
    Check(
        "background-targets",
        _workflow(step="      - id: server\n        run: ./serve\n        background: true\n      - wait: sever\n"),
        _background_targets,
    ),
)


# ---------------------------------------------------------------------------
# Messages


_TYPE_NAMES = {
    "object": "a mapping",
    "array": "a sequence",
    "string": "a string",
    "boolean": "a boolean",
    "number": "a number",
    "integer": "an integer",
    "null": "null",
}


def _type_of(value: object) -> str:
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if value is None:
        return "null"
    return "string"


def _where(path: list[str | int]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "the top level"


def _expected(error: ValidationError) -> Any:
    return cast(Any, error.validator_value)


def _subschema(error: ValidationError) -> Schema:
    return cast(Schema, error.schema)


def _instance(error: ValidationError) -> Any:
    return cast(Any, error.instance)


def _accepts(error: ValidationError, instance_type: str) -> bool:
    expected = _expected(error)
    types = expected if isinstance(expected, list) else [expected]
    return instance_type in types or (instance_type == "integer" and "number" in types)


def _branches(error: ValidationError) -> list[list[ValidationError]]:
    """The failures of each alternative of a oneOf/anyOf, in the schema's order."""
    groups: dict[int, list[ValidationError]] = {}
    for sub in error.context or ():
        groups.setdefault(int(sub.relative_schema_path[0]), []).append(sub)
    return [groups[index] for index in sorted(groups)]


def _is_type_error(error: ValidationError) -> bool:
    return error.validator in ("type", "strictType")


def _wrong_type(branch: list[ValidationError], instance_type: str) -> bool:
    """Whether an alternative wants a different type at the value itself."""
    return any(_is_type_error(e) and not e.relative_path and not _accepts(e, instance_type) for e in branch)


def _fit(branch: list[ValidationError]) -> tuple[int, int, int]:
    """How badly an alternative fits (lower is better): undeclared keys, missing keys, all errors."""
    unexpected = 0
    missing = 0
    for e in branch:
        if e.relative_path:
            continue
        if e.validator == "additionalProperties" and isinstance(_instance(e), dict):
            unexpected += sum(1 for key in _instance(e) if _is_extra(e, key))
        elif e.validator == "required":
            missing += 1
    return unexpected, missing, len(branch)


def _wanted(branch: list[ValidationError]) -> str | None:
    """What a scalar-level alternative asks for, in words; None when it fails deeper inside the value."""
    words = []
    for e in branch:
        if e.relative_path:
            return None
        if _is_type_error(e):
            words.append(_type_words(e))
        elif e.validator == "pattern" and "${{" in str(_expected(e)).replace("\\", ""):
            words.append("an ${{ }} expression")
        elif e.validator == "enum":
            words.append("one of " + _listed(_expected(e)))
        elif e.validator == "const":
            words.append(_shown(_expected(e)))
        elif e.validator == "minLength":
            words.append("a non-empty string")
        elif e.validator in ("oneOf", "anyOf") and e.context:  # alternatives within an alternative (`$ref: env`)
            inner = [_wanted(branch) for branch in _branches(e)]
            if not all(inner):
                return None
            words.append(" or ".join(dict.fromkeys(cast(list[str], inner))))
        else:
            return None
    return words[-1] if words else None


def _type_words(error: ValidationError) -> str:
    expected = _expected(error) if isinstance(_expected(error), list) else [_expected(error)]
    words = " or ".join(_TYPE_NAMES.get(t, t) for t in expected)
    return "a non-empty string" if words == "a string" and _subschema(error).get("minLength") else words


def _listed(options: list[object]) -> str:
    names = [str(option) for option in options]
    return ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")


def _explain(root: Node, error: ValidationError) -> Iterator[SchemaError]:
    path = list(error.absolute_path)
    node, key = node_at(root, path)
    where = _where(path)
    validator_name = error.validator
    message = _subschema(error).get("x-message")
    if validator_name in ("oneOf", "anyOf") and error.context:
        if isinstance(message, str):
            yield SchemaError(message, _key_or_start(node, key))
            return
        yield from _explain_alternatives(root, error, node, key, where)
        return
    if validator_name == "additionalProperties" and isinstance(node, Mapping):
        allowed = sorted(_subschema(error).get("properties", {}))
        template = _subschema(error).get("x-unknown-key")
        for item_key, _ in node.items():
            if item_key.value in _instance(error) and _is_extra(error, item_key.value):
                close = difflib.get_close_matches(item_key.value, allowed, n=1, cutoff=0.6)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                text = template.format(key=item_key.value) if isinstance(template, str) else None
                yield SchemaError(text or f"unknown key {item_key.value!r} at {where}{hint}", item_key.span)
        return
    if validator_name == "not" and "required" in _expected(error):
        names = list(_expected(error)["required"])
        if isinstance(message, str) and isinstance(node, Mapping):
            keys = [node.key_node(name) for name in names]
            later = max((k for k in keys if k is not None), key=lambda k: (k.span.line, k.span.column), default=None)
            yield SchemaError(message, later.span if later is not None else _key_or_start(node, key))
            return
        together = " and ".join(repr(name) for name in names)
        yield SchemaError(f"{together} cannot be used together at {where}", _key_or_start(node, key))
        return
    if validator_name == "dependencies" and isinstance(node, Mapping):
        yield from _explain_dependencies(error, node)
        return
    if validator_name == "required":
        anchor = _key_or_start(node, key)
        missing = [name for name in _expected(error) if name not in (_instance(error) or {})]
        listed = ", ".join(repr(name) for name in missing)
        yield SchemaError(f"missing required key {listed} at {where}", anchor)
        return
    if _is_type_error(error):
        yield SchemaError(f"expected {_type_words(error)} at {where}, found {_found(_instance(error))}", node.span)
        return
    if validator_name == "enum":
        options = [str(option) for option in _expected(error)]
        close = difflib.get_close_matches(str(_instance(error)), options, n=1, cutoff=0.6)
        if close:
            text = f"{_shown(_instance(error))} is not a known value at {where} (did you mean {close[0]!r}?)"
        else:
            text = f"{_shown(_instance(error))} is not one of {_listed(_expected(error))} at {where}"
        yield SchemaError(text, node.span)
        return
    if validator_name in ("minItems", "minProperties", "minLength"):
        yield SchemaError(f"{where} must not be empty", node.span)
        return
    if validator_name == "pattern":
        yield SchemaError(f"{_shown(_instance(error))} does not have the expected form at {where}", node.span)
        return
    yield SchemaError(f"{error.message} at {where}", node.span)


def _explain_alternatives(
    root: Node, error: ValidationError, node: Node, key: Scalar | None, where: str
) -> Iterator[SchemaError]:
    instance_type = _type_of(_instance(error))
    branches = _branches(error)
    fitting = [b for b in branches if not _wrong_type(b, instance_type)]
    wanted = [_wanted(b) for b in branches]
    if all(len(b) == 1 and b[0].validator == "required" and not b[0].relative_path for b in branches):
        names = " or ".join(repr(name) for b in branches for name in _expected(b[0]))
        yield SchemaError(f"missing required key: one of {names} at {where}", _key_or_start(node, key))
        return
    if len(fitting) == 1 and all(e.validator == "enum" and not e.relative_path for e in fitting[0]):
        yield from _explain(root, fitting[0][0])
        return
    if not fitting or all(w is not None for w in wanted):
        described = " or ".join(dict.fromkeys(w for w in wanted if w))
        yield SchemaError(
            f"expected {described or 'another value'} at {where}, found {_found(_instance(error))}", node.span
        )
        return
    for sub in min(fitting, key=_fit):
        yield from _explain(root, sub)


_ONLY_FOR = {
    "run": "only for `run` steps; a step that `uses` an action takes none",
    "uses": "only for steps that `uses` an action",
}


def _explain_dependencies(error: ValidationError, node: Mapping) -> Iterator[SchemaError]:
    for name, required in cast(dict[str, list[str]], _expected(error)).items():
        missing = [other for other in required if other not in node]
        key = node.key_node(name)
        if key is not None and missing:
            detail = _ONLY_FOR.get(missing[0], f"only used together with `{missing[0]}`")
            yield SchemaError(f"`{name}` is {detail}", key.span)


def _found(value: object) -> str:
    return _TYPE_NAMES[_type_of(value)] if not isinstance(value, str) else _shown(value)


def _key_or_start(node: Node, key: Scalar | None) -> Span:
    """Where to report a problem with a whole mapping: its key, else its first character."""
    return key.span if key is not None else Span.point(node.span.path, node.span.line, node.span.column)


def _is_extra(error: ValidationError, name: str) -> bool:
    schema = _subschema(error)
    if name in schema.get("properties", {}):
        return False
    return not any(re.search(pattern, name) for pattern in schema.get("patternProperties", {}))


def _shown(value: object) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
