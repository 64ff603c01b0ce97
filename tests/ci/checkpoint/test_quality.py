"""The checkpoint harness's code-quality gate: mypy --strict over the harness and its tests, which need torch
(and read Megatron-Core's modules untyped, where it is installed)."""

from __future__ import annotations

import pytest

pytest.importorskip("torch", reason="needs the checkpoint extra: pip install -e '.[checkpoint]'")

from tests.ci.linter.project.test_quality import TESTS_PYTHON, run


def test_mypy_strict_finds_nothing_in_the_harness() -> None:
    result = run("mypy", "--strict", "ci_checks_checkpoint")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_finds_nothing_in_the_harness_tests() -> None:
    result = run("mypy", "--strict", "--python-version", TESTS_PYTHON, "tests/ci/checkpoint")
    assert result.returncode == 0, result.stdout + result.stderr
