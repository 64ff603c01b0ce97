"""The seeded state dict and the bit-for-bit comparison the verification relies on."""

from __future__ import annotations

import pytest

pytest.importorskip("torch", reason="needs the checkpoint extra: pip install -e '.[checkpoint]'")
import torch

from ci_checks_checkpoint import state

pytestmark = pytest.mark.checkpoint

MiB = 1 << 20


def test_layout_mixes_dtypes_and_sharding_and_sums_to_about_the_size() -> None:
    specs = state.layout(64 * MiB, 16, world_size=2)
    assert {s.dtype for s in specs} == {torch.float32, torch.bfloat16, torch.float16, torch.int64}
    for dtype in state.DTYPES:
        assert {s.sharded for s in specs if s.dtype == dtype} == {True, False}
    assert all(s.rows % 2 == 0 for s in specs)
    assert 63 * MiB < sum(s.nbytes for s in specs) <= 64 * MiB
    assert len({s.name for s in specs}) == 16


def test_too_small_a_size_for_the_tensor_count_is_an_error() -> None:
    with pytest.raises(ValueError, match="too few for 8 tensors"):
        state.layout(100, 8, world_size=2)


def test_content_depends_only_on_seed_tensor_and_shard() -> None:
    [spec] = [s for s in state.layout(MiB, 4, world_size=2) if s.sharded][:1]
    first = state.generate(spec, 7, rank=1, world_size=2)
    assert torch.equal(state.bits(first), state.bits(state.generate(spec, 7, rank=1, world_size=2)))
    assert not torch.equal(state.bits(first), state.bits(state.generate(spec, 7, rank=0, world_size=2)))
    assert not torch.equal(state.bits(first), state.bits(state.generate(spec, 8, rank=1, world_size=2)))


def test_replicated_tensors_are_identical_on_every_rank() -> None:
    [spec] = [s for s in state.layout(MiB, 3, world_size=4) if not s.sharded]
    parts = [state.bits(state.generate(spec, 0, rank, world_size=4)) for rank in range(4)]
    assert all(torch.equal(parts[0], part) for part in parts[1:])
    assert parts[0].shape == (spec.rows, spec.columns)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_float_tensors_carry_nan_infinities_and_negative_zero(dtype: torch.dtype) -> None:
    spec = next(s for s in state.layout(MiB, 4, world_size=1) if s.dtype == dtype)
    tensor = state.generate(spec, 0, 0, 1).flatten()[:5].float()
    assert tensor[0].isnan() and tensor[4].isnan()
    assert tensor[1].item() == float("inf") and tensor[2].item() == float("-inf")
    assert tensor[3].item() == 0 and torch.signbit(tensor[3])


def test_int64_tensors_carry_the_extremes() -> None:
    spec = next(s for s in state.layout(MiB, 4, world_size=1) if s.dtype == torch.int64)
    assert state.generate(spec, 0, 0, 1).flatten()[:2].tolist() == [-(2**63), 2**63 - 1]


def test_the_whole_of_a_sharded_tensor_is_every_rank_s_shard_in_rank_order() -> None:
    [spec] = state.layout(MiB, 1, world_size=4)
    whole = state.whole(spec, 2, world_size=4)
    assert whole.shape == (spec.rows, spec.columns)
    rows = spec.rows // 4
    for rank in range(4):
        shard = state.generate(spec, 2, rank, world_size=4)
        assert torch.equal(state.bits(whole[rank * rows : (rank + 1) * rows]), state.bits(shard))
    assert spec.local_nbytes(4) * 4 == spec.nbytes


def test_the_whole_of_a_replicated_tensor_is_any_rank_s_copy() -> None:
    [spec] = [s for s in state.layout(MiB, 3, world_size=2) if not s.sharded]
    assert torch.equal(state.bits(state.whole(spec, 0, 2)), state.bits(state.generate(spec, 0, 1, 2)))
    assert spec.local_nbytes(2) == spec.nbytes


def test_nan_equals_itself_bit_for_bit() -> None:
    spec = state.layout(MiB, 1, world_size=1)[0]
    tensor = state.generate(spec, 0, 0, 1)
    assert state.difference("t", tensor, tensor.clone()) is None


def test_negative_zero_differs_from_zero() -> None:
    expected = torch.tensor([-0.0, 1.0])
    assert state.difference("t", expected, torch.tensor([0.0, 1.0])) == (
        "tensor 't' differs first at element 0: expected 0x80000000, got 0x00000000"
    )


def test_a_nan_payload_change_is_a_difference() -> None:
    expected = torch.tensor([1.0, float("nan")], dtype=torch.bfloat16)
    actual = expected.clone()
    state.bits(actual)[1] += 1
    assert (
        state.difference("t", expected, actual) == "tensor 't' differs first at element 1: expected 0x7fc0, got 0x7fc1"
    )


def test_first_difference_names_the_first_tensor_with_one_flipped_bit() -> None:
    specs = state.layout(MiB, 8, world_size=1)
    loaded = {s.name: state.generate(s, 3, 0, 1) for s in specs}
    victim = specs[5]
    state.bits(loaded[victim.name]).view(-1)[1000] ^= 1
    found = state.first_difference(specs, loaded, state.part_of(3, 0, 1))
    assert found is not None
    assert found.startswith(f"tensor {victim.name!r} differs first at element 1000:")
    del loaded[victim.name]
    assert (
        state.first_difference(specs, loaded, state.part_of(3, 0, 1))
        == f"tensor {victim.name!r} is missing from the loaded checkpoint"
    )


def test_a_dtype_or_shape_change_is_a_difference() -> None:
    expected = torch.zeros(2, 3)
    assert state.difference("t", expected, torch.zeros(3, 2)) == (
        "tensor 't': expected torch.float32 (2, 3), got torch.float32 (3, 2)"
    )


def test_overwrite_changes_every_bit_and_twice_restores() -> None:
    specs = state.layout(MiB, 4, world_size=1)
    live = state.LiveState(specs, 1, 0, 1, torch.device("cpu"))
    live.overwrite()
    for spec, tensor in live.items():
        original = state.bits(state.generate(spec, 1, 0, 1))
        assert not (state.bits(tensor) == original).any()
    live.overwrite()
    assert state.first_difference(specs, live.tensors, live.expected()) is None


def test_a_tensor_saved_on_two_ranks_is_loaded_on_three_as_rows_of_its_whole() -> None:
    specs = state.layout(MiB, 3, world_size=2, loaded_on=3)
    assert all(spec.rows % 6 == 0 for spec in specs)
    for spec in specs:
        whole = state.whole(spec, 4, world_size=2)
        parts = [state.resharded(4, 2, rank, 3)(spec) for rank in range(3)]
        joined = torch.cat(parts) if spec.sharded else parts[0]
        assert torch.equal(state.bits(joined), state.bits(whole))
        assert all(part.shape[0] == spec.local_rows(3) for part in parts)


def test_a_loader_takes_the_tensors_in_batches_that_fit_its_budget() -> None:
    specs = state.layout(MiB, 8, world_size=1)
    size = specs[0].nbytes
    groups = list(state.batches(specs, 1, budget=3 * size))
    assert [spec for group in groups for spec in group] == specs
    assert all(sum(spec.nbytes for spec in group) <= 3 * size for group in groups)
    assert [len(group) for group in state.batches(specs, 1, budget=1)] == [1] * 8  # one at least
