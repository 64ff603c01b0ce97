"""Verification against real damage: a checkpoint on disk with one flipped bit loads without any
error from DCP or Megatron-Core; only the bit-for-bit comparison finds it, and names the tensor."""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="needs the checkpoint extra: pip install -e '.[checkpoint]'")

from ci_checks.checkpoint import commit, runtime, saving, state  # noqa: E402
from ci_checks.checkpoint.backends import Backends  # noqa: E402
from ci_checks.checkpoint.options import installed  # noqa: E402

pytestmark = pytest.mark.checkpoint

BACKENDS = ["dcp-sync", "dcp-async-thread"] + (["megatron-async"] if installed("megatron.core") else [])


@pytest.fixture(scope="module")
def saver() -> Iterator[Backends]:
    """A one-rank process group in this process, as the harness starts without torchrun."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("MASTER_ADDR", raising=False)  # the harness may set it; put it back afterwards
        rt = runtime.start(60)
        try:
            yield Backends(rt, threads=2, timeout_s=60)
        finally:
            runtime.stop()


def flip_one_bit_in(directory: Path, tensor: str) -> None:
    """In the middle of the tensor's bytes, found through the checkpoint's own index."""
    metadata = pickle.loads((directory / commit.METADATA).read_bytes())
    [where] = [info for index, info in metadata.storage_data.items() if index.fqn == tensor]
    path = directory / where.relative_path
    data = bytearray(path.read_bytes())
    data[where.offset + where.length // 2] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_flipped_bit_on_disk_is_found_and_named(backend: str, saver: Backends, tmp_path: Path) -> None:
    specs = state.layout(1 << 20, 4, world_size=1)
    live = state.LiveState(specs, 5, 0, 1, saver.runtime.device)
    saved = saving.save_and_commit(saver, backend, live, tmp_path, "ckpt")
    assert saved.error is None and saved.directory == tmp_path / "ckpt"
    assert state.first_difference(specs, saver.load(backend, specs, saved.directory), 5, 0, 1) is None

    victim = specs[2].name
    flip_one_bit_in(saved.directory, victim)
    found = state.first_difference(specs, saver.load(backend, specs, saved.directory), 5, 0, 1)
    assert found is not None
    assert found.startswith(f"tensor {victim!r} differs first at element ")


def test_a_save_into_an_existing_checkpoint_is_refused(saver: Backends, tmp_path: Path) -> None:
    specs = state.layout(1 << 20, 4, world_size=1)
    live = state.LiveState(specs, 5, 0, 1, saver.runtime.device)
    assert saving.save_and_commit(saver, "dcp-sync", live, tmp_path, "ckpt").error is None
    again = saving.save_and_commit(saver, "dcp-sync", live, tmp_path, "ckpt")
    assert again.directory is None
    assert again.error == f"commit failed: {tmp_path / 'ckpt'} already exists; a checkpoint is never saved over another"
    assert state.first_difference(specs, saver.load("dcp-sync", specs, tmp_path / "ckpt"), 5, 0, 1) is None
