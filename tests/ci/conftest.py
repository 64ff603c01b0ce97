"""What every test of ci-checks shares: where the project is, and the thorough runs.

The linter's tests (`linter/`) and the checkpoint harness's (`checkpoint/`) each have helpers of their own in
their folder's `conftest.py`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]


# --- thorough: the long runs, behind `--thorough` or CI_CHECKS_THOROUGH=1 (which .ci/run sets) -------------------

THOROUGH = "CI_CHECKS_THOROUGH"
"""The environment variable that turns on the thorough tests: `1` (or `--thorough`, which sets it for the run)."""


def thorough() -> bool:
    """Whether this run is thorough: tests marked `thorough` run, and property-based tests take their thorough
    profile (more examples) unless their own variable chooses one."""
    return os.environ.get(THOROUGH, "") not in ("", "0")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--thorough",
        action="store_true",
        help=f"also run the tests marked thorough, and the property-based tests' thorough profiles ({THOROUGH}=1)",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("thorough", False):
        os.environ[THOROUGH] = "1"  # for the modules collected next, and the processes the tests start


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if thorough():
        return
    skip = pytest.mark.skip(reason=f"thorough: runs with --thorough or {THOROUGH}=1, as .ci/run sets")
    for item in items:
        if item.get_closest_marker("thorough") is not None:
            item.add_marker(skip)
