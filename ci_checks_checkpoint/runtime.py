"""The process the harness runs in: its device, its process group, how it stages tensors, and the
CPU stand-ins Megatron-Core's async writer needs on a build without an accelerator.
"""

from __future__ import annotations

import contextlib
import datetime
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from torch.distributed import FileStore  # type: ignore[attr-defined]

from ci_checks_checkpoint import facts, megatron, project
from ci_checks_checkpoint.options import UsageError

CPU_EMULATED = "cpu-emulated"
_TORCHRUN_VARIABLES = frozenset(
    {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE", "ROLE_RANK"}
    | {"ROLE_NAME", "ROLE_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"}
)


@dataclass(frozen=True)
class Runtime:
    device: torch.device
    rank: int
    world_size: int
    process_group_backend: str
    own_group: bool = True  # the harness started the process group (else it was there, and stays)

    @property
    def accelerator(self) -> bool:
        return self.device.type != "cpu"

    @property
    def device_kind(self) -> str:
        if not self.accelerator:
            return "cpu"
        return "rocm" if project.real_hip() else "cuda"


def under_torchrun() -> bool:
    return "TORCHELASTIC_RUN_ID" in os.environ or {"RANK", "WORLD_SIZE", "MASTER_ADDR"} <= os.environ.keys()


def leave_torchrun() -> None:
    """Make this process a standalone one-rank program although it inherited torchrun's environment
    (torchrun's agent store, in particular, would be joined instead of a store of its own)."""
    for name in list(os.environ):
        if name.startswith("TORCHELASTIC_") or name in _TORCHRUN_VARIABLES:
            del os.environ[name]


@dataclass(frozen=True)
class Group:
    """A process group of the crash test's own: its writers meet at a file, not at torchrun's store."""

    rank: int
    world_size: int
    store: Path  # a new file for every group; a killed group leaves it behind


def start(timeout_s: float, group: Group | None = None) -> Runtime:
    """Pick the device and join (under torchrun, or `group`) or start (otherwise, one rank) a process group.

    Every backend needs one: DCP's process checkpointer and Megatron-Core both call collectives.
    Collectives time out with the saves so that a dead rank cannot hang the others.
    """
    if not dist.is_available():
        raise UsageError("this torch build has no torch.distributed")
    if group is None and dist.is_initialized():  # the project's own setup started one (the Python API)
        found = torch.device("cuda", torch.cuda.current_device()) if torch.cuda.is_available() else torch.device("cpu")
        backend_name = str(dist.get_backend())
        return Runtime(found, dist.get_rank(), dist.get_world_size(), backend_name, own_group=False)
    if torch.cuda.is_available():
        local_rank = group.rank if group is not None else int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
        # DCP's async save needs a CPU backend beside NCCL (RCCL on ROCm).
        backend = "cpu:gloo,cuda:nccl"
    else:
        device = torch.device("cpu")
        backend = "gloo"
    timeout = datetime.timedelta(seconds=timeout_s)
    if group is not None:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")  # as below, for DCP's checkpoint process
        # The store is opened by path, not through a file:// address: torch cuts such an address at a `#`
        # or `?` and reads no %-escape, so a run folder under a path holding one would meet elsewhere.
        store = FileStore(str(group.store), group.world_size)
        store.set_timeout(timeout)
        dist.init_process_group(backend, store=store, rank=group.rank, world_size=group.world_size, timeout=timeout)
    elif under_torchrun():
        dist.init_process_group(backend, timeout=timeout)
    else:
        # DCP's process checkpointer starts its helper's group on MASTER_ADDR (else this host's
        # fully qualified name, which a sandboxed runner may not resolve).
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        # Port 0: the one-rank store listens wherever the system lets it; nobody else connects.
        dist.init_process_group(backend, init_method="tcp://127.0.0.1:0", rank=0, world_size=1, timeout=timeout)
    return Runtime(device, dist.get_rank(), dist.get_world_size(), backend)


def stop(rt: Runtime | None = None) -> None:
    """End what the run started in this process: DCP's checkpoint process, Megatron-Core's result-queue
    manager, the process group (unless it was there before the run)."""
    _stop_dcp_checkpoint_process()
    megatron.stop_result_queue()
    if dist.is_initialized() and (rt is None or rt.own_group):
        dist.destroy_process_group()


def _stop_dcp_checkpoint_process() -> None:
    # DCP keeps its process checkpointer's helper in a module global for the life of the
    # program and offers no public way to end it; dropping the reference makes it exit now.
    from torch.distributed.checkpoint import _async_process_executor

    if getattr(_async_process_executor, "_CHECKPOINT_PROCESS", None) is not None:
        _async_process_executor._CHECKPOINT_PROCESS = None


@dataclass(frozen=True)
class Staging:
    """How tensors are copied off the device before an async save."""

    pinned_memory: bool
    non_blocking: bool
    shared_memory: bool = False

    def describe(self) -> dict[str, bool]:
        return {
            "pinned_memory": self.pinned_memory,
            "non_blocking": self.non_blocking,
            "shared_memory": self.shared_memory,
        }


def staging(device: torch.device) -> Staging:
    """Pinned host memory and non-blocking copies wherever the device supports them."""
    if device.type == "cpu":
        return Staging(pinned_memory=False, non_blocking=False)
    try:
        torch.empty(16, pin_memory=True)
    except RuntimeError:
        return Staging(pinned_memory=False, non_blocking=False)
    return Staging(pinned_memory=True, non_blocking=True)


@contextlib.contextmanager
def megatron_device_calls(runtime_device: torch.device) -> Iterator[None]:
    """Megatron-Core's async writer calls four `torch.cuda` functions unconditionally.

    On an accelerator they are the real ones. On a CPU-only build they are replaced, for the
    duration of the call only, by CPU stand-ins; results obtained this way are labelled
    `cpu-emulated`. The stand-ins are refused whenever an accelerator is present.
    """
    if runtime_device.type != "cpu":
        yield
        return
    if torch.cuda.is_available():
        raise RuntimeError("refusing CPU stand-ins for torch.cuda while an accelerator is present")
    stand_ins: dict[str, Callable[..., Any]] = {
        "synchronize": lambda device=None: None,
        # Megatron-Core allocates its collective flags on this "device"; gloo takes CPU tensors.
        "current_device": lambda: "cpu",
        "set_device": lambda device: None,
        "device_count": lambda: 1,
    }
    originals = {name: getattr(torch.cuda, name) for name in stand_ins}
    for name, function in stand_ins.items():
        setattr(torch.cuda, name, function)
    try:
        yield
    finally:
        for name, function in originals.items():
            setattr(torch.cuda, name, function)


def _collectives_version(runtime: Runtime) -> str | None:
    """NCCL's version, or RCCL's on ROCm (torch reports it through the same call)."""
    if not runtime.accelerator:
        return None
    try:
        version = torch.cuda.nccl.version()  # type: ignore[no-untyped-call]
    except (RuntimeError, AttributeError):
        return None
    name = "RCCL" if project.real_hip() else "NCCL"
    return f"{name} {'.'.join(map(str, version)) if isinstance(version, tuple) else version}"


def _architecture(runtime: Runtime) -> str | None:
    """The gfx architecture on ROCm, the compute capability on CUDA."""
    if not runtime.accelerator:
        return None
    if project.real_hip():
        return str(torch.cuda.get_device_properties(runtime.device).gcnArchName)
    major, minor = torch.cuda.get_device_capability(runtime.device)
    return f"sm_{major}{minor}"


def device_facts(runtime: Runtime) -> dict[str, Any]:
    """The platform facts that need torch (the rest are facts.base_platform's); torch.version.hip as the
    build has it, whatever --as-platform made it read."""
    hip = project.real_hip()
    return {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "hip": hip,
        "rocm": facts.rocm_release() if hip else None,
        "collectives": _collectives_version(runtime),
        "device": torch.cuda.get_device_name(runtime.device) if runtime.accelerator else facts.cpu_name(),
        "device_kind": runtime.device_kind,
        "architecture": _architecture(runtime),
        "gpu_count": torch.cuda.device_count() if runtime.accelerator else 0,
        "megatron_core": megatron.version(),
        "world_size": runtime.world_size,
        "process_group": runtime.process_group_backend,
    }
