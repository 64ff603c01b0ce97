"""`key:` items: PATHs over workflows as GitHub reads them, each comparator, `count`, and values read from Python."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from ci_checks.config import load as config
from ci_checks.core.config_files import ConfigError
from ci_checks.core.source import SourceFile
from tests.ci.linter.conftest import MakeRepo, Result, run_cli

WORKFLOW = """name: CI
on:
  push:
    branches: main
  schedule:
    - cron: "0 1 * * *"
    - cron: '0 13 * * *'
  workflow_dispatch:
    inputs:
      arch:
        type: choice
        options: [gfx942, gfx950]
permissions:
  contents: read
env:
  PYTHON.VERSION: 3.10
  LOG: |
    verbose
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
  stage-a-gpu-1:
    needs: build
    runs-on: [self-hosted, mi300x]
    continue-on-error: true
    steps:
      - run: pytest
  stage-b-gpu-1:
    needs: [build, stage-a-gpu-1]
    runs-on: [self-hosted, mi300x]
    steps:
      - run: pytest
"""


def check(
    make_repo: MakeRepo,
    items: str,
    kind: str = "require",
    where: str = "{workflow: .github/workflows/ci.yml}",
    workflow: str = WORKFLOW,
    files: Mapping[str, str | bytes] | None = None,
) -> Result:
    policy = f"version: 1\nrules:\n  - id: r\n    kind: {kind}\n    where: {where}\n    {kind}:\n{items}"
    root = make_repo({".github/workflows/ci.yml": workflow, ".github/ci-checks.yml": policy, **(files or {})})
    return run_cli("check", root, "--select", "CC1")


def headers(result: Result) -> list[str]:
    return [line.removeprefix(".github/workflows/ci.yml:") for line in result.headers]


@pytest.mark.parametrize(
    ("item", "holds"),
    [
        ("- key: jobs.build.runs-on", True),
        ("- key: jobs.build.timeout-minutes", False),
        ("- key: on.push.branches\n        equals: [main]", True),
        ("- key: on.push.branches\n        equals: main", True),
        ("- key: on.push.branches\n        equals: [dev]", False),
        ("- key: permissions.contents\n        in: [read, none]", True),
        ("- key: permissions.contents\n        in: [write]", False),
        ("- key: jobs.stage-*-gpu-*.needs\n        has: [build]", True),
        ("- key: jobs.stage-*-gpu-*.needs\n        has: [stage-a-gpu-1]", False),
        ("- key: on.workflow_dispatch.inputs.arch\n        keys: [type, options]", True),
        ("- key: on.workflow_dispatch.inputs.arch\n        keys: [type]", False),
        ("- key: on\n        keys_include: [push, schedule]", True),
        ("- key: on\n        keys_include: [pull_request]", False),
        ("- key: on.schedule[*].cron\n        matches: '^0 [0-9]+ '", True),
        ("- key: on.schedule[*].cron\n        matches: '^0 1 '", False),
        ("- key: env.LOG\n        contains: verbose", True),
        ("- key: jobs.build.runs-on\n        contains: ubuntu", True),
        ("- key: jobs.stage-a-gpu-1.needs\n        matches: ^bui", True),
        ("- key: jobs.stage-b-gpu-1.needs\n        contains: build", False),
        ('- key: env.LOG\n        equals: "verbose\\n"', True),
        ('- key: env["PYTHON.VERSION"]\n        equals: "3.1"', True),
        ('- key: env["PYTHON.VERSION"]\n        equals: "3.10"', False),
        ("- key: jobs.stage-a-gpu-1.continue-on-error\n        equals: true", True),
        ("- key: jobs.stage-a-gpu-1.continue-on-error\n        equals: 'true'", False),
        ("- key: on.schedule[-1].cron\n        equals: 0 13 * * *", True),
        ("- key: on.schedule[*]\n        count: 2", True),
        ("- key: on.schedule[*]\n        count: {min: 3}", False),
        ("- key: jobs.stage-*-gpu-*\n        count: 2", True),
        ("- key: jobs.stage-*-gpu-*\n        count: 5", False),
        ("- key: jobs.*.timeout-minutes\n        count: {min: 0, max: 1}", True),
    ],
)
def test_each_comparator_holds_or_fails_as_github_reads_the_value(make_repo: MakeRepo, item: str, holds: bool) -> None:
    result = check(make_repo, f"      {item}\n")
    assert result.err == ""
    assert result.code == (0 if holds else 1), result.out


def test_on_written_as_a_string_a_list_or_a_mapping_reads_the_same(make_repo: MakeRepo) -> None:
    body = "jobs:\n  a:\n    runs-on: x\n    steps: [{run: make}]\n"
    for on in ("on: push\n", "on: [push]\n", "on:\n  push:\n"):
        for item, holds in (("equals: [push]", True), ("equals: push", True), ("keys: [push]", True)):
            result = check(make_repo, f"      - key: on\n        {item}\n", workflow=on + body)
            assert result.code == (0 if holds else 1), (on, item, result.out)
        assert check(make_repo, "      - key: on.push\n", workflow=on + body).code == 0
        assert check(make_repo, "      - key: on.pull_request\n", workflow=on + body).code == 1


def test_require_reports_each_value_that_fails_at_the_value(make_repo: MakeRepo) -> None:
    workflow = WORKFLOW.replace("    - cron: '0 13 * * *'\n", "    - cron: '0 13 * * *'\n    - cron: 0 5 * * *\n")
    items = '      - key: "[*].cron"\n        in: ["0 1 * * *", "0 13 * * *"]\n'
    where = "{workflow: .github/workflows/ci.yml, trigger: schedule}"
    assert headers(check(make_repo, items, where=where, workflow=workflow)) == [
        "8:13: CC102 `[2].cron` in trigger 'schedule' is '0 5 * * *', not one of '0 1 * * *', '0 13 * * *' [r]",
    ]


SCHEDULE = "{workflow: .github/workflows/ci.yml, trigger: schedule}"


@pytest.mark.parametrize(
    ("items", "holds"),
    [
        ("- key: '[*].cron'\n  equals: '0 13 * * *'\n  count: 1", True),
        ("- key: '[*].cron'\n  equals: '0 15 * * 6'\n  count: 1", False),
        ("- key: '[*].cron'\n  in: ['0 15 * * 6', '0 13 * * *']\n  count: {min: 1}", True),
        ("- key: '[*].cron'\n  in: ['0 15 * * 6', '0 16 * * 6']\n  count: {min: 1}", False),
        ("- key: '[*].cron'\n  matches: '^0 '\n  count: 2", True),
        ("- key: '[*].cron'\n  matches: '^0 1 '\n  count: {max: 1}", True),
        ("- key: '[*].cron'\n  count: 2", True),
    ],
)
def test_a_count_with_a_comparator_counts_the_nodes_that_satisfy_it(
    make_repo: MakeRepo, items: str, holds: bool
) -> None:
    indented = "".join(f"      {line}\n" for line in items.split("\n"))
    result = check(make_repo, indented, where=SCHEDULE)
    assert result.code == (0 if holds else 1), result.out


def test_a_count_that_fails_names_what_it_counted_and_what_else_was_selected(make_repo: MakeRepo) -> None:
    none = "      - key: '[*].cron'\n        equals: '0 15 * * 6'\n        count: 1\n"
    assert headers(check(make_repo, none, where=SCHEDULE)) == [
        "5:3: CC102 trigger 'schedule' has `[*].cron` equals '0 15 * * 6' 0 times, not exactly 1 (selected: "
        "`[0].cron` = '0 1 * * *', `[1].cron` = '0 13 * * *') [r]"
    ]
    both = "      - key: '[*].cron'\n        matches: '^0 1'\n        count: 1\n"
    result = check(make_repo, both, where=SCHEDULE)
    assert headers(result) == [
        "5:3: CC102 trigger 'schedule' has `[*].cron` matches /^0 1/ 2 times, not exactly 1: `[0].cron` = "
        "'0 1 * * *', `[1].cron` = '0 13 * * *' [r]"
    ]
    assert "  = note: `[0].cron` is counted here at 6:13" in result.out
    assert "  = note: `[1].cron` is counted here at 7:13" in result.out


def test_a_count_that_fails_with_values_counted_and_not_says_what_else_was_also_selected(make_repo: MakeRepo) -> None:
    one = "      - key: '[*].cron'\n        equals: '0 1 * * *'\n        count: 2\n"
    assert headers(check(make_repo, one, where=SCHEDULE)) == [
        "5:3: CC102 trigger 'schedule' has `[*].cron` equals '0 1 * * *' 1 time, not exactly 2: `[0].cron` = "
        "'0 1 * * *' (also selected: `[1].cron` = '0 13 * * *') [r]"
    ]


def test_a_count_that_fails_names_five_of_what_it_counted_and_how_many_more(make_repo: MakeRepo) -> None:
    def jobs(count: int) -> str:
        return "on: push\njobs:\n" + "".join(
            f"  j{i}:\n    runs-on: r{i}\n    steps:\n      - run: make\n" for i in range(count)
        )

    five = ", ".join(f"`jobs.j{i}.runs-on`" for i in range(5))
    item = "      - key: 'jobs.*.runs-on'\n        count: 1\n"
    assert headers(check(make_repo, item, workflow=jobs(5))) == [
        f"1:1: CC102 .github/workflows/ci.yml has `jobs.*.runs-on` 5 times, not exactly 1: {five} [r]"
    ]
    result = check(make_repo, item, workflow=jobs(7))
    assert headers(result) == [
        f"1:1: CC102 .github/workflows/ci.yml has `jobs.*.runs-on` 7 times, not exactly 1: {five} and 2 more [r]"
    ]
    assert "  = note: `jobs.j6.runs-on` is counted here at 28:5" in result.out


def test_the_items_after_a_counted_one_are_checked_too(make_repo: MakeRepo) -> None:
    items = "      - key: '[*].cron'\n        count: 2\n      - key: '[*].timezone'\n"
    assert headers(check(make_repo, items, where=SCHEDULE)) == [
        "5:3: CC102 trigger 'schedule' lacks `[*].timezone` [r]"
    ]


def test_one_step_script_among_several_holding_a_command_is_a_count_of_one(make_repo: MakeRepo) -> None:
    one = "      - key: 'jobs.*.steps[*].run'\n        contains: pytest\n        count: 1\n"
    result = check(make_repo, one)
    assert headers(result) == [
        "1:1: CC102 .github/workflows/ci.yml has `jobs.*.steps[*].run` contains 'pytest' 2 times, not exactly 1: "
        "`jobs.stage-a-gpu-1.steps[0].run` = 'pytest', `jobs.stage-b-gpu-1.steps[0].run` = 'pytest' [r]"
    ]
    assert check(make_repo, one.replace("count: 1", "count: {min: 1}")).code == 0


def test_forbid_reports_each_selected_value_that_satisfies_at_its_exact_span(make_repo: MakeRepo) -> None:
    items = "      - key: jobs.*.runs-on\n        has: [self-hosted]\n      - key: jobs.*.continue-on-error\n"
    result = check(make_repo, items, kind="forbid")
    assert headers(result) == [
        "26:14: CC101 `jobs.stage-a-gpu-1.runs-on` is ['self-hosted', 'mi300x'], which is forbidden here "
        "(`jobs.*.runs-on` has ['self-hosted']) [r]",
        "27:5: CC101 `jobs.stage-a-gpu-1.continue-on-error` is forbidden here [r]",
        "32:14: CC101 `jobs.stage-b-gpu-1.runs-on` is ['self-hosted', 'mi300x'], which is forbidden here "
        "(`jobs.*.runs-on` has ['self-hosted']) [r]",
    ]
    assert "26 |     runs-on: [self-hosted, mi300x]\n   |              ^^^^^^^^^^^^^^^^^^^^^" in result.out


def test_values_can_be_read_from_a_python_constant_never_run(make_repo: MakeRepo) -> None:
    config = "import os\nos.system('exit 3')\nSUPPORTED_ARCHES = ('gfx942', 'gfx950')\nLATER: list[str] = ['gfx950']\n"
    files = {"tools/ci_config.py": config}
    item = "      - key: on.workflow_dispatch.inputs.arch.options\n        equals: {from: {python: tools/ci_config.py, name: %s}}\n"  # noqa: E501
    assert check(make_repo, item % "SUPPORTED_ARCHES", files=files).code == 0
    assert check(make_repo, item % "LATER", files=files).code == 1


@pytest.mark.parametrize(
    ("config", "name", "error"),
    [
        (None, "X", "8:29: CC106 cannot read X: 'tools/ci_config.py' does not exist in the repository"),
        ("X = compute()\n", "X", "8:55: CC106 cannot read X: tools/ci_config.py:1 calls compute(), which only"),
        ("Y = [1]\n", "X", "8:55: CC106 cannot read X: tools/ci_config.py assigns no module-level 'X'"),
        ("def broken(:\n", "X", "8:55: CC106 cannot read X: tools/ci_config.py:1 has a Python syntax error"),
        (b"X = [1]\n\xff\n", "X", "8:29: CC106 cannot read X: tools/ci_config.py: file is not valid UTF-8 (byte"),
    ],
)
def test_a_value_that_cannot_be_read_from_python_is_a_finding_of_its_rule(
    make_repo: MakeRepo, config: str | bytes | None, name: str, error: str
) -> None:
    files = {"tools/ci_config.py": config} if config is not None else {}
    item = f"      - key: on.workflow_dispatch.inputs.arch.options\n        in: {{from: {{python: tools/ci_config.py, name: {name}}}}}\n"  # noqa: E501
    result = check(make_repo, item + "      - key: jobs.build.timeout-minutes\n", files=files)
    assert result.err == ""
    assert result.headers[0].startswith(f".github/ci-checks.yml:{error}")
    # The rule's other items are still checked.
    assert result.headers[1] == (
        ".github/workflows/ci.yml:1:1: CC102 .github/workflows/ci.yml lacks `jobs.build.timeout-minutes` [r]"
    )


@pytest.mark.parametrize(
    ("key", "error"),
    [
        ("jobs.*.step", "7:14: error: invalid PATH 'jobs.*.step': a job has no key 'step' (did you mean 'steps'?)"),
        ("on.pushh", "7:14: error: invalid PATH 'on.pushh': on has no key 'pushh' (did you mean 'push'?)"),
        ("name.first", "7:14: error: invalid PATH 'name.first': `name` is a single value or a list; it has no key"),
        ("jobs..needs", "7:14: error: invalid PATH 'jobs..needs': a PATH segment is missing"),
        (
            "jobs.*.strategy.qqq",
            "7:14: error: invalid PATH 'jobs.*.strategy.qqq': a strategy has no key 'qqq'; "
            "keys there: fail-fast, matrix, max-parallel\n",
        ),
        (
            "jobs.*.container.imag",
            "7:14: error: invalid PATH 'jobs.*.container.imag': a container has no key 'imag' (did you mean 'image'?); "
            "keys there: credentials, env, image, options, ports, volumes\n",
        ),
        (
            "jobs.*.env.MODE.x",
            "7:14: error: invalid PATH 'jobs.*.env.MODE.x': `jobs.*.env.MODE` is a single value or a list; "
            "it has no key 'x'\n",
        ),
        ("jobs.[", "7:14: error: invalid PATH 'jobs.[': invalid key glob '[': '[' opens a character set"),
        ("[0]", "7:14: error: invalid PATH '[0]': the scope is a mapping, not a list; [0] selects nothing there\n"),
    ],
)
def test_a_path_that_can_never_select_anything_is_an_error(make_repo: MakeRepo, key: str, error: str) -> None:
    result = check(make_repo, f"      - key: '{key}'\n")
    assert result.code == 2
    assert result.err.startswith(f".github/ci-checks.yml:{error}"), result.err


def test_forbidding_what_does_not_exist_holds_and_a_required_name_that_drifted_says_what_is_there(
    make_repo: MakeRepo,
) -> None:
    """`forbid` of an absent job, input or setting is satisfied, not a policy that selects nothing."""
    for absent in ("jobs.docker-decide", "jobs.stage-*-cpu-*.needs", "jobs.*.environment", "on.pull_request_target"):
        result = check(make_repo, f"      - key: {absent}\n", kind="forbid")
        assert (result.code, result.headers) == (0, []), absent
    result = check(make_repo, "      - key: jobs.stage-*-cpu-*.needs\n")
    assert [h.split(" [")[0] for h in result.headers] == [
        ".github/workflows/ci.yml:1:1: CC102 .github/workflows/ci.yml lacks `jobs.stage-*-cpu-*.needs`: nothing "
        "matches 'stage-*-cpu-*' under `jobs` (keys there: build, stage-a-gpu-1, stage-b-gpu-1)"
    ]
    # An absent setting GitHub defines is a state: saying what else is there would be noise.
    build = "{workflow: .github/workflows/ci.yml, job: build}"
    result = check(make_repo, "      - key: timeout-minutes\n", where=build)
    assert [h.split(" [")[0] for h in result.headers] == [
        ".github/workflows/ci.yml:20:3: CC102 job 'build' lacks `timeout-minutes`"
    ]
    # A `where` that selects nothing is still CC104.
    result = check(make_repo, "      - key: jobs.x\n", kind="forbid", where="{workflow: .github/workflows/gone.yml}")
    assert [h.split(": ", 1)[1] for h in result.headers] == [
        "CC104 `where` selects nothing: no file matches '.github/workflows/gone.yml' [r]"
    ]


def test_a_comparator_needs_the_right_shape_and_count_only_in_require(make_repo: MakeRepo) -> None:
    result = check(make_repo, "      - key: on\n        equals: push\n        in: [push]\n")
    assert result.err.startswith(
        ".github/ci-checks.yml:9:9: error: a `key` item takes one comparator; found equals, in"
    )
    result = check(make_repo, "      - key: on\n        count: 1\n", kind="forbid")
    assert result.err.startswith(
        ".github/ci-checks.yml:8:9: error: `count` applies to the items of `require` rules; a `forbid` rule cannot"
    )
    result = check(make_repo, "      - key: on\n        count: {min: 2, max: 1}\n")
    assert result.err.startswith(".github/ci-checks.yml:8:16: error: count: max (1) is less than min (2)")
    result = check(make_repo, "      - key: on\n        in: push\n")
    assert result.code == 2 and "in" in result.err


def test_a_branch_scope_has_no_keys(make_repo: MakeRepo) -> None:
    where = "{workflow: .github/workflows/ci.yml, step: x, branch: 'true'}"
    result = check(make_repo, "      - key: on\n", where=where)
    assert result.err.startswith(".github/ci-checks.yml:7:9: error: a branch of a script has no keys")


@pytest.mark.parametrize("source", ["null", "tools/values.py", "{python: tools/values.py}", "{python: 1, name: X}"])
def test_equals_from_that_is_not_a_python_constant_is_a_positioned_error(make_repo: MakeRepo, source: str) -> None:
    """`equals` takes any value, so the schema lets a malformed `from` through: the policy says what it takes."""
    policy = (
        "version: 1\nrules:\n  - id: v\n    kind: require\n    where: {workflow: .github/workflows/ci.yml}\n"
        f"    require:\n      - key: on\n        equals: {{from: {source}}}\n"
    )
    root = make_repo({".github/workflows/ci.yml": "on: push\n", ".github/ci-checks.yml": policy})
    result = run_cli("check", root)
    assert (result.code, result.out) == (2, "")
    assert result.err == (
        ".github/ci-checks.yml:8:24: error: `from` takes {python: FILE, name: NAME}: a constant of a Python file\n"
    )


@pytest.mark.parametrize(
    ("item", "holds"),
    [
        ("- key: jobs.stage-a-gpu-1.continue-on-error\n        in: [true]", True),
        ("- key: jobs.stage-a-gpu-1.continue-on-error\n        in: [1]", False),
        ("- key: jobs.stage-a-gpu-1.runs-on\n        in: [[self-hosted, mi300x]]", True),
        ("- key: jobs.stage-a-gpu-1.runs-on\n        in: [[mi300x, self-hosted]]", False),
        ("- key: permissions\n        in: [{contents: read}]", True),
        ("- key: permissions\n        in: [{contents: write}]", False),
        ("- key: on.workflow_dispatch.inputs.arch.options\n        has: [gfx950, gfx942]", True),
    ],
)
def test_in_and_has_compare_booleans_lists_and_mappings_as_github_reads_them(
    make_repo: MakeRepo, item: str, holds: bool
) -> None:
    result = check(make_repo, f"      {item}\n")
    assert result.err == ""
    assert result.code == (0 if holds else 1), result.out


def test_an_empty_value_is_one_of_an_empty_text_and_a_null(make_repo: MakeRepo) -> None:
    workflow = WORKFLOW.replace("  LOG: |\n    verbose\n", "  LOG:\n  EMPTY: ''\n")
    assert check(make_repo, "      - key: env.LOG\n        in: ['']\n", workflow=workflow).code == 0
    assert check(make_repo, "      - key: env.EMPTY\n        in: [null]\n", workflow=workflow).code == 0
    assert headers(check(make_repo, "      - key: env.LOG\n        in: [x]\n", workflow=workflow)) == [
        "17:7: CC102 `env.LOG` is null, not one of 'x' [r]"
    ]


def test_a_comparator_of_text_or_keys_on_a_value_of_another_shape_says_what_the_value_is(make_repo: MakeRepo) -> None:
    items = (
        "      - key: jobs.build.runs-on\n        keys: [label]\n"
        "      - key: permissions\n        matches: read\n"
        "      - key: on.push\n        contains: main\n"
        "      - key: jobs.stage-b-gpu-1.needs\n        matches: build\n"
    )
    assert headers(check(make_repo, items)) == [
        "4:5: CC102 `on.push` is {branches: ['main']}, not a single value [r]",
        "14:3: CC102 `permissions` is {contents: 'read'}, not a single value [r]",
        "21:5: CC102 `jobs.build.runs-on` is ['ubuntu-latest'], not a mapping [r]",
        "31:12: CC102 `jobs.stage-b-gpu-1.needs` is ['build', 'stage-a-gpu-1'], not a single value [r]",
    ]


@pytest.mark.parametrize(
    ("comparator", "error"),
    [
        ("matches: 'a(b'", "8:18: error: invalid regular expression 'a(b': missing ) at position 3"),
        ("matches: '(a{1000}){1000}'", "8:18: error: regular expression '(a{1000}){1000}' repeats too much"),
        ("in: {from: {python: tools/values.py, name: TIMEOUT}}", "8:13: error: `in` takes a list of values"),
        ("has: {from: {python: tools/values.py, name: TIMEOUT}}", None),
        (
            "in: {from: {python: ../values.py, name: X}}",
            "8:29: error: invalid path '../values.py': a path glob cannot leave the repository ('..')",
        ),
    ],
)
def test_a_comparator_that_cannot_judge_anything_is_a_positioned_error(
    make_repo: MakeRepo, comparator: str, error: str | None
) -> None:
    files = {"tools/values.py": "TIMEOUT = 60\n"}
    result = check(make_repo, f"      - key: jobs.*.timeout-minutes\n        {comparator}\n", files=files)
    if error is None:  # `has` reads a single value as a list of one
        assert (result.code, result.err) == (1, "")
    else:
        assert (result.code, result.err) == (2, f".github/ci-checks.yml:{error}\n")


def test_a_key_that_matches_too_slowly_is_reported_not_judged(
    make_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ci_checks.policy.items import key

    monkeypatch.setattr(key, "TIMEOUT_S", 0.01)
    workflow = WORKFLOW.replace("name: CI", "name: " + "a" * 40 + "!")
    result = check(make_repo, "      - key: name\n        matches: '(a|aa)+$'\n", kind="forbid", workflow=workflow)
    assert result.headers == [
        ".github/ci-checks.yml:7:14: CC106 `name` matches /(a|aa)+$/ took over 0.01 s on .github/workflows/ci.yml; "
        "the rule is not fully checked [r]"
    ]


def test_a_path_that_stops_at_a_list_says_there_are_no_keys_there(make_repo: MakeRepo) -> None:
    result = check(make_repo, "      - key: steps[3]\n", where="{workflow: .github/workflows/ci.yml, job: build}")
    assert headers(result) == [
        "20:3: CC102 job 'build' lacks `steps[3]`: nothing matches '[3]' under `steps` (keys there: none) [r]"
    ]


def test_a_policy_read_without_a_repository_cannot_take_values_from_python() -> None:
    text = (
        "version: 1\nrules:\n  - id: r\n    kind: require\n    where: {workflow: ci.yml}\n    require:\n"
        "      - key: on\n        in: {from: {python: tools/values.py, name: X}}\n"
    )
    with pytest.raises(ConfigError) as raised:
        config.parse(SourceFile(".github/ci-checks.yml", text))
    assert str(raised.value) == "`from` reads a file of the repository, and there is none here"
    assert (raised.value.span.line, raised.value.span.column) == (8, 20)


def test_keys_names_what_is_lacking_and_what_is_extra_and_keys_include_only_what_is_lacking(
    make_repo: MakeRepo,
) -> None:
    arch = "      - key: on.workflow_dispatch.inputs.arch\n"
    assert headers(check(make_repo, arch + "        keys: [type, default]\n")) == [
        "10:7: CC102 `on.workflow_dispatch.inputs.arch` has the keys options, type: it lacks default and also has "
        "options [r]"
    ]
    assert headers(check(make_repo, arch + "        keys_include: [type, default]\n")) == [
        "10:7: CC102 `on.workflow_dispatch.inputs.arch` has the keys options, type: it lacks default [r]"
    ]
    counted = (
        "        count: 1\n"
        "      - key: on.workflow_dispatch.inputs.arch\n        keys_include: [default]\n        count: 1\n"
    )
    assert headers(check(make_repo, arch + "        keys: [type]\n" + counted)) == [
        "1:1: CC102 .github/workflows/ci.yml has `on.workflow_dispatch.inputs.arch` has exactly the keys type 0 times, "
        "not exactly 1 (selected: `on.workflow_dispatch.inputs.arch`) [r]",
        "1:1: CC102 .github/workflows/ci.yml has `on.workflow_dispatch.inputs.arch` has the keys default 0 times, "
        "not exactly 1 (selected: `on.workflow_dispatch.inputs.arch`) [r]",
    ]


def test_a_trigger_scope_reads_its_keys_as_github_reads_them_under_on(make_repo: MakeRepo) -> None:
    push = "{workflow: .github/workflows/ci.yml, trigger: push}"
    assert check(make_repo, "      - key: branches\n        equals: [main]\n", where=push).code == 0
    assert headers(check(make_repo, "      - key: branches\n        equals: [dev]\n", where=push)) == [
        "4:15: CC102 `branches` in trigger 'push' is ['main'], not ['dev'] [r]"
    ]
