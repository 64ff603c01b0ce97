"""The code-quality gates CI enforces: ruff over the project, mypy --strict over the package."""

from __future__ import annotations

import subprocess
import sys

from tests.ci.conftest import PROJECT


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=PROJECT, capture_output=True, text=True, check=False)


def test_ruff_finds_nothing() -> None:
    result = run("ruff", "check", "--no-cache", "ci_checks", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_applied() -> None:
    result = run("ruff", "format", "--no-cache", "--check", "ci_checks", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_finds_nothing() -> None:
    # Incremental, as a developer runs it before a commit: mypy's cache (.mypy_cache) answers for the modules
    # that did not change since (25 s of CPU from nothing, 2 s from that cache); a fresh checkout checks all.
    result = run("mypy", "--strict", "ci_checks")
    assert result.returncode == 0, result.stdout + result.stderr
