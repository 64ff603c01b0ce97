"""One checkpoint save on every rank: fresh directory, save, atomic commit, timing; and the load that
judges it."""

from __future__ import annotations

import errno
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.distributed as dist
from torch.distributed.checkpoint.api import CheckpointException

from ci_checks_checkpoint import commit, facts, megatron
from ci_checks_checkpoint.backends import LOAD_ERRORS, Backends, DcpStagingSeen
from ci_checks_checkpoint.state import LiveState, TensorSpec, first_difference, layout

# The errors that say the file system cannot take the checkpoint, not that a backend is wrong.
_ENVIRONMENT_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES, errno.EPERM})


@dataclass(frozen=True)
class Saved:
    """How one rank's save went. `error` is set on every rank when any rank failed; `environment` when it
    failed for want of space or permission (where, and why)."""

    directory: Path | None  # the committed checkpoint
    blocking_s: float
    total_s: float
    error: str | None
    staging: megatron.StagingSeen | DcpStagingSeen | None = None  # this rank's
    environment: str | None = None


def _causes(failure: BaseException) -> Iterator[BaseException]:
    """The failure, what caused it, and each rank's error DCP wrapped in a CheckpointException."""
    seen: set[int] = set()
    pending = [failure]
    while pending:
        found = pending.pop()
        if id(found) in seen:
            continue
        seen.add(id(found))
        yield found
        if isinstance(found, CheckpointException):
            pending += [cause for cause, _ in found.failures.values() if isinstance(cause, BaseException)]
        pending += [linked for linked in (found.__cause__, found.__context__) if linked is not None]


# Below this much free space a failed save is taken for one that found the disk full, whatever its error said:
# torch's own serializer reports a short write as "unexpected pos".
_FULL_BELOW = 1 << 20


def environment_problem(failure: BaseException, where: Path) -> str | None:
    """Why a write into `where` failed, when the file system is the reason (no space left, a file too
    large for a limit, a read-only or forbidden folder): the error, the path, its file system and the
    space left there; else None."""
    for cause in _causes(failure):
        if isinstance(cause, OSError) and cause.errno in _ENVIRONMENT_ERRNOS:
            reason = cause.strerror or errno.errorcode.get(cause.errno or 0, str(cause))
            return f"{reason}: {facts.where(cause.filename or where, where)}"
        # Errors that carry the message but no errno: torch's stores (DistStoreError), a writer's pickled error.
        for full in (errno.ENOSPC, errno.EDQUOT):
            if os.strerror(full) in str(cause):
                return f"{os.strerror(full)}: {facts.where(where)}"
    free = facts.free_bytes(where)
    if free is not None and free < _FULL_BELOW:
        return f"{os.strerror(errno.ENOSPC)} (the save said {describe(failure)}): {facts.where(where)}"
    return None


def _from_rank_zero(value: object) -> object:
    box = [value]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def save_and_commit(saver: Backends, backend: str, live: LiveState, root: Path, name: str) -> Saved:
    """Save `live` as checkpoint `root/name` on all ranks; commit it when every rank succeeded.

    As soon as the save call returns, another thread overwrites the live tensors, as training
    would go on. The total is the time until the backend has written everything plus the
    commit: the overwriting runs beside it and is not the backend's cost.
    """
    rank0 = saver.runtime.rank == 0
    partial = _from_rank_zero(commit.fresh_partial(root, name) if rank0 else None)
    assert isinstance(partial, Path)
    training = threading.Thread(target=live.overwrite, name="overwrite live tensors")
    start = time.perf_counter()
    error: str | None = None
    blocking = 0.0
    staging = None
    environment = None
    try:
        call = saver.save(backend, live, partial, training.start)
        blocking, staging = call.blocking_s, call.staging
    except LOAD_ERRORS as failure:  # a save fails with the same CheckpointException
        error = f"rank {saver.runtime.rank}: {describe(failure)} (saving into {partial})"
        environment = environment_problem(failure, partial)
    written_s = time.perf_counter() - start
    if training.ident is not None:
        training.join()
        live.overwrite()  # undo, so that the next backend saves the same values
    errors: list[tuple[str | None, str | None] | None] = [None] * saver.runtime.world_size
    dist.all_gather_object(errors, (error, environment))
    error = next((e[0] for e in errors if e is not None and e[0] is not None), None)
    environment = next((e[1] for e in errors if e is not None and e[1] is not None), None)
    commit_s = 0.0
    if error is None and rank0:
        began = time.perf_counter()
        try:
            commit.commit(partial)
        except commit.CommitError as failure:
            error = f"commit failed: {failure}"
        except OSError as failure:
            error = f"commit failed: {failure}"
            environment = environment_problem(failure, partial)
        commit_s = time.perf_counter() - began
    shared = _from_rank_zero((error, commit_s, environment))  # also makes every rank wait for the commit
    assert isinstance(shared, tuple)
    error, commit_s, environment = shared
    directory = None if error else commit.final_name(partial)
    return Saved(directory, blocking, written_s + commit_s, error, staging, environment)


def warm_up(saver: Backends, backend: str, root: Path, live: LiveState | None = None) -> Saved:
    """A save before the timed one, so that what is done once per program or per buffer (DCP's
    checkpoint process, Megatron-Core's result queue, pinned staging buffers, the page cache's
    first allocation) is not counted in it: of `live` itself (full size), or of a tiny state
    where only the helpers matter (the crash test's writers). Its checkpoint is removed."""
    world_size = saver.runtime.world_size
    if live is None:
        live = LiveState(
            layout(4096 * world_size, 1, world_size), 0, saver.runtime.rank, world_size, saver.runtime.device
        )
    saved = save_and_commit(saver, backend, live, root, f"warm-up-{backend}")
    if saver.runtime.rank == 0 and saved.directory is not None:
        shutil.rmtree(saved.directory)
    return saved


def describe(failure: BaseException) -> str:
    """The error in one line; for DCP's CheckpointException, the first rank's own error, not the
    tracebacks its message carries."""
    if isinstance(failure, CheckpointException) and failure.failures:
        rank, (cause, _) = next(iter(sorted(failure.failures.items(), key=lambda item: item[0])))
        return f"CheckpointException: rank {rank}: {describe(cause)}"
    message = " ".join(str(failure).split())
    return f"{type(failure).__name__}: {message[:300]}"


def load_and_compare(
    saver: Backends,
    backend: str,
    specs: list[TensorSpec],
    directory: Path,
    expected: Callable[[TensorSpec], torch.Tensor],
) -> tuple[bool, str | None]:
    """(loaded, what differs): (False, why) when the library's loader raised, (True, None) when
    bit-exact, (True, the first difference) when it loaded other data without a word."""
    try:
        loaded = saver.load(backend, specs, directory)
    except LOAD_ERRORS as failure:
        return False, f"{directory.name} does not load: {describe(failure)}"
    difference = first_difference(specs, loaded, expected)
    return True, None if difference is None else f"{directory.name}: {difference}"
