"""`--new-since REF`: only findings on lines a change touched, judged against the git objects of REF."""

from __future__ import annotations

import subprocess
from pathlib import Path

from ci_checks.changes import changed_lines
from tests.ci.conftest import run_cli

WORKFLOW = """on: push
permissions: {}
jobs:
  t:
    runs-on: ubuntu-latest
    timeout-minutes: 5
    steps:
      - run: echo "::set-output name=a::1"
      - run: echo ok
"""


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@e", "-c", "commit.gpgsign=false", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


def test_only_findings_on_changed_lines_are_reported(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".github" / "workflows").mkdir(parents=True)
    workflow = root / ".github" / "workflows" / "ci.yml"
    workflow.write_text(WORKFLOW)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "base")
    assert [h.split(" `")[0] for h in run_cli("check", root).headers] == [".github/workflows/ci.yml:8:14: CC031"]
    changed = WORKFLOW.replace("echo ok", 'echo "::set-output name=b::2"')
    workflow.write_text("# a new first line\n" + changed)
    result = run_cli("check", root, "--new-since", "main")
    assert [h.split(" `")[0] for h in result.headers] == [".github/workflows/ci.yml:10:14: CC031"]
    (root / ".github" / "workflows" / "new.yml").write_text(WORKFLOW)
    result = run_cli("check", root, "--new-since", "main")
    assert [h.split(" `")[0] for h in result.headers] == [
        ".github/workflows/ci.yml:10:14: CC031",
        ".github/workflows/new.yml:8:14: CC031",
    ]
    result = run_cli("check", root, "--new-since", "no-such-branch")
    assert result.code == 2 and "no-such-branch" in result.err


def test_changed_lines_count_insertions_replacements_and_the_line_after_a_removal() -> None:
    assert changed_lines("a\nb\nc\n", "a\nB\nc\nd\n") == {2, 4}
    assert changed_lines("a\nb\nc\n", "a\nc\n") == {2}
    assert changed_lines("a\n", "a\n") == set()
