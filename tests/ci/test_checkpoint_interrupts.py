"""SIGTERM (what `timeout` and a cancelled job send) and SIGINT end a run cleanly: the writers it
started are gone, its folder and shared memory removed, the exit code 143 or 130. And under
torchrun a usage error is said once, by rank 0, and every rank exits 2.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="needs the checkpoint extra: pip install -e '.[checkpoint]'")

from tests.ci.checkpoint_run import command
from tests.ci.conftest import PROJECT

pytestmark = [
    pytest.mark.checkpoint,
    pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc"),
]


def marked(mark: str) -> list[int]:
    """The live processes whose environment carries `mark`: every one the run started inherits it."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if mark.encode() in (entry / "environ").read_bytes():
                stat = (entry / "stat").read_text(encoding="utf-8", errors="replace")
                if stat.rpartition(")")[2].split()[0] != "Z":
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


def wait_for(condition: Callable[[], bool], process: subprocess.Popen[str], what: str) -> None:
    deadline = time.monotonic() + 120
    while not condition():
        assert process.poll() is None, f"the run ended before {what}: {process.communicate()}"
        assert time.monotonic() < deadline, f"no {what} within 120 s"
        time.sleep(0.05)


def interrupted(tmp_path: Path, args: list[str], ready: Callable[[Path], bool], signum: int) -> tuple[int, str, str]:
    work = tmp_path / "work"
    work.mkdir()
    mark = f"CI_CHECKS_TEST_RUN={uuid.uuid4().hex}"
    name, _, value = mark.partition("=")
    process = subprocess.Popen(
        command(*args, "--workdir", str(work)),
        cwd=PROJECT,
        env={**os.environ, name: value},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: ready(work), process, "the moment to interrupt")
        started = marked(mark)
        process.send_signal(signum)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    deadline = time.monotonic() + 10  # SIGKILLed processes are gone once reaped
    while marked(mark) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert marked(mark) == []
    assert list(work.iterdir()) == []
    assert [path for pid in started for path in Path("/dev/shm").glob(f"torch_{pid}_*")] == []
    return process.returncode, stdout, stderr


def a_committed_checkpoint_and_a_writer(work: Path) -> bool:
    """The crash test's first checkpoint is committed and a writer is saving the next one."""
    return any(work.glob("*/crash-*/checkpoints/ckpt-0000")) and any(work.glob("*/crash-*/warm-up-ckpt-0*"))


@pytest.mark.thorough  # a crash test of up to 1000 kills, stopped once one is under way
def test_sigterm_during_the_crash_test_ends_its_writers_and_leaves_nothing(tmp_path: Path) -> None:
    args = ["--backend", "dcp-sync", "--size", "4MiB", "--tensors", "4", "--crash-test", "1000"]
    code, stdout, stderr = interrupted(tmp_path, args, a_committed_checkpoint_and_a_writer, signal.SIGTERM)
    assert code == 143
    assert stdout == ""
    assert stderr.endswith("ci-checks checkpoint: SIGTERM: writers ended, run folder removed\n")


def test_sigint_during_the_saves_leaves_nothing(tmp_path: Path) -> None:
    args = ["--backend", "dcp-sync", "dcp-async-process", "--size", "16MiB"]
    code, _, stderr = interrupted(tmp_path, args, lambda work: any(work.glob("*/*.partial-*")), signal.SIGINT)
    assert code == 130
    assert stderr.endswith("ci-checks checkpoint: SIGINT: writers ended, run folder removed\n")


def test_under_torchrun_a_usage_error_is_said_once_and_every_rank_exits_2() -> None:
    result = subprocess.run(
        command("--size", "lots", torchrun=2), cwd=PROJECT, capture_output=True, text=True, timeout=120, check=False
    )
    message = "ci-checks checkpoint: error: argument --size: 'lots' is not a size such as 64MiB, 1GiB or 1000000\n"
    assert result.stderr.count(message) == 1
    # torchrun exits 1 whatever its ranks did; its summary gives the first rank's exit code
    assert result.returncode == 1
    assert "exitcode  : 2 (pid:" in result.stderr
