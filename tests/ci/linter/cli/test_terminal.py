"""Terminal output: colour and a progress line on a terminal only, and never when NO_COLOR is set."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from tests.ci.linter.conftest import MakeRepo, run_cli

DUPLICATE = "on: push\njobs:\n  t:\n    runs-on: a\n    runs-on: b\n    steps:\n      - run: make\n"


def _on_a_terminal(*args: str | Path, environment: dict[str, str] | None = None) -> str:
    """What ci-checks writes to a real pseudo-terminal (standard output and error both)."""
    leader, follower = pty.openpty()
    env = {**os.environ, "CI_CHECKS_BACKENDS": "none", **(environment or {})}
    env.pop("CI", None)
    if "NO_COLOR" not in (environment or {}):
        env.pop("NO_COLOR", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "ci_checks.cli", *map(str, args)], stdout=follower, stderr=follower, env=env
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait(timeout=120)
    os.close(leader)
    return b"".join(chunks).decode("utf-8", "replace")


def test_colour_on_a_terminal_unless_no_color_and_never_in_a_pipe(make_repo: MakeRepo) -> None:
    root = make_repo({".github/workflows/ci.yml": DUPLICATE})
    coloured = _on_a_terminal("check", root)
    assert "\x1b[1;31mCC011\x1b[0m" in coloured
    assert "\x1b[" not in _on_a_terminal("check", root, environment={"NO_COLOR": "1"}).replace("\x1b[2K", "")
    assert "\x1b[" not in run_cli("check", root).out
    assert "\x1b[1;31mCC011\x1b[0m" in run_cli("check", root, "--color", "always").out


def test_a_progress_line_on_a_terminal_that_erases_itself(make_repo: MakeRepo) -> None:
    workflow = "on: push\njobs:\n" + "".join(
        f"  j{i}:\n    runs-on: a\n    steps:\n      - run: echo {i}\n" for i in range(300)
    )
    root = make_repo({f".github/workflows/w{n}.yml": workflow for n in range(40)})
    shown = _on_a_terminal("check", root)
    assert "\rci-checks: reading" in shown.replace("\x1b[2K", "")
    assert shown.rstrip().endswith("No problems found; 40 files checked.")
    piped = run_cli("check", root)
    assert "reading" not in piped.err and piped.err == ""
