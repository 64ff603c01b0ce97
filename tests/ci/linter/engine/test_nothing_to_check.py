"""Nothing checked is not success: every path named on the command line must lead to a file some rule reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ci.linter.conftest import MakeRepo, run_cli

WORKFLOW = "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ok\n"
BROKEN = "on: push\njobs:\n  t:\n    runs-on: a\n    runs-on: b\n    steps:\n      - run: echo ok\n"


def test_a_project_with_its_own_github_folder_inside_another_repository_is_its_own_root(
    make_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    outer = make_repo({".github/workflows/outer.yml": WORKFLOW, "vendor/sub/.github/workflows/inner.yml": BROKEN})
    inner = outer / "vendor" / "sub"
    result = run_cli("check", inner)
    assert result.headers == [".github/workflows/inner.yml:5:5: CC011 duplicate key 'runs-on'"]
    monkeypatch.chdir(inner / ".github")
    result = run_cli("check")
    assert result.headers == [".github/workflows/inner.yml:5:5: CC011 duplicate key 'runs-on'"]
    monkeypatch.chdir(outer)
    assert run_cli("check", "--list-files").out == ".github/workflows/outer.yml\n"


@pytest.mark.parametrize(
    ("files", "named"),
    [
        ({}, "."),
        ({"README.md": "hello\n"}, "."),
        ({"README.md": "hello\n"}, "README.md"),
        ({"docs/a.md": "x\n"}, "docs"),
    ],
)
def test_a_named_path_with_nothing_to_check_is_a_warning_and_exit_2(
    make_repo: MakeRepo, files: dict[str, str], named: str
) -> None:
    root = make_repo(files)
    path = root / named if named != "." else root
    result = run_cli("check", path)
    assert result.code == 2
    assert result.err == (
        f"ci-checks: warning: {path}: nothing to check (no workflow or composite action, "
        "and no policy rule reads a file there); see --list-files\n"
    )


def test_files_no_rule_reads_are_skipped_when_asked_as_the_pre_commit_hook_does(make_repo: MakeRepo) -> None:
    root = make_repo({".github/workflows/ci.yml": WORKFLOW, "tools/x.py": "x = 1\n"})
    assert run_cli("check", root / "tools" / "x.py").code == 2
    result = run_cli("check", "--skip-unread-files", root / "tools" / "x.py", root / ".github" / "workflows" / "ci.yml")
    assert (result.code, result.err) == (0, "")
    assert result.out == "No problems found; 1 file checked.\n"


def test_a_file_a_policy_rule_reads_is_checked(make_repo: MakeRepo) -> None:
    policy = (
        "rules:\n  - id: no-curl\n    kind: forbid\n    where: {files: 'tools/*.sh'}\n    forbid: [{command: curl}]\n"
    )
    root = make_repo({".github/workflows/ci.yml": WORKFLOW, ".github/ci-checks.yml": policy, "tools/x.sh": "curl x\n"})
    result = run_cli("check", root / "tools" / "x.sh")
    assert result.headers == ["tools/x.sh:1:1: CC101 `curl` is forbidden here [no-curl]"]
    assert run_cli("check", "--list-files", root).out == ".github/workflows/ci.yml\ntools/x.sh\n"


def test_several_repositories_list_their_files_by_root(tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / name / ".git").mkdir(parents=True)
        (tmp_path / name / ".github" / "workflows").mkdir(parents=True)
        (tmp_path / name / ".github" / "workflows" / "ci.yml").write_text(WORKFLOW)
    result = run_cli("check", "--list-files", tmp_path / "a", tmp_path / "b")
    assert result.out.splitlines() == [str(tmp_path / name / ".github" / "workflows" / "ci.yml") for name in "ab"]


def test_a_repository_named_through_a_symbolic_link_is_checked(
    make_repo: MakeRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo({".github/workflows/ci.yml": BROKEN})
    link = tmp_path / "linked"
    link.symlink_to(root, target_is_directory=True)
    expected = [".github/workflows/ci.yml:5:5: CC011 duplicate key 'runs-on'"]
    result = run_cli("check", link)
    assert (result.code, result.headers, result.err) == (1, expected, "")
    monkeypatch.chdir(tmp_path)
    result = run_cli("check", "linked", "--list-files")
    assert (result.code, result.out, result.err) == (0, ".github/workflows/ci.yml\n", "")
    # A link to a folder inside the repository is still not followed.
    (root / "elsewhere").symlink_to(root / ".github", target_is_directory=True)
    result = run_cli("check", root / "elsewhere")
    assert result.code == 2 and result.headers == []
