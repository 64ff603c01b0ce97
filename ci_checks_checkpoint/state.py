"""The seeded state dict: its layout, its content, and bit-for-bit comparison.

Every tensor is 2-D. Sharded tensors are split by rows across the ranks (a DTensor for DCP, a
Megatron `ShardedTensor` with rank offsets); replicated tensors hold the same values on every
rank. Content depends only on (seed, tensor, shard), so any process can regenerate what a
rank should have saved. A plain tensor whose values differ between ranks would be silently
resolved to one rank's value on save, so no tensor here is replicated unless it is identical.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch

DTYPES = (torch.float32, torch.bfloat16, torch.float16, torch.int64)
# Comparisons are on integer views: NaN equals itself, -0.0 differs from 0.0, payloads count.
_BITS = {torch.float32: torch.int32, torch.bfloat16: torch.int16, torch.float16: torch.int16, torch.int64: torch.int64}
# Bit patterns written at the start of every piece: NaN, +Inf, -Inf, -0.0, and a negative NaN
# with a payload; for int64 the extremes.
_SPECIALS = {
    torch.float32: (0x7FC00000, 0x7F800000, 0xFF800000, 0x80000000, 0xFFC00001),
    torch.bfloat16: (0x7FC0, 0x7F80, 0xFF80, 0x8000, 0xFFC1),
    torch.float16: (0x7E00, 0x7C00, 0xFC00, 0x8000, 0xFE01),
    torch.int64: (0x8000000000000000, 0x7FFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF, 0),
}
_MAX_COLUMNS = 1024


@dataclass(frozen=True)
class TensorSpec:
    index: int
    dtype: torch.dtype
    rows: int  # global rows; a multiple of the world size
    columns: int
    sharded: bool

    @property
    def name(self) -> str:
        kind = "sharded" if self.sharded else "replicated"
        return f"t{self.index:03d}.{str(self.dtype).removeprefix('torch.')}.{kind}"

    @property
    def nbytes(self) -> int:
        return self.rows * self.columns * self.dtype.itemsize

    def local_rows(self, world_size: int) -> int:
        return self.rows // world_size if self.sharded else self.rows

    def local_nbytes(self, world_size: int) -> int:
        """What one of `world_size` ranks holds of it."""
        return self.local_rows(world_size) * self.columns * self.dtype.itemsize


def layout(total_bytes: int, count: int, world_size: int, loaded_on: int = 1) -> list[TensorSpec]:
    """`count` tensors of about `total_bytes / count` bytes each, dtypes in turn, every third replicated;
    the rows of each a multiple of `world_size` and of `loaded_on` (the ranks it is loaded on again).

    ValueError if a tensor would get less than one row per rank.
    """
    multiple = math.lcm(world_size, loaded_on)
    specs = []
    for index in range(count):
        dtype = DTYPES[index % len(DTYPES)]
        elements = total_bytes // count // dtype.itemsize
        columns = min(_MAX_COLUMNS, elements // multiple)
        rows = elements // columns // multiple * multiple if columns else 0
        if rows == 0:
            raise ValueError(
                f"{total_bytes} bytes are too few for {count} tensors of {dtype} on {world_size} ranks; "
                "raise --size or lower --tensors"
            )
        specs.append(TensorSpec(index, dtype, rows, columns, sharded=index % 3 != 2))
    return specs


def _generator(seed: int, index: int, shard: int) -> torch.Generator:
    digest = hashlib.sha256(f"{seed}:{index}:{shard}".encode()).digest()
    return torch.Generator().manual_seed(int.from_bytes(digest[:8], "little") >> 1)


def _signed(pattern: int, bits: int) -> int:
    return pattern - (1 << bits) if pattern >= 1 << (bits - 1) else pattern


def generate(spec: TensorSpec, seed: int, rank: int, world_size: int) -> torch.Tensor:
    """On the CPU, the part of `spec` that `rank` holds."""
    shard = rank if spec.sharded else 0
    generator = _generator(seed, spec.index, shard)
    shape = (spec.local_rows(world_size), spec.columns)
    if spec.dtype.is_floating_point:
        tensor = torch.randn(shape, generator=generator).to(spec.dtype)
    else:
        tensor = torch.randint(-(2**63), 2**63 - 1, shape, generator=generator, dtype=spec.dtype)
    bits = _BITS[spec.dtype]
    patterns = [_signed(p, bits.itemsize * 8) for p in _SPECIALS[spec.dtype]][: tensor.numel()]
    tensor.view(-1)[: len(patterns)].view(bits).copy_(torch.tensor(patterns, dtype=bits))
    return tensor


def bits(tensor: torch.Tensor) -> torch.Tensor:
    """The same memory as integers of the same width."""
    return tensor.view(_BITS[tensor.dtype])


def difference(name: str, expected: torch.Tensor, actual: torch.Tensor) -> str | None:
    """None when bit-identical, else what differs first."""
    if actual.dtype != expected.dtype or actual.shape != expected.shape:
        return (
            f"tensor {name!r}: expected {expected.dtype} {tuple(expected.shape)}, "
            f"got {actual.dtype} {tuple(actual.shape)}"
        )
    want, got = bits(expected), bits(actual.cpu())
    if torch.equal(want, got):
        return None
    position = int((want != got).flatten().nonzero()[0])
    width = want.dtype.itemsize * 2
    mask = (1 << (width * 4)) - 1
    return (
        f"tensor {name!r} differs first at element {position}: expected "
        f"0x{int(want.flatten()[position]) & mask:0{width}x}, got 0x{int(got.flatten()[position]) & mask:0{width}x}"
    )


def whole(spec: TensorSpec, seed: int, world_size: int) -> torch.Tensor:
    """On the CPU, the whole of `spec` as `world_size` ranks saved it: every shard in rank order."""
    if not spec.sharded:
        return generate(spec, seed, 0, world_size)
    return torch.cat([generate(spec, seed, rank, world_size) for rank in range(world_size)])


def first_difference(
    specs: list[TensorSpec], loaded: dict[str, torch.Tensor], expected: Callable[[TensorSpec], torch.Tensor]
) -> str | None:
    """Compare what was loaded with what `expected` says was saved, one tensor at a time."""
    for spec in specs:
        if spec.name not in loaded:
            return f"tensor {spec.name!r} is missing from the loaded checkpoint"
        found = difference(spec.name, expected(spec), loaded[spec.name])
        if found is not None:
            return found
    return None


def part_of(seed: int, rank: int, world_size: int) -> Callable[[TensorSpec], torch.Tensor]:
    """What `rank` of `world_size` saved of each tensor."""
    return lambda spec: generate(spec, seed, rank, world_size)


def resharded(seed: int, saved_by: int, rank: int, world_size: int) -> Callable[[TensorSpec], torch.Tensor]:
    """What `rank` of `world_size` ranks loads of each tensor that `saved_by` ranks saved: its rows of the
    whole of a sharded one, all of a replicated one."""

    def part(spec: TensorSpec) -> torch.Tensor:
        found = whole(spec, seed, saved_by)
        if not spec.sharded:
            return found
        rows = spec.local_rows(world_size)
        return found[rank * rows : (rank + 1) * rows]

    return part


def batches(specs: list[TensorSpec], world_size: int, budget: int) -> Iterator[list[TensorSpec]]:
    """The specs in groups whose parts on one of `world_size` ranks take at most `budget` bytes (one at least),
    so that a loader never holds more than that at once."""
    group: list[TensorSpec] = []
    held = 0
    for spec in specs:
        size = spec.local_nbytes(world_size)
        if group and held + size > budget:
            yield group
            group, held = [], 0
        group.append(spec)
        held += size
    if group:
        yield group


class LiveState:
    """This rank's tensors on the device, as training would hold them while saving."""

    def __init__(self, specs: list[TensorSpec], seed: int, rank: int, world_size: int, device: torch.device) -> None:
        self.specs = specs
        self.seed = seed
        self.rank = rank
        self.world_size = world_size
        self.device = device
        self.tensors = {s.name: generate(s, seed, rank, world_size).to(device) for s in specs}

    @property
    def nbytes(self) -> int:
        return sum(spec.nbytes for spec in self.specs)

    def items(self) -> Iterator[tuple[TensorSpec, torch.Tensor]]:
        for spec in self.specs:
            yield spec, self.tensors[spec.name]

    def expected(self) -> Callable[[TensorSpec], torch.Tensor]:
        return part_of(self.seed, self.rank, self.world_size)

    def overwrite(self) -> None:
        """Flip every bit, as the next optimizer step would change the values; again to undo."""
        for tensor in self.tensors.values():
            bits(tensor).bitwise_not_()
        if self.device.type != "cpu":
            torch.cuda.synchronize(self.device)  # by device: another thread may call this
