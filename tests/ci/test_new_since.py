"""`--new-since REF`: only findings on lines a change touched, judged against the git objects of REF."""

from __future__ import annotations

import subprocess
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ci_checks import line_diff
from ci_checks.line_diff import changed_lines
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


def _longest_common(a: list[str], b: list[str]) -> int:
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) - 1, -1, -1):
        for j in range(len(b) - 1, -1, -1):
            table[i][j] = table[i + 1][j + 1] + 1 if a[i] == b[j] else max(table[i + 1][j], table[i][j + 1])
    return table[0][0]


_LINES = st.lists(st.sampled_from(["a", "b", "c", "# x", ""]), max_size=24)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(_LINES, _LINES)
def test_the_changed_lines_are_those_of_a_shortest_edit(before: list[str], after: list[str]) -> None:
    changed = changed_lines("".join(f"{line}\n" for line in before), "".join(f"{line}\n" for line in after))
    assert all(1 <= line <= len(after) + 1 for line in changed)
    kept = [line for index, line in enumerate(after, 1) if index not in changed]
    remaining = iter(before)
    assert all(any(line == old for old in remaining) for line in kept)  # what is left unchanged was there
    # Every line not in a longest common subsequence is changed, and at most one line per line added or removed.
    common = _longest_common(before, after)
    assert sum(1 for index in changed if index <= len(after)) >= len(after) - common
    assert len(changed) <= len(before) + len(after) - 2 * common


def test_past_its_bound_the_diff_counts_every_line_between_the_differences_as_changed(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(line_diff, "MAX_STEPS", 50)
    before = "head\n" + "# x\n" * 100 + "tail\n"
    after = "head\n" + "# x\n# y\n" * 50 + "tail\n"
    bounded = changed_lines(before, after)
    assert bounded == set(range(3, 102))  # the first and last lines, and the first `# x`, are the same
    monkeypatch.setattr(line_diff, "MAX_STEPS", 1_000_000)
    assert set(range(3, 102, 2)) <= changed_lines(before, after) < bounded  # each `# y` line, and fewer


def test_the_comparisons_of_one_run_share_a_budget() -> None:
    before, after = "head\n" + "# x\n" * 50 + "tail\n", "head\n" + "# x\n# y\n" * 25 + "tail\n"
    budget = line_diff.Budget(100)
    told_apart = changed_lines(before, after, budget)
    assert told_apart < set(range(2, 52)) and budget.steps < 100
    spent = line_diff.Budget(0)
    assert changed_lines(before, after, spent) == set(range(3, 52))  # nothing left: the span between differences


def test_errors_about_the_new_since_ref_name_new_since_not_config_ref(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / ".github" / "workflows" / "ci.yml").write_text(WORKFLOW)
    result = run_cli("check", root, "--new-since", "main")
    assert (result.code, result.err) == (
        2,
        f"ci-checks: error: --new-since needs a git repository; {root} has no .git\n",
    )
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "base")
    result = run_cli("check", root, "--new-since", "no-such-branch")
    assert (result.code, result.err) == (
        2,
        f"ci-checks: error: --new-since 'no-such-branch' names no commit of the repository at {root}\n",
    )
    # With both options, each names its own.
    result = run_cli("check", root, "--new-since", "no-such-branch", "--config-ref", "main")
    assert result.err == f"ci-checks: error: --new-since 'no-such-branch' names no commit of the repository at {root}\n"


def test_a_baseline_read_from_the_config_ref_says_so_when_that_fails(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The baseline lies in another checkout (the working directory's), where the ref names no commit."""
    root = tmp_path / "repo"
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / ".github" / "workflows" / "ci.yml").write_text(WORKFLOW)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "base")
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    _git(elsewhere, "init", "-q", "-b", "trunk")
    (elsewhere / "baseline.json").write_text('{"version": 1, "findings": []}\n')
    _git(elsewhere, "add", ".")
    _git(elsewhere, "commit", "-q", "-m", "baseline")
    monkeypatch.chdir(elsewhere)
    result = run_cli("check", root, "--config-ref", "main", "--baseline", "baseline.json")
    assert (result.code, result.err) == (
        2,
        "ci-checks: error: --baseline baseline.json, read from the commit --config-ref names: "
        f"--config-ref 'main' names no commit of the repository at {elsewhere}\n",
    )
