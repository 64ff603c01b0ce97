"""The code-quality gates CI enforces: ruff over the project, mypy --strict over the package and the linter's tests.

The checkpoint harness and its tests need torch to be checked: their gate is `tests/ci/checkpoint/test_quality.py`.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.ci.conftest import PROJECT

TESTS_PYTHON = "3.11"
"""The Python the tests are checked for: they need 3.11 or later, while the package runs on 3.10 and is checked
for it (pyproject's `[tool.mypy]`)."""


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=PROJECT, capture_output=True, text=True, check=False)


HARNESS_FOLLOWED_SILENTLY = """
[[tool.mypy.overrides]]
module = ["ci_checks_checkpoint", "ci_checks_checkpoint.*"]
follow_imports = "silent"
"""
"""What the linter's gate adds to pyproject's mypy configuration: the command line reaches the checkpoint harness,
which needs torch to be checked, and the linter's tests run without torch; the harness's own gate checks it."""


@pytest.fixture
def linter_config(tmp_path: Path) -> str:
    """pyproject.toml with the harness followed silently, as a mypy `--config-file`."""
    config = tmp_path / "pyproject.toml"
    config.write_text((PROJECT / "pyproject.toml").read_text(encoding="utf-8") + HARNESS_FOLLOWED_SILENTLY)
    return str(config)


def test_ruff_finds_nothing() -> None:
    result = run("ruff", "check", "--no-cache", "ci_checks", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_applied() -> None:
    result = run("ruff", "format", "--no-cache", "--check", "ci_checks", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_finds_nothing(linter_config: str) -> None:
    # Incremental, as a developer runs it before a commit: mypy's cache (.mypy_cache) answers for the modules
    # that did not change since (25 s of CPU from nothing, 2 s from that cache); a fresh checkout checks all.
    result = run("mypy", "--config-file", linter_config, "--strict", "ci_checks")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_finds_nothing_in_the_linters_tests(linter_config: str) -> None:
    # Checked for another Python than the package, so with a cache of its own: the first run checks the package
    # again, as the tests import it.
    result = run(
        "mypy",
        "--config-file",
        linter_config,
        "--strict",
        "--python-version",
        TESTS_PYTHON,
        "tests/ci/linter",
        "tests/ci/conftest.py",
        "tests/ci/expectations.py",
    )
    assert result.returncode == 0, result.stdout + result.stderr
