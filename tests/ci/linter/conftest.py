"""The linter's test helpers: run the real CLI in-process, and build small repositories on disk."""

from __future__ import annotations

import io
import os
import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

import pytest

from ci_checks.cli import main as cli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
"""The fixtures: golden ones (`err/`, `ok/`), repositories of the corpus, policies (see `tests/ci/expectations.py`)."""

MakeRepo: TypeAlias = Callable[[Mapping[str, str | bytes]], Path]
"""What the `make_repo` fixture gives: write files (path in the repository → text or bytes), get the repository's
root."""


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def headers(self) -> list[str]:
        """The `path:line:col: CODE message` lines of text output."""
        return [line for line in self.out.splitlines() if _is_header(line)]


def _is_header(line: str) -> bool:
    head, _, rest = line.partition(": ")
    parts = head.rsplit(":", 2)
    return bool(rest) and len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit()


def run_cli(*args: str | Path) -> Result:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([str(a) for a in args], out=out, err=err)
    return Result(code, out.getvalue(), err.getvalue())


@pytest.fixture(autouse=True, scope="session")
def caches_built_by_the_mutant_under_test() -> None:
    """Mutation testing (scripts/mutation.py) runs each mutant's tests in a process forked after the unmutated
    code filled ci-checks' caches (the configuration schema, the schema validators): a mutant in a cached
    function would never run, and survive. Its caches are emptied before the mutant's first test, so that they
    are built again by the mutant."""
    if os.environ.get("MUTANT_UNDER_TEST", "") not in ("", "stats", "fail", "list_all_tests", "mutant_generation"):
        empty_caches()


@pytest.fixture(autouse=True)
def caches_built_by_each_test_while_mutmut_maps_them() -> None:
    """While mutmut records which tests call each function ("stats"), a cached function is called by the first
    test that needs it only, and a mutant of it would be run with that test alone: each test starts with the
    caches empty, so that every test that needs one is recorded."""
    if os.environ.get("MUTANT_UNDER_TEST") == "stats":
        empty_caches()


def empty_caches() -> None:
    """Empty every `functools.cache` of ci-checks' loaded modules."""
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("ci_checks"):
            for value in list(vars(module).values()):
                clear = getattr(value, "cache_clear", None)
                if callable(clear):
                    clear()


@pytest.fixture(autouse=True)
def no_external_linters_unless_asked(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Tests see ci-checks' own findings only; the ones about linters ask for them with `--backends`.

    Each test keeps the findings of its runs in a cache of its own, outside any folder it checks, so that none
    reads what another test left.
    """
    monkeypatch.setenv("CI_CHECKS_BACKENDS", "none")
    monkeypatch.setenv("CI_CHECKS_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


@pytest.fixture
def make_repo(tmp_path: Path) -> MakeRepo:
    """Write files (text or bytes) into a fresh repository folder with a `.git` marker."""

    def make(files: Mapping[str, str | bytes]) -> Path:
        root = tmp_path / "repo"
        (root / ".git").mkdir(parents=True, exist_ok=True)
        for name, content in files.items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
        return root

    return make


def is_repository_fixture(folder: Path) -> bool:
    """A fixture that is a whole repository: a folder with a `.github` of its own."""
    return folder.is_dir() and (folder / ".github").is_dir()


def copy_repository(fixture: Path, into: Path) -> Path:
    """A copy of a repository fixture with the `.git` marker a checkout has (git keeps none in the fixture)."""
    root = into / fixture.name
    shutil.copytree(fixture, root, symlinks=True)
    (root / ".git").mkdir()
    return root
