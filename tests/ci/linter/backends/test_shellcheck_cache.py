"""shellcheck's findings kept between runs, with the real shellcheck binary and a real SQLite file.

That a warm run starts no shellcheck at all is shown by giving it a time limit
no shellcheck process can meet: a run that started one reports CC091.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from ci_checks.backends import shellcheck, tools
from ci_checks.backends.cache import FILE_NAME, KEEP_DAYS, ResultCache
from ci_checks.backends.external import run_backends
from ci_checks.core.diagnostics import Diagnostic
from ci_checks.core.linters import BackendSettings
from ci_checks.core.repository import Repository
from ci_checks.model.loading import LoadedFile, Workspace
from tests.ci.linter.conftest import MakeRepo, run_cli

WORKFLOW = ".github/workflows/ci.yml"
SCRIPTS = """\
on: push
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - run: echo $one
      - run: |
          unused=1
          echo `date`
      - run: echo "clean"
      - shell: sh
        run: echo $one
"""


def _files(root: Path) -> list[LoadedFile]:
    repository = Repository(root)
    return [Workspace(repository).load(path) for path in repository.workflows]


def _shellcheck(root: Path, cache_folder: Path | None, timeout_s: float = 120.0) -> list[Diagnostic]:
    settings = BackendSettings(timeout_s=timeout_s, cache_folder=cache_folder)
    return run_backends(["shellcheck"], _files(root), root, settings)


def _counted_run(root: Path, cache_folder: Path, binary: str | None = None) -> tuple[list[Diagnostic], int, int]:
    """Findings of one run with a cache, and how many distinct scripts it found in the cache and how many not."""
    results = ResultCache(cache_folder)
    try:
        found = shellcheck.run(
            binary or tools.find_binary("shellcheck", None), _files(root), root, tools.TimeLimit(120), cache=results
        )
    finally:
        results.close()
    return found, results.hits, results.misses


def _codes(found: list[Diagnostic]) -> list[tuple[str, int, int]]:
    return [(d.code, d.span.line, d.span.column) for d in found]


def test_a_warm_cache_gives_the_same_findings_without_starting_shellcheck(make_repo: MakeRepo, tmp_path: Path) -> None:
    root = make_repo({WORKFLOW: SCRIPTS})
    uncached = _shellcheck(root, None)
    assert _codes(uncached) == [
        ("SC2086", 6, 19),
        ("SC2034", 8, 11),
        ("SC2005", 9, 16),
        ("SC2006", 9, 16),
        ("SC2046", 9, 16),
        ("SC2086", 12, 19),
    ]
    assert _shellcheck(root, tmp_path / "cache") == uncached
    assert _shellcheck(root, tmp_path / "cache", timeout_s=0.001) == uncached
    # The same tiny limit with nothing cached has to start shellcheck, and fails.
    assert [d.code for d in _shellcheck(root, tmp_path / "empty", timeout_s=0.001)] == ["CC091"]


def test_only_a_changed_script_is_checked_again(make_repo: MakeRepo, tmp_path: Path) -> None:
    root = make_repo({WORKFLOW: SCRIPTS})
    assert _counted_run(root, tmp_path / "cache")[1:] == (0, 4)
    (root / WORKFLOW).write_text(SCRIPTS.replace('echo "clean"', "echo $changed"), encoding="utf-8")
    found, hits, misses = _counted_run(root, tmp_path / "cache")
    assert (hits, misses) == (3, 1)
    assert ("SC2086", 10, 19) in _codes(found)
    # The same script under another shell is another input to shellcheck.
    (root / WORKFLOW).write_text(SCRIPTS.replace("shell: sh", "shell: dash"), encoding="utf-8")
    assert _counted_run(root, tmp_path / "cache")[1:] == (3, 1)


def test_another_shellcheck_binary_does_not_read_the_findings_of_the_first(make_repo: MakeRepo, tmp_path: Path) -> None:
    root = make_repo({WORKFLOW: SCRIPTS})
    first, _, _ = _counted_run(root, tmp_path / "cache")
    copy = tmp_path / "bin" / "shellcheck"
    copy.parent.mkdir()
    shutil.copy2(tools.find_binary("shellcheck", None), copy)
    copy.touch()  # a newer build at the same path would differ in its modification time as well
    found, hits, misses = _counted_run(root, tmp_path / "cache", binary=str(copy))
    assert (hits, misses, found) == (0, 4, first)


def test_a_damaged_row_is_a_miss_and_is_written_again(make_repo: MakeRepo, tmp_path: Path) -> None:
    root = make_repo({WORKFLOW: SCRIPTS})
    first, _, _ = _counted_run(root, tmp_path / "cache")
    database = sqlite3.connect(tmp_path / "cache" / FILE_NAME)
    with database:
        keys = [key for (key,) in database.execute("SELECT key FROM results ORDER BY key")]
        database.execute("UPDATE results SET value = 'not json' WHERE key = ?", (keys[0],))
        database.execute("UPDATE results SET value = '[[1, 2]]' WHERE key = ?", (keys[1],))
    database.close()
    assert _counted_run(root, tmp_path / "cache") == (first, 2, 2)
    assert _counted_run(root, tmp_path / "cache") == (first, 4, 0)


@pytest.mark.parametrize("damage", ["folder is a file", "file is not a database", "file is a folder"])
def test_a_cache_that_cannot_be_used_changes_no_finding(make_repo: MakeRepo, tmp_path: Path, damage: str) -> None:
    root = make_repo({WORKFLOW: SCRIPTS})
    folder = tmp_path / "cache"
    if damage == "folder is a file":
        folder.write_text("a file where the folder should be\n")
    else:
        folder.mkdir()
        if damage == "file is not a database":
            (folder / FILE_NAME).write_bytes(b"\x00not sqlite\n" * 100)
        else:
            (folder / FILE_NAME).mkdir()
    assert _shellcheck(root, folder) == _shellcheck(root, None) != []


def test_rows_unused_for_a_month_are_dropped_when_others_are_written(tmp_path: Path) -> None:
    results = ResultCache(tmp_path)
    results.put({"old": "[]", "read": "[]", "recent": "[]"})
    results.close()
    database = sqlite3.connect(tmp_path / FILE_NAME)
    with database:
        (today,) = database.execute("SELECT MAX(used) FROM results").fetchone()
        database.execute("UPDATE results SET used = ? WHERE key IN ('old', 'read')", (today - KEEP_DAYS - 1,))
        database.execute("UPDATE results SET used = ? WHERE key = 'recent'", (today - KEEP_DAYS + 1,))
    database.close()
    results = ResultCache(tmp_path)
    assert results.get(["read", "missing"], str) == {"read": "[]"}
    results.put({"new": "[]"})
    assert results.get(["old", "read", "recent", "new"], str) == {"read": "[]", "recent": "[]", "new": "[]"}
    results.close()


def test_the_command_line_chooses_the_cache_folder(
    make_repo: MakeRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo({WORKFLOW: SCRIPTS})
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("CI_CHECKS_CACHE_DIR", raising=False)
    assert run_cli("check", root, "--backends", "shellcheck").code == 1
    assert (tmp_path / "xdg" / "ci-checks" / FILE_NAME).is_file()

    monkeypatch.setenv("CI_CHECKS_CACHE_DIR", str(tmp_path / "from-env"))
    assert run_cli("check", root, "--backends", "shellcheck").code == 1
    assert (tmp_path / "from-env" / FILE_NAME).is_file()

    assert run_cli("check", root, "--backends", "shellcheck", "--cache-dir", tmp_path / "option").code == 1
    assert (tmp_path / "option" / FILE_NAME).is_file()

    monkeypatch.setenv("CI_CHECKS_CACHE_DIR", str(tmp_path / "not-used"))
    with_cache = run_cli("check", root, "--backends", "shellcheck", "--cache-dir", tmp_path / "option")
    without = run_cli("check", root, "--backends", "shellcheck", "--no-cache")
    assert (without.code, without.out) == (with_cache.code, with_cache.out)
    assert not (tmp_path / "not-used").exists()

    both = run_cli("check", root, "--no-cache", "--cache-dir", tmp_path / "option")
    assert both.code == 2
    assert "not allowed with argument" in both.err


def test_a_cache_another_run_is_writing_still_serves_its_rows(make_repo: MakeRepo, tmp_path: Path) -> None:
    root = make_repo({WORKFLOW: SCRIPTS})
    first, _, _ = _counted_run(root, tmp_path / "cache")
    writer = sqlite3.connect(tmp_path / "cache" / FILE_NAME, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # what another run holds while it writes; readers may still read
    try:
        assert _counted_run(root, tmp_path / "cache") == (first, 4, 0)
    finally:
        writer.execute("ROLLBACK")
        writer.close()


@pytest.mark.parametrize("inside", ["cache", ".git/cache", "."])
def test_a_cache_folder_inside_the_checked_repository_is_refused(
    make_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch, inside: str
) -> None:
    root = make_repo({WORKFLOW: SCRIPTS})
    result = run_cli("check", root, "--backends", "shellcheck", "--cache-dir", root / inside)
    assert result.code == 2
    assert "is inside the checked repository, where a pull request could plant findings" in result.err
    assert not (root / inside / FILE_NAME).exists()
    monkeypatch.setenv("CI_CHECKS_CACHE_DIR", str(root / inside))
    assert run_cli("check", root, "--backends", "shellcheck").code == 2
    # Every run keeps its findings there, not only shellcheck's: the folder is refused whatever runs.
    assert run_cli("check", root, "--backends", "none").code == 2
    monkeypatch.delenv("CI_CHECKS_CACHE_DIR")
    assert run_cli("check", root, "--backends", "none", "--no-cache").code == 0


def test_options_from_the_environment_are_part_of_the_key(
    make_repo: MakeRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo({WORKFLOW: SCRIPTS})
    first, _, _ = _counted_run(root, tmp_path / "cache")
    monkeypatch.setenv("SHELLCHECK_OPTS", "--exclude=SC2086")
    found, hits, misses = _counted_run(root, tmp_path / "cache")
    assert (hits, misses) == (0, 4)
    assert [d for d in first if d.code != "SC2086"] == found != first
