"""bench/server_edit.py times a server edit and a one-file command-line run, and prints the ratio of the two."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.ci.conftest import PROJECT


def test_the_benchmark_prints_the_edit_the_cli_run_and_their_ratio() -> None:
    result = subprocess.run(
        [sys.executable, str(PROJECT / "bench" / "server_edit.py"), "--repeat", "2", "--warmup", "0"],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("file: .github/workflows/gpu-tests.yml (2.4 kB)")
    assert re.fullmatch(r"edit re-check \(server, didChange to its diagnostics\): [0-9.]+ ms \(.+\)", lines[1])
    assert re.fullmatch(r"one-file CLI run \(ci-checks check .+ FILE\): [0-9.]+ ms \(.+\)", lines[2])
    assert re.fullmatch(r"ratio: [0-9.]+x the CLI run; goal <= 0.2x: (met|NOT met)", lines[3])
