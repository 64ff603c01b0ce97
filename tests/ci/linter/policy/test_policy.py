"""Policy files: what a bad one reports, and how each matcher and scope behaves."""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Mapping

import pytest

from ci_checks.core import source
from ci_checks.syntax import pysource
from tests.ci.linter.conftest import MakeRepo, Result, run_cli

WORKFLOW = """on: push
jobs:
  build:
    runs-on: ubuntu-latest
    env:
      MODE: fast
    steps:
      - uses: actions/checkout@v4
        with:
          persist-credentials: false
      - name: Install
        id: install
        run: |
          if [ -n "$REF" ]; then
            git checkout -f FETCH_HEAD
            if python -c 'import torch'; then
              pip install -e . --no-deps
            fi
          fi
      - name: Test
        run: |
          for suite in unit integration; do
            pytest "tests/$suite" | tee log.txt
          done
  release:
    uses: ./.github/workflows/release.yml
"""


def check(make_repo: MakeRepo, policy: str, files: Mapping[str, str | bytes] | None = None, *args: str) -> Result:
    root = make_repo({".github/workflows/ci.yml": WORKFLOW, ".github/ci-checks.yml": policy, **(files or {})})
    return run_cli("check", root, "--select", "CC1", *args)


def rule(kind: str, body: str, where: str = "{workflow: .github/workflows/ci.yml}") -> str:
    return f"version: 1\nrules:\n  - id: r\n    kind: {kind}\n    where: {where}\n{body}"


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        (
            "rules:\n  - id: r\n    kind: ordr\n",
            "3:11: error: rules.0.kind: unknown value 'ordr' (did you mean 'order'?); "
            "expected one of order, forbid, require, parity",
        ),
        (
            rule("forbid", "    forbid: [{text: x}]\n    mesage: hi\n"),
            "7:5: error: unknown configuration key 'mesage' (did you mean 'message'?); "
            "known keys: forbid, id, kind, message, severity, where",
        ),
        (
            rule("forbid", "    forbid: [{regex: 'a(b'}]\n"),
            "6:22: error: invalid regular expression 'a(b': missing ) at position 3",
        ),
        (rule("order", "    order: [{command: make}]\n"), "6:12: error: rules.0.order needs at least 2 items"),
        (
            rule("forbid", "    forbid: [{comand: make}]\n"),
            "6:15: error: unknown item 'comand' (did you mean 'command'?); "
            "an item is one of command, step, text, regex, python, with, env, key, file",
        ),
        (
            rule("forbid", "    forbid: [{command: make, text: x}]\n"),
            "6:14: error: an item takes exactly one of command, step, text, regex, python, with, env, key, file; "
            "found: command, text",
        ),
        (
            rule("forbid", "    forbid: [{text: x}]\n", "{files: ['../outside/*']}"),
            "5:21: error: invalid glob '../outside/*': a path glob cannot leave the repository ('..')",
        ),
        (
            rule("forbid", "    forbid: [{text: x}]\n", "{files: ['docs/[abc']}"),
            "5:21: error: invalid glob 'docs/[abc': '[' opens a character set that is never closed",
        ),
        (  # a glob written alone is told at its value, one of a list at its entry
            rule("forbid", "    forbid: [{text: x}]\n", "{files: 'docs/[abc'}"),
            "5:20: error: invalid glob 'docs/[abc': '[' opens a character set that is never closed",
        ),
        (
            rule("forbid", "    forbid: [{command: git apply, without: ['a b']}]\n"),
            "6:44: error: `without` takes single words; 'a b' is not one",
        ),
        (
            rule("forbid", "    forbid: [{command: 'echo \"x', without: [--check]}]\n"),
            "6:24: error: invalid command pattern 'echo \"x': No closing quotation",
        ),
        (
            rule("order", "    order: [{text: a, where: {job: x}}, {text: b}]\n"),
            "6:23: error: the items of an `order` rule are ordered within each scope of the rule's `where`; they take "
            "no `where` of their own",
        ),
        (
            rule("require", "    require: [{step: {name: '[a'}}]\n"),
            "6:29: error: invalid glob '[a': '[' opens a character set that is never closed",
        ),
        (
            rule("forbid", "    forbid: [{text: x}]\n", "{files: ['a**/b']}"),
            "5:21: error: invalid glob 'a**/b': '**' must be a whole path segment, as in 'a/**/b'",
        ),
        (
            rule("forbid", "    forbid: [{text: x}]\n", "{files: '*.yml', step: Install}"),
            "5:29: error: `where: files` selects whole files and cannot be combined with step",
        ),
        (
            rule("forbid", "    forbid: [{command: 'echo \"unclosed'}]\n"),
            "6:24: error: invalid command pattern 'echo \"unclosed': No closing quotation",
        ),
        (
            rule("order", "    order: [{text: a}, {text: b}]\n", "{workflow: '*', branch: 'if then'}"),
            "5:36: error: branch condition 'if then' is not a shell command",
        ),
        (
            rule("forbid", "    forbid: [{text: x}]\n") + "  - id: r\n    kind: forbid\n    where: {files: x}\n"
            "    forbid: [{text: y}]\n",
            "7:9: error: duplicate rule id 'r'\n  = note: first used here at 3:9",
        ),
        (
            rule("forbid", "    forbid: [{text: x}]\n").replace("id: r", "id: duplicate-key"),
            "3:9: error: rule id 'duplicate-key' is taken by a built-in rule; choose another",
        ),
        (
            rule("forbid", "    forbid: [{text: x}]\n").replace("id: r", "id: cc001"),
            "3:9: error: rule id 'cc001' is taken by a built-in rule; choose another",
        ),
        (
            rule("require", "    forbid: [{text: x}]\n"),
            "6:5: error: unknown configuration key 'forbid'; known keys: id, kind, message, require, severity, where",
        ),
        (rule("require", ""), "3:5: error: rules.0: 'require' is required"),
        (
            rule("forbid", "    forbid: [{text: x}]\n", "{}"),
            "5:12: error: rules.0.where cannot be empty",
        ),
        (
            rule("forbid", "    forbid: [{python: {import: os, name: os.system}}]\n", "{files: '*.py'}"),
            "6:23: error: rules.0.forbid.0.python takes exactly one key",
        ),
        (
            rule("require", "    require: [{text: x, count: {min: -1}}]\n"),
            "6:38: error: rules.0.require.0.count.min must be at least 0",
        ),
        (  # a key unknown inside an item's mapping is named with the mapping it is in
            rule("require", "    require: [{text: x, count: {mni: 1}}]\n"),
            "6:33: error: unknown key of `count` in a `text` item 'mni' (did you mean 'min'?); known keys: max, min",
        ),
        (
            rule("require", "    require: [{text: x, count: many}]\n"),
            "6:32: error: rules.0.require.0.count: must be an integer or a mapping",
        ),
        (
            "version: 1\nrules:\n  - id: r\n    kind: forbid\n    forbid: [{file: x, referenced_by: 3}]\n",
            "5:39: error: rules.0.forbid.0.referenced_by: must be true or false or a string or a list",
        ),
        (
            rule("forbid", "    forbid: [{text: x, where: {job: build}}]\n", "{files: '*.txt'}"),
            "6:32: error: `where: files` selects whole files and cannot be combined with job",
        ),
        (
            rule("forbid", "    forbid: [{text: x, where: {action: a/action.yml}}]\n", "{job: build}"),
            "5:13: error: composite actions have no jobs: `job` needs `workflow`",
        ),
        (
            rule("forbid", "    forbid: [{text: x, where: {step: Install}}]\n", "{workflow: '*', job: ['[bad']}"),
            "5:34: error: invalid glob '[bad': '[' opens a character set that is never closed",
        ),
        (
            rule("require", "    require: [{key: 'jobs[0]'}]\n"),
            "6:21: error: invalid PATH 'jobs[0]': `jobs` is a mapping, not a list; [0] selects nothing there",
        ),
        (
            rule("forbid", "    forbid: [{regex: '[^]a]{60000}'}]\n"),
            "6:22: error: regular expression '[^]a]{60000}' repeats too much (about 60,000 pieces when compiled; "
            "at most 50,000): use `+`, `*` or a smaller count",
        ),
        (
            rule("forbid", "    forbid: [{text: x}]\n", "{action: a/action.yml, job: build}"),
            "5:35: error: composite actions have no jobs: `job` needs `workflow`",
        ),
        (
            rule("forbid", "    forbid: [{text: x}]\n", "{action: a/action.yml, trigger: push}"),
            "5:35: error: composite actions have no triggers: `trigger` needs `workflow`",
        ),
        (
            rule("forbid", "    forbid: [{text: x}]\n", "{workflow: '*', trigger: push, job: build}"),
            "5:48: error: a trigger has no jobs: `trigger` and `job` select different parts",
        ),
        (
            rule("forbid", "    forbid: [{text: x}]\n", "{workflow: '*', trigger: push, step: Install}"),
            "5:49: error: a trigger has no steps: `trigger` and `step` select different parts",
        ),
        (
            rule("forbid", "    forbid: [{text: x}]\n", "{workflow: '*', trigger: push, branch: 'true'}"),
            "5:51: error: a trigger has no branches: `trigger` and `branch` select different parts",
        ),
        (
            rule("forbid", "    forbid: [{text: x}]\n", "{workflow: '*', branch: {case: x}}"),
            "5:36: error: a case branch names both `case` and `arm`; `arm` is missing",
        ),
        (
            rule("forbid", "    forbid: [{text: x}]\n", "{workflow: '*', branch: {arm: x}}"),
            "5:36: error: a case branch names both `case` and `arm`; `case` is missing",
        ),
        (
            rule("forbid", "    forbid: [{text: x}]\n", "{workflow: '*', branch: {case: x, arm: y, if: 'true'}}"),
            "5:36: error: a branch is an `if` or a `case` arm, not both",
        ),
        (
            rule("forbid", "    forbid: [{text: x}]\n", "{workflow: '*', branch: {case: '\"$A', arm: y}}"),
            "5:43: error: invalid case '\"$A': No closing quotation",
        ),
        (
            rule("forbid", "    forbid: [{text: x}]\n", "{workflow: '*', branch: {case: x, arm: 'a b'}}"),
            "5:51: error: `arm` is one shell word; 'a b' is not",
        ),
        (
            rule("forbid", "    forbid: [{text: x}]\n", "{workflow: '*', branch: {else: true}}"),
            "5:36: error: a branch names its condition: `branch: COND`, `{if: COND, else: true}` or a `case` arm",
        ),
        ("max-file-size: huge\n", "1:16: error: max-file-size must be a number of bytes or a size such as 4MiB"),
        ("max-file-size: [1]\n", "1:16: error: max-file-size must be a number of bytes or a size such as 4MiB"),
    ],
    # One line each: pytest escapes a newline in an id, and escapes it again in a second run in one process
    # (mutmut's), where the escaped id then names no test.
    ids=lambda value: value.replace("\n", " ")[:40] if isinstance(value, str) else value,
)
def test_a_bad_policy_is_a_positioned_error_with_exit_2(make_repo: MakeRepo, policy: str, expected: str) -> None:
    result = check(make_repo, policy)
    assert (result.code, result.out) == (2, "")
    assert result.err == f".github/ci-checks.yml:{expected}\n"


def test_a_where_that_matches_nothing_is_a_finding_not_a_crash(make_repo: MakeRepo) -> None:
    result = check(make_repo, rule("forbid", "    forbid: [{text: x}]\n", "{workflow: ci.yml, job: deploy}"))
    assert result.code == 1
    assert result.headers == [
        ".github/ci-checks.yml:5:5: CC104 `where` selects nothing: no file matches 'ci.yml' [r]",
    ]
    result = check(make_repo, rule("forbid", "    forbid: [{text: x}]\n", "{workflow: '**/ci.yml', job: deploy}"))
    assert result.headers == [
        ".github/ci-checks.yml:5:5: CC104 `where` selects nothing: no job in .github/workflows/ci.yml matches "
        "'deploy' (jobs: build, release) [r]",
    ]


def test_commands_in_conditions_loops_pipelines_and_nested_branches_are_found(make_repo: MakeRepo) -> None:
    body = "    forbid:\n" + "".join(
        f"      - command: {pattern}\n" for pattern in ("python -c", "pip install -e .", "pytest", "tee log.txt")
    )
    result = check(make_repo, rule("forbid", body))
    assert [h.split(": CC101 ")[0] for h in result.headers] == [
        ".github/workflows/ci.yml:16:16",
        ".github/workflows/ci.yml:17:15",
        ".github/workflows/ci.yml:23:13",
        ".github/workflows/ci.yml:23:37",
    ]


def test_order_is_checked_job_by_job_and_skips_jobs_without_steps(make_repo: MakeRepo) -> None:
    body = "    order:\n      - step: {uses: actions/checkout}\n      - step: Install\n      - command: pytest\n"
    assert check(make_repo, rule("order", body)).code == 0
    swapped = "    order:\n      - command: pytest\n      - step: {id: install}\n"
    result = check(make_repo, rule("order", swapped))
    assert result.headers == [
        ".github/workflows/ci.yml:11:9: CC100 a step {id: install} comes before `pytest` in job 'build' [r]"
    ]
    assert "  = note: `pytest` is first written here at 23:13" in result.out.splitlines()


def test_missing_items_are_findings_unless_ignored(make_repo: MakeRepo) -> None:
    body = "    order:\n      - command: make\n      - command: pytest\n"
    result = check(make_repo, rule("order", body))
    assert result.headers == [".github/workflows/ci.yml:3:3: CC100 `make` is missing from job 'build' [r]"]
    assert check(make_repo, rule("order", body + "    missing: ignore\n")).code == 0
    across = body + "    across: jobs\n"
    result = check(make_repo, rule("order", across))
    assert result.headers == [".github/workflows/ci.yml:1:1: CC100 `make` is missing from .github/workflows/ci.yml [r]"]
    assert check(make_repo, rule("order", across + "    missing: ignore\n")).code == 0


def test_require_with_values_compare_as_github_reads_them(make_repo: MakeRepo) -> None:
    where = "{workflow: .github/workflows/ci.yml, step: {uses: 'actions/*'}}"
    assert check(make_repo, rule("require", "    require: [{with: {persist-credentials: false}}]\n", where)).code == 0
    quoted = rule("require", "    require: [{with: {persist-credentials: 'false'}}]\n", where)
    assert check(make_repo, quoted).code == 0
    wrong = check(make_repo, rule("require", "    require: [{with: {persist-credentials: true}}]\n", where))
    assert wrong.headers == [
        ".github/workflows/ci.yml:8:9: CC102 step 'actions/checkout@v4' lacks `with: {persist-credentials: true}` [r]"
    ]
    env = check(make_repo, rule("require", "    require: [{env: {MODE: fast}}]\n", "{workflow: '**', job: b*}"))
    assert env.code == 0


def test_regex_matches_are_positioned_and_multiline(make_repo: MakeRepo) -> None:
    result = check(make_repo, rule("forbid", "    forbid: [{regex: '^ +pytest .*$'}]\n"))
    assert result.headers == [
        ".github/workflows/ci.yml:23:1: CC101 /^ +pytest .*$/ is forbidden here "
        """(found '            pytest "tests/$suite" | tee log.txt') [r]"""
    ]


def test_a_regex_that_also_matches_empty_text_reports_only_its_non_empty_matches(make_repo: MakeRepo) -> None:
    policy = rule("forbid", "    forbid: [{regex: 'x*'}]\n", "{files: notes.txt}")
    result = check(make_repo, policy, {"notes.txt": "ab\nxx\n"})
    assert result.headers == ["notes.txt:2:1: CC101 /x*/ is forbidden here (found 'xx') [r]"]


def test_a_catastrophic_regex_times_out_instead_of_hanging(make_repo: MakeRepo) -> None:
    text = "a" * 40 + "!"
    started = time.monotonic()
    result = check(
        make_repo, rule("forbid", "    forbid: [{regex: '(a|aa)+$'}]\n", "{files: slow.txt}"), {"slow.txt": text}
    )
    assert time.monotonic() - started < 30
    assert result.headers == [
        ".github/ci-checks.yml:6:22: CC106 /(a|aa)+$/ took over 2 s on slow.txt; the rule is not fully checked [r]"
    ]


def test_dockerfile_copy_and_run_heredoc(make_repo: MakeRepo) -> None:
    dockerfile = (
        "FROM rocm/pytorch\n"
        "COPY --chown=1000 docker/patches/megatron.patch /tmp/\n"
        "RUN <<EOF\nset -e\ngit apply /tmp/megatron.patch\nEOF\n"
        'RUN ["git", "apply", "/tmp/x.patch"]\n'
    )
    body = "    forbid:\n      - command: COPY docker/patches/megatron.patch\n      - command: git apply\n"
    result = check(
        make_repo, rule("forbid", body, "{files: 'docker/Dockerfile*'}"), {"docker/Dockerfile.rocm": dockerfile}
    )
    assert [h.split(" [")[0] for h in result.headers] == [
        "docker/Dockerfile.rocm:2:1: CC101 `COPY docker/patches/megatron.patch` is forbidden here",
        "docker/Dockerfile.rocm:5:1: CC101 `git apply` is forbidden here",
        "docker/Dockerfile.rocm:7:5: CC101 `git apply` is forbidden here",
    ]


def test_policy_ids_work_in_select_and_ignore(make_repo: MakeRepo) -> None:
    policy = rule("forbid", "    forbid: [{command: pytest}]\n")
    root = make_repo({".github/workflows/ci.yml": WORKFLOW, ".github/ci-checks.yml": policy})
    assert [h.split()[1] for h in run_cli("check", root, "--select", "r").headers] == ["CC101"]
    assert run_cli("check", root, "--select", "CC1", "--ignore", "r").code == 0


def test_a_policy_in_pyproject_toml_points_at_its_table(make_repo: MakeRepo) -> None:
    pyproject = '[tool.ci-checks]\nversion = 1\n\n[[tool.ci-checks.rules]]\nid = "r"\nkind = "forbd"\n'
    root = make_repo({".github/workflows/ci.yml": WORKFLOW, "pyproject.toml": pyproject})
    result = run_cli("check", root)
    assert result.code == 2
    assert result.err.startswith("pyproject.toml:6:8: error: rules.0.kind: unknown value 'forbd' (did you mean")


def test_a_file_the_rule_cannot_read_is_reported_as_such_not_as_matching_nothing(make_repo: MakeRepo) -> None:
    policy = rule("forbid", "    forbid: [{text: x}]\n")
    root = make_repo({".github/workflows/ci.yml": WORKFLOW, ".github/ci-checks.yml": policy})
    result = run_cli("check", root, "--select", "CC0,CC1", "--max-file-size", "100")
    assert [h.split(" (")[0] for h in result.headers] == [
        ".github/workflows/ci.yml:1:1: CC001 file is larger than the 100 bytes limit",
        ".github/workflows/ci.yml:1:1: CC106 file is larger than the 100 bytes limit",
    ]
    (root / ".github" / "workflows" / "ci.yml").write_text("on: push\njobs: [\n")
    result = run_cli("check", root, "--select", "CC010,CC1")
    # At the end of the file: the end of its last line, as the file has no line 3.
    assert result.headers == [
        ".github/workflows/ci.yml:2:8: CC010 did not find expected node content (while parsing a flow node)",
        ".github/workflows/ci.yml:2:8: CC106 not a usable workflow (did not find expected node content (while "
        "parsing a flow node)); not checked by this rule [r]",
    ]
    (root / ".github" / "workflows" / "ci.yml").write_text("- on: push\n")
    assert run_cli("check", root, "--select", "CC1").headers == [
        ".github/workflows/ci.yml:1:1: CC106 not a usable workflow (its top level is not a mapping); not checked by "
        "this rule [r]"
    ]


CALLED = """on:
  workflow_call:
    inputs:
      ref: {type: string}
    outputs:
      digest: {value: x}
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - name: Test
        run: pytest
"""


def parity(make_repo: MakeRepo, body: str, files: Mapping[str, str | bytes] | None = None, *paths: str) -> Result:
    """Run a `parity` rule over `a.yml` and `b.yml` (whose output is `image`, not `digest`), or over `paths`."""
    root = make_repo(
        {
            ".github/workflows/a.yml": CALLED,
            ".github/workflows/b.yml": CALLED.replace("digest", "image"),
            ".github/ci-checks.yml": f"version: 1\nrules:\n  - id: p\n    kind: parity\n{body}",
            **(files or {}),
        }
    )
    return run_cli("check", *([root / path for path in paths] or [root]), "--select", "CC1")


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "    workflows:\n      - .github/workflows/a.yml\n      - '[b.yml'\n    compare: [inputs]\n",
            "7:9: error: invalid path '[b.yml': '[' opens a character set that is never closed",
        ),
        (
            "    workflows: [.github/workflows/a.yml, .github/workflows/b.yml]\n    compare: [inputs]\n"
            "    allow:\n      inputs:\n        - ref\n        - '[x'\n",
            "10:11: error: invalid glob '[x': '[' opens a character set that is never closed",
        ),
    ],
)
def test_a_bad_parity_path_or_allowed_name_is_a_positioned_error(make_repo: MakeRepo, body: str, expected: str) -> None:
    result = parity(make_repo, body)
    assert result.code == 2
    assert result.err.startswith(f".github/ci-checks.yml:{expected}"), result.err


def test_parity_compares_outputs_of_workflows_written_with_a_leading_dot_slash(make_repo: MakeRepo) -> None:
    result = parity(
        make_repo, "    workflows: [./.github/workflows/a.yml, ./.github/workflows/b.yml]\n    compare: [outputs]\n"
    )
    assert result.headers == [
        ".github/workflows/a.yml:6:7: CC103 output 'digest' of .github/workflows/a.yml has no counterpart in "
        ".github/workflows/b.yml [p]",
        ".github/workflows/b.yml:6:7: CC103 output 'image' of .github/workflows/b.yml has no counterpart in "
        ".github/workflows/a.yml [p]",
    ]


def test_parity_reads_workflows_outside_the_workflows_folder_and_names_every_one_that_lacks_a_name(
    make_repo: MakeRepo,
) -> None:
    files = {"ci/a.yml": CALLED, "ci/b.yml": CALLED.replace("digest", "image"), "ci/c.yml": CALLED}
    result = parity(make_repo, "    workflows: [ci/b.yml, ci/a.yml, ci/c.yml]\n    compare: [outputs]\n", files)
    assert result.headers == [
        "ci/a.yml:6:7: CC103 output 'digest' of ci/a.yml has no counterpart in ci/b.yml [p]",
        "ci/b.yml:6:7: CC103 output 'image' of ci/b.yml has no counterpart in ci/a.yml, ci/c.yml [p]",
        "ci/c.yml:6:7: CC103 output 'digest' of ci/c.yml has no counterpart in ci/b.yml [p]",
    ]


def test_parity_reports_every_workflow_it_cannot_find_or_read(make_repo: MakeRepo) -> None:
    workflows = "    workflows: [.github/workflows/x.yml, .github/workflows/y.yml, .github/workflows/a.yml]\n"
    result = parity(make_repo, workflows + "    compare: [outputs]\n")
    assert result.headers == [
        ".github/ci-checks.yml:5:17: CC104 workflow '.github/workflows/x.yml' does not exist [p]",
        ".github/ci-checks.yml:5:42: CC104 workflow '.github/workflows/y.yml' does not exist [p]",
    ]
    broken = {".github/workflows/x.yml": "on: [\n", ".github/workflows/y.yml": "on: [\n"}
    result = parity(make_repo, workflows + "    compare: [outputs]\n", broken)
    assert [header for header in result.headers if " CC106 " in header] == [
        f".github/workflows/{name}.yml:1:6: CC106 not a usable workflow (did not find expected node content (while "
        "parsing a flow node)); not checked by this rule [p]"
        for name in ("x", "y")
    ]


def test_parity_checked_on_one_workflow_reports_that_workflow_only(make_repo: MakeRepo) -> None:
    body = "    workflows: [.github/workflows/a.yml, .github/workflows/b.yml]\n    compare: [outputs]\n"
    result = parity(make_repo, body, None, ".github/workflows/b.yml")
    assert result.headers == [
        ".github/workflows/b.yml:6:7: CC103 output 'image' of .github/workflows/b.yml has no counterpart in "
        ".github/workflows/a.yml [p]"
    ]


def test_parity_reads_a_workflow_template_as_a_workflow_whichever_rule_reads_it_first(make_repo: MakeRepo) -> None:
    """`ci/rocm.yml.in` is text to a `files:` scope; a rule that read it so first made parity find it unreadable."""
    body = "    workflows: [.github/workflows/a.yml, ci/rocm.yml.in]\n    compare: [outputs]\n"
    as_text = "  - id: t\n    kind: forbid\n    where: {files: 'ci/*'}\n    forbid: [{text: nothing-here}]\n"
    files = {"ci/rocm.yml.in": CALLED.replace("digest", "image")}
    expected = [
        ".github/workflows/a.yml:6:7: CC103 output 'digest' of .github/workflows/a.yml has no counterpart in "
        "ci/rocm.yml.in [p]",
        "ci/rocm.yml.in:6:7: CC103 output 'image' of ci/rocm.yml.in has no counterpart in .github/workflows/a.yml [p]",
    ]
    assert parity(make_repo, body, files).headers == expected
    text_first = {".github/ci-checks.yml": f"version: 1\nrules:\n{as_text}  - id: p\n    kind: parity\n{body}"}
    assert parity(make_repo, body, {**files, **text_first}).headers == expected


CHECKOUTS = """on: push
jobs:
  a:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with: {fetch-depth: 1}
      - uses: actions/checkout@v4
        with: {persist-credentials: true, ref: main}
      - uses: actions/checkout@v4
        with: {}
      - uses: actions/checkout@v4
        with: x
      - uses: actions/checkout@v4
        with:
          fetch-depth: 1  # kept
      - uses: actions/checkout@v4
        with:
          persist-credentials: 'false'
          ref: dev
  b:
    runs-on: ubuntu-latest
    steps:
      - run: make
"""


def test_a_with_fix_sets_each_missing_or_different_pair_where_the_mapping_is_written(make_repo: MakeRepo) -> None:
    where = "{workflow: .github/workflows/ci.yml, step: {uses: 'actions/*'}}"
    policy = rule("require", "    require: [{with: {persist-credentials: false, ref: main}}]\n", where)
    root = make_repo({".github/workflows/ci.yml": CHECKOUTS, ".github/ci-checks.yml": policy})
    findings = json.loads(run_cli("check", root, "--select", "CC1", "--output-format", "json").out)["diagnostics"]
    edits = {
        finding["line"]: [
            (edit["line"], edit["column"], edit["end_line"], edit["end_column"], edit["replacement"])
            for edit in finding["fix"]["edits"]
        ]
        for finding in findings
        if "fix" in finding
    }
    assert edits == {
        6: [(7, 30, 7, 30, ", persist-credentials: false, ref: main")],  # before the flow mapping's `}`
        8: [(9, 37, 9, 41, "false")],  # only the value that differs
        10: [(11, 16, 11, 16, "persist-credentials: false, ref: main")],
        # `with: x` is no mapping to complete: the finding at line 12 has no fix.
        14: [(16, 33, 16, 33, "\n          persist-credentials: false\n          ref: main")],  # after the comment
        17: [(20, 16, 20, 19, "main")],  # `'false'` already reads as false
    }
    assert {finding["fix"]["description"] for finding in findings if "fix" in finding} == {
        "set with: {persist-credentials: false, ref: main}"
    }
    result = run_cli("check", root, "--select", "CC1", "--fix")
    assert (root / ".github/workflows/ci.yml").read_text() == CHECKOUTS.replace(
        "with: {fetch-depth: 1}", "with: {fetch-depth: 1, persist-credentials: false, ref: main}"
    ).replace("{persist-credentials: true, ref: main}", "{persist-credentials: false, ref: main}").replace(
        "with: {}", "with: {persist-credentials: false, ref: main}"
    ).replace(
        "fetch-depth: 1  # kept\n",
        "fetch-depth: 1  # kept\n          persist-credentials: false\n          ref: main\n",
    ).replace("ref: dev", "ref: main")
    assert result.headers == [
        ".github/workflows/ci.yml:12:9: CC102 step 'actions/checkout@v4' lacks "
        "`with: {persist-credentials: false, ref: main}` [r]"
    ]


def test_a_fix_writes_each_value_plain_only_where_it_reads_back_the_same(make_repo: MakeRepo) -> None:
    values = {
        "WORD": ("Xylo", "Xylo"),
        "DASH": ("'-y'", '"-y"'),
        "QUESTION": ("'?q'", '"?q"'),
        "COLON": ("'a: b'", '"a: b"'),
        "PADDED": ("' pad'", '" pad"'),
        "EMPTY": ("''", '""'),
        "TEXT_TRUE": ("'true'", '"true"'),
        "TEXT_NUMBER": ("'3.10'", '"3.10"'),
        "NUMBER": ("3", "3"),
        "FRACTION": ("1.5", "1.5"),
        "FLAG": ("false", "false"),
    }
    pairs = ", ".join(f"{name}: {written}" for name, (written, _) in values.items())
    policy = rule("require", f"    require: [{{env: {{{pairs}}}}}]\n", "{workflow: '**', job: b}")
    root = make_repo({".github/workflows/ci.yml": CHECKOUTS, ".github/ci-checks.yml": policy})
    shown = ", ".join(f"{name}: {fixed}" for name, (_, fixed) in values.items())
    assert f"= fix (set env: {{{shown}}}):" in run_cli("check", root, "--select", "CC1").out
    result = run_cli("check", root, "--select", "CC1", "--fix")
    lines = "".join(f"      {name}: {fixed}\n" for name, (_, fixed) in values.items())
    assert (root / ".github/workflows/ci.yml").read_text() == f"{CHECKOUTS}    env:\n{lines}"
    assert result.code == 0, result.out


def test_a_file_that_is_not_utf8_is_reported_at_its_first_bad_byte(make_repo: MakeRepo) -> None:
    policy = rule("forbid", "    forbid: [{text: x}]\n", "{files: notes.txt}")
    result = check(make_repo, policy, {"notes.txt": b"ok\nab\xffc\n"})
    assert result.headers == [
        "notes.txt:2:3: CC106 file is not valid UTF-8 (byte 0xff cannot be decoded); not checked by this rule [r]"
    ]


def test_a_linked_folder_a_files_glob_could_reach_into_is_reported_as_unread(make_repo: MakeRepo) -> None:
    policy = rule("forbid", "    forbid: [{text: FROM}]\n", "{files: 'docker/*/Dockerfile'}")
    root = make_repo(
        {".github/ci-checks.yml": policy, "shared/Dockerfile": "FROM a\n", "docker/cuda/Dockerfile": "x\n"}
    )
    (root / "docker" / "rocm").symlink_to("../shared")
    (root / "tools").symlink_to("shared")
    result = run_cli("check", root, "--select", "CC1")
    assert result.headers == [
        "docker/rocm:1:1: CC106 symbolic link to a folder; folders are not entered through links, so nothing under "
        "it is checked; not checked by this rule [r]"
    ]


STEPS = """on: push
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - name: Before
        run: echo marker
      - uses: actions/checkout@v4
      - name: Inside
        id: inside
        run: echo marker; echo marker
      - name: Test [fast] *
        run: echo marker
"""


def test_a_python_file_python_warns_of_is_read_all_the_same() -> None:
    """An invalid escape (`"v\\d+"`) makes Python warn while parsing, an error where warnings are errors: the facts
    of the file are still read, and no warning about the scanned file escapes."""
    text = 'import os\nPATTERN = "v\\d+"\n'
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = pysource.facts(source.decode("t.py", text.encode()))
    assert not isinstance(found, pysource.PythonSyntaxError)
    assert [(fact.kind.value, fact.value) for fact in found] == [
        ("import", "os"),
        ("name", "os"),
        ("assign", "PATTERN"),
        ("name", "PATTERN"),
    ]


def test_an_invalid_glob_of_a_python_item_is_told_where_it_is_written(make_repo: MakeRepo) -> None:
    policy = "version: 1\nrules:\n  - id: r\n    kind: forbid\n    where: {files: t.py}\n    forbid:\n"
    policy += '      - python: {import: "[a"}\n'
    result = run_cli("check", make_repo({".github/ci-checks.yml": policy, "t.py": "import os\n"}))
    assert (result.code, result.err) == (
        2,
        ".github/ci-checks.yml:7:26: error: invalid glob '[a': '[' opens a character set that is never closed\n",
    )


def _forbidden(make_repo: MakeRepo, item: str, where: str, files: dict[str, str]) -> list[str]:
    policy = f"version: 1\nrules:\n  - id: r\n    kind: forbid\n    where: {where}\n    forbid:\n      - {item}\n"
    return run_cli("check", make_repo({".github/ci-checks.yml": policy, **files}), "--select", "CC1").headers


@pytest.mark.parametrize(
    ("where", "found"),
    [
        ("{workflow: ci.yml, step: Inside}", ["11:19", "11:32"]),
        ("{workflow: ci.yml, step: Before}", ["7:19"]),
        ("{workflow: ci.yml}", ["7:19", "11:19", "11:32", "13:19"]),
        ("{files: ci.yml}", ["7:19", "11:19", "11:32", "13:19"]),
    ],
)
def test_a_text_item_finds_each_occurrence_within_its_scope_only(
    make_repo: MakeRepo, where: str, found: list[str]
) -> None:
    headers = _forbidden(make_repo, "text: marker", where, {"ci.yml": STEPS})
    assert headers == [f"ci.yml:{at}: CC101 'marker' is forbidden here [r]" for at in found]


@pytest.mark.parametrize(
    ("selector", "found"),
    [
        ("Ins*", ["9:9"]),
        ("inside", ["9:9"]),
        ("{name: Inside}", ["9:9"]),
        ("{name: Ins*, id: ins*}", ["9:9"]),
        ("{name: Inside, id: other}", []),
        ("{id: inside}", ["9:9"]),
        ("{uses: actions/checkout}", ["8:9"]),
        ("{uses: actions/checkout@v4}", ["8:9"]),
        ("{uses: actions/checkout@v3}", []),
        ("{uses: actions/*, name: Inside}", []),
        ("{literal: 'Test [fast] *'}", ["12:9"]),
        ("{name: {literal: 'Test [fast] *'}}", ["12:9"]),
        ("'Test [fast] *'", []),
    ],
)
def test_a_step_item_selects_by_name_id_or_uses_and_is_found_at_the_steps_first_line(
    make_repo: MakeRepo,
    selector: str,
    found: list[str],
) -> None:
    headers = _forbidden(make_repo, f"step: {selector}", "{workflow: ci.yml}", {"ci.yml": STEPS})
    assert [header.split(": CC101 ")[0] for header in headers] == [f"ci.yml:{at}" for at in found]


def test_a_step_item_is_named_by_each_part_of_its_selector(make_repo: MakeRepo) -> None:
    named = "{uses: actions/*, name: {literal: 'a*'}, id: x}"
    headers = _forbidden(make_repo, "step: {name: Inside, id: ins*}", "{workflow: ci.yml}", {"ci.yml": STEPS})
    assert headers == ["ci.yml:9:9: CC101 a step {name: Inside, id: ins*} is forbidden here [r]"]
    missing = rule("require", f"    require: [{{step: {named}}}]\n", "{workflow: ci.yml}")
    result = run_cli("check", make_repo({".github/ci-checks.yml": missing, "ci.yml": STEPS}), "--select", "CC1")
    assert result.headers == ["ci.yml:1:1: CC102 ci.yml lacks a step {uses: actions/*, name: 'a*', id: x} [r]"]


PYTHON = """import os.path
from a.b import C
mod.sub.Cls = 1
m.Other = 2
setattr(mod, "Late", 3)


class K(base.Parent):
    pass
"""


@pytest.mark.parametrize(
    ("item", "found"),
    [
        ("{assign: Cls}", ["3:1: Python assign 'Cls' is forbidden here (found 'mod.sub.Cls')"]),
        ("{assign: 'mod.sub.Cls'}", ["3:1: Python assign 'mod.sub.Cls' is forbidden here (found 'mod.sub.Cls')"]),
        ("{assign: 'sub.Cls'}", []),
        ("{assign: 'sub.*'}", []),
        ("{assign: 'mod.sub'}", []),  # only an import's module is a name of its own
        ("{subclass: base}", []),
        ("{assign: Other}", ["4:1: Python assign 'Other' is forbidden here (found 'm.Other')"]),
        ("{assign: 'mod.Late'}", ["5:1: Python assign 'mod.Late' is forbidden here (found 'mod.Late')"]),
        ("{import: 'a.b'}", ["2:17: Python import 'a.b' is forbidden here (found 'a.b.C')"]),
        ("{import: C}", ["2:17: Python import 'C' is forbidden here (found 'a.b.C')"]),
        ("{import: 'a.*'}", ["2:17: Python import 'a.*' is forbidden here (found 'a.b.C')"]),
        ("{import: os}", ["1:8: Python import 'os' is forbidden here (found 'os.path')"]),
        ("{import: b}", []),
        ("{subclass: Parent}", ["8:9: Python subclass 'Parent' is forbidden here (found 'base.Parent')"]),
        ("{name: Parent}", ["8:14: Python name 'Parent' is forbidden here (found 'Parent')"]),
        ("{name: K}", ["8:7: Python name 'K' is forbidden here (found 'K')"]),
    ],
)
def test_a_python_item_matches_a_whole_dotted_name_or_a_last_part_or_an_imports_module(
    make_repo: MakeRepo,
    item: str,
    found: list[str],
) -> None:
    headers = _forbidden(make_repo, f"python: {item}", "{files: t.py}", {"t.py": PYTHON})
    assert [header.removeprefix("t.py:").replace(" CC101", "").removesuffix(" [r]") for header in headers] == found
