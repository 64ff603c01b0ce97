"""`--new-since REF`: only findings on lines a change touched, judged against the git objects of REF."""

from __future__ import annotations

import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_checks.core.config_source import GitRef
from ci_checks.engine import changes
from ci_checks.syntax import line_diff
from ci_checks.syntax.line_diff import changed_lines
from tests.ci.linter.conftest import run_cli

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


def test_past_its_bound_the_diff_counts_every_line_between_the_differences_as_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
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


def test_a_baseline_read_from_the_config_ref_says_so_when_that_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
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


def _repository(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "repo"
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "base")
    return root


_OVER_TWO_LINES = """on: push
permissions: {}
jobs:
  t:
    runs-on: ubuntu-latest
    timeout-minutes: 5
    steps:
      - run: |
          echo "::set-output \\
          name=a::1"
"""


def test_a_finding_over_lines_is_new_when_its_last_line_changed(tmp_path: Path) -> None:
    """The base has the same finding (same first line, same message): only the changed line tells it is new."""
    root = _repository(tmp_path, {".github/workflows/ci.yml": _OVER_TWO_LINES})
    (root / ".github/workflows/ci.yml").write_text(_OVER_TWO_LINES.replace("name=a::1", "name=b::1"))
    result = run_cli("check", root, "--new-since", "main")
    assert [h.split(" `")[0] for h in result.headers] == [".github/workflows/ci.yml:9:11: CC031"]
    (root / ".github/workflows/ci.yml").write_text(_OVER_TWO_LINES + "      - run: echo ok\n")
    assert run_cli("check", root, "--new-since", "main").headers == []


def test_a_file_named_on_the_command_line_is_compared_with_its_base(tmp_path: Path) -> None:
    """Under a hidden folder, the file is checked only because it is named: the base is checked the same way."""
    root = _repository(tmp_path, {".hidden/ci.yml": WORKFLOW})
    (root / ".hidden/ci.yml").write_text("# a new first line\n" + WORKFLOW)
    result = run_cli("check", root / ".hidden/ci.yml", "--new-since", "main")
    assert (result.code, result.headers, result.err) == (0, [], "")
    assert [h.split(" `")[0] for h in run_cli("check", root / ".hidden/ci.yml").headers] == [
        ".hidden/ci.yml:9:14: CC031"
    ]


def test_a_linter_that_failed_is_reported_whatever_the_base_says(tmp_path: Path) -> None:
    """zizmor cannot read a job with a key twice, then and now: its failure (CC091) is kept all the same."""
    unreadable = WORKFLOW.replace("timeout-minutes: 5", "timeout-minutes: 5\n    timeout-minutes: 6")
    root = _repository(tmp_path, {".github/workflows/ci.yml": unreadable})
    (root / ".github/workflows/ci.yml").write_text(unreadable.replace("echo ok", "echo fine"))
    result = run_cli("check", root, "--new-since", "main", "--backends", "zizmor", "--select", "CC09,ZZ")
    assert [h.split(" ")[:2] for h in result.headers] == [[".github/workflows/ci.yml:1:1:", "CC091"]]


def test_a_ref_that_names_no_commit_is_an_error_when_there_is_no_finding(tmp_path: Path) -> None:
    root = _repository(tmp_path, {".github/workflows/ci.yml": WORKFLOW.replace('"::set-output name=a::1"', "hi")})
    assert run_cli("check", root, "--new-since", "main").code == 0
    result = run_cli("check", root, "--new-since", "no-such-branch")
    assert (result.code, result.err) == (
        2,
        f"ci-checks: error: --new-since 'no-such-branch' names no commit of the repository at {root}\n",
    )


def test_a_base_whose_files_git_cannot_read_keeps_every_finding_and_says_why(tmp_path: Path) -> None:
    root = _repository(tmp_path, {".github/workflows/ci.yml": WORKFLOW, "README.md": "read me\n"})
    blob = subprocess.run(
        ["git", "rev-parse", "main:README.md"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.strip()
    (root / ".git" / "objects" / blob[:2] / blob[2:]).unlink()  # a repository with an object missing
    (root / "README.md").write_text("read me\n")
    result = run_cli("check", root, "--new-since", "main")
    assert [h.split(" `")[0] for h in result.headers] == [".github/workflows/ci.yml:8:14: CC031"]
    assert (
        result.err
        == f"ci-checks: note: --new-since main: --new-since 'main': git has no blob {blob}; every finding is reported\n"
    )


# --- writing the base's files ---------------------------------------------------------------------------------


def _object(root: Path, content: bytes) -> str:
    return (
        subprocess.run(
            ["git", "hash-object", "-w", "--stdin"], cwd=root, input=content, capture_output=True, check=True
        )
        .stdout.decode()
        .strip()
    )


def _tree(root: Path, *entries: tuple[str, str, str]) -> str:
    """A tree object made as written, (mode, object, name) each: `git mktree` takes what git itself would refuse."""
    listing = "".join(
        f"{mode} {'tree' if mode == '040000' else 'commit' if mode == '160000' else 'blob'} {oid}\t{name}\n"
        for mode, oid, name in entries
    )
    return (
        subprocess.run(
            ["git", "mktree", "--missing"], cwd=root, input=listing.encode(), capture_output=True, check=True
        )
        .stdout.decode()
        .strip()
    )


def _written(
    tmp_path: Path, tree: str, max_bytes: int = 1 << 20, wanted: Callable[[str], bool] = lambda relative: True
) -> Path:
    root = tmp_path / "repo"
    commit = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@e", "commit-tree", tree, "-m", "base"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    base = tmp_path / "base"
    git_ref = GitRef(root, commit, option="--new-since")
    try:
        changes.write_tree(git_ref, base, max_bytes, wanted)
    finally:
        git_ref.close()
    return base


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q")
    return root


def test_the_base_is_written_as_the_commit_has_it(tmp_path: Path, repo: Path) -> None:
    exact = bytes(range(256)) * 4
    tree = _tree(
        repo,
        ("100644", _object(repo, b"on: push\n"), "ci.yml"),
        ("100755", _object(repo, exact), "exact.bin"),
        ("100644", _object(repo, b"x" * 1025), "large.bin"),
        ("120000", _object(repo, b"ci.yml"), "link.yml"),
        ("160000", "1" * 40, "submodule"),
        ("100644", _object(repo, b"not asked for\n"), "README.md"),
    )
    base = _written(tmp_path, tree, max_bytes=len(exact), wanted=lambda relative: relative != "README.md")
    assert sorted(path.name for path in base.iterdir()) == [
        ".git",
        "ci.yml",
        "exact.bin",
        "large.bin",
        "link.yml",
        "submodule",
    ]
    assert (base / ".git").is_dir() and (base / "submodule").is_dir()
    assert (base / "ci.yml").read_bytes() == b"on: push\n"
    assert (base / "exact.bin").read_bytes() == exact  # as large as may be read: read
    assert (base / "large.bin").read_bytes() == b"\0" * 1025  # larger: its size only, as it is too large either way
    assert (base / "link.yml").readlink() == Path("ci.yml")
    assert {stat.S_IMODE((base / name).stat().st_mode) for name in ("ci.yml", "exact.bin", "large.bin")} == {0o600}


def test_a_tree_git_would_refuse_writes_nothing_outside_the_base_and_the_first_of_a_name_stands(
    tmp_path: Path, repo: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "kept").write_text("mine\n")
    hi = _object(repo, b"hi\n")
    tree = _tree(
        repo,
        ("120000", _object(repo, str(outside).encode()), "d"),  # a link, then a folder of the same name
        ("040000", _tree(repo, ("100644", hi, "x")), "d"),
        ("100644", hi, "f"),  # a file, then a folder of the same name
        ("040000", _tree(repo, ("100644", hi, "y")), "f"),
        ("120000", _object(repo, str(outside / "kept").encode()), "k"),  # a link, then a file of the same name
        ("100644", hi, "k"),
        ("160000", "1" * 40, "s"),  # a submodule twice
        ("160000", "2" * 40, "s"),
        ("100644", hi, ".."),
        ("100644", hi, ".GIT"),
        ("040000", _tree(repo, ("100644", hi, "config")), ".git"),
    )
    base = _written(tmp_path, tree)
    assert sorted(path.name for path in outside.iterdir()) == ["kept"]
    assert (outside / "kept").read_text() == "mine\n"
    assert sorted(path.name for path in base.iterdir()) == [".git", "d", "f", "k", "s"]
    assert (base / "d").readlink() == outside and (base / "k").readlink() == outside / "kept"
    assert (base / "f").read_bytes() == b"hi\n" and (base / "s").is_dir()
    assert list((base / ".git").iterdir()) == []


@pytest.mark.parametrize(
    ("relative", "safe"),
    [
        ("ci.yml", True),
        (".github/workflows/ci.yml", True),
        ("a/.gitignore", True),
        ("", False),
        ("/etc/passwd", False),
        ("a//b", False),
        ("a/./b", False),
        ("a/../b", False),
        ("..", False),
        (".git/config", False),
        ("a/.Git/hooks/x", False),
    ],
)
def test_a_path_of_the_base_is_written_only_inside_it_and_never_into_git(relative: str, safe: bool) -> None:
    assert changes._safe(relative) is safe


@pytest.mark.parametrize("more", [False, True])
def test_the_base_is_written_up_to_its_limits(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch, more: bool
) -> None:
    monkeypatch.setattr(changes, "MAX_FILES", 2)
    monkeypatch.setattr(changes, "MAX_BYTES", 1 << 20)
    entries = [("100644", _object(repo, b"a" * (1 << 19)), "a"), ("100644", _object(repo, b"b" * (1 << 19)), "b")]
    assert _written(tmp_path, _tree(repo, *entries), max_bytes=2 << 20).is_dir()
    extra = ("100644", _object(repo, b"c"), "c")
    with pytest.raises(changes.BaseUnavailable) as raised:
        if more:
            _written(tmp_path, _tree(repo, *entries, extra))
        else:
            _written(
                tmp_path,
                _tree(repo, entries[0], ("100644", _object(repo, b"b" * ((1 << 19) + 1)), "b")),
                max_bytes=2 << 20,
            )
    assert str(raised.value) == (
        "its 3 files are more than the 2 that are checked"
        if more
        else "its files are larger than the 1 MiB that are checked"
    )


def test_once_the_runs_budget_is_spent_the_lines_between_differences_count_as_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run's comparisons draw on one budget (`Budget()` of the run, here made empty): past it a file's findings
    between its first and last change are kept, as the exact diff is not known."""
    root = _repository(tmp_path, {".github/workflows/ci.yml": WORKFLOW})
    first = WORKFLOW.replace("    steps:\n", "    steps:\n      # first\n")
    (root / ".github/workflows/ci.yml").write_text(first.replace("      - run: echo ok\n", "      # last\n"))
    assert run_cli("check", root, "--new-since", "main").headers == []
    monkeypatch.setattr(changes, "Budget", lambda: line_diff.Budget(0))
    result = run_cli("check", root, "--new-since", "main")
    assert [h.split(" `")[0] for h in result.headers] == [".github/workflows/ci.yml:9:14: CC031"]
