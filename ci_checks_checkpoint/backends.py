"""The four ways to save, each through the library's public entry point, and the matching loads.

A save returns when the data is on disk (for the async backends after waiting for the
background writer), with the time the call itself blocked and what its staging did. Right
after the call returns the caller's `on_return` runs: the harness starts overwriting the live
tensors there, as the next training step would, so a backend that had not really copied them
would save wrong data.
"""

from __future__ import annotations

import concurrent.futures
import functools
import inspect
import os
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch
from torch.distributed.checkpoint.api import CheckpointException
from torch.distributed.checkpoint.filesystem import FileSystemReader, FileSystemWriter
from torch.distributed.checkpoint.staging import DefaultStager, StagingOptions
from torch.distributed.checkpoint.state_dict_loader import load as dcp_load
from torch.distributed.checkpoint.state_dict_saver import AsyncCheckpointerType, AsyncSaveResponse, async_save
from torch.distributed.checkpoint.state_dict_saver import save as dcp_save
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import DTensor, Shard

from ci_checks_checkpoint import attribution, megatron, processes, runtime
from ci_checks_checkpoint.options import DCP_ASYNC_PROCESS, DCP_SYNC, MEGATRON_ASYNC, Deadline
from ci_checks_checkpoint.runfolder import RunTimedOut
from ci_checks_checkpoint.state import LiveState, TensorSpec

# The async writer polls for completion this often.
_POLL_S = 0.005
# ... and looks for a process its writer forked that a signal killed every this many polls (a walk of /proc).
_WRITER_CHECK_POLLS = 40
# What a failed load raises: DCP wraps every rank's error in a CheckpointException, which is a
# BaseException, not an Exception.
LOAD_ERRORS = (Exception, CheckpointException)


class SaveTimeout(Exception):
    pass


def _end_writer(caller: Any) -> None:
    """End Megatron-Core's forked writer and every process it forked in turn: its own abort kills only the
    writer, and a child of the writer that hangs (the ROCm pinned-memory fault) would live on."""
    process = getattr(caller, "process", None)
    if process is not None and process.pid is not None:
        processes.end(functools.partial(processes.tree, process.pid))
    caller.close(abort=True)
    if process is not None:
        process.join()  # killed: collected at once, so that it is no zombie


@functools.cache
def torch_library() -> attribution.Library:
    """The torch this interpreter imports, with the commit it was built from."""
    folder = os.path.realpath(Path(torch.__file__).parent)
    commit = getattr(torch.version, "git_version", None)
    return attribution.Library("PyTorch", "torch", folder, torch.__version__, commit if commit != "Unknown" else None)


@dataclass(frozen=True)
class DcpStagingSeen:
    """What DCP's stager returned for one save: how many tensors, where they live, and whose code staged them."""

    staged: int
    pinned: int
    shared: int
    made_by: attribution.Origin  # DefaultStager.stage as the harness's stager inherits it

    def verdict(self, wanted: runtime.Staging) -> tuple[bool, str, str]:
        """Passed, the row's text and the whole of it."""
        problems = []
        if self.made_by.is_project:
            problems.append(f"{self.made_by.describe()} replaced DCP's DefaultStager.stage")
        if self.staged == 0:
            problems.append("the stager returned no tensor")
        if wanted.pinned_memory and self.pinned < self.staged:
            problems.append(f"{self.staged - self.pinned} of {self.staged} staged tensors are not pinned")
        if wanted.shared_memory and self.shared < self.staged:
            problems.append(f"{self.staged - self.shared} of {self.staged} staged tensors are not in shared memory")
        if problems:
            return False, "; ".join(problems), "; ".join(problems)
        memory = "pinned" if wanted.pinned_memory else "pageable"
        shared = " shared" if wanted.shared_memory else ""
        copies = "non-blocking" if wanted.non_blocking else "blocking"
        text = f"{self.made_by.describe()} staged all {self.staged} tensors into{shared} {memory} host memory"
        text += f" with {copies} copies"
        return True, text, text

    def describe(self, wanted: runtime.Staging) -> dict[str, object]:
        return {**wanted.describe(), "made_by": self.made_by.to_json(), "detail": self.verdict(wanted)[2]}


class _WatchedStager(DefaultStager):
    """DCP's own stager; it only counts where the tensors it staged live."""

    seen: DcpStagingSeen | None = None

    def stage(self, state_dict: Any, **kwargs: Any) -> Any:
        staged: Any = super().stage(state_dict, **kwargs)  # a dict: the harness stages synchronously
        values = [v.to_local() if isinstance(v, DTensor) else v for v in staged.values()]
        tensors = [v for v in values if isinstance(v, torch.Tensor)]
        shared = sum(bool(t.is_shared()) for t in tensors)  # type: ignore[no-untyped-call]
        made_by = attribution.origin_of(inspect.getattr_static(DefaultStager, "stage"), (torch_library(),))
        self.seen = DcpStagingSeen(len(tensors), sum(t.is_pinned() for t in tensors), shared, made_by)
        return staged


@functools.cache
def stagers_outlive_a_stage() -> bool:
    """Whether a DefaultStager stages again after a stage. torch 2.11 closes a DefaultStager's copier at the end
    of every stage (pytorch/pytorch#183413): its next stage fails with `KeyError: <class 'type'>`."""
    options = StagingOptions(
        use_pinned_memory=False, use_shared_memory=False, use_async_staging=False, use_non_blocking_copy=False
    )
    stager = DefaultStager(options)
    probe = {"probe": torch.zeros(1)}
    try:
        stager.stage(probe)
        stager.stage(probe)
    except Exception:  # whatever a spent stager raises, a fresh one per save is what works
        return False
    finally:
        stager.close()
    return True


@dataclass(frozen=True)
class SaveCall:
    blocking_s: float
    staging: megatron.StagingSeen | DcpStagingSeen | None  # None for dcp-sync, which stages nothing


class Backends:
    """Saves and loads for one process: its device, its rank, its device mesh.

    Each async DCP backend keeps one stager for the whole run, so that the pinned buffers of the
    full-size warm-up are reused by the timed save instead of being allocated inside it. Where torch
    closes a stager after each stage (stagers_outlive_a_stage), each save gets a new one: every save
    then allocates its buffers, as it does on that torch anyway.
    """

    def __init__(self, rt: runtime.Runtime, threads: int, timeout_s: float, deadline: Deadline) -> None:
        self.runtime = rt
        self.threads = threads
        self.timeout_s = timeout_s  # of one save; none goes on past the run's deadline
        self.deadline = deadline
        self.mesh = DeviceMesh(rt.device.type, list(range(rt.world_size)))
        self.staging = runtime.staging(rt.device)
        self._stagers: dict[str, _WatchedStager] = {}

    def _timed_out(self, message: str) -> BaseException:
        """The save's own limit, or the run's --timeout when that came first."""
        return RunTimedOut(message) if self.deadline.expired() else SaveTimeout(message)

    def staging_of(self, backend: str) -> runtime.Staging:
        """How the harness asks the backend to stage (Megatron-Core decides that itself)."""
        if backend == DCP_SYNC:  # DCP's synchronous writer copies each tensor as it writes it
            return runtime.Staging(pinned_memory=False, non_blocking=False)
        if backend == MEGATRON_ASYNC:  # preload_tensors(non_blocking=True): pinned on an accelerator
            return runtime.Staging(pinned_memory=self.runtime.accelerator, non_blocking=True)
        if backend == DCP_ASYNC_PROCESS:
            # Pinned staging goes to the checkpoint process in shared memory, as DCP's defaults
            # have it. Without pinning, shared memory measured slower here (blocking 0.9-2.1 s
            # against 0.25-0.5 s for 1 GiB on the CPU), so the tensors go through its pipe.
            return replace(self.staging, shared_memory=self.staging.pinned_memory)
        return self.staging

    def _stager(self, backend: str) -> _WatchedStager:
        if backend in self._stagers and not stagers_outlive_a_stage():
            self.release(backend)  # torch closed it at the end of its last stage
        if backend not in self._stagers:
            staging = self.staging_of(backend)
            options = StagingOptions(
                use_pinned_memory=staging.pinned_memory,
                use_shared_memory=staging.shared_memory,
                use_async_staging=False,
                use_non_blocking_copy=staging.non_blocking,
            )
            self._stagers[backend] = _WatchedStager(options)
        return self._stagers[backend]

    def release(self, backend: str) -> None:
        """Free the backend's staging buffers (its pinned host memory) once it is done with."""
        stager = self._stagers.pop(backend, None)
        if stager is not None:
            stager.close()

    def close(self) -> None:
        for backend in list(self._stagers):
            self.release(backend)

    # -- state dicts ------------------------------------------------------------------------

    def _dcp_value(self, spec: TensorSpec, tensor: torch.Tensor) -> torch.Tensor:
        if not spec.sharded:
            return tensor
        return DTensor.from_local(tensor, self.mesh, [Shard(0)], run_check=False)

    def _megatron_value(self, spec: TensorSpec, tensor: torch.Tensor) -> Any:
        sharded_tensor = megatron.module(".mapping").ShardedTensor
        rank, world_size = self.runtime.rank, self.runtime.world_size
        if spec.sharded:
            return sharded_tensor.from_rank_offsets(spec.name, tensor, (0, rank, world_size), replica_id=0)
        return sharded_tensor.from_rank_offsets(spec.name, tensor, replica_id=rank)

    def state_dict(self, backend: str, tensors: list[tuple[TensorSpec, torch.Tensor]]) -> dict[str, Any]:
        """What the backend's save and load take: DTensors or Megatron ShardedTensors for sharded ones."""
        value = self._megatron_value if backend == MEGATRON_ASYNC else self._dcp_value
        return {spec.name: value(spec, tensor) for spec, tensor in tensors}

    # -- saving -----------------------------------------------------------------------------

    def save(self, backend: str, live: LiveState, directory: Path, on_return: Callable[[], None]) -> SaveCall:
        """Save `live` into the existing empty `directory`."""
        state_dict = self.state_dict(backend, list(live.items()))
        if backend == MEGATRON_ASYNC:
            return self._save_megatron(state_dict, directory, on_return)
        writer = FileSystemWriter(directory, thread_count=self.threads, sync_files=True, overwrite=False)
        start = time.perf_counter()
        if backend == DCP_SYNC:
            dcp_save(state_dict, storage_writer=writer)
            blocking = time.perf_counter() - start
            on_return()
            return SaveCall(blocking, None)
        kind = AsyncCheckpointerType.PROCESS if backend == DCP_ASYNC_PROCESS else AsyncCheckpointerType.THREAD
        stager = self._stager(backend)
        stager.seen = None
        response = async_save(state_dict, storage_writer=writer, async_checkpointer_type=kind, async_stager=stager)
        blocking = time.perf_counter() - start
        on_return()
        upload = response.upload_completion if isinstance(response, AsyncSaveResponse) else response
        limit = self.deadline.bound(self.timeout_s)
        try:
            upload.result(timeout=max(0.0, start + limit - time.perf_counter()))
        except concurrent.futures.TimeoutError:
            raise self._timed_out(f"the background writer did not finish within {limit:.0f} s") from None
        return SaveCall(blocking, stager.seen)

    def _save_megatron(self, state_dict: dict[str, Any], directory: Path, on_return: Callable[[], None]) -> SaveCall:
        """`dist_checkpointing.save(async_sharded_save=True)` scheduled on an `AsyncCallsQueue`.

        A non-persistent queue stages in this process with the request's `preload_tensors(...,
        non_blocking=True)` and forks the writer: the path of the ROCm pinned-memory segfault.
        The request's preload is watched (megatron.Watch), not replaced.
        """
        serialization = megatron.module("")
        strategies = megatron.module(".strategies.torch")
        async_utils = megatron.module(".strategies.async_utils")
        limit = self.deadline.bound(self.timeout_s)
        with runtime.megatron_device_calls(self.runtime.device):
            strategy = strategies.TorchDistSaveShardedStrategy("torch_dist", 1, thread_count=self.threads)
            start = time.perf_counter()
            request = serialization.save(state_dict, str(directory), strategy, async_sharded_save=True)
            watch = megatron.Watch(request, strategy)
            calls = async_utils.AsyncCallsQueue(persistent=False)
            writer = megatron.WriterWatch()
            try:
                calls.schedule_async_request(watch.request)
                writer.follow(calls)
                blocking = time.perf_counter() - start
                on_return()
                polls = 0
                while not calls.maybe_finalize_async_calls(blocking=False):
                    if time.perf_counter() - start > limit:
                        reason = (
                            "" if megatron.has_psutil() else "; psutil is not installed, so its writer process died"
                        )
                        raise self._timed_out(f"Megatron-Core's writer did not finish within {limit:.0f} s{reason}")
                    polls += 1
                    if polls % _WRITER_CHECK_POLLS == 0 and writer.notice_bucket_writers():
                        # Megatron-Core's own save then fails on every rank, its collectives in step.
                        _end_writer(calls.async_calls[-1].async_caller)
                    time.sleep(_POLL_S)
            except BaseException as failure:
                died = writer.death()  # before the writer is ended here
                for active in calls.async_calls:  # a writer left running would outlive the run
                    _end_writer(active.async_caller)
                if died is not None and isinstance(failure, LOAD_ERRORS):  # the save's error: what the death caused
                    raise megatron.WriterDied(died) from failure
                raise
        died = writer.death()
        if died is not None:  # its save went on as if nothing had happened
            raise megatron.WriterDied(died)
        return SaveCall(blocking, watch.seen)

    # -- loading ----------------------------------------------------------------------------

    def load(self, backend: str, specs: list[TensorSpec], directory: Path) -> dict[str, torch.Tensor]:
        """This rank's part of every tensor (of a checkpoint saved by this many ranks, or the whole
        tensors on one rank, whatever the number of ranks that saved it), into fresh zeroed memory."""
        world_size = self.runtime.world_size
        empty = [
            (
                spec,
                torch.zeros((spec.local_rows(world_size), spec.columns), dtype=spec.dtype, device=self.runtime.device),
            )
            for spec in specs
        ]
        state_dict = self.state_dict(backend, empty)
        if backend == MEGATRON_ASYNC:
            with runtime.megatron_device_calls(self.runtime.device), warnings.catch_warnings():
                # Megatron-Core 0.16 loads through DCP's deprecated load_state_dict.
                warnings.simplefilter("ignore", FutureWarning)
                loaded = megatron.module("").load(state_dict, str(directory))
            return {name: value for name, value in loaded.items() if isinstance(value, torch.Tensor)}
        dcp_load(state_dict, storage_reader=FileSystemReader(directory))
        return {name: value.to_local() if isinstance(value, DTensor) else value for name, value in state_dict.items()}
