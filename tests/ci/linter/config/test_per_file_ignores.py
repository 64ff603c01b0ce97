"""`per-file-ignores`: path globs to the names ignored in the files they match, in every front-end."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_checks.query import CIRepository
from tests.ci.linter.conftest import MakeRepo, run_cli
from tests.ci.linter.engine.test_new_since import WORKFLOW

LEGACY = WORKFLOW.replace("run: echo ok\n", "run: git apply /tmp/amd_patch/x.patch\n      - run: ls $HOME\n")
ACTION = """name: old
description: old
runs:
  using: composite
  steps:
    - run: echo "::set-output name=a::1"
      shell: bash
"""
FILES = {
    ".github/workflows/ci.yml": LEGACY,
    ".github/workflows/legacy-build.yml": LEGACY,
    ".github/actions/old/setup/action.yml": ACTION,
}
POLICY = """version: 1
per-file-ignores:
  ".github/workflows/legacy-*.yml": [deprecated-workflow-command, no-amd-patch, SC2086]
  .github/actions/old: [CC031]
rules:
  - id: no-amd-patch
    kind: forbid
    where: {files: .github/**}
    forbid: [{text: amd_patch}]
"""
SHELLCHECK = ("--backends", "shellcheck", "--profile", "all")  # SC2086 is an info-level note
EVERYWHERE = [
    ".github/workflows/ci.yml:8:14: CC031",
    ".github/workflows/ci.yml:9:29: CC101",
    ".github/workflows/ci.yml:10:17: SC2086",
]


def _found(result_headers: list[str]) -> list[str]:
    return [header.split(" ", 2)[0] + " " + header.split(" ", 2)[1] for header in result_headers]


def test_what_a_glob_names_is_ignored_in_the_files_and_folders_it_matches(make_repo: MakeRepo) -> None:
    root = make_repo({**FILES, ".github/ci-checks.yml": POLICY})
    result = run_cli("check", root, *SHELLCHECK)
    assert (result.code, _found(result.headers)) == (1, EVERYWHERE), result.out
    # Without the table, each file has its findings.
    without = POLICY.replace(POLICY[POLICY.index("per-file-ignores:") : POLICY.index("rules:")], "")
    (root / ".github" / "ci-checks.yml").write_text(without)
    every = _found(run_cli("check", root, *SHELLCHECK).headers)
    assert ".github/actions/old/setup/action.yml:6:12: CC031" in every
    assert {".github/workflows/legacy-build.yml:8:14: CC031", ".github/workflows/legacy-build.yml:10:17: SC2086"} < set(
        every
    )


def test_select_does_not_bring_back_what_a_file_ignores(make_repo: MakeRepo) -> None:
    root = make_repo({**FILES, ".github/ci-checks.yml": POLICY})
    result = run_cli("check", root, "--select", "CC031", "--output-format", "concise")
    assert [line.split(": ")[0] for line in result.out.splitlines()[:-1]] == [".github/workflows/ci.yml:8:14"]


def test_the_query_api_and_the_pytest_plugin_honour_it(make_repo: MakeRepo, pytester: pytest.Pytester) -> None:
    root = make_repo({**FILES, ".github/ci-checks.yml": POLICY})
    found = CIRepository(root).check().diagnostics
    assert [(d.span.path, d.code) for d in found if d.code in ("CC031", "CC101")] == [
        (".github/workflows/ci.yml", "CC031"),
        (".github/workflows/ci.yml", "CC101"),
    ]
    assert [d.span.path for d in CIRepository(root).findings("no-amd-patch")] == [".github/workflows/ci.yml"]
    # The plugin's test of the policy rule passes when its only finding is in a file that ignores it.
    for name in (".github/workflows/legacy-build.yml", ".github/ci-checks.yml"):
        (pytester.path / name).parent.mkdir(parents=True, exist_ok=True)
        (pytester.path / name).write_text((root / name).read_text())
    pytester.runpytest("--ci-checks").assert_outcomes(passed=1)
    (pytester.path / ".github" / "workflows" / "ci.yml").write_text(LEGACY)
    pytester.runpytest("--ci-checks").assert_outcomes(failed=1)


def test_per_file_ignores_in_pyproject_toml(make_repo: MakeRepo) -> None:
    pyproject = '[tool.ci-checks.per-file-ignores]\n".github/workflows/legacy-*.yml" = ["CC031"]\n'
    root = make_repo({**FILES, "pyproject.toml": pyproject})
    result = run_cli("check", root, "--select", "CC031", "--output-format", "concise")
    assert [line.split(": ")[0] for line in result.out.splitlines()[:-1]] == [
        ".github/actions/old/setup/action.yml:6:12",
        ".github/workflows/ci.yml:8:14",
    ]


@pytest.mark.parametrize(
    ("name", "table", "error"),
    [
        (
            ".github/ci-checks.yml",
            'per-file-ignores:\n  "*.yml": [CC031, duplicat-key]\n',
            ".github/ci-checks.yml:2:20: error: unknown rule 'duplicat-key' (did you mean duplicate-key?); "
            "see `ci-checks rules`",
        ),
        (
            ".github/ci-checks.yml",
            "per-file-ignores:\n  /abs/*.yml: [CC031]\n",
            ".github/ci-checks.yml:2:3: error: invalid glob '/abs/*.yml': a path glob is relative to the repository "
            "root; remove the leading '/'",
        ),
        (
            ".github/ci-checks.yml",
            "per-file-ignores:\n  a/[x.yml: [CC031]\n",
            ".github/ci-checks.yml:2:3: error: invalid glob 'a/[x.yml': '[' opens a character set that is never closed",
        ),
        (".github/ci-checks.yml", "per-file-ignores:\n  a.yml: CC031\n", ".github/ci-checks.yml:2:10: error: "),
        (
            "pyproject.toml",
            '[tool.ci-checks]\nselect = ["CC0"]\n\n'
            '[tool.ci-checks.per-file-ignores]\n"a/**" = ["zizmor-unpined-uses"]\n',
            "pyproject.toml:5:10: error: unknown rule 'zizmor-unpined-uses' (did you mean zizmor-unpinned-uses?); "
            "see `ci-checks rules`",
        ),
        (
            "pyproject.toml",
            '[tool.ci-checks.per-file-ignores]\n"../x" = ["CC031"]\n',
            "pyproject.toml:2:1: error: invalid glob '../x': a path glob cannot leave the repository ('..')",
        ),
    ],
)
def test_a_mistake_in_the_table_is_a_positioned_error(make_repo: MakeRepo, name: str, table: str, error: str) -> None:
    root = make_repo({".github/workflows/ci.yml": LEGACY, name: table})
    result = run_cli("check", root)
    assert result.code == 2 and result.headers == []
    assert result.err.startswith(error), result.err
    assert result.err.count("\n") == 1


def test_the_schema_describes_the_table(tmp_path: Path) -> None:
    from ci_checks.config import schema as config_schema

    entry = config_schema.build()["properties"]["per-file-ignores"]
    assert entry["additionalProperties"]["items"] == {"type": "string", "minLength": 1}
    assert "glob" in entry["description"]
