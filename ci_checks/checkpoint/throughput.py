"""The reference for every backend's throughput, and the goals the backends are judged against."""

from __future__ import annotations

import os
import time
from pathlib import Path

import torch

from ci_checks.checkpoint.options import DCP_SYNC
from ci_checks.checkpoint.state import LiveState

GB = 1e9
SYNC_GOAL_RATIO = 0.8  # a synchronous save at no less than this fraction of a raw write
ASYNC_GOAL_FRACTION = 0.10  # an async save blocks for no more than this fraction of the sync save
_CHUNK = 64 << 20


def raw_write(path: Path, live: LiveState, nbytes: int) -> float:
    """Seconds to write `nbytes` of the state's bytes (its tensors in turn) into a new file and fsync it.

    The host copies are made before the clock starts: this is the file system's speed. The
    first write of a run also pays for the kernel finding page-cache memory (several times
    slower here), which every later save then reuses, so one untimed write goes first, as
    each backend gets an untimed warm-up save.
    """
    host = [tensor.detach().cpu().contiguous().view(-1).view(torch.uint8).numpy().data for _, tensor in live.items()]
    _write(path, host, nbytes)
    return _write(path, host, nbytes)


def _write(path: Path, host: list[memoryview], nbytes: int) -> float:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        start = time.perf_counter()
        remaining = nbytes
        while remaining > 0:
            for array in host:
                view = array[: min(remaining, array.nbytes)]
                remaining -= len(view)
                while view:
                    written = os.write(fd, view[:_CHUNK])
                    view = view[written:]
                if remaining == 0:
                    break
        os.fsync(fd)
        return time.perf_counter() - start
    finally:
        os.close(fd)
        path.unlink()


def sync_goal(ratio: float) -> tuple[bool, str]:
    met = ratio >= SYNC_GOAL_RATIO
    return met, f"goal >= {SYNC_GOAL_RATIO:.2f}x raw write: {'met' if met else 'not met'}"


def async_goal(blocking_s: float, sync_total_s: float | None) -> tuple[bool | None, str]:
    goal = f"goal: blocking <= {ASYNC_GOAL_FRACTION:.0%} of the {DCP_SYNC} save"
    if sync_total_s is None:
        return None, f"{goal}: not judged, {DCP_SYNC} did not complete in this run"
    share = blocking_s / sync_total_s
    met = share <= ASYNC_GOAL_FRACTION
    return met, f"{goal} ({sync_total_s:.3f} s): {'met' if met else 'not met'}, blocking is {share:.0%} of it"
