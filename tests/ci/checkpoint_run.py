"""Running the checkpoint harness as a user does: a fresh interpreter, or torchrun, reports on disk."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.ci.conftest import PROJECT

PATCHES = "tests.ci.checkpoint_patches"
PROBE = PROJECT / "tests" / "ci" / "checkpoint_probe"
BACKENDS_ALL = ["dcp-sync", "dcp-async-thread", "dcp-async-process", "megatron-async"]


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str
    report: dict[str, Any]

    def result(self, backend: str, check: str) -> dict[str, Any]:
        [found] = [r for r in self.report["results"] if r["backend"] == backend and r["check"] == check]
        return found


def command(*args: str, torchrun: int = 0, prelude: str = "") -> list[str]:
    if torchrun:
        launcher = ["-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={torchrun}"]
        return [sys.executable, *launcher, "-m", "ci_checks.checkpoint", *args]
    code = f"import sys\n{prelude}\nfrom ci_checks.checkpoint import main\nif __name__ == '__main__':\n"
    return [sys.executable, "-c", code + "    sys.exit(main(sys.argv[1:]))\n", *args]


def run(tmp: Path, *args: str, torchrun: int = 0, env: dict[str, str] | None = None, prelude: str = "") -> Run:
    report = tmp / "report.json"
    environment = {**os.environ, **(env or {})}
    result = subprocess.run(
        command(*args, "--report-json", str(report), torchrun=torchrun, prelude=prelude),
        cwd=PROJECT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    document = json.loads(report.read_text(encoding="utf-8")) if report.exists() else {}
    return Run(result.returncode, result.stdout, result.stderr, document)
