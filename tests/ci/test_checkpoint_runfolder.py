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

import pytest

from ci_checks.checkpoint import processes, runfolder
from ci_checks.checkpoint.runfolder import Owner, RunFolder

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


def test_a_folder_left_behind_is_removed_with_the_processes_of_its_sessions(tmp_path: Path) -> None:
    left = RunFolder.create(tmp_path, {})
    owned_by(left, dataclasses.replace(Owner.this_process(), pid=2**22 + 1))
    helper = subprocess.Popen(["sleep", "60"], start_new_session=True)  # a session of the run's, recorded
    try:
        (left.path / "sessions" / str(helper.pid)).touch()
        [(path, ended)] = runfolder.remove_left_behind(tmp_path)
        assert (path, ended) == (left.path, 1)
        assert helper.wait(timeout=10) == -9
        assert not left.path.exists()
    finally:
        helper.kill()
        helper.wait()


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
