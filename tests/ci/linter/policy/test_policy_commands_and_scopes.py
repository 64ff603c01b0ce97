"""Policy language: exact commands, order across jobs, the new scopes, `file:` items, and the defects they fix."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping

import jsonschema
import pytest

from ci_checks.config import schema as config_schema
from ci_checks.core import own_schemas
from ci_checks.policy.items.regex import expansion
from ci_checks.syntax.shell import split_words
from tests.ci.conftest import PROJECT
from tests.ci.linter.conftest import FIXTURES, MakeRepo, Result, run_cli

WORKFLOW = """on:
  push:
  schedule:
    - cron: "0 1 * * *"
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: make
  lint:
    runs-on: ubuntu-latest
    steps:
      - run: ruff check
  test:
    needs: build
    runs-on: [self-hosted, mi300x]
    steps:
      - name: Test [fast] *
        run: |
          if [ -n "$PATCH" ]; then
            git apply --check "$PATCH"
          else
            echo no patch
          fi
          case "$GPU_ARCH" in
            gfx94*|gfx95*) pip install -e . ;;
            *) pip install . ;;
          esac
          git apply "$PATCH"
          pytest
"""


def check(
    make_repo: MakeRepo, rules: str, workflow: str = WORKFLOW, files: Mapping[str, str | bytes] | None = None
) -> Result:
    root = make_repo(
        {".github/workflows/ci.yml": workflow, ".github/ci-checks.yml": f"version: 1\nrules:\n{rules}", **(files or {})}
    )
    return run_cli("check", root, "--select", "CC1")


def rule(
    kind: str,
    items: str,
    where: str | None = "{workflow: .github/workflows/ci.yml}",
    rule_id: str = "r",
    extra: str = "",
) -> str:
    head = f"  - id: {rule_id}\n    kind: {kind}\n" + (f"    where: {where}\n" if where else "") + extra
    return f"{head}    {kind}:\n{items}"


def test_a_command_pattern_without_words_tells_a_dry_run_from_the_real_thing(make_repo: MakeRepo) -> None:
    """The checked patch is applied after the install: `git apply "$PATCH"` alone matched `--check` first."""
    loose = '      - command: git apply "$PATCH"\n      - command: pip install -e .\n'
    assert check(make_repo, rule("order", loose, extra="    across: jobs\n")).code == 0  # fooled by the dry run
    strict = (
        '      - command: git apply "$PATCH"\n'
        "        without: [--check, --reverse, -R]\n"
        "      - command: pip install -e .\n"
    )
    result = check(make_repo, rule("order", strict, where="{workflow: .github/workflows/ci.yml, job: test}"))
    assert result.headers == [
        '.github/workflows/ci.yml:27:28: CC100 `pip install -e .` comes before `git apply "$PATCH"` without --check, '
        "--reverse, -R in job 'test' [r]"
    ]
    assert '  = note: `git apply "$PATCH"` without --check, --reverse, -R is first written here at 30:11' in result.out


def test_an_exact_command_pattern_wants_exactly_its_arguments(make_repo: MakeRepo) -> None:
    result = check(make_repo, rule("forbid", "      - command: pip install .\n        exact: true\n"))
    assert [h.split(": CC101")[0] for h in result.headers] == [".github/workflows/ci.yml:28:16"]
    assert split_words("git apply \"a b\" 'c' d\\ e") == ["git", "apply", "a b", "c", "d e"]


def test_a_very_long_word_in_a_pattern_is_split_in_linear_time() -> None:
    """Not a speed goal: a pattern comes from a pull request, and a quadratic split hung the run for minutes."""
    word = "a" * 4_000_000
    started = time.perf_counter()
    assert split_words(f'x "{word}" {word}') == ["x", word, word]
    assert time.perf_counter() - started < 30


def test_order_across_jobs_follows_the_needs_graph(make_repo: MakeRepo) -> None:
    ordered = "      - command: make\n      - command: pytest\n"
    assert check(make_repo, rule("order", ordered, extra="    across: jobs\n")).code == 0
    reversed_ = "      - command: pytest\n      - command: make\n"
    result = check(make_repo, rule("order", reversed_, extra="    across: jobs\n"))
    assert result.headers == [
        ".github/workflows/ci.yml:10:14: CC100 `make` in job 'build' runs before `pytest` in job 'test', "
        "which needs it [r]"
    ]
    unordered = "      - command: ruff check\n      - command: pytest\n"
    result = check(make_repo, rule("order", unordered, extra="    across: jobs\n"))
    assert result.headers == [
        ".github/workflows/ci.yml:31:11: CC100 `pytest` in job 'test' is not ordered after `ruff check` in job 'lint': "
        "`needs:` does not make one wait for the other [r]"
    ]
    result = check(
        make_repo,
        rule("order", ordered, where="{workflow: .github/workflows/ci.yml, step: x}", extra="    across: jobs\n"),
    )
    assert result.code == 2 and "`across: jobs` orders the jobs of workflows" in result.err


@pytest.mark.parametrize(
    ("where", "at", "key"),
    [
        ("{workflow: .github/workflows/ci.yml, step: x}", "5:55", "step"),
        ("{workflow: .github/workflows/ci.yml, branch: 'test -n x'}", "5:57", "branch"),
        ("{workflow: .github/workflows/ci.yml, trigger: push}", "5:58", "trigger"),
        ("{files: '*.yml'}", "5:20", "files"),
        (
            "[{workflow: .github/workflows/ci.yml}, {workflow: .github/workflows/ci.yml, trigger: push}]",
            "5:97",
            "trigger",
        ),
    ],
)
def test_order_across_jobs_refuses_a_where_narrower_than_a_workflow_at_that_key(
    make_repo: MakeRepo, where: str, at: str, key: str
) -> None:
    ordered = "      - command: make\n      - command: pytest\n"
    result = check(make_repo, rule("order", ordered, where=where, extra="    across: jobs\n"))
    assert (result.code, result.out) == (2, "")
    message = f"`across: jobs` orders the jobs of workflows; its `where` cannot have `{key}:`"
    assert result.err == f".github/ci-checks.yml:{at}: error: {message}\n"


UNORDERED_JOBS = """on: push
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - run: make
  docs:
    runs-on: ubuntu-latest
    steps:
      - run: make docs
  test:
    runs-on: ubuntu-latest
    steps:
      - run: pytest && make
  e2e:
    runs-on: ubuntu-latest
    steps:
      - run: pip install -e . && pytest
"""
MAKE_THEN_PYTEST = "      - command: make\n      - command: pytest\n"
ACROSS = "    across: jobs\n"


def test_order_across_jobs_names_every_unordered_job_and_points_at_the_earlier_item(make_repo: MakeRepo) -> None:
    result = check(make_repo, rule("order", MAKE_THEN_PYTEST, extra=ACROSS), UNORDERED_JOBS)
    assert result.headers == [
        ".github/workflows/ci.yml:14:14: CC100 `pytest` comes before `make` in job 'test' [r]",
        ".github/workflows/ci.yml:18:34: CC100 `pytest` in job 'e2e' is not ordered after `make` in job 'build', "
        "'docs', 'test': `needs:` does not make one wait for the other [r]",
    ]
    notes = [line for line in result.out.splitlines() if line.startswith("  = note")]
    assert notes == [
        "  = note: `make` is first written here at 14:24",
        "  = note: `make`, in job 'build', is first written here at 6:14",
    ]


def test_order_across_jobs_passes_over_an_absent_item_and_orders_the_next_pair(make_repo: MakeRepo) -> None:
    items = "      - command: cmake\n" + MAKE_THEN_PYTEST
    extra = ACROSS + "    missing: ignore\n"
    where = "{workflow: .github/workflows/ci.yml, job: [build, e2e]}"
    result = check(make_repo, rule("order", items, where, extra=extra), UNORDERED_JOBS)
    assert result.headers == [
        ".github/workflows/ci.yml:18:34: CC100 `pytest` in job 'e2e' is not ordered after `make` in job 'build': "
        "`needs:` does not make one wait for the other [r]"
    ]


def test_order_across_jobs_checks_every_workflow_a_glob_selects(make_repo: MakeRepo) -> None:
    where = "{workflow: '.github/workflows/*.yml'}"
    files = {".github/workflows/a.yml": UNORDERED_JOBS.replace("pytest && make", "make && pytest")}
    result = check(make_repo, rule("order", MAKE_THEN_PYTEST, where, extra=ACROSS), UNORDERED_JOBS, files)
    assert [header.split(": CC100")[0] for header in result.headers] == [
        ".github/workflows/a.yml:18:34",
        ".github/workflows/ci.yml:14:14",
        ".github/workflows/ci.yml:18:34",
    ]


def test_one_command_that_satisfies_two_items_in_a_row_is_in_order(make_repo: MakeRepo) -> None:
    """`pip install -e .` is both a `pip install` and a `pip install -e .`: neither comes before the other."""
    items = "      - command: pip install\n      - command: pip install -e .\n"
    assert check(make_repo, rule("order", items, extra=ACROSS), UNORDERED_JOBS).code == 0
    where = "{workflow: .github/workflows/ci.yml, job: e2e}"
    assert check(make_repo, rule("order", items, where), UNORDERED_JOBS).code == 0


def test_order_within_a_job_passes_over_an_absent_item_and_orders_the_next_pair(make_repo: MakeRepo) -> None:
    items = "      - command: make\n      - command: cmake\n      - command: pytest\n"
    where = "{workflow: .github/workflows/ci.yml, job: test}"
    result = check(make_repo, rule("order", items, where), UNORDERED_JOBS)
    assert result.headers == [
        ".github/workflows/ci.yml:11:3: CC100 `cmake` is missing from job 'test' [r]",
        ".github/workflows/ci.yml:14:14: CC100 `pytest` comes before `make` in job 'test' [r]",
    ]


@pytest.mark.parametrize(
    ("where", "keys_of"),
    [
        ("{workflow: .github/workflows/ci.yml}", "a job"),
        ("{job: build}", "a job"),
        ("{files: '.github/workflows/*.yml'}", "a composite action or a job"),
    ],
)
def test_the_paths_of_an_order_rule_over_whole_files_or_jobs_are_relative_to_a_job(
    make_repo: MakeRepo, where: str, keys_of: str
) -> None:
    """A whole workflow is ordered job by job; a file that is not known to be a workflow may be an action."""
    result = check(make_repo, rule("order", "      - key: runz\n      - key: steps\n", where))
    assert result.code == 2
    assert result.err.startswith(f".github/ci-checks.yml:7:14: error: invalid PATH 'runz': {keys_of} has no key"), (
        result.err
    )


def test_the_paths_of_an_order_rule_in_a_workflow_step_or_trigger_are_relative_to_it(make_repo: MakeRepo) -> None:
    job_keys = "      - key: runs-on\n      - key: steps\n"
    assert check(make_repo, rule("order", job_keys)).code == 0
    step = "{workflow: .github/workflows/ci.yml, step: {literal: 'Test [fast] *'}}"
    result = check(make_repo, rule("order", "      - key: run\n      - key: name\n", step))
    assert result.headers == [
        ".github/workflows/ci.yml:19:9: CC100 `name` comes before `run` in step 'Test [fast] *' [r]"
    ]
    trigger = "{workflow: .github/workflows/ci.yml, trigger: push}"
    result = check(make_repo, rule("order", "      - key: branches\n      - key: paths\n", trigger))
    assert result.headers == [
        ".github/workflows/ci.yml:2:3: CC100 `branches` is missing from trigger 'push' [r]",
        ".github/workflows/ci.yml:2:3: CC100 `paths` is missing from trigger 'push' [r]",
    ]


def test_a_trigger_scope_addresses_keys_relative_to_the_trigger(make_repo: MakeRepo) -> None:
    where = "{workflow: .github/workflows/ci.yml, trigger: schedule}"
    assert check(make_repo, rule("require", "      - key: '[*].cron'\n        count: 1\n", where)).code == 0
    result = check(
        make_repo, rule("require", "      - key: branches\n", "{workflow: .github/workflows/ci.yml, trigger: push}")
    )
    assert result.headers == [".github/workflows/ci.yml:2:3: CC102 trigger 'push' lacks `branches` [r]"]
    result = check(
        make_repo,
        rule("require", "      - key: types\n", "{workflow: .github/workflows/ci.yml, trigger: pull_request}"),
    )
    assert result.headers == [
        ".github/ci-checks.yml:5:5: CC104 `where` selects nothing: no trigger of .github/workflows/ci.yml matches "
        "'pull_request' (triggers: push, schedule) [r]"
    ]


def test_a_job_list_a_literal_step_name_an_else_branch_and_a_case_arm_are_scopes(make_repo: MakeRepo) -> None:
    jobs = "{workflow: .github/workflows/ci.yml, job: [build, lint]}"
    result = check(make_repo, rule("require", "      - step: {uses: actions/checkout}\n", jobs))
    assert result.headers == [
        ".github/workflows/ci.yml:11:3: CC102 job 'lint' lacks a step {uses: actions/checkout} [r]"
    ]
    step = "{literal: 'Test [fast] *'}"
    else_ = f"{{workflow: .github/workflows/ci.yml, step: {step}, branch: {{if: '[ -n \"$PATCH\" ]', else: true}}}}"
    assert check(make_repo, rule("require", "      - command: echo no patch\n", else_)).code == 0
    assert check(make_repo, rule("require", "      - command: git apply\n", else_)).code == 1
    arm = "{workflow: .github/workflows/ci.yml, job: test, branch: {case: '\"$GPU_ARCH\"', arm: 'gfx95*'}}"
    result = check(make_repo, rule("forbid", "      - command: pip install -e .\n", arm))
    assert [h.split(": CC101")[0] for h in result.headers] == [".github/workflows/ci.yml:27:28"]
    # the arm's text starts with what a text item looks for
    result = check(make_repo, rule("forbid", "      - text: pip install\n", arm))
    assert [h.split(": CC101")[0] for h in result.headers] == [".github/workflows/ci.yml:27:28"]
    typo = "{workflow: .github/workflows/ci.yml, job: test, branch: {case: '$GPU_ARCH', arm: 'gfx90*'}}"
    result = check(make_repo, rule("forbid", "      - command: pip install -e .\n", typo))
    assert result.headers[0].endswith(
        '(branches there: \'[ -n "$PATCH" ]\', case "$GPU_ARCH": gfx94* | gfx95* | *) [r]'
    )


def test_file_items_need_no_where(make_repo: MakeRepo) -> None:
    files = {"docker/amd_patch/latest/megatron.patch": "diff\n", "docker/amd_patch/sglv0.5.10/megatron.patch": "diff\n"}
    one = rule("require", "      - file: docker/amd_patch/**/*.patch\n        count: {max: 1}\n", where=None)
    result = check(make_repo, one, files=files)
    assert result.headers == [
        ".github/ci-checks.yml:3:9: CC102 the repository has a file matching 'docker/amd_patch/**/*.patch' 2 times, "
        "not at most 1: docker/amd_patch/latest/megatron.patch, docker/amd_patch/sglv0.5.10/megatron.patch [r]"
    ]
    none = rule("forbid", "      - file: docker/**/*.patch\n", where=None)
    assert [h.split(": CC101")[0] for h in check(make_repo, none, files=files).headers] == [
        "docker/amd_patch/latest/megatron.patch:1:1",
        "docker/amd_patch/sglv0.5.10/megatron.patch:1:1",
    ]
    result = check(make_repo, rule("forbid", "      - file: x\n"))
    assert result.code == 2 and "a `file` item is judged over the whole repository" in result.err
    result = check(make_repo, rule("forbid", "      - text: x\n", where=None))
    assert result.code == 2 and "the rule's `where`, which is missing" in result.err


def test_findings_of_different_rules_at_one_span_with_one_message_are_all_kept(make_repo: MakeRepo) -> None:
    same = rule("forbid", "      - command: make\n", rule_id="first") + rule(
        "forbid", "      - command: make\n", rule_id="second"
    )
    result = check(make_repo, same)
    assert [h.rsplit(" ", 1)[1] for h in result.headers] == ["[first]", "[second]"]


def test_a_rule_that_cannot_read_a_workflow_is_an_error_for_each_rule(make_repo: MakeRepo) -> None:
    both = rule("forbid", "      - command: make\n", rule_id="first") + rule(
        "require", "      - command: make\n", rule_id="second"
    )
    result = check(make_repo, both, workflow="on: push\njobs: [\n")
    cc106 = [h for h in result.headers if " CC106 " in h]
    assert [h.rsplit(" ", 1)[1] for h in cc106] == ["[first]", "[second]"]
    # The syntax error itself is reported under `--select CC1` too: no selected rule could judge the file.
    assert [h.split(" ", 2)[1] for h in result.headers if " CC106 " not in h] == ["CC010"]
    assert result.code == 1
    assert "3 errors" in result.out.splitlines()[-1]


def test_step_and_job_names_with_glob_characters_are_selected_literally(make_repo: MakeRepo) -> None:
    literal = "{workflow: .github/workflows/ci.yml, step: {literal: 'Test [fast] *'}}"
    assert check(make_repo, rule("require", "      - command: pytest\n", literal)).code == 0
    by_name = "{workflow: .github/workflows/ci.yml, step: {name: {literal: 'Test [fast] *'}}}"
    assert check(make_repo, rule("require", "      - command: pytest\n", by_name)).headers == []
    escaped = "{workflow: .github/workflows/ci.yml, step: 'Test \\[fast\\] \\*'}"
    assert check(make_repo, rule("require", "      - command: pytest\n", escaped)).code == 0
    as_glob = "{workflow: .github/workflows/ci.yml, step: 'Test [fast] *'}"
    result = check(make_repo, rule("require", "      - command: pytest\n", as_glob))
    assert result.code == 1 and " CC104 " in result.out  # `[fast]` is a character set there


@pytest.mark.parametrize(
    ("pattern", "error"),
    [
        ("a{99999999}", "repeats too much"),
        ("(?:a{1000}){1000}", "repeats too much"),
        ("x" * 5000, "is longer than 4096 characters"),
    ],
)
def test_a_regular_expression_that_would_take_unbounded_memory_to_compile_is_refused(
    make_repo: MakeRepo, pattern: str, error: str
) -> None:
    started = time.perf_counter()
    result = check(make_repo, rule("forbid", f"      - regex: '{pattern}'\n"))
    assert result.code == 2
    assert result.err.startswith(".github/ci-checks.yml:7:16: error: "), result.err
    assert error in result.err
    assert time.perf_counter() - started < 30


def test_a_regular_expression_of_exactly_the_most_pieces_is_taken_and_one_more_is_refused(make_repo: MakeRepo) -> None:
    assert check(make_repo, rule("forbid", "      - regex: 'a{50000}'\n")).code == 0
    result = check(make_repo, rule("forbid", "      - regex: 'a{50001}'\n"))
    assert result.code == 2 and "(about 50,001 pieces when compiled; at most 50,000)" in result.err


@pytest.mark.parametrize(
    ("pattern", "pieces"),
    [
        ("abc", 3),
        ("a{5}", 5),
        ("a{2,5}", 2),
        ("a{0}", 1),
        ("a{,5}", 5),
        ("x{", 2),
        ("\\d{10}", 10),
        ("\\da{5}", 6),
        ("[ab]{3}", 3),
        ("[^a]{3}", 3),
        ("[]a]{5}", 5),
        ("[^]a]{5}", 5),
        ("[a\\]]{4}", 4),
        ("(ab){3}", 6),
        ("x(ab){3}", 7),
        ("(ab){3}{2}", 12),  # a repetition repeated copies all of it (the compiler then refuses the pattern)
        ("(?:a{10}){10}", 120),
        ("a)b{3}", 5),
        ("[ab", 1),
        ("(a", 1),
    ],
)
def test_a_regular_expression_is_sized_by_what_its_fixed_repetitions_copy(pattern: str, pieces: int) -> None:
    """An escape, a set (`]` first or after `^` included) and a group are one atom that a `{n}` repeats."""
    assert expansion(pattern) == pieces


@pytest.mark.parametrize("pattern", ["[ab", "a)b", "(a", "[^"])
def test_an_unclosed_set_or_group_is_a_positioned_invalid_regular_expression(make_repo: MakeRepo, pattern: str) -> None:
    result = check(make_repo, rule("forbid", f"      - regex: '{pattern}'\n"))
    assert result.code == 2
    assert result.err.startswith(f".github/ci-checks.yml:7:16: error: invalid regular expression {pattern!r}: ")


def test_the_committed_configuration_schema_is_the_one_the_code_builds() -> None:
    committed = json.loads((PROJECT / "schemas" / own_schemas.CONFIG).read_text(encoding="utf-8"))
    assert committed == config_schema.build(precise=True), "run: python -m ci_checks.config.schema > schemas/..."


def test_every_policy_this_project_ships_validates_against_the_precise_schema() -> None:
    import yaml

    validator = jsonschema.Draft202012Validator(config_schema.build(precise=True))
    policies = [PROJECT / ".github" / "ci-checks.yml", *sorted((FIXTURES / "policies").glob("*.yml"))]
    for path in policies:
        errors = list(validator.iter_errors(yaml.safe_load(path.read_text(encoding="utf-8"))))
        assert errors == [], f"{path.name}: {errors[0].message if errors else ''}"


def test_a_yaml_syntax_error_names_where_its_construct_starts_in_a_note_not_in_the_message(make_repo: MakeRepo) -> None:
    root = make_repo({".github/workflows/ci.yml": "on: push\njobs:\n  a: [b, c\n  d: e\n"})
    result = run_cli("check", root)
    assert result.headers == [
        ".github/workflows/ci.yml:4:4: CC010 did not find expected ',' or ']' (while parsing a flow sequence)"
    ]
    assert "  = note: a flow sequence starts here at 3:6" in result.out.splitlines()


ACTION = """name: Setup
runs:
  using: composite
  steps:
    - name: Install
      shell: bash
      run: pip install .
"""
INSTALL = """on: push
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: Install
        run: pip install .
"""


def test_a_where_without_globs_reads_workflows_and_actions_for_a_step_and_workflows_for_a_job(
    make_repo: MakeRepo,
) -> None:
    files = {"setup/action.yml": ACTION, "broken/action.yml": "runs: [\n"}
    steps = rule("forbid", "      - command: pip install\n", "{step: Install}", rule_id="steps")
    jobs = rule("forbid", "      - command: pip install\n", "{job: build}", rule_id="jobs")
    result = check(make_repo, steps + jobs, INSTALL, files)
    assert result.headers == [
        ".github/workflows/ci.yml:8:14: CC101 `pip install` is forbidden here [jobs]",
        ".github/workflows/ci.yml:8:14: CC101 `pip install` is forbidden here [steps]",
        "broken/action.yml:1:8: CC010 did not find expected node content (while parsing a flow node)",
        "broken/action.yml:1:8: CC106 not a usable action (did not find expected node content (while parsing a flow "
        "node)); not checked by this rule [steps]",
        "setup/action.yml:7:12: CC101 `pip install` is forbidden here [steps]",
    ]


def test_an_action_is_a_whole_file_scope_and_has_no_jobs_in_a_where_that_also_names_workflows(
    make_repo: MakeRepo,
) -> None:
    files = {"setup/action.yml": ACTION}
    whole = rule("require", "      - text: 'using: composite'\n", "{action: setup/action.yml}", rule_id="whole")
    both = "{workflow: .github/workflows/ci.yml, action: setup/action.yml, job: {literal: build}}"
    jobs = rule("require", "      - text: runs-on\n", both, rule_id="jobs")
    assert check(make_repo, whole + jobs, INSTALL, files).headers == []
    assert check(make_repo, whole + jobs, INSTALL.replace("build:", "test:"), files).headers == [
        ".github/ci-checks.yml:10:5: CC104 `where` selects nothing: no job in .github/workflows/ci.yml matches "
        "'build' (jobs: test) [jobs]",
    ]
    result = check(make_repo, whole, INSTALL, {"setup/action.yml": ACTION.replace("composite", "node20")})
    assert result.headers == ["setup/action.yml:1:1: CC102 setup/action.yml lacks 'using: composite' [whole]"]


def test_a_missing_else_branch_says_so_and_lists_the_branches_of_every_step_with_a_script(make_repo: MakeRepo) -> None:
    else_ = "{workflow: .github/workflows/ci.yml, job: build, branch: {if: '[ -n \"$PATCH\" ]', else: true}}"
    result = check(make_repo, rule("forbid", "      - command: make\n", else_))
    assert result.headers == [
        ".github/ci-checks.yml:5:5: CC104 `where` selects nothing: no step script in .github/workflows/ci.yml has an "
        "if with the condition '[ -n \"$PATCH\" ]' and an else (the selected steps have no branches) [r]"
    ]
    # The first steps selected (build's) use an action and have no script: the test job's branches are still listed.
    every_job = "{workflow: .github/workflows/ci.yml, branch: {if: '[ -n \"$REF\" ]', else: true}}"
    result = check(make_repo, rule("forbid", "      - command: make\n", every_job))
    assert result.headers == [
        ".github/ci-checks.yml:5:5: CC104 `where` selects nothing: no step script in .github/workflows/ci.yml has an "
        "if with the condition '[ -n \"$REF\" ]' and an else (branches there: '[ -n \"$PATCH\" ]', "
        'case "$GPU_ARCH": gfx94* | gfx95* | *) [r]'
    ]


def test_a_listed_trigger_that_is_not_there_is_named(make_repo: MakeRepo) -> None:
    triggers = "{workflow: .github/workflows/ci.yml, trigger: [push, pull_request]}"
    result = check(make_repo, rule("require", "      - key: branches\n", triggers))
    assert result.headers[0] == (
        ".github/ci-checks.yml:5:65: CC104 `where` names trigger 'pull_request', which matches nothing "
        "(triggers there: push, schedule) [r]"
    )


def test_a_where_in_a_repository_without_workflows_or_actions_says_so(make_repo: MakeRepo) -> None:
    policy = "version: 1\nrules:\n" + rule("require", "      - command: make\n", "{job: build}")
    result = run_cli("check", make_repo({".github/ci-checks.yml": policy}), "--select", "CC1")
    assert result.headers == [
        ".github/ci-checks.yml:5:5: CC104 `where` selects nothing: the repository has no workflow or composite action "
        "[r]"
    ]


SCRIPT = """on: push
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - run: |
          sudo git apply --3way "$PATCH"
          git apply --check "$PATCH"
          env A=1 python -m pip install -e .
          /usr/bin/git apply x.patch
"""


@pytest.mark.parametrize(
    ("item", "found"),
    [
        ("command: git apply", ["7:11 `git apply`", "8:11 `git apply`", "10:11 `git apply`"]),
        ("command: git apply $PATCH", ["7:11 `git apply $PATCH`", "8:11 `git apply $PATCH`"]),
        (
            "{command: git apply $PATCH, without: [--check]}",
            ["7:11 `git apply $PATCH` without --check"],
        ),
        ("{command: git apply x.patch, exact: true}", ["10:11 `git apply x.patch` exactly"]),
        ("{command: git apply $PATCH, exact: true}", []),
        ("command: pip install -e .", ["9:11 `pip install -e .`"]),
        ("command: pip install . -e", []),
        ("command: git   am", []),
    ],
)
def test_a_command_item_finds_each_command_its_pattern_matches(
    make_repo: MakeRepo, item: str, found: list[str]
) -> None:
    result = check(make_repo, rule("forbid", f"      - {item}\n"), SCRIPT)
    assert [
        header.removeprefix(".github/workflows/ci.yml:").replace(": CC101", "").removesuffix(" is forbidden here [r]")
        for header in result.headers
    ] == found
