"""bench/speed.py runs on a small folder of repositories and prints its whole table."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.ci.conftest import PROJECT

WORKFLOW = """\
on: [push]
permissions: {}
jobs:
  test:
    runs-on: ubuntu-latest
    timeout-minutes: 5
    steps:
      - uses: actions/checkout@08c6903cd8c0fde910a37f88322edcfb5dd907a8 # v5.0.0
        with: {persist-credentials: false}
      - run: echo $HOME
"""
ACTION = """\
name: setup
description: installs the project
runs:
  using: composite
  steps:
    - run: pip install -e .
      shell: bash
"""
COLUMNS = ["measurement", "command", "median wall", "range", "median CPU", "peak RSS", "ratio", "goal", "met"]
# The rows each measurement must have; a ratio and a goal on each ci-checks row the goals are about.
ROWS = [
    ("P1 own checks", "ci-checks", True),
    ("P1 own checks", "zizmor", False),
    ("P1 own checks", "check-jsonschema", False),
    ("P2 everything", "ci-checks", True),
    ("P2 everything", "actionlint + shellcheck", False),
    ("P3 one file", "ci-checks, first run", True),
    ("P3 one file", "ci-checks, file just edited", True),
    ("P3 one file", "ci-checks, file unchanged", True),
    ("P3 one file", "ci-checks --backends none", True),
    ("P3 one file", "actionlint", False),
    ("P3 one file", "zizmor", False),
    ("P4 re-check", "ci-checks cold (every repository)", False),
    ("P4 re-check", "ci-checks warm (every repository)", True),
    ("P4 re-check", "ci-checks cold (beta)", False),
    ("P4 re-check", "ci-checks warm (beta)", True),
    ("memory", "ci-checks, 1 copy", False),
    ("memory", "ci-checks, 2 copies", True),
    ("memory", "zizmor, 1 copy", False),
    ("memory", "zizmor, 2 copies", False),
]
_TIME = re.compile(r"\d+(\.\d+)? (ms|s)")


def test_speed_table_has_every_measurement(tmp_path: Path) -> None:
    folder = tmp_path / "repositories"
    files = {
        "alpha/.github/workflows/ci.yml": WORKFLOW,
        "alpha/.github/actions/setup/action.yml": ACTION,
        # The larger repository, which P4 also checks alone.
        "beta/.github/workflows/ci.yml": WORKFLOW,
        "beta/.github/workflows/nightly.yml": WORKFLOW.replace("[push]", "[workflow_dispatch]"),
        "beta/README.md": "not read\n",
    }
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)

    argv = [sys.executable, "bench/speed.py", str(folder), "--repeat", "1", "--warmup", "0", "--copies", "1,2"]
    result = subprocess.run(argv, cwd=PROJECT, capture_output=True, text=True, timeout=300, check=False)

    assert result.returncode == 0, result.stderr
    assert "2 repositories, 4 files: 3 workflows, 1 actions" in result.stdout
    assert re.search(r"machine: \d+ CPUs \(\d+ usable\); load average", result.stdout)
    lines = [line for line in result.stdout.splitlines() if line.startswith("|")]
    header, rule, *rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]
    assert header == COLUMNS
    assert all(set(cell) == {"-"} for cell in rule)
    assert [(row[0], row[1]) for row in rows] == [(measurement, command) for measurement, command, _ in ROWS]
    for row, (_, _, has_goal) in zip(rows, ROWS, strict=True):
        wall, spread, cpu, rss, ratio, goal, met = row[2:]
        assert _TIME.fullmatch(wall) and _TIME.fullmatch(cpu), row
        assert re.fullmatch(rf"{_TIME.pattern} - {_TIME.pattern}", spread), row
        assert re.fullmatch(r"\d+ MiB", rss) and rss != "0 MiB", row
        if has_goal:
            assert re.match(r"\d+\.\d\dx ", ratio), row
            assert goal.startswith("≤ "), row
            assert set(met.split("; ")) <= {"yes", "no"}, row
        else:
            assert goal == met == "—", row
    goals = {(row[0], row[1]): row[7] for row in rows}
    assert goals["P1 own checks", "ci-checks"] == "≤ 0.7x zizmor; ≤ 0.2x check-jsonschema"
    assert goals["P2 everything", "ci-checks"] == "≤ 0.45x actionlint + shellcheck"
    assert goals["P3 one file", "ci-checks --backends none"] == "≤ 100 ms"
    assert goals["P4 re-check", "ci-checks warm (beta)"] == "≤ 0.15x cold"
    assert goals["memory", "ci-checks, 2 copies"] == "≤ 2x zizmor at 1 copy (RSS)"
    assert "ci-checks check --config bench/speed-policy.yml --backends none --no-cache REPO..." in result.stdout
