"""The SchemaStore schemas as ci-checks applies them: relaxations, readable messages, no CLI import."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import jsonschema
import pytest
from jsonschema.exceptions import ValidationError

from ci_checks.core import source
from ci_checks.core.repository import FileKind
from ci_checks.rules import schema
from ci_checks.rules.schema import messages, overrides, validation
from ci_checks.syntax import yamlpos


def errors(text: str, kind: FileKind = FileKind.WORKFLOW) -> list[tuple[int, int, str]]:
    doc = yamlpos.parse(source.decode("w.yml", text.encode()))
    return [(e.span.line, e.span.column, e.message) for e in schema.validate(doc, kind)]


JOB = "jobs:\n  t:\n    runs-on: x\n    steps:\n      - run: make\n"


@pytest.mark.parametrize(
    "text",
    [
        "on: push\njobs:\n  t:\n    runs-on: x\n    strategy:\n      fail-fast: false\n    steps: [{run: make}]\n",
        "on:\n  push:\n    branches: '**'\n    tags: v*\n    paths-ignore: docs/**\n" + JOB,
        "on:\n  pull_request:\n    branches: main\n" + JOB,
    ],
    ids=["fail-fast without matrix", "filters as strings on push", "branches as a string on pull_request"],
)
def test_shapes_github_accepts_are_not_reported(text: str) -> None:
    assert errors(text) == []


def test_the_relaxations_keep_the_rest_of_the_check() -> None:
    text = "on:\n  push:\n    branches: []\n    tags: ''\n" + JOB
    assert errors(text) == [(4, 11, "expected a non-empty string or a sequence at on.push.tags, found ''")]


def test_step_with_both_uses_and_run_is_reported_at_the_second_key() -> None:
    text = "on: push\njobs:\n  t:\n    runs-on: x\n    steps:\n      - run: make\n        uses: a/b@v1\n"
    assert errors(text) == [(7, 9, "step has both `uses` and `run`; a step is either an action or a script")]


def test_a_key_only_run_steps_take_is_reported_at_that_key() -> None:
    text = "on: push\njobs:\n  t:\n    runs-on: x\n    steps:\n      - uses: a/b@v1\n        working-directory: src\n"
    assert errors(text) == [
        (7, 9, "`working-directory` is only for `run` steps; a step that `uses` an action takes none")
    ]


@pytest.mark.parametrize(
    "text",
    [
        "on: push\nenv:\n  X:\n" + JOB,
        "on: push\nname: 5\njobs:\n  t:\n    runs-on: 5\n    steps:\n      - run: true\n        working-directory:\n",
        "on: push\njobs:\n  t:\n    runs-on: x\n    steps:\n      - uses: a/b@v1\n        with:\n          token:\n",
        "on: push\njobs:\n  t:\n    runs-on: x\n    steps:\n      - run: ! make\n",
    ],
    ids=["null env value", "numbers and booleans as strings", "null with value", "non-specific tag"],
)
def test_scalars_are_read_as_text_where_github_wants_a_string(text: str) -> None:
    assert errors(text) == []


def test_null_is_still_empty_where_github_needs_text() -> None:
    text = "on: push\njobs:\n  t:\n    runs-on:\n    steps:\n      - run: make\n"
    assert errors(text) == [
        (4, 13, "expected a non-empty string or a sequence or a mapping at jobs.t.runs-on, found null")
    ]


def test_a_repeated_step_id_points_at_the_first() -> None:
    doc = yamlpos.parse(
        source.decode("w.yml", (JOB_HEAD + "      - id: a\n        run: x\n      - id: a\n        run: y\n").encode())
    )
    (error,) = schema.validate(doc, FileKind.WORKFLOW)
    assert (error.span.line, error.message) == (8, "step id 'a' is already used by an earlier step of this job")
    assert [(r.span.line, r.message) for r in error.related] == [(6, "first used here")]


JOB_HEAD = "on: push\njobs:\n  t:\n    runs-on: x\n    steps:\n"


def test_composite_steps_explain_what_is_missing() -> None:
    head = "name: a\ndescription: b\nruns:\n  using: composite\n  steps:\n"
    assert errors(head + "    - run: make\n", FileKind.ACTION) == [
        (6, 7, "missing required key 'shell' at runs.steps[0]")
    ]
    both = errors(head + "    - run: make\n      shell: bash\n      uses: a/b@v1\n", FileKind.ACTION)
    assert both == [(8, 7, "step has both `uses` and `run`; a step is either an action or a script")]
    neither = errors(head + "    - name: nothing\n", FileKind.ACTION)
    assert neither == [(6, 7, "step has neither `uses` nor `run`; a step runs an action or a script")]
    assert errors(head + "    - run: make\n      shell: bash\n    - uses: a/b@v1\n", FileKind.ACTION) == []


def test_values_out_of_a_fixed_set_suggest_the_closest() -> None:
    text = "on: push\npermissions:\n  contents: reed\n" + JOB
    assert errors(text) == [(3, 13, "'reed' is not a known value at permissions.contents (did you mean 'read'?)")]


def test_alias_values_are_validated_where_they_are_defined() -> None:
    text = "on: push\nenv: &e {A: [1]}\njobs:\n  t:\n    runs-on: x\n    env: *e\n    steps: [{run: make}]\n"
    found = errors(text)
    assert found == [(2, 13, "expected a string at env.A, found a sequence")]


def test_locating_the_schemas_does_not_import_the_check_jsonschema_cli() -> None:
    code = (
        "import sys\n"
        "from ci_checks.rules import schema\n"
        "from ci_checks.core.repository import FileKind\n"
        "schema.validator(FileKind.WORKFLOW); schema.validator(FileKind.ACTION)\n"
        "print(sorted(m for m in sys.modules if m.startswith('check_jsonschema')))\n"
    )
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.strip() == "[]"


def test_validators_are_built_once() -> None:
    assert schema.validator(FileKind.WORKFLOW) is schema.validator(FileKind.WORKFLOW)


def test_a_step_id_is_an_identifier_not_starting_with_two_underscores() -> None:
    text = JOB_HEAD + "".join(f"      - id: {id_}\n        run: make\n" for id_ in ("__x", "_x", "1a", "a-1", "__a.b"))
    assert errors(text) == [
        (6, 13, "step id '__x' is reserved: ids starting with `__` are GitHub's"),
        (
            10,
            13,
            "step id '1a' is not a valid identifier: it must start with a letter or `_`, hold only letters, digits, "
            "`-` and `_`, and be shorter than 100 characters",
        ),
        (
            14,
            13,
            "step id '__a.b' is not a valid identifier: it must start with a letter or `_`, hold only letters, "
            "digits, `-` and `_`, and be shorter than 100 characters",
        ),
    ]


def test_wait_names_earlier_steps_and_an_expression_is_not_judged() -> None:
    text = JOB_HEAD + "      - id: a\n        run: x\n      - wait: ['${{ inputs.step }}', a, b]\n"
    assert errors(text) == [(8, 41, "`wait: b` names no earlier step of this list (ids before it: a)")]


def test_a_needs_cycle_is_found_past_jobs_already_followed() -> None:
    """`a` needs nothing; `b` and `c` need each other (found from `b`, at `c`'s need); `d` needs jobs already done."""
    jobs = {"a": "", "b": "needs: c, ", "c": "needs: [b], ", "d": "needs: [a, b], "}
    text = "on: push\njobs:\n" + "".join(
        f"  {job}: {{runs-on: x, {needs}steps: [{{run: make}}]}}\n" for job, needs in jobs.items()
    )
    assert errors(text) == [(5, 27, "job 'c' needs 'b', which needs it in turn: a cycle")]


def test_a_needs_graph_of_many_paths_is_followed_once_per_job() -> None:
    """Forty layers of two jobs, each needing both jobs of the layer before: 2**40 paths, 80 jobs to follow."""
    jobs = "  j0-0: {runs-on: x, steps: [{run: make}]}\n  j0-1: {runs-on: x, steps: [{run: make}]}\n"
    jobs += "".join(
        f"  j{layer}-{side}: {{runs-on: x, needs: [j{layer - 1}-0, j{layer - 1}-1], steps: [{{run: make}}]}}\n"
        for layer in range(1, 40)
        for side in (0, 1)
    )
    assert errors("on: push\njobs:\n" + jobs) == []


@pytest.mark.parametrize(
    ("minute", "accepted"),
    [("1-5", True), ("5-", False), ("-5", False), ("1-2-3", False), ("5-3", False), ("3-3", True), ("1-5/2", True)],
)
def test_a_cron_range_has_two_ends_in_order(minute: str, accepted: bool) -> None:
    text = f"on:\n  schedule:\n    - cron: '{minute} * * * *'\n" + JOB
    cron = (
        f"'{minute} * * * *' is not a cron expression GitHub accepts: five fields (minute hour day-of-month month "
        "day-of-week) of numbers, names, `*`, ranges, steps and lists; no `@daily` macros"
    )
    assert errors(text) == ([] if accepted else [(3, 13, cron)])


def test_a_number_where_github_wants_a_boolean_is_found_as_a_number() -> None:
    text = JOB_HEAD + "      - run: make\n        continue-on-error: 2.5\n"
    assert errors(text) == [
        (7, 28, "expected a boolean or a string at jobs.t.steps[0].continue-on-error, found a number")
    ]


@pytest.mark.parametrize(("value", "found"), [("inherti", "'inherti'"), ("5", "an integer")], ids=["typo", "number"])
def test_the_words_of_alternatives_nested_in_an_alternative_are_all_said(value: str, found: str) -> None:
    """`secrets:` takes `env`'s mapping or expression, or `inherit`: `inherit` is named too (it was left out)."""
    text = f"on: push\njobs:\n  t:\n    uses: ./.github/workflows/x.yml\n    secrets: {value}\n"
    wanted = "a mapping or an ${{ }} expression" if value == "inherti" else "a mapping or a string"
    assert errors(text) == [(5, 14, f"expected {wanted} or one of inherit at jobs.t.secrets, found {found}")]


# `on:` as GitHub reads it: each event's settings, and the inputs, secrets and outputs of dispatches and calls.
ON_SHAPES = {
    "names": (
        "on: [push, pull_request]\n",
        [],
    ),
    "integer": (
        "on: 5\n",
        [
            (
                1,
                5,
                (
                    "expected one of branch_protection_rule, check_run, check_suite, create, delete, "
                    "deployment, deployment_status, discussion, discussion_comment, fork, gollum, "
                    "image_version, ... or a sequence or a mapping at on, found an integer"
                ),
            )
        ],
    ),
    "unknown name": (
        "on: zzz\n",
        [
            (
                1,
                5,
                (
                    "'zzz' is not one of branch_protection_rule, check_run, check_suite, create, "
                    "delete, deployment, deployment_status, discussion, discussion_comment, fork, "
                    "gollum, image_version, ... at on"
                ),
            )
        ],
    ),
    "unknown event key": (
        "on:\n  pushh:\n",
        [(2, 3, "unknown key 'pushh' at on (did you mean 'push'?)")],
    ),
    "activity types": (
        "on:\n  pull_request:\n    types: [opened, stacked]\n  issues:\n    types: closed\n",
        [],
    ),
    "bad activity": (
        "on:\n  pull_request:\n    types: [openned]\n",
        [(3, 13, "'openned' is not a known value at on.pull_request.types[0] (did you mean 'opened'?)")],
    ),
    "filters": (
        (
            "on:\n"
            "  push:\n"
            "    branches: a\n"
            "    branches-ignore: b\n"
            "    tags: c\n"
            "    tags-ignore: d\n"
            "    paths: e\n"
            "    paths-ignore: f\n"
            "  pull_request_target:\n"
            "    branches: a\n"
            "    paths-ignore: b\n"
            "  merge_group:\n"
            "    branches-ignore: a\n"
            "  workflow_run:\n"
            "    workflows: [ci]\n"
            "    branches: main\n"
            "  image_version:\n"
            "    names: a\n"
            "    versions: [b]\n"
        ),
        [],
    ),
    "tags on pr": (
        "on:\n  pull_request:\n    tags: v1\n",
        [(3, 5, "unknown key 'tags' at on.pull_request")],
    ),
    "types on push": (
        "on:\n  push:\n    types: [created]\n",
        [(3, 5, "unknown key 'types' at on.push")],
    ),
    "paths on merge_group": (
        "on:\n  merge_group:\n    paths: a\n",
        [(3, 5, "unknown key 'paths' at on.merge_group")],
    ),
    "settings as a string": (
        "on:\n  pull_request: main\n",
        [(2, 17, "expected null or a mapping at on.pull_request, found 'main'")],
    ),
    "settings on create": (
        "on:\n  create:\n    branches: main\n",
        [(3, 5, "expected null at on.create, found a mapping")],
    ),
    "repository_dispatch": (
        "on:\n  repository_dispatch:\n    types: [deploy]\n",
        [],
    ),
    "repository_dispatch one type": (
        "on:\n  repository_dispatch:\n    types: deploy\n",
        [(3, 12, "expected a sequence at on.repository_dispatch.types, found 'deploy'")],
    ),
    "schedule": (
        "on:\n  schedule:\n    - cron: '0 1 * * *'\n      timezone: UTC\n",
        [],
    ),
    "schedule without cron": (
        "on:\n  schedule:\n    - timezone: UTC\n",
        [(3, 7, "missing required key 'cron' at on.schedule[0]")],
    ),
    "schedule extra": (
        "on:\n  schedule:\n    - cron: '0 1 * * *'\n      tz: UTC\n",
        [(4, 7, "unknown key 'tz' at on.schedule[0]")],
    ),
    "schedule mapping": (
        "on:\n  schedule:\n    cron: '0 1 * * *'\n",
        [(3, 5, "expected a sequence at on.schedule, found a mapping")],
    ),
    "dispatch": (
        (
            "on:\n"
            "  workflow_dispatch:\n"
            "    inputs:\n"
            "      a:\n"
            "        description: x\n"
            "        type: choice\n"
            "        required: true\n"
            "        default: b\n"
            "        options: [b, c]\n"
            "      n:\n"
            "        type: number\n"
            "        default: 5\n"
            "      f:\n"
            "        type: boolean\n"
            "        default: true\n"
            "      e:\n"
            "        type: environment\n"
            "      s:\n"
            "        default: 5\n"
        ),
        [],
    ),
    "dispatch bad": (
        (
            "on:\n"
            "  workflow_dispatch:\n"
            "    inputs:\n"
            "      a:\n"
            "        type: choice\n"
            "      b:\n"
            "        typo: 1\n"
            "      c:\n"
            "        type: boolean\n"
            "        default: 'yes'\n"
            "      d:\n"
            "        type: text\n"
            "        required: maybe\n"
            "        options: x\n"
            "      e: text\n"
            "      f:\n"
            "        default: [x]\n"
        ),
        [
            (4, 7, "missing required key 'options' at on.workflow_dispatch.inputs.a"),
            (7, 9, "unknown key 'typo' at on.workflow_dispatch.inputs.b (did you mean 'type'?)"),
            (10, 18, "expected a boolean at on.workflow_dispatch.inputs.c.default, found 'yes'"),
            (
                12,
                15,
                (
                    "'text' is not one of string, boolean, number, choice, environment at "
                    "on.workflow_dispatch.inputs.d.type"
                ),
            ),
            (13, 19, "expected a boolean at on.workflow_dispatch.inputs.d.required, found 'maybe'"),
            (14, 18, "expected a sequence at on.workflow_dispatch.inputs.d.options, found 'x'"),
            (15, 10, "expected a mapping at on.workflow_dispatch.inputs.e, found 'text'"),
            (
                17,
                18,
                (
                    "expected a string or a boolean or a number at "
                    "on.workflow_dispatch.inputs.f.default, found a sequence"
                ),
            ),
        ],
    ),
    "dispatch inputs list": (
        "on:\n  workflow_dispatch:\n    inputs: [a]\n",
        [(3, 13, "expected a mapping at on.workflow_dispatch.inputs, found a sequence")],
    ),
    "call": (
        (
            "on:\n"
            "  workflow_call:\n"
            "    inputs:\n"
            "      b:\n"
            "        description: x\n"
            "        type: boolean\n"
            "        required: true\n"
            "        default: true\n"
            "      n:\n"
            "        type: number\n"
            "        default: ${{ 1 }}\n"
            "      s:\n"
            "        type: string\n"
            "        default: 5\n"
            "    secrets:\n"
            "      T:\n"
            "      U:\n"
            "        description: x\n"
            "        required: true\n"
            "    outputs:\n"
            "      o:\n"
            "        description: x\n"
            "        value: ${{ jobs.t.outputs.o }}\n"
        ),
        [],
    ),
    "call bad": (
        (
            "on:\n"
            "  workflow_call:\n"
            "    inputs:\n"
            "      a: text\n"
            "      b:\n"
            "        type: boolean\n"
            "        default: 'yes'\n"
            "      c:\n"
            "        type: number\n"
            "        default: abc\n"
            "      d:\n"
            "        description: x\n"
            "      e:\n"
            "        type: choice\n"
            "        options: [x]\n"
            "        required: maybe\n"
        ),
        [
            (4, 10, "expected a mapping at on.workflow_call.inputs.a, found 'text'"),
            (7, 18, "expected a boolean or an ${{ }} expression at on.workflow_call.inputs.b.default, found 'yes'"),
            (10, 18, "expected a number or an ${{ }} expression at on.workflow_call.inputs.c.default, found 'abc'"),
            (11, 7, "missing required key 'type' at on.workflow_call.inputs.d"),
            (14, 15, "'choice' is not one of boolean, number, string at on.workflow_call.inputs.e.type"),
            (15, 9, "unknown key 'options' at on.workflow_call.inputs.e"),
            (16, 19, "expected a boolean at on.workflow_call.inputs.e.required, found 'maybe'"),
        ],
    ),
    "call secrets bad": (
        "on:\n  workflow_call:\n    secrets: [a]\n",
        [(3, 14, "expected a mapping at on.workflow_call.secrets, found a sequence")],
    ),
    "call secret bad": (
        "on:\n  workflow_call:\n    secrets:\n      T:\n        required: maybe\n        typo: x\n      U: text\n",
        [
            (5, 19, "expected a boolean at on.workflow_call.secrets.T.required, found 'maybe'"),
            (6, 9, "unknown key 'typo' at on.workflow_call.secrets.T"),
            (7, 10, "expected null or a mapping at on.workflow_call.secrets.U, found 'text'"),
        ],
    ),
    "call outputs bad": (
        (
            "on:\n"
            "  workflow_call:\n"
            "    outputs:\n"
            "      o:\n"
            "        description: x\n"
            "      p: text\n"
            "      q:\n"
            "        value: x\n"
            "        typo: y\n"
        ),
        [
            (4, 7, "missing required key 'value' at on.workflow_call.outputs.o"),
            (6, 10, "expected a mapping at on.workflow_call.outputs.p, found 'text'"),
            (9, 9, "unknown key 'typo' at on.workflow_call.outputs.q"),
        ],
    ),
    "call keys bad": (
        "on:\n  workflow_call:\n    imputs: {}\n    inputs: [a]\n    outputs: [a]\n",
        [
            (3, 5, "unknown key 'imputs' at on.workflow_call (did you mean 'inputs'?)"),
            (4, 13, "expected a mapping at on.workflow_call.inputs, found a sequence"),
            (5, 14, "expected a mapping at on.workflow_call.outputs, found a sequence"),
        ],
    ),
}


@pytest.mark.parametrize(("text", "expected"), ON_SHAPES.values(), ids=ON_SHAPES.keys())
def test_events_take_the_settings_github_accepts(text: str, expected: list[tuple[int, int, str]]) -> None:
    assert sorted(errors(text + JOB)) == expected


# Permissions, job keys, step kinds, `needs` and background-step targets, as GitHub reads and checks them.
WORKFLOW_SHAPES = {
    "permissions levels": (
        (
            "permissions:\n"
            "  contents: write\n"
            "  id-token: write\n"
            "  models: read\n"
            "  copilot-requests: none\n"
            "  vulnerability-alerts: read\n"
            "  code-quality: read\n"
            "  drives: read\n"
            "on: push\n"
            "jobs:\n"
            "  t:\n"
            "    runs-on: x\n"
            "    steps:\n"
            "      - run: make\n"
        ),
        [],
    ),
    "permissions all": (
        ("permissions: read-all\non: push\njobs:\n  t:\n    runs-on: x\n    steps:\n      - run: make\n"),
        [],
    ),
    "permissions integer": (
        ("permissions: 5\non: push\njobs:\n  t:\n    runs-on: x\n    steps:\n      - run: make\n"),
        [(1, 14, ("expected one of read-all, write-all or a mapping at permissions, found an integer"))],
    ),
    "permissions sequence": (
        ("permissions: [contents]\non: push\njobs:\n  t:\n    runs-on: x\n    steps:\n      - run: make\n"),
        [(1, 14, ("expected one of read-all, write-all or a mapping at permissions, found a sequence"))],
    ),
    "permissions scope levels": (
        (
            "permissions:\n"
            "  id-token: read\n"
            "  models: write\n"
            "  contents: 5\n"
            "  content: read\n"
            "on: push\n"
            "jobs:\n"
            "  t:\n"
            "    runs-on: x\n"
            "    steps:\n"
            "      - run: make\n"
        ),
        [
            (2, 13, "'read' is not one of write, none at permissions.id-token"),
            (3, 11, "'write' is not one of read, none at permissions.models"),
            (4, 13, "expected a string at permissions.contents, found an integer"),
            (5, 3, "unknown key 'content' at permissions (did you mean 'contents'?)"),
        ],
    ),
    "job keys": (
        (
            "on: push\n"
            "jobs:\n"
            "  t:\n"
            "    runs-on: x\n"
            "    cancel-timeout-minutes: 5\n"
            "    outputs:\n"
            "      a: ${{ steps.s.outputs.a }}\n"
            "      b: 5\n"
            "    runs-on: [x, y]\n"
            "    steps:\n"
            "[]\n"
        ),
        [],
    ),
    "runs-on group": (
        ("on: push\njobs:\n  t:\n    runs-on:\n      group: g\n      labels: a\n    steps: [{run: make}]\n"),
        [],
    ),
    "runs-on bad": (
        (
            "on: push\n"
            "jobs:\n"
            "  t:\n"
            "    runs-on:\n"
            "      grp: g\n"
            "      labels: ['']\n"
            "    steps: [{run: make}]\n"
            "  u:\n"
            "    runs-on: []\n"
            "    steps: [{run: make}]\n"
        ),
        [
            (5, 7, "unknown key 'grp' at jobs.t.runs-on (did you mean 'group'?)"),
            (6, 16, "jobs.t.runs-on.labels[0] must not be empty"),
        ],
    ),
    "job keys bad": (
        (
            "on: push\n"
            "jobs:\n"
            "  t:\n"
            "    runs-on: x\n"
            "    cancel-timeout-minutes: soon\n"
            "    cache-mode: x\n"
            "    outputs:\n"
            "      a: [1]\n"
            "    steps:\n"
            "      - run: make\n"
        ),
        [
            (5, 29, ("expected a number or an ${{ }} expression at jobs.t.cancel-timeout-minutes, found 'soon'")),
            (6, 5, "unknown key 'cache-mode' at jobs.t"),
            (8, 10, "expected a string at jobs.t.outputs.a, found a sequence"),
        ],
    ),
    "job outputs list": (
        ("on: push\njobs:\n  t:\n    runs-on: x\n    outputs: [a]\n    steps:\n      - run: make\n"),
        [(5, 14, "expected a mapping at jobs.t.outputs, found a sequence")],
    ),
    "reusable job": (
        ("on: push\njobs:\n  t:\n    uses: ./.github/workflows/x.yml\n    with:\n      n: 5\n    secrets: inherit\n"),
        [],
    ),
    "reusable job bad": (
        (
            "on: push\n"
            "jobs:\n"
            "  t:\n"
            "    uses: ./.github/workflows/x.yml\n"
            "    runs-on: x\n"
            "    steps: [{run: make}]\n"
            "  u:\n"
            "    uses: ''\n"
        ),
        [
            (5, 5, "'runs-on' is not allowed in a job that calls a reusable workflow (`uses`)"),
            (6, 5, "'steps' is not allowed in a job that calls a reusable workflow (`uses`)"),
            (8, 11, "jobs.u.uses must not be empty"),
        ],
    ),
    "no jobs": (
        ("on: push\njobs: {}\n"),
        [(2, 1, "a workflow needs at least one job")],
    ),
    "description": (
        ("description: builds\non: push\njobs:\n  t:\n    runs-on: x\n    steps:\n      - run: make\n"),
        [],
    ),
    "cache-mode": (
        ("cache-mode: x\non: push\njobs:\n  t:\n    runs-on: x\n    steps:\n      - run: make\n"),
        [(1, 1, "unknown key 'cache-mode' at the top level")],
    ),
    "parallel with uses": (
        (
            "on: push\n"
            "jobs:\n"
            "  t:\n"
            "    runs-on: x\n"
            "    steps:\n"
            "      - parallel:\n"
            "          - run: a\n"
            "        uses: a/b@v1\n"
        ),
        [
            (
                8,
                9,
                (
                    "step has both `parallel` and `uses`; a step is one of `uses`, `run`, `parallel`, "
                    "`wait`, `wait-all`, `cancel`"
                ),
            )
        ],
    ),
    "parallel with run": (
        ("on: push\njobs:\n  t:\n    runs-on: x\n    steps:\n      - parallel:\n          - run: a\n        run: b\n"),
        [
            (
                8,
                9,
                (
                    "step has both `parallel` and `run`; a step is one of `uses`, `run`, `parallel`, "
                    "`wait`, `wait-all`, `cancel`"
                ),
            )
        ],
    ),
    "parallel with name": (
        ("on: push\njobs:\n  t:\n    runs-on: x\n    steps:\n      - parallel:\n          - run: a\n        name: b\n"),
        [(8, 9, "a `parallel` step holds only its steps; `name` goes on a step inside it")],
    ),
    "wait with run": (
        (
            "on: push\n"
            "jobs:\n"
            "  t:\n"
            "    runs-on: x\n"
            "    steps:\n"
            "      - id: a\n"
            "        run: a\n"
            "        background: true\n"
            "      - wait: a\n"
            "        run: b\n"
            "      - wait-all: 5\n"
            "      - cancel: a\n"
            "        env: {}\n"
        ),
        [
            (
                10,
                9,
                (
                    "step has both `wait` and `run`; a step is one of `uses`, `run`, `parallel`, "
                    "`wait`, `wait-all`, `cancel`"
                ),
            ),
            (11, 9, ("`wait-all` takes no value (or `true`): it waits for every background step started before it")),
            (13, 9, "a `cancel` step takes only `name`, `id` and `continue-on-error`, not `env`"),
        ],
    ),
    "parallel nested": (
        (
            "on: push\n"
            "jobs:\n"
            "  t:\n"
            "    runs-on: x\n"
            "    steps:\n"
            "      - parallel:\n"
            "          - parallel: [{run: a}]\n"
            "          - run: b\n"
            "            background: true\n"
        ),
        [
            (
                7,
                13,
                (
                    "`parallel` is not allowed inside a `parallel` group: its steps run in the "
                    "background already, and groups do not nest"
                ),
            ),
            (
                9,
                13,
                (
                    "`background` is not allowed inside a `parallel` group: its steps run in the "
                    "background already, and groups do not nest"
                ),
            ),
        ],
    ),
    "with on run": (
        ("on: push\njobs:\n  t:\n    runs-on: x\n    steps:\n      - run: a\n        with: {a: b}\n      - uses: ''\n"),
        [(7, 9, "`with` is only for steps that `uses` an action"), (8, 15, "jobs.t.steps[1].uses must not be empty")],
    ),
    "step none": (
        ("on: push\njobs:\n  t:\n    runs-on: x\n    steps:\n      - name: a\n"),
        [
            (
                6,
                9,
                (
                    "step has none of `uses`, `run`, `parallel`, `wait`, `wait-all` or `cancel`; a "
                    "step runs an action or a script, groups steps, or waits for or cancels "
                    "background steps"
                ),
            )
        ],
    ),
    "needs unknown": (
        (
            "on: push\n"
            "jobs:\n"
            "  t:\n"
            "    runs-on: x\n"
            "    steps:\n"
            "      - run: make\n"
            "  u:\n"
            "    runs-on: x\n"
            "    needs: [zzz, tt]\n"
            "    steps: [{run: make}]\n"
        ),
        [
            (9, 13, "job 'u' needs 'zzz', which is not a job of this workflow"),
            (9, 18, "job 'u' needs 'tt', which is not a job of this workflow (did you mean 't'?)"),
        ],
    ),
    "needs form": (
        (
            "on: push\n"
            "jobs:\n"
            "  t:\n"
            "    runs-on: x\n"
            "    steps:\n"
            "      - run: make\n"
            "  u:\n"
            "    runs-on: x\n"
            "    needs: t.b\n"
            "    steps: [{run: make}]\n"
        ),
        [(9, 12, "'t.b' does not have the expected form at jobs.u.needs")],
    ),
    "all need": (
        (
            "on: push\n"
            "jobs:\n"
            "  t:\n"
            "    runs-on: x\n"
            "    needs: u\n"
            "    steps:\n"
            "      - run: make\n"
            "  u:\n"
            "    runs-on: x\n"
            "    needs: t\n"
            "    steps: [{run: make}]\n"
        ),
        [(3, 3, "every job needs another one, so none can start: one job must have no `needs`")],
    ),
    "wait targets": (
        (
            "on: push\n"
            "jobs:\n"
            "  t:\n"
            "    runs-on: x\n"
            "    steps:\n"
            "      - id: a\n"
            "        run: a\n"
            "        background: true\n"
            "      - id: b\n"
            "        run: b\n"
            "        background: true\n"
            "      - wait: [c]\n"
            "      - cancel: a\n"
            "      - id: d\n"
            "        wait: d\n"
        ),
        [
            (12, 16, "`wait: c` names no earlier step of this list (ids before it: a, b)"),
            (15, 15, "step 'd' cannot wait for itself"),
        ],
    ),
    "wait first": (
        (
            "on: push\n"
            "jobs:\n"
            "  t:\n"
            "    runs-on: x\n"
            "    steps:\n"
            "      - wait: a\n"
            "      - parallel:\n"
            "          - id: p\n"
            "            run: p\n"
            "          - cancel: q\n"
        ),
        [
            (6, 15, "`wait: a` names no earlier step of this list (ids before it: none)"),
            (
                10,
                13,
                (
                    "`cancel` is not allowed inside a `parallel` group: its steps run in the "
                    "background already, and groups do not nest"
                ),
            ),
            (10, 21, "`cancel: q` names no earlier step of this list (ids before it: p)"),
        ],
    ),
}


@pytest.mark.parametrize(("text", "expected"), WORKFLOW_SHAPES.values(), ids=WORKFLOW_SHAPES.keys())
def test_workflows_get_the_findings_github_gives(text: str, expected: list[tuple[int, int, str]]) -> None:
    assert sorted(errors(text)) == expected


def test_where_several_alternatives_fit_the_one_missing_fewest_keys_is_explained() -> None:
    """`steps` makes it a composite action, missing nothing, rather than a JavaScript one missing `main`."""
    text = "runs:\n  using: node20\n  steps: [{run: make, shell: bash}]\n  pre: setup.js\n"
    assert errors(text, FileKind.ACTION) == [
        (2, 10, "'composite' was expected at runs.using"),
        (4, 3, "unknown key 'pre' at runs"),
    ]


def test_alternatives_that_each_miss_a_key_are_told_as_one_missing_key() -> None:
    """No alternative of GitHub's schemas without its own message is like this today; an updated schema may be."""
    alternatives = jsonschema.Draft7Validator({"anyOf": [{"required": ["uses"]}, {"required": ["run"]}]})
    root = yamlpos.parse(source.decode("w.yml", b"name: a\n")).root
    assert root is not None
    (error,) = alternatives.iter_errors(yamlpos.to_plain(root))
    found = [(e.span.line, e.span.column, e.message) for e in messages.explain(root, error)]
    assert found == [(1, 1, "missing required key: one of 'uses' or 'run' at the top level")]


@pytest.mark.parametrize(
    ("expected", "instance_type", "accepted"),
    [("number", "integer", True), (["string", "number"], "integer", True), ("string", "integer", False),
     ("integer", "number", False), (["object", "null"], "null", True)],
)  # fmt: skip
def test_an_alternative_wanting_a_number_takes_an_integer(expected: object, instance_type: str, accepted: bool) -> None:
    error = ValidationError("wrong type", validator="type", validator_value=expected)
    assert messages._accepts(error, instance_type) is accepted


def test_a_one_of_becomes_an_any_of_only_where_its_alternatives_take_different_types() -> None:
    definitions = {"list": {"type": "array"}}
    disjoint = {"oneOf": [{"type": "string"}, {"$ref": "#/definitions/list"}]}
    overlapping = {"oneOf": [{"type": "number"}, {"type": "integer"}]}
    untyped = {"oneOf": [{"type": "string"}, {"required": ["a"]}]}
    beside_any_of = {"oneOf": [{"type": "string"}, {"type": "object"}], "anyOf": [{"minLength": 1}, {"type": "object"}]}
    nested = {"items": [{"properties": {"a": copy.deepcopy(disjoint)}}]}
    for node in (disjoint, overlapping, untyped, beside_any_of, nested):
        validation._disjoint_one_of_to_any_of(node, definitions)
    assert disjoint == {"anyOf": [{"type": "string"}, {"$ref": "#/definitions/list"}]}
    assert overlapping == {"oneOf": [{"type": "number"}, {"type": "integer"}]}
    assert untyped == {"oneOf": [{"type": "string"}, {"required": ["a"]}]}
    assert beside_any_of["oneOf"] == [{"type": "string"}, {"type": "object"}]
    assert beside_any_of["anyOf"] == [{"minLength": 1}, {"type": "object"}]
    assert nested == {"items": [{"properties": {"a": disjoint}}]}


def test_the_overrides_apply_alike_to_a_vendored_schema_without_the_keys_they_remove() -> None:
    """A check-jsonschema update that drops `cache-mode` or the limits GitHub does not have changes nothing."""
    vendored = json.loads((schema.vendor_directory() / schema.SCHEMA_FILES[FileKind.WORKFLOW]).read_text("utf-8"))
    trimmed = copy.deepcopy(vendored)
    trimmed["properties"].pop("cache-mode")
    trimmed["properties"]["jobs"].pop("patternProperties")
    trimmed["properties"]["jobs"].pop("minProperties")
    for job in ("normalJob", "reusableWorkflowCallJob"):
        trimmed["definitions"][job]["properties"].pop("cache-mode")
    trimmed["definitions"]["normalJob"]["properties"]["steps"].pop("minItems")
    for edited in (vendored, trimmed):
        for override in schema.OVERRIDES:
            if override.apply is not None:
                override.apply(edited)
    assert trimmed == vendored


@pytest.mark.parametrize(
    "vendored",
    [{}, {"definitions": {}}, {"definitions": {"runs-composite": {}}},
     {"definitions": {"runs-composite": {"properties": {}}}},
     {"definitions": {"runs-composite": {"properties": {"steps": {}}}}}],
    ids=["no definitions", "no composite runs", "no properties", "no steps", "no step items"],
)  # fmt: skip
def test_the_action_schema_edit_keeps_to_what_the_vendored_schema_has(vendored: dict[str, object]) -> None:
    edited = copy.deepcopy(vendored) | {"required": ["name", "description", "runs"]}
    overrides.clarify_action_schema(edited)
    assert edited == vendored | {"required": ["runs"]}
