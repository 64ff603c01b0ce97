"""What the machine does not give the run is reported with the path, and every report is written: a full
disk (a real small tmpfs, mounted in a mount namespace of the run's own, filled by a setup of the run
as another job would fill it; where no tmpfs can be mounted, a real limit on file size, RLIMIT_FSIZE),
a folder the run may not write (as an unprivileged user: root writes through permissions) and a
--size no disk or memory here holds.
"""

from __future__ import annotations

import io
import json
import os
import resource
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from xml.etree import ElementTree

import pytest

pytest.importorskip("torch", reason="needs the checkpoint extra: pip install -e '.[checkpoint]'")

from ci_checks_checkpoint import main, supervisor
from tests.ci.checkpoint.run import PATCHES, Run, command, finish, observed
from tests.ci.conftest import PROJECT
from tests.ci.linter.hostile import open_folder, unprivileged

pytestmark = [
    pytest.mark.checkpoint,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc"),
]

TMPFS = "16m"
FILE_LIMIT = 2 << 20
SMALL = ["--backend", "dcp-sync", "--size", "8MiB", "--tensors", "4"]
# `$0` is the mount point, the rest the command to run once the tmpfs is mounted there.
_MOUNT = 'mount -t tmpfs -o size={size} tmpfs "$0" && exec "$@"'


def _in_namespace() -> list[str]:
    """unshare: a mount namespace of the run's own, as root or (elsewhere) as root of a user namespace."""
    private = ["unshare", "--mount", "--propagation", "private"]
    return private if os.geteuid() == 0 else ["unshare", "--user", "--map-root-user", "--mount"]


@pytest.fixture(scope="module")
def tmpfs() -> bool:
    """Whether a tmpfs can be mounted here; CI runners that forbid user namespaces fall back to RLIMIT_FSIZE."""
    if shutil.which("unshare") is None:
        return False
    with tempfile.TemporaryDirectory() as folder:
        probe = [*_in_namespace(), "sh", "-c", _MOUNT.format(size="1m"), folder, "true"]
        return subprocess.run(probe, capture_output=True, check=False).returncode == 0


def disk_full_run(tmp: Path, tmpfs: bool, *args: str) -> Run:
    """The harness with its workdir on a full disk: a 16 MiB tmpfs that the run's own setup fills, or (without
    one) a 2 MiB limit on the size of any file it writes."""
    work = tmp / "work"
    work.mkdir()
    harness = command(*args, "--workdir", str(work), "--report-json", str(tmp / "report.json"))
    harness += ["--junit", str(tmp / "junit.xml")]
    watched = observed(tmp / "observed.json", harness)
    if tmpfs:
        launched = [*_in_namespace(), "sh", "-c", _MOUNT.format(size=TMPFS), str(work), *watched]
        limit = None
    else:
        launched = watched
        limit = lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT, FILE_LIMIT))  # noqa: E731
    process = subprocess.Popen(  # the limit is set in the child before it runs anything: no thread there
        launched,
        cwd=PROJECT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=limit,  # noqa: PLW1509
    )
    outcome = finish(process, tmp, 600)
    assert list(work.iterdir()) == []
    return outcome


def assert_reported(outcome: Run, tmp: Path, problem: str) -> None:
    """Exit 2, the problem and its path in every report, no traceback, nothing left running."""
    assert outcome.code == 2, outcome.stderr[-3000:]
    assert "Traceback" not in outcome.stderr
    assert problem in outcome.report["errors"][0]
    assert outcome.report["verdict"].startswith("Verdict: ERROR (exit 2): ")
    assert f"ci-checks checkpoint: error: {outcome.report['errors'][0]}\n" in outcome.stderr
    suite = ElementTree.parse(tmp / "junit.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("errors") == str(len(outcome.report["errors"]))
    outcome.assert_left_nothing_running()


def test_a_disk_that_fills_up_is_reported_with_the_path_and_every_report(tmp_path: Path, tmpfs: bool) -> None:
    setup = ["--setup", f"{PATCHES}.fill_disk:fill"] if tmpfs else []
    outcome = disk_full_run(tmp_path, tmpfs, *SMALL, *setup)
    problem = "No space left on device" if tmpfs else "File too large"
    assert_reported(outcome, tmp_path, problem)
    [error] = outcome.report["errors"]
    # the stage, the file and the folder it was written into, with its file system and free space
    assert error.startswith("rank 0 during references: raw write + fsync, device-to-host copy: ")
    assert f"{tmp_path / 'work'}/ci-checks-checkpoint-" in error and "/saves/raw-write-" in error
    assert ("(tmpfs at " if tmpfs else " (") in error and " MiB free)" in error


def test_a_disk_that_fills_up_in_the_crash_test_names_the_path_not_an_exit_code(tmp_path: Path, tmpfs: bool) -> None:
    if not tmpfs:
        pytest.skip("needs a tmpfs: a limit on file size fails the references first")
    args = [*SMALL, "--crash-test", "1", "--setup", f"{PATCHES}.fill_disk:fill_in_crash_writers"]
    outcome = disk_full_run(tmp_path, tmpfs, *args)
    assert_reported(outcome, tmp_path, "No space left on device")
    assert outcome.result("dcp-sync", "verify")["passed"] is True  # the saves before the crash test went through
    crashed = outcome.result("dcp-sync", "crash")
    assert crashed["passed"] is False
    assert crashed["detail"].startswith("crash test could not run: writer rank 0 failed: ")
    assert "No space left on device" in crashed["detail"] and "exited with code" not in crashed["detail"]
    assert f"{tmp_path / 'work'}/ci-checks-checkpoint-" in crashed["detail"]


@pytest.fixture
def unprivileged_folders() -> Iterator[Path]:
    """A folder anyone may enter, with `reports/` anyone may write and `read-only/` nobody may."""
    with open_folder() as base:
        (base / "reports").mkdir(mode=0o777)
        (base / "reports").chmod(0o777)
        (base / "read-only").mkdir(mode=0o555)
        yield base


def test_a_read_only_workdir_is_reported_with_the_path_and_every_report(unprivileged_folders: Path) -> None:
    reports, read_only = unprivileged_folders / "reports", unprivileged_folders / "read-only"
    args = [
        "--workdir",
        str(read_only),
        "--report-json",
        str(reports / "report.json"),
        "--junit",
        str(reports / "j.xml"),
    ]
    out, err = io.StringIO(), io.StringIO()
    # In this process, as the run fails before it starts a rank: everything the command needs is imported first.
    supervisor.visible_gpus()
    with unprivileged():
        code = main(args, out=out, err=err)
    assert code == 2, err.getvalue()
    problem = f"cannot make the run folder in {read_only} ("
    assert err.getvalue().startswith(f"ci-checks checkpoint: error: {problem}")
    assert err.getvalue().rstrip().endswith("MiB free): Permission denied")
    assert out.getvalue().splitlines()[-1].startswith(f"Verdict: ERROR (exit 2): {problem}")
    document = json.loads((reports / "report.json").read_text(encoding="utf-8"))
    assert document["errors"][0].startswith(problem) and document["exit_code"] == 2
    assert document["platform"]["workdir"] == str(read_only)
    suite = ElementTree.parse(reports / "j.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("errors") == "1"
    assert list(read_only.iterdir()) == []


def test_a_size_no_disk_here_holds_is_reported_before_anything_is_allocated(tmp_path: Path) -> None:
    args = ["--size", "100000GiB", "--workdir", str(tmp_path), "--report-json", str(tmp_path / "report.json")]
    result = subprocess.run(command(*args), cwd=PROJECT, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 2, result.stderr
    message = f"--size 100000.0 GiB: the run keeps a checkpoint of that size on disk, in {tmp_path} ("
    assert result.stderr.startswith(f"ci-checks checkpoint: error: {message}")
    assert " MiB free)" in result.stderr or " GiB free)" in result.stderr
    document = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert document["errors"][0].startswith(message)
    assert document["platform"]["size_bytes"] == 100000 << 30
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]
