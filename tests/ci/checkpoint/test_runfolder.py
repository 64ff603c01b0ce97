"""The run folder and the processes of a run, found by parentage and by session: what a run that was killed
left is told from what a live run (here, or on another host sharing the folder) is using."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ci_checks_checkpoint import processes, runfolder
from ci_checks_checkpoint.runfolder import Owner, RunFolder
from tests.ci.conftest import PROJECT

pytestmark = [
    pytest.mark.checkpoint,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc"),
]


def owned_by(folder: RunFolder, owner: Owner) -> None:
    (folder.path / "owner.json").write_text(json.dumps(dataclasses.asdict(owner)), encoding="utf-8")


def test_only_the_folders_of_owners_that_are_gone_are_left_behind(tmp_path: Path) -> None:
    mine = RunFolder.create(tmp_path, {})
    gone, elsewhere, reused = (RunFolder.create(tmp_path, {}) for _ in range(3))
    me = Owner.this_process()
    finished = subprocess.run(
        [sys.executable, "-c", "print(__import__('os').getpid())"], capture_output=True, check=True
    )
    owned_by(gone, dataclasses.replace(me, pid=int(finished.stdout)))  # that process has exited
    owned_by(elsewhere, dataclasses.replace(me, pid=int(finished.stdout), host="another-host"))
    owned_by(reused, dataclasses.replace(me, started=me.started + 1))  # this pid, but not this process
    (tmp_path / "ci-checks-checkpoint-not-a-run").mkdir()  # no owner.json: not the harness's
    assert sorted(f.path for f in runfolder.left_behind(tmp_path)) == sorted([gone.path, reused.path])
    assert Owner.this_process().alive and mine.owner() == me


def stale(parent: Path, **recorded: Any) -> RunFolder:
    """A run folder left by a run that was killed: its owner (a pid no process has) is gone."""
    left = RunFolder.create(parent, {})
    owned_by(left, dataclasses.replace(Owner.this_process(), pid=2**22 + 1, **recorded))
    return left


def in_a_session(environment: dict[str, str]) -> subprocess.Popen[bytes]:
    """A process that leads a session of its own, as a rank does; its environment is `environment` only."""
    return subprocess.Popen(["sleep", "60"], start_new_session=True, env=environment)


def test_a_folder_left_behind_is_removed_with_the_processes_of_its_sessions(tmp_path: Path) -> None:
    left = stale(tmp_path)
    helper = in_a_session({runfolder.ENVIRONMENT: str(left.path)})  # a process of that run, in a recorded session
    try:
        (left.path / "sessions" / str(helper.pid)).touch()
        [(path, ended)] = runfolder.remove_left_behind(tmp_path)
        assert (path, ended) == (left.path, 1)
        assert helper.wait(timeout=10) == -9
        assert not left.path.exists()
    finally:
        helper.kill()
        helper.wait()


def test_a_process_that_took_over_a_recorded_session_id_is_never_ended(tmp_path: Path) -> None:
    """A session id is a pid: once the run is gone, an unrelated process may lead a session of that id, and may
    have started after the run did. Without the run folder in its environment it is not the run's."""
    left = stale(tmp_path)
    unrelated = in_a_session({"PATH": os.environ.get("PATH", "")})
    in_another_run = in_a_session({runfolder.ENVIRONMENT: str(tmp_path / "ci-checks-checkpoint-another")})
    try:
        for process in (unrelated, in_another_run):
            (left.path / "sessions" / str(process.pid)).touch()
        assert runfolder.remove_left_behind(tmp_path) == [(left.path, 0)]
        assert not left.path.exists()
        assert unrelated.poll() is None and in_another_run.poll() is None
    finally:
        for process in (unrelated, in_another_run):
            process.kill()
            process.wait()


def test_a_folder_of_another_boot_is_removed_and_no_process_is_ended(tmp_path: Path) -> None:
    """In another boot the recorded pids, start times and sessions are those of unrelated processes, whatever
    their environment holds."""
    left = stale(tmp_path, boot="00000000-0000-0000-0000-000000000000")
    helper = in_a_session({runfolder.ENVIRONMENT: str(left.path)})
    try:
        (left.path / "sessions" / str(helper.pid)).touch()
        assert runfolder.remove_left_behind(tmp_path) == [(left.path, 0)]
        assert not left.path.exists() and helper.poll() is None
    finally:
        helper.kill()
        helper.wait()


# Removes a run folder as a run does, in a process of its own, and is cut short there: killed with SIGKILL (as
# the OOM killer or `kill -9` of the job would) in the middle of it ("middle") or as it would remove the emptied
# folder itself ("last", owner.json already gone), or held in the middle until its input ends ("held").
_REMOVER = """
import os, pathlib, shutil, signal, sys
from pathlib import Path
from ci_checks_checkpoint.runfolder import RunFolder

folder = RunFolder.create(Path(sys.argv[1]), {})
(folder.saves / "checkpoint").write_bytes(bytes(1 << 20))
remove_tree, remove_folder = shutil.rmtree, pathlib.Path.rmdir

def in_the_middle(path, *args, **kwargs):
    if ".removing" in str(path):
        if sys.argv[2] == "middle":
            os.kill(os.getpid(), signal.SIGKILL)
        print(folder.path, flush=True)
        sys.stdin.read()
    return remove_tree(path, *args, **kwargs)

def last(path):
    if path.name.endswith(".removing"):
        os.kill(os.getpid(), signal.SIGKILL)
    return remove_folder(path)

if sys.argv[2] == "last":
    pathlib.Path.rmdir = last
else:
    shutil.rmtree = in_the_middle
folder.remove()
"""


def remover(parent: Path, how: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _REMOVER, str(parent), how], cwd=PROJECT, stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip


@pytest.mark.parametrize("where", ["middle", "last"])
def test_a_removal_cut_short_by_sigkill_is_finished_by_the_next_run_and_a_live_one_is_left_alone(
    tmp_path: Path, where: str
) -> None:
    killed = remover(tmp_path, where)
    assert killed.wait(timeout=60) == -9
    [cut_short] = tmp_path.glob(".ci-checks-checkpoint-*.removing")
    if where == "middle":
        assert (cut_short / "saves" / "checkpoint").exists()  # what a kill there leaves: the data, hidden
    else:
        assert list(cut_short.iterdir()) == []  # nothing says whose it was any more
    removing = remover(tmp_path, "held")  # a run at the same time, in the same place, removing its folder
    try:
        assert removing.stdout is not None and removing.stdout.readline()
        [live] = set(tmp_path.glob(".ci-checks-checkpoint-*.removing")) - {cut_short}
        assert runfolder.remove_left_behind(tmp_path) == [(cut_short, 0)]
        assert not cut_short.exists()
        assert (live / "owner.json").exists() and (live / "saves" / "checkpoint").exists()
    finally:
        removing.kill()
        removing.communicate()
    # Its owner gone now, the live run's removal is one cut short too.
    assert runfolder.remove_left_behind(tmp_path) == [(live, 0)]
    assert list(tmp_path.iterdir()) == []


def test_a_long_path_gets_a_short_tmpdir_that_goes_with_the_folder(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 60)
    deep.mkdir()
    folder = RunFolder.create(deep, {})
    assert folder.tmp.parent != folder.path and len(str(folder.tmp)) <= 107 - 33 - 8
    assert folder.tmp.is_dir()
    folder.remove()
    assert not folder.tmp.exists() and not folder.path.exists()


def test_descendants_and_session_members_are_found_without_names() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", "import subprocess, sys; subprocess.run(['sleep', '60'])"], start_new_session=True
    )
    try:
        found: list[int] = []
        for _ in range(200):
            found = processes.descendants(os.getpid())
            if len(found) >= 2:
                break
            time.sleep(0.05)  # the grandchild is being started
        assert child.pid in found and len(found) == 2
        assert set(processes.members([child.pid], since=0)) == set(found)
        assert processes.members([child.pid], since=processes.ticks_now() + 10**6) == []  # started before `since`
        assert sorted(processes.end(lambda: processes.tree(child.pid))) == sorted(found)
    finally:
        child.kill()
        child.wait()
