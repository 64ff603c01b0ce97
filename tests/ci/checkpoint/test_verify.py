"""Verification against real damage, with the libraries' own loaders.

A checkpoint on disk with one flipped bit loads without any error from DCP or Megatron-Core;
only the bit-for-bit comparison finds it, and names the tensor. A checkpoint that cannot be
loaded (a data file gone, or a save's partial folder without its `.metadata`) is a reported
finding, not a crash: DCP raises a CheckpointException, which is a BaseException. An async backend
saves again through a stager that torch closed after its last stage.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="needs the checkpoint extra: pip install -e '.[checkpoint]'")

from torch.distributed.checkpoint.api import CheckpointException  # noqa: E402

from ci_checks_checkpoint import backends, commit, runtime, saving, state  # noqa: E402
from ci_checks_checkpoint.backends import Backends  # noqa: E402
from ci_checks_checkpoint.options import Deadline, installed  # noqa: E402

pytestmark = pytest.mark.checkpoint

BACKENDS = ["dcp-sync", "dcp-async-thread"] + (["megatron-async"] if installed("megatron.core") else [])


@pytest.fixture(scope="module")
def saver() -> Iterator[Backends]:
    """A one-rank process group in this process, as the harness starts without torchrun."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("MASTER_ADDR", raising=False)  # the harness may set it; put it back afterwards
        rt = runtime.start(60)
        backends = Backends(rt, threads=2, timeout_s=60, deadline=Deadline.after(600))
        try:
            yield backends
        finally:
            backends.close()
            runtime.stop()


def saved(saver: Backends, backend: str, root: Path) -> tuple[list[state.TensorSpec], Path]:
    specs = state.layout(1 << 20, 4, world_size=1)
    live = state.LiveState(specs, 5, 0, 1, saver.runtime.device)
    result = saving.save_and_commit(saver, backend, live, root, "ckpt")
    assert result.error is None and result.directory == root / "ckpt"
    return specs, result.directory


def storage_of(directory: Path, tensor: str) -> tuple[Path, int, int]:
    """Where the tensor's bytes are, found through the checkpoint's own index."""
    metadata = pickle.loads((directory / commit.METADATA).read_bytes())
    [where] = [info for index, info in metadata.storage_data.items() if index.fqn == tensor]
    return directory / where.relative_path, where.offset, where.length


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_flipped_bit_on_disk_is_found_and_named(backend: str, saver: Backends, tmp_path: Path) -> None:
    specs, directory = saved(saver, backend, tmp_path)
    expected = state.part_of(5, 0, 1)
    assert saving.load_and_compare(saver, backend, specs, directory, expected) == (True, None)

    victim = specs[2].name
    path, offset, length = storage_of(directory, victim)
    data = bytearray(path.read_bytes())
    data[offset + length // 2] ^= 0x01
    path.write_bytes(bytes(data))
    loaded, found = saving.load_and_compare(saver, backend, specs, directory, expected)
    assert loaded is True
    assert found is not None
    assert found.startswith(f"ckpt: tensor {victim!r} differs first at element ")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_checkpoint_whose_data_file_is_gone_is_a_finding_not_a_crash(
    backend: str, saver: Backends, tmp_path: Path
) -> None:
    specs, directory = saved(saver, backend, tmp_path)
    path, _, _ = storage_of(directory, specs[0].name)
    path.unlink()
    with pytest.raises(CheckpointException):  # what the harness used to let through as a traceback
        saver.load(backend, specs, directory)
    loaded, found = saving.load_and_compare(saver, backend, specs, directory, state.part_of(5, 0, 1))
    assert loaded is False
    assert found is not None and found.startswith("ckpt does not load: CheckpointException: ")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_partial_folder_without_its_metadata_fails_to_load(backend: str, saver: Backends, tmp_path: Path) -> None:
    specs, directory = saved(saver, backend, tmp_path)
    partial = directory.rename(tmp_path / f"ckpt{commit.PARTIAL_MARK}0000")
    (partial / commit.METADATA).unlink()
    loaded, found = saving.load_and_compare(saver, backend, specs, partial, state.part_of(5, 0, 1))
    assert loaded is False
    assert found is not None and found.startswith(f"{partial.name} does not load: ")


def test_a_save_into_an_existing_checkpoint_is_refused(saver: Backends, tmp_path: Path) -> None:
    specs = state.layout(1 << 20, 4, world_size=1)
    live = state.LiveState(specs, 5, 0, 1, saver.runtime.device)
    assert saving.save_and_commit(saver, "dcp-sync", live, tmp_path, "ckpt").error is None
    again = saving.save_and_commit(saver, "dcp-sync", live, tmp_path, "ckpt")
    assert again.directory is None
    assert again.error == f"commit failed: {tmp_path / 'ckpt'} already exists; a checkpoint is never saved over another"
    assert saving.load_and_compare(saver, "dcp-sync", specs, tmp_path / "ckpt", live.expected()) == (True, None)


def test_the_stager_of_an_async_backend_is_kept_from_one_save_to_the_next(saver: Backends, tmp_path: Path) -> None:
    assert backends.stagers_outlive_a_stage()  # the pinned torch keeps a stager usable after a stage
    saved(saver, "dcp-async-thread", tmp_path)
    kept = saver._stagers["dcp-async-thread"]
    (tmp_path / "again").mkdir()
    saved(saver, "dcp-async-thread", tmp_path / "again")
    assert saver._stagers["dcp-async-thread"] is kept


def test_an_async_backend_saves_again_where_torch_closes_the_stager_after_each_stage(
    saver: Backends, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """torch 2.11 closes a DefaultStager's copier at the end of each stage (pytorch/pytorch#183413), and the
    stager's next stage fails with `KeyError: <class 'type'>`; the pinned torch has the fix. A test double
    makes the pinned torch's stager close itself the same way: that failure cannot be produced with it."""
    from torch.distributed.checkpoint.staging import DefaultStager

    real_stage = DefaultStager._stage

    def stage_then_close(self: DefaultStager, state_dict: object, **kwargs: object) -> object:
        staged = real_stage(self, state_dict, **kwargs)  # type: ignore[arg-type]
        self._state_dict_stager.close()  # type: ignore[no-untyped-call]
        return staged

    monkeypatch.setattr(DefaultStager, "_stage", stage_then_close)
    backends.stagers_outlive_a_stage.cache_clear()
    try:
        assert backends.stagers_outlive_a_stage() is False
        for name in ("warm-up", "timed", "again"):
            (tmp_path / name).mkdir()
            specs, directory = saved(saver, "dcp-async-thread", tmp_path / name)
            expected = state.part_of(5, 0, 1)
            assert saving.load_and_compare(saver, "dcp-async-thread", specs, directory, expected) == (True, None)
    finally:
        monkeypatch.undo()
        backends.stagers_outlive_a_stage.cache_clear()
