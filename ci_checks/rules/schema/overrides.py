"""Where SchemaStore and GitHub disagree, GitHub wins: every difference is one entry of `OVERRIDES`.

Each entry comes with the workflow shape that shows it; GitHub's own parser
(`@actions/workflow-parser`) has judged every one of those shapes, and the
test against its recorded verdicts (`tests/ci/linter/model/test_github_verdicts.py`)
keeps them true. The first entry is not an edit of the schema but how values
are read: where GitHub wants a string it reads null, booleans and numbers as
their text (`run: true`, `env: {X: }`, `working-directory:`), so the
validator's `type` does the same (null is the empty string, so it still fails
where GitHub requires a non-empty one, as in `runs-on:`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

from ci_checks.rules.schema.github import BOOLEAN, NON_EMPTY, NON_EMPTY_LIST, NUMBER, TEXT, events, permissions
from ci_checks.rules.schema.vendored import Schema

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


def workflow(top: str = "", on: str = "on: push\n", job: str = "", step: str = "      - run: make\n") -> str:
    return f"{top}{on}jobs:\n  build:\n    runs-on: ubuntu-latest\n{job}    steps:\n{step}"


def _definitions(schema: Schema) -> Schema:
    return cast(Schema, schema["definitions"])


def _replace_triggers(schema: Schema) -> None:
    schema["properties"]["on"] = events()


def _replace_permissions(schema: Schema) -> None:
    _definitions(schema)["permissions"] = permissions()


def _top_level_keys(schema: Schema) -> None:
    properties = schema["properties"]
    properties.pop("cache-mode", None)
    properties["description"] = TEXT


def _job_keys(schema: Schema) -> None:
    definitions = _definitions(schema)
    normal = definitions["normalJob"]["properties"]
    normal.pop("cache-mode", None)
    normal["cancel-timeout-minutes"] = NUMBER
    normal["steps"].pop("minItems", None)
    normal.pop("outputs")
    normal["outputs"] = {"type": "object", "additionalProperties": TEXT}
    normal["runs-on"] = {
        "anyOf": [
            NON_EMPTY,
            {"type": "array", "items": NON_EMPTY},
            {
                "type": "object",
                "properties": {"group": NON_EMPTY, "labels": NON_EMPTY_LIST},
                "additionalProperties": False,
            },
        ]
    }
    reusable = definitions["reusableWorkflowCallJob"]
    reusable["properties"].pop("cache-mode", None)
    reusable["properties"]["uses"] = NON_EMPTY
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
            "properties": {"matrix": {"$ref": "#/definitions/matrix"}, "fail-fast": BOOLEAN, "max-parallel": NUMBER},
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
    step["properties"]["uses"] = NON_EMPTY
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
    definitions["shell"] = NON_EMPTY
    definitions["defaults"]["properties"]["run"]["properties"]["working-directory"] = NON_EMPTY
    for container in ("jobContainer", "serviceContainer"):
        properties = definitions[container]["properties"]
        properties["image"] = NON_EMPTY
        properties["credentials"]["properties"] = {"username": NON_EMPTY, "password": NON_EMPTY}
    definitions["snapshot"]["oneOf"][1]["properties"]["version"] = NON_EMPTY
    with_expression = {"$ref": "#/definitions/stringContainingExpressionSyntax"}
    definitions["env"] = {"anyOf": [{"type": "object", "additionalProperties": TEXT}, with_expression]}
    definitions["globs"] = {"anyOf": [NON_EMPTY, {"type": "array", "items": NON_EMPTY}]}


OVERRIDES: tuple[Override, ...] = (
    Override(
        "scalars-as-strings",
        "GitHub reads null, a boolean or a number as its text where it wants a string (null as the empty string)",
        workflow(top="name: 5\nenv:\n  TOKEN:\n", step="      - run: true\n        working-directory:\n"),
        None,
    ),
    Override(
        "triggers",
        "events, their settings and activity types as GitHub lists them today: `image_version`, "
        "`pull_request_comment`, `stacked` pull requests; `check_suite` is only `completed`; `tags` only on "
        "`push`; `workflow_dispatch: []` is not a trigger; a `workflow_call` secret may be null; a dispatch "
        "input's default has the input's type",
        workflow(
            on="on:\n  pull_request:\n    types: [opened, stacked]\n  image_version:\n  workflow_call:\n"
            "    secrets:\n      TOKEN:\n"
        ),
        _replace_triggers,
    ),
    Override(
        "permissions",
        "every scope GitHub accepts (`code-quality`, `drives`, `copilot-requests`, `vulnerability-alerts`) "
        "and the levels each takes (`id-token` and `copilot-requests` write or none; `models` read or none)",
        workflow(top="permissions:\n  code-quality: read\n  drives: read\n  id-token: write\n"),
        _replace_permissions,
    ),
    Override(
        "top-level-keys",
        "a workflow may have a `description`; GitHub has no `cache-mode`",
        workflow(top="description: Builds and tests\n"),
        _top_level_keys,
    ),
    Override(
        "job-keys",
        "`cancel-timeout-minutes`; `steps: []`; `runs-on: []`; no `cache-mode`; a job with `uses` is a reusable "
        "workflow call, judged as one",
        workflow(job="    cancel-timeout-minutes: 5\n"),
        _job_keys,
    ),
    Override(
        "strategy",
        "a `strategy` without `matrix` (only `fail-fast`); `fail-fast` a boolean and `max-parallel` a number, "
        "not strings; matrix values of any kind, null included",
        workflow(job="    strategy:\n      fail-fast: false\n"),
        _strategy,
    ),
    Override(
        "step-kinds",
        "`with` only on `uses` steps; background steps (`background: true` on a `run` or `uses` step, `wait`, "
        "`wait-all` and `cancel` steps that take only `name`, `id` and `continue-on-error`) and `parallel` groups "
        "of plain steps, as GitHub runs them since 2026-06-25",
        workflow(
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
        workflow(on="on:\n  push:\n    branches: '**'\n", job="    env:\n      A:\n"),
        _empty_values,
    ),
)


def clarify_action_schema(schema: Schema) -> None:
    """A composite step: `run` or `uses` but not both, `run` with `shell`, said in words rather than a oneOf; of the
    top-level keys only `runs` required, as by the runner (`name` and `description` are the Marketplace's)."""
    schema["required"] = [key for key in schema.get("required", []) if key == "runs"]
    step = schema.get("definitions", {}).get("runs-composite", {}).get("properties", {}).get("steps", {}).get("items")
    if not isinstance(step, dict) or "oneOf" not in step:
        return
    del step["oneOf"]
    step["allOf"] = [{"if": {"required": ["run"]}, "then": {"required": ["shell"]}}, *_one_kind_of_step("uses", "run")]
