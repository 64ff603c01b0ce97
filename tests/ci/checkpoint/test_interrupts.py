"""A run never hangs and never leaks: --timeout ends the whole process tree (the rank, Megatron-Core's
forked writer and the processes it forked, the result-queue manager, the resource tracker) and still
writes every report, naming the stage; SIGTERM and SIGINT end it likewise, with 143 or 130; a run
folder left by SIGKILL, with what was left of its processes, is removed by the next run in its place.
Every run is watched by an observer that is a child subreaper: what it lists as left is found by
parentage and by session, never by name. And torchrun is not a way in: the harness starts it itself.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

pytest.importorskip("torch", reason="needs the checkpoint extra: pip install -e '.[checkpoint]'")

from ci_checks_checkpoint import processes, runfolder
from ci_checks_checkpoint.options import installed
from tests.ci.checkpoint.run import PATCHES, Run, command, finish, harness_pid, run, signalled, start, wait_for
from tests.ci.conftest import PROJECT

pytestmark = [
    pytest.mark.checkpoint,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc"),
]
needs_megatron = pytest.mark.skipif(not installed("megatron.core"), reason="needs megatron-core")

SMALL = ["--size", "1MiB", "--tensors", "4"]
# Start-up (torch, Megatron-Core, the process group) took up to 9 s on two shared cores: the timeout leaves
# the hang itself more than half of it.
TIMEOUT_S = 20
# What ending a run may add to --timeout: the ranks' grace to stop by themselves (5 s), then killing and
# collecting every process, and writing the reports.
ENDING_S = 10


def run_folders(work: Path) -> list[Path]:
    return sorted(work.glob("ci-checks-checkpoint-*"))


@pytest.fixture(scope="module")
def hung(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Run, Path]]:
    """Two runs that hang until their --timeout, started together: most of their time is spent waiting."""
    started = {}
    if installed("megatron.core"):
        # Megatron-Core's forked writer hangs in the processes it forks; the rank notices at the deadline.
        tmp = tmp_path_factory.mktemp("hung-writer")
        (tmp / "work").mkdir()
        args = ["--backend", "megatron-async", *SMALL, "--timeout", str(TIMEOUT_S), "--workdir", str(tmp / "work")]
        args += ["--import", f"{PATCHES}.hung_writer", "--junit", str(tmp / "junit.xml")]
        started["writer"] = (tmp, start(tmp, *args, env={"GITHUB_STEP_SUMMARY": str(tmp / "summary.md")}))
    # The project's setup never returns and checks no deadline: the rank cannot stop by itself, and the
    # owner kills it, and the helpers the setup started, in their sessions and below them.
    tmp = tmp_path_factory.mktemp("hung-setup")
    args = ["--backend", "dcp-sync", *SMALL, "--timeout", str(TIMEOUT_S)]
    started["setup"] = (tmp, start(tmp, *args, "--setup", f"{PATCHES}.hung_setup:start_helpers_and_hang"))
    return {name: (finish(process, tmp, 300), tmp) for name, (tmp, process) in started.items()}


@pytest.mark.thorough  # waits out its --timeout
@needs_megatron
def test_a_writer_that_never_returns_ends_the_run_within_the_timeout_with_every_report(
    hung: dict[str, tuple[Run, Path]],
) -> None:
    outcome, tmp = hung["writer"]
    assert outcome.code == 1, outcome.stderr[-3000:]
    assert TIMEOUT_S <= outcome.wall_s <= TIMEOUT_S + ENDING_S
    outcome.assert_left_nothing_running()
    assert list((tmp / "work").iterdir()) == []
    [row] = [r for r in outcome.report["results"] if r["check"] == "timeout"]
    assert row["backend"] == "megatron-async" and row["passed"] is False
    assert row["detail"].startswith(f"--timeout {TIMEOUT_S} s reached during megatron-async warm-up save (rank 0, for ")
    verdict = outcome.report["verdict"]
    assert verdict == f"Verdict: TIMEOUT (exit 1): {row['detail']}" == outcome.stdout.splitlines()[-1]
    assert outcome.report["exit_code"] == 1
    assert outcome.report["platform"]["size_bytes"] == 1 << 20  # what the rank had said before it hung
    failure = ElementTree.parse(tmp / "junit.xml").getroot().find("testsuite/testcase/failure")
    assert failure is not None and failure.get("message") == row["detail"]
    assert f"**{verdict}**" in (tmp / "summary.md").read_text(encoding="utf-8")


@pytest.mark.thorough  # waits out its --timeout
def test_a_rank_that_cannot_stop_by_itself_is_killed_with_its_whole_tree(hung: dict[str, tuple[Run, Path]]) -> None:
    outcome, _ = hung["setup"]
    assert outcome.code == 1, outcome.stderr[-3000:]
    assert TIMEOUT_S <= outcome.wall_s <= TIMEOUT_S + ENDING_S
    outcome.assert_left_nothing_running()
    [row] = outcome.report["results"]
    assert (row["backend"], row["check"]) == ("run", "timeout")
    assert "reached during setup: the project's platform, modules and setup functions (rank 0, for " in row["detail"]
    # the rank, the setup's helper in its own session, and that helper's child
    assert int(row["detail"].rpartition("(")[2].split()[0]) >= 3


def test_sigterm_during_the_crash_test_ends_every_process_and_leaves_nothing(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    args = ["--backend", "dcp-sync", "--size", "4MiB", "--tensors", "4", "--crash-test", "1000", "--workdir", str(work)]

    def writing() -> bool:
        """The crash test's first checkpoint is committed and a writer is saving the next one."""
        return any(work.glob("*/saves/crash-*/checkpoints/ckpt-0000")) and any(
            work.glob("*/saves/crash-*/warm-up-ckpt-0*")
        )

    outcome = signalled(tmp_path, start(tmp_path, *args), writing, signal.SIGTERM)
    assert outcome.code == 143
    assert outcome.stdout == ""
    assert outcome.stderr.endswith(
        "ci-checks checkpoint: SIGTERM: every process of the run ended, run folder removed\n"
    )
    outcome.assert_left_nothing_running()
    assert list(work.iterdir()) == []


def test_sigint_during_the_saves_leaves_nothing(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    args = ["--backend", "dcp-sync", "dcp-async-process", "--size", "16MiB", "--workdir", str(work)]
    saving = lambda: any(work.glob("*/saves/*.partial-*"))  # noqa: E731
    outcome = signalled(tmp_path, start(tmp_path, *args), saving, signal.SIGINT)
    assert outcome.code == 130
    assert outcome.stderr.endswith("ci-checks checkpoint: SIGINT: every process of the run ended, run folder removed\n")
    outcome.assert_left_nothing_running()
    assert list(work.iterdir()) == []


@needs_megatron
def test_a_run_folder_left_by_sigkill_is_removed_by_the_next_run_with_its_processes(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    # The harness and its rank are killed at once, as the kernel's OOM killer or `kill -9` of the job would:
    # neither can clean up, and Megatron-Core's writer (hung) and its helpers live on.
    first = tmp_path / "first"
    first.mkdir()
    args = ["--backend", "megatron-async", *SMALL, "--workdir", str(work), "--import", f"{PATCHES}.hung_writer"]
    process = start(first, *args, report=False)
    try:
        harness = harness_pid(first, process)

        def hung() -> bool:
            return any(work.glob("*/saves/*.partial-*")) and len(processes.descendants(harness)) >= 4

        wait_for(hung, process, "Megatron-Core's writer to hang")
        [rank] = [pid for pid in processes.descendants(harness) if processes.table()[pid].parent == harness]
        for pid in (harness, rank):
            os.kill(pid, signal.SIGKILL)
        process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    left = json.loads((first / "observed.json").read_text(encoding="utf-8"))["left_below"]
    assert left, "nothing of the killed run lived on: nothing to test"
    [folder] = run_folders(work)
    second = tmp_path / "second"
    second.mkdir()
    outcome = run(second, "--backend", "dcp-sync", *SMALL, "--workdir", str(work))
    assert outcome.code == 0, outcome.stderr[-3000:]
    assert f"ci-checks checkpoint: removed {folder}, left by a killed run, and ended " in outcome.stderr
    assert outcome.report["cleanup"]["left_behind"] == [str(folder)]
    assert run_folders(work) == []


def test_a_stale_run_folder_never_makes_the_next_run_end_an_unrelated_process(tmp_path: Path) -> None:
    """The stale folder records the session of a process that is not the run's (a session id is a pid, reused
    once the run is gone): same boot, started after the run's owner, but without the run folder in its
    environment. The next run in the same place removes the folder and leaves that process alone."""
    work = tmp_path / "work"
    work.mkdir()
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, check=True)
    stale = runfolder.RunFolder.create(work, {})
    owner = dataclasses.replace(runfolder.Owner.this_process(), pid=int(finished.stdout))  # that process is gone
    (stale.path / "owner.json").write_text(json.dumps(dataclasses.asdict(owner)), encoding="utf-8")
    unrelated = subprocess.Popen(["sleep", "120"], start_new_session=True, env={"PATH": os.environ.get("PATH", "")})
    try:
        (stale.path / "sessions" / str(unrelated.pid)).touch()
        outcome = run(tmp_path, "--backend", "dcp-sync", *SMALL, "--workdir", str(work))
        assert outcome.code == 0, outcome.stderr[-3000:]
        assert f"ci-checks checkpoint: removed {stale.path}, left by a killed run, and ended 0 of its processes\n" in (
            outcome.stderr
        )
        assert unrelated.poll() is None
        assert run_folders(work) == []
    finally:
        unrelated.kill()
        unrelated.wait()


def test_a_rank_killed_mid_save_is_an_aborted_row_naming_the_rank_and_its_signal(tmp_path: Path) -> None:
    """Rank 1 receives SIGKILL in its save (tests/ci/checkpoint/patches/dying_rank.py); rank 0 fails next, in a
    collective, with gloo's "Connection reset by peer": that is the consequence, not the error of the run."""
    args = ["--backend", "dcp-sync", *SMALL, "--import", f"{PATCHES}.dying_rank"]
    outcome = run(tmp_path, *args, ranks=2)
    assert outcome.code == 1, outcome.stderr[-3000:]
    assert outcome.report["errors"] == []
    [row] = [r for r in outcome.report["results"] if r["check"] == "aborted"]
    assert (row["backend"], row["passed"]) == ("dcp-sync", False)
    assert row["detail"].startswith("rank 1 was killed by SIGKILL (pid ")
    # What rank 0 then said, when it said anything before torchrun ended it, follows as the consequence.
    assert " during dcp-sync warm-up save, without a report" in row["detail"]
    assert outcome.report["verdict"] == "Verdict: FAIL (exit 1): 1 of 1 checks failed: dcp-sync aborted"
    assert "exitcode  : -9" in outcome.stderr  # torchrun's own summary is still printed
    outcome.assert_left_nothing_running()


def test_a_workdir_whose_path_holds_url_characters_keeps_the_rendezvous_files_inside_the_run(tmp_path: Path) -> None:
    """The crash test's process groups meet at a file in the run folder; a `#`, `?` or `%` in the path must not
    move it (torch reads a file:// address's path up to a `#` or `?` and reads no %-escape)."""
    work = tmp_path / "run #1?x%41 y"
    work.mkdir()
    args = ["--backend", "dcp-sync", *SMALL, "--crash-test", "1", "--workdir", str(work)]
    outcome = run(tmp_path, *args)
    assert outcome.code == 0, outcome.stderr[-3000:]
    assert outcome.result("dcp-sync", "crash")["passed"] is True
    expected = {work.name, "observed.json", "observed.json.pid", "report.json"}
    assert {path.name for path in tmp_path.iterdir()} == expected
    assert list(work.iterdir()) == []


@needs_megatron
@pytest.mark.parametrize(
    ("setup", "died"),
    [
        ("in_writer", "Megatron-Core's writer process (pid "),
        ("in_bucket_writer", "a process Megatron-Core's writer forked to write a bucket (pid "),
    ],
)
def test_a_megatron_writer_killed_by_sigsegv_is_named_with_its_signal(tmp_path: Path, setup: str, died: str) -> None:
    """Today's symptom on ROCm: Megatron-Core's writer, or a process it forked, dies of SIGSEGV. Megatron-Core
    reports an empty results queue for the one, and waits forever for the other."""
    save_timeout_s = 120
    args = ["--backend", "megatron-async", *SMALL, "--save-timeout", str(save_timeout_s)]
    outcome = run(tmp_path, *args, "--setup", f"{PATCHES}.crashing_writer:{setup}")
    assert outcome.code == 1, outcome.stderr[-3000:]
    row = outcome.result("megatron-async", "save")
    assert row["passed"] is False
    assert f"rank 0: WriterDied: {died}" in row["detail"] and ") was killed by SIGSEGV during the save" in row["detail"]
    assert outcome.wall_s < save_timeout_s  # named when it died, not when the save's time was up
    outcome.assert_left_nothing_running()


def test_under_torchrun_it_says_once_to_use_nproc_per_node_and_every_rank_exits_2() -> None:
    launcher = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2"]
    result = subprocess.run(
        [*launcher, "-m", "ci_checks_checkpoint", "--size", "1MiB"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    message = (
        "ci-checks checkpoint: error: under torchrun: run ci-checks checkpoint --nproc-per-node N without torchrun; "
        "it starts torchrun itself, so that it can end every process of the run\n"
    )
    assert result.stderr.count(message) == 1
    # torchrun exits 1 whatever its ranks did; its summary gives the first rank's exit code
    assert result.returncode == 1
    assert "exitcode  : 2 (pid:" in result.stderr


def test_a_usage_error_is_said_once_whatever_the_number_of_ranks() -> None:
    result = subprocess.run(
        command("--size", "lots", ranks=2), cwd=PROJECT, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 2
    assert result.stderr == (
        "ci-checks checkpoint: error: argument --size: 'lots' is not a size such as 64MiB, 1GiB or 1000000\n"
    )
