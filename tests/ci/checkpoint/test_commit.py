"""Atomic commit on a real file system: a partial directory becomes a checkpoint only by rename."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_checks_checkpoint import commit

pytestmark = pytest.mark.checkpoint


def test_a_partial_becomes_a_checkpoint_only_when_committed(tmp_path: Path) -> None:
    partial = commit.fresh_partial(tmp_path, "ckpt-0001")
    (partial / "__0_0.distcp").write_bytes(b"data")
    (partial / commit.METADATA).write_bytes(b"index")
    assert commit.committed(tmp_path) == []
    assert commit.partials(tmp_path) == [partial]
    final = commit.commit(partial)
    assert final == tmp_path / "ckpt-0001"
    assert commit.committed(tmp_path) == [final]
    assert commit.partials(tmp_path) == []
    assert (final / "__0_0.distcp").read_bytes() == b"data"


def test_commit_never_replaces_a_checkpoint_not_even_an_empty_one(tmp_path: Path) -> None:
    (tmp_path / "ckpt").mkdir()
    partial = commit.fresh_partial(tmp_path, "ckpt")
    (partial / commit.METADATA).write_bytes(b"new")
    with pytest.raises(commit.CommitError, match="already exists"):
        commit.commit(partial)
    assert list((tmp_path / "ckpt").iterdir()) == []
    assert partial.is_dir()


def test_each_save_gets_its_own_partial_directory(tmp_path: Path) -> None:
    first, second = commit.fresh_partial(tmp_path, "ckpt"), commit.fresh_partial(tmp_path, "ckpt")
    assert first != second
    assert commit.final_name(first) == commit.final_name(second) == tmp_path / "ckpt"


def test_committed_lists_oldest_name_first(tmp_path: Path) -> None:
    for name in ("ckpt-0002", "ckpt-0000", "ckpt-0001"):
        commit.commit(commit.fresh_partial(tmp_path, name))
    assert [p.name for p in commit.committed(tmp_path)] == ["ckpt-0000", "ckpt-0001", "ckpt-0002"]


def test_names_that_look_partial_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="contains"):
        commit.fresh_partial(tmp_path, "a.partial-b")
    with pytest.raises(ValueError, match="not a partial"):
        commit.final_name(tmp_path / "ckpt")
