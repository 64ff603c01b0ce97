"""The references every backend is measured against, and the goals it is judged by.

Two references, each of the same bytes and run on every rank at once, as the saves are:
- `raw`: a write + fsync into new files with as many threads per rank as the backends get;
- `d2h`: a copy of the live tensors into host buffers made beforehand, pinned with non-blocking
  copies on an accelerator: the least an async save must block for to take its copy.
"""

from __future__ import annotations

import math
import os
import threading
import time
from pathlib import Path

import torch

from ci_checks_checkpoint.options import DCP_SYNC
from ci_checks_checkpoint.report import Goal, RankFigures
from ci_checks_checkpoint.state import LiveState

GB = 1e9
DURABLE_GOAL = 0.8  # every backend's durable throughput, at least this fraction of the raw write's
BLOCKING_GOAL = 1.5  # an async save blocks for at most this multiple of the device-to-host copy
ASYNC_TOTAL_GOAL = 1.25  # an async save's total, at most this multiple of the synchronous save's
_CHUNK = 64 << 20


def _buckets(arrays: list[memoryview], count: int) -> list[list[memoryview]]:
    """Largest first into the least filled of `count` buckets, as DCP splits its write items."""
    buckets: list[list[memoryview]] = [[] for _ in range(count)]
    sizes = [0] * count
    for array in sorted(arrays, key=lambda a: a.nbytes, reverse=True):
        smallest = sizes.index(min(sizes))
        buckets[smallest].append(array)
        sizes[smallest] += array.nbytes
    return [bucket for bucket in buckets if bucket]


def _share(arrays: list[memoryview], nbytes: int) -> list[memoryview]:
    """`nbytes` of the arrays' bytes, taking them in turn (again from the first if they are fewer)."""
    taken, remaining = [], nbytes
    while remaining > 0 and any(array.nbytes for array in arrays):
        for array in arrays:
            view = array[: min(remaining, array.nbytes)]
            taken.append(view)
            remaining -= view.nbytes
            if remaining == 0:
                break
    return taken


def _write_file(path: Path, arrays: list[memoryview]) -> None:
    """OSError names `path`, which os.write's errors do not."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            for array in arrays:
                view = array.cast("B")
                while view:
                    written = os.write(fd, view[:_CHUNK])
                    view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as error:
        raise OSError(error.errno, error.strerror, str(path)) from None


class RawWrite:
    """This rank's share of the checkpoint's bytes written with `threads` threads, each into a new
    file of its own, fsynced; a call returns the seconds it took.

    The host copies are made once, before any call: this is the file system's speed. The first
    write of a run also pays for the kernel finding page-cache memory (several times slower
    here), which every later save then reuses, so the harness calls it once untimed first, as
    each backend gets an untimed warm-up save.
    """

    def __init__(self, folder: Path, live: LiveState, nbytes: int, threads: int) -> None:
        host = [t.detach().cpu().contiguous().view(-1).view(torch.uint8).numpy().data for _, t in live.items()]
        self.buckets = _buckets(_share(host, nbytes), threads)
        self.paths = [folder / f"raw-write-{os.getpid()}-{index}" for index in range(len(self.buckets))]

    def __call__(self) -> float:
        errors: list[OSError] = []

        def write(path: Path, bucket: list[memoryview]) -> None:
            try:
                _write_file(path, bucket)
            except OSError as error:
                errors.append(error)

        threads = [threading.Thread(target=write, args=pair) for pair in zip(self.paths, self.buckets, strict=True)]
        start = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        seconds = time.perf_counter() - start
        for path in self.paths:
            path.unlink(missing_ok=True)
        if errors:
            raise errors[0]
        return seconds


class DeviceToHost:
    """A copy of every live tensor into host buffers allocated beforehand: pinned, with non-blocking
    copies, on an accelerator (what staging costs at its best); plain memory copies on the CPU.
    A call returns the seconds it took; the first touches the buffers and is not to be timed."""

    def __init__(self, live: LiveState) -> None:
        self.accelerator = live.device.type != "cpu"
        self.device = live.device
        self.pairs = [(torch.empty(t.shape, dtype=t.dtype, pin_memory=self.accelerator), t) for _, t in live.items()]

    def __call__(self) -> float:
        start = time.perf_counter()
        for host, tensor in self.pairs:
            host.copy_(tensor, non_blocking=self.accelerator)
        if self.accelerator:
            torch.cuda.synchronize(self.device)
        return time.perf_counter() - start


def durable_goal(ratio_to_raw: float) -> Goal:
    met = ratio_to_raw >= DURABLE_GOAL
    return Goal(
        f"durable >= {DURABLE_GOAL:.2f}x raw",
        met,
        f"durable at {ratio_to_raw:.2f}x the raw write with the same threads: {'met' if met else 'missed'}",
    )


def blocking_goal(blocking_s: float, d2h_s: float) -> Goal:
    ratio = blocking_s / d2h_s
    met = ratio <= BLOCKING_GOAL
    return Goal(
        f"blocking <= {BLOCKING_GOAL:.2f}x d2h",
        met,
        f"blocked {ratio:.2f}x the device-to-host copy ({d2h_s:.3f} s): {'met' if met else 'missed'}",
    )


def async_total_goal(total_s: float, sync_total_s: float | None, sync_state: str) -> Goal:
    """`sync_state`: why there is no synchronous total (`not selected`, `failed`), when there is none."""
    name = f"total <= {ASYNC_TOTAL_GOAL:.2f}x {DCP_SYNC}"
    if sync_total_s is None:
        return Goal(name, None, f"total not judged: {DCP_SYNC} {sync_state} in this run")
    ratio = total_s / sync_total_s
    met = ratio <= ASYNC_TOTAL_GOAL
    detail = f"total {ratio:.2f}x the {DCP_SYNC} save's ({sync_total_s:.3f} s): {'met' if met else 'missed'}"
    return Goal(name, met, detail)


DURABLE = "durable"
BLOCKING = "blocking"


def threshold(kind: str, least: float, ranks: tuple[RankFigures, ...], applies: bool) -> Goal:
    """A --min-ratio threshold, judged on every rank: the rank furthest below it is named."""
    name = f"--min-ratio {kind}={least:g}"
    if not applies:
        return Goal(name, None, f"{name} not judged: a synchronous save blocks for the whole save", required=True)

    def ratio_of(figures: RankFigures) -> float:
        if kind == DURABLE:
            return figures.durable_ratio
        return math.inf if figures.blocking_ratio is None else figures.blocking_ratio  # it did not block

    worst = min(ranks, key=ratio_of)
    met = ratio_of(worst) >= least
    what = (
        f"its durable rate {worst.durable_ratio:.2f}x its raw write's ({worst.raw_s:.3f} s)"
        if kind == DURABLE
        else f"its device-to-host copy ({worst.d2h_s:.3f} s) {ratio_of(worst):.2f}x the {worst.blocking_s:.3f} s "
        "it blocked"
    )
    return Goal(
        name,
        met,
        f"{name}: rank {worst.rank} (the lowest of {len(ranks)}): {what}: {'met' if met else 'missed'}",
        required=True,
    )
