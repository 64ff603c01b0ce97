"""Running the checkpoint harness as a user does: a fresh interpreter, reports on disk, and an observer
(tests/ci/checkpoint/observer.py) that says which processes the run left alive, found by parentage and
by session, never by name."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.ci.conftest import PROJECT

PATCHES = "tests.ci.checkpoint.patches"
WORKAROUND = "ci_checks_checkpoint.examples.rocm_workaround"  # the seed's workaround, which the GPU script runs too
PROBE = PROJECT / "tests" / "ci" / "checkpoint" / "probe"
OBSERVER = PROJECT / "tests" / "ci" / "checkpoint" / "observer.py"
BACKENDS_ALL = ["dcp-sync", "dcp-async-thread", "dcp-async-process", "megatron-async"]
SHARED_MEMORY = Path("/dev/shm")


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str
    report: dict[str, Any]
    wall_s: float = 0.0
    left_below: list[str] = field(default_factory=list)  # processes left below the run, any session
    left_in_session: list[str] = field(default_factory=list)  # processes left in the run's session
    pids_seen: list[int] = field(default_factory=list)

    def result(self, backend: str, check: str) -> dict[str, Any]:
        found: dict[str, Any]
        [found] = [r for r in self.report["results"] if r["backend"] == backend and r["check"] == check]
        return found

    def shared_memory_left(self) -> list[Path]:
        return [path for pid in self.pids_seen for path in SHARED_MEMORY.glob(f"torch_{pid}_*")]

    def assert_left_nothing_running(self) -> None:
        assert (self.left_below, self.left_in_session) == ([], []), self.stderr[-3000:]
        assert self.shared_memory_left() == []


def command(*args: str, ranks: int = 0, prelude: str = "") -> list[str]:
    """The harness's command line; `prelude` runs first in its interpreter (to make a package absent there)."""
    if ranks:
        args = ("--nproc-per-node", str(ranks), *args)
    code = f"import sys\n{prelude}\nfrom ci_checks_checkpoint import main\nif __name__ == '__main__':\n"
    return [sys.executable, "-c", code + "    sys.exit(main(sys.argv[1:]))\n", *args]


def observed(result: Path, harness: list[str]) -> list[str]:
    return [sys.executable, str(OBSERVER), str(result), "--", *harness]


def finish(process: subprocess.Popen[str], tmp: Path, timeout: float) -> Run:
    stdout, stderr = process.communicate(timeout=timeout)
    seen = json.loads((tmp / "observed.json").read_text(encoding="utf-8"))
    report = tmp / "report.json"
    document = json.loads(report.read_text(encoding="utf-8")) if report.exists() else {}
    return Run(
        seen["code"], stdout, stderr, document, seen["wall_s"], seen["left_below"], seen["left_in_session"],
        seen["pids_seen"],
    )  # fmt: skip


def start(
    tmp: Path, *args: str, ranks: int = 0, env: dict[str, str] | None = None, prelude: str = "", report: bool = True
) -> subprocess.Popen[str]:
    """The harness, observed, started and not waited for; its report goes to tmp/report.json."""
    reported = ("--report-json", str(tmp / "report.json")) if report else ()
    return subprocess.Popen(
        observed(tmp / "observed.json", command(*args, *reported, ranks=ranks, prelude=prelude)),
        cwd=PROJECT,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run(
    tmp: Path,
    *args: str,
    ranks: int = 0,
    env: dict[str, str] | None = None,
    prelude: str = "",
    report: bool = True,
    timeout: float = 600,
) -> Run:
    return finish(start(tmp, *args, ranks=ranks, env=env, prelude=prelude, report=report), tmp, timeout)


def harness_pid(tmp: Path, process: subprocess.Popen[str]) -> int:
    pid_file = tmp / "observed.json.pid"
    wait_for(pid_file.exists, process, "the harness to start")
    return int(pid_file.read_text(encoding="utf-8"))


def wait_for(condition: Callable[[], bool], process: subprocess.Popen[str], what: str) -> None:
    deadline = time.monotonic() + 180
    while not condition():
        assert process.poll() is None, f"the run ended before {what}: {process.communicate()}"
        assert time.monotonic() < deadline, f"no {what} within 180 s"
        time.sleep(0.05)


def signalled(tmp: Path, process: subprocess.Popen[str], ready: Callable[[], bool], signum: int) -> Run:
    """Send `signum` to the harness once `ready()`, and the run as it ended."""
    try:
        pid = harness_pid(tmp, process)
        wait_for(ready, process, "the moment to signal")
        os.kill(pid, signum)
        return finish(process, tmp, 120)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
            process.communicate()
