"""The four ways to save, each through the library's public entry point, and the matching loads.

A save returns when the data is on disk (for the async backends after waiting for the
background writer), with the time the call itself blocked. Right after the call returns the
caller's `on_return` runs: the harness starts overwriting the live tensors there, as the next
training step would, so a backend that had not really copied them would save wrong data.
"""

from __future__ import annotations

import concurrent.futures
import importlib
import time
import warnings
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import torch
from torch.distributed.checkpoint.filesystem import FileSystemReader, FileSystemWriter
from torch.distributed.checkpoint.staging import DefaultStager, StagingOptions
from torch.distributed.checkpoint.state_dict_loader import load as dcp_load
from torch.distributed.checkpoint.state_dict_saver import AsyncCheckpointerType, AsyncSaveResponse, async_save
from torch.distributed.checkpoint.state_dict_saver import save as dcp_save
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import DTensor, Shard

from ci_checks.checkpoint import runtime
from ci_checks.checkpoint.options import DCP_ASYNC_PROCESS, DCP_SYNC, MEGATRON_ASYNC
from ci_checks.checkpoint.state import LiveState, TensorSpec

# The async writer polls for completion this often.
_POLL_S = 0.005


class SaveTimeout(Exception):
    pass


def megatron_module(name: str) -> ModuleType:
    # megatron-core ships no type information, so it is imported by name; it also warns at
    # import about optional fused kernels (Transformer Engine, Apex) that saving does not use.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return importlib.import_module(f"megatron.core.dist_checkpointing{name}")


def megatron_has_psutil() -> bool:
    """Megatron-Core's writer process dies without psutil, and its parent then waits forever."""
    return bool(megatron_module(".strategies.filesystem_async").HAVE_PSUTIL)


class Backends:
    """Saves and loads for one process: its device, its rank, its device mesh."""

    def __init__(self, rt: runtime.Runtime, threads: int, timeout_s: float) -> None:
        self.runtime = rt
        self.threads = threads
        self.timeout_s = timeout_s
        self.mesh = DeviceMesh(rt.device.type, list(range(rt.world_size)))
        self.staging = runtime.staging(rt.device)

    def staging_of(self, backend: str) -> runtime.Staging:
        if backend == DCP_SYNC:  # DCP's synchronous writer copies each tensor as it writes it
            return runtime.Staging(pinned_memory=False, non_blocking=False)
        if backend == MEGATRON_ASYNC:
            return runtime.megatron_staging(self.runtime.device)
        if backend == DCP_ASYNC_PROCESS:
            # Pinned staging goes to the checkpoint process in shared memory, as DCP's defaults
            # have it. Without pinning, shared memory measured slower here (blocking 0.9-2.1 s
            # against 0.25-0.5 s for 1 GiB on the CPU), so the tensors go through its pipe.
            return replace(self.staging, shared_memory=self.staging.pinned_memory)
        return self.staging

    # -- state dicts ------------------------------------------------------------------------

    def _dcp_value(self, spec: TensorSpec, tensor: torch.Tensor) -> torch.Tensor:
        if not spec.sharded:
            return tensor
        return DTensor.from_local(tensor, self.mesh, [Shard(0)], run_check=False)

    def _megatron_value(self, spec: TensorSpec, tensor: torch.Tensor) -> Any:
        sharded_tensor = megatron_module(".mapping").ShardedTensor
        rank, world_size = self.runtime.rank, self.runtime.world_size
        if spec.sharded:
            return sharded_tensor.from_rank_offsets(spec.name, tensor, (0, rank, world_size), replica_id=0)
        return sharded_tensor.from_rank_offsets(spec.name, tensor, replica_id=rank)

    def state_dict(self, backend: str, tensors: list[tuple[TensorSpec, torch.Tensor]]) -> dict[str, Any]:
        """What the backend's save and load take: DTensors or Megatron ShardedTensors for sharded ones."""
        value = self._megatron_value if backend == MEGATRON_ASYNC else self._dcp_value
        return {spec.name: value(spec, tensor) for spec, tensor in tensors}

    # -- saving -----------------------------------------------------------------------------

    def save(self, backend: str, live: LiveState, directory: Path, on_return: Callable[[], None]) -> float:
        """Save `live` into the existing empty `directory`; the seconds the call blocked."""
        state_dict = self.state_dict(backend, list(live.items()))
        if backend == MEGATRON_ASYNC:
            return self._save_megatron(state_dict, directory, on_return)
        writer = FileSystemWriter(directory, thread_count=self.threads, sync_files=True, overwrite=False)
        start = time.perf_counter()
        if backend == DCP_SYNC:
            dcp_save(state_dict, storage_writer=writer)
            blocking = time.perf_counter() - start
            on_return()
            return blocking
        kind = AsyncCheckpointerType.PROCESS if backend == DCP_ASYNC_PROCESS else AsyncCheckpointerType.THREAD
        staging = self.staging_of(backend)
        stager = DefaultStager(
            StagingOptions(
                use_pinned_memory=staging.pinned_memory,
                use_shared_memory=staging.shared_memory,
                use_async_staging=False,
                use_non_blocking_copy=staging.non_blocking,
            )
        )
        try:
            response = async_save(state_dict, storage_writer=writer, async_checkpointer_type=kind, async_stager=stager)
            blocking = time.perf_counter() - start
            on_return()
            upload = response.upload_completion if isinstance(response, AsyncSaveResponse) else response
            try:
                upload.result(timeout=max(0.0, start + self.timeout_s - time.perf_counter()))
            except concurrent.futures.TimeoutError:
                raise SaveTimeout(f"the background writer did not finish within {self.timeout_s:.0f} s") from None
        finally:
            stager.close()
        return blocking

    def _save_megatron(self, state_dict: dict[str, Any], directory: Path, on_return: Callable[[], None]) -> float:
        """`dist_checkpointing.save(async_sharded_save=True)` scheduled on an `AsyncCallsQueue`.

        A non-persistent queue stages in this process with `preload_tensors(..., non_blocking=True)`
        and forks the writer: the path of the ROCm pinned-memory segfault.
        """
        serialization = megatron_module("")
        strategies = megatron_module(".strategies.torch")
        async_utils = megatron_module(".strategies.async_utils")
        with runtime.megatron_device_calls(self.runtime.device):
            strategy = strategies.TorchDistSaveShardedStrategy("torch_dist", 1, thread_count=self.threads)
            start = time.perf_counter()
            request = serialization.save(state_dict, str(directory), strategy, async_sharded_save=True)
            calls = async_utils.AsyncCallsQueue(persistent=False)
            calls.schedule_async_request(request)
            blocking = time.perf_counter() - start
            on_return()
            while not calls.maybe_finalize_async_calls(blocking=False):
                if time.perf_counter() - start > self.timeout_s:
                    for active in calls.async_calls:
                        active.async_caller.close(abort=True)
                    reason = "" if megatron_has_psutil() else "; psutil is not installed, so its writer process died"
                    raise SaveTimeout(f"Megatron-Core's writer did not finish within {self.timeout_s:.0f} s{reason}")
                time.sleep(_POLL_S)
        return blocking

    # -- loading ----------------------------------------------------------------------------

    def load(self, backend: str, specs: list[TensorSpec], directory: Path) -> dict[str, torch.Tensor]:
        """This rank's part of every tensor, loaded into fresh zeroed memory."""
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
                loaded = megatron_module("").load(state_dict, str(directory))
            return {name: value for name, value in loaded.items() if isinstance(value, torch.Tensor)}
        dcp_load(state_dict, storage_reader=FileSystemReader(directory))
        return {name: value.to_local() if isinstance(value, DTensor) else value for name, value in state_dict.items()}
