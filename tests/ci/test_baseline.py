"""Baselines: accept today's findings, report only new ones, survive lines moving, list what was fixed."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from ci_checks.query import CIRepository
from tests.ci.conftest import run_cli

WORKFLOW = """on: push
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - run: |
          echo "::set-output name=a::1"
          echo ok
      - run: echo "::set-output name=b::2"
"""


def test_a_baseline_accepts_todays_findings_and_reports_new_ones(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_repo({".github/workflows/ci.yml": WORKFLOW})
    recorded = tmp_path / "baseline.json"
    result = run_cli("baseline", "write", recorded, root)
    assert (result.code, result.out) == (
        0,
        f"Wrote 2 findings to {recorded}; `check --baseline {recorded}` accepts them.\n",
    )
    result = run_cli("check", root, "--baseline", recorded)
    assert (result.code, result.headers) == (0, [])
    assert result.err == f"ci-checks: {recorded} accepted 2 findings\n"

    workflow = root / ".github" / "workflows" / "ci.yml"
    workflow.write_text("# a comment that moves every line down\n\n" + WORKFLOW)
    assert run_cli("check", root, "--baseline", recorded).headers == []

    workflow.write_text(
        WORKFLOW.replace("          echo ok\n", '          echo ok\n          echo "::set-output name=c::3"\n')
    )
    result = run_cli("check", root, "--baseline", recorded)
    assert result.code == 1
    assert [h.split(" `")[0] for h in result.headers] == [".github/workflows/ci.yml:9:11: CC031"]

    workflow.write_text(WORKFLOW.replace('      - run: echo "::set-output name=b::2"\n', ""))
    result = run_cli("check", root, "--baseline", recorded)
    assert result.code == 0
    assert result.err.splitlines() == [
        f"ci-checks: {recorded} accepted 1 finding; 1 of its entries match nothing any more (fixed?):",
        '  .github/workflows/ci.yml: CC031 `::set-output` is deprecated; append `name=value` to "$GITHUB_OUTPUT" '
        "instead [deprecated-workflow-command]",
    ]


def test_identical_findings_are_counted_not_merged(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    twice = WORKFLOW.replace('echo "::set-output name=b::2"', 'echo "::set-output name=a::1"')
    root = make_repo({".github/workflows/ci.yml": twice})
    recorded = tmp_path / "baseline.json"
    assert run_cli("baseline", "write", recorded, root).code == 0
    once_more = twice + '      - run: echo "::set-output name=a::1"\n'
    (root / ".github" / "workflows" / "ci.yml").write_text(once_more)
    assert [h.split(" `")[0] for h in run_cli("check", root, "--baseline", recorded).headers] == [
        ".github/workflows/ci.yml:10:14: CC031"
    ]


@pytest.mark.parametrize(
    ("content", "error"),
    [
        (None, "the baseline must be a regular file"),
        ("{", "not a ci-checks baseline"),
        ('{"version": 9, "findings": []}', "not a ci-checks baseline of format 1"),
        ('{"version": 1, "findings": [{"path": 1}]}', "an entry lacks one of path, code, rule, fingerprint, message"),
    ],
)
def test_a_bad_baseline_is_an_error_with_exit_2(make_repo, tmp_path: Path, content, error: str) -> None:  # type: ignore[no-untyped-def]
    root = make_repo({".github/workflows/ci.yml": WORKFLOW})
    recorded = tmp_path / "baseline.json"
    if content is not None:
        recorded.write_text(content)
    result = run_cli("check", root, "--baseline", recorded)
    assert result.code == 2
    assert result.err.startswith(f"ci-checks: error: {recorded}: {error}")


def _job_key_line(root: Path) -> tuple[Path, int, int]:
    """A workflow and the line and column of the first `runs-on:` key of a job written in block style."""
    repository = CIRepository(root)
    for relative in repository.repository.workflows:
        workflow = repository.workflow(relative)
        for job in workflow.jobs.values():
            key = job.node.key_node("runs-on")
            if key is not None and key.span.line > job.key.span.line:
                return root / relative, key.span.line, key.span.column
    raise LookupError("no job with a runs-on key on a line of its own")


def _corpus() -> list[Path]:
    folder = os.environ.get("CI_CHECKS_CORPUS")
    return sorted(path for path in Path(folder).iterdir() if path.is_dir()) if folder else []


@pytest.mark.parametrize("repository", _corpus(), ids=lambda path: path.name)
def test_a_baseline_of_a_real_repository_with_every_linter(repository: Path, tmp_path: Path) -> None:
    root = tmp_path / "repo"
    shutil.copytree(repository, root)
    (root / ".git").mkdir()
    recorded = tmp_path / "baseline.json"
    everything = ("--backends", "all", "--select", "CC,AL,SC,ZZ")
    assert run_cli("baseline", "write", recorded, root, *everything).code == 0
    assert run_cli("check", root, "--baseline", recorded, *everything).headers == []
    workflows = sorted((root / ".github" / "workflows").glob("*.y*ml"))
    for workflow in workflows:
        text = workflow.read_text(encoding="utf-8")
        bom = "\ufeff" if text.startswith("\ufeff") else ""
        workflow.write_text(bom + "# moved\n" + text.removeprefix(bom), encoding="utf-8")
    assert run_cli("check", root, "--baseline", recorded, *everything).headers == []
    edited, line, column = _job_key_line(root)
    lines = edited.read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(line - 1, " " * (column - 1) + "timeout-minutes: soon\n")  # GitHub wants minutes, a number
    edited.write_text("".join(lines), encoding="utf-8")
    new = run_cli("check", root, "--baseline", recorded, *everything).headers
    assert len(new) == 1, new
