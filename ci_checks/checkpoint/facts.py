"""What the report says the run ran on: software versions, the device, the host, the file system.

Everything is read from files and from torch; nothing is executed. A fact that cannot be found
is null in the report, never a failure.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import re
from pathlib import Path
from typing import Any

import torch

from ci_checks.checkpoint import megatron
from ci_checks.checkpoint.runtime import Runtime

_NVIDIA_DRIVER = Path("/proc/driver/nvidia/version")
_AMDGPU_DRIVER = Path("/sys/module/amdgpu/version")
_ROCM_VERSION = Path("/opt/rocm/.info/version")
_MOUNTS = Path("/proc/self/mountinfo")
_SHARED_MEMORY = Path("/dev/shm")
_OCTAL_ESCAPE = re.compile(r"\\([0-7]{3})")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip() or None
    except OSError:
        return None


def _cpu_name() -> str:
    for line in (_read(Path("/proc/cpuinfo")) or "").splitlines():
        if line.startswith("model name"):
            return line.partition(":")[2].strip()
    return platform.machine() or "cpu"


def _meminfo(field: str) -> int | None:
    for line in (_read(Path("/proc/meminfo")) or "").splitlines():
        name, _, value = line.partition(":")
        if name == field and value.split():
            return int(value.split()[0]) * 1024
    return None


def host_memory_available() -> int | None:
    return _meminfo("MemAvailable")


def shared_memory_free() -> int | None:
    """Bytes free in /dev/shm, where torch puts shared-memory tensors; None where there is none."""
    try:
        stat = os.statvfs(_SHARED_MEMORY)
    except OSError:
        return None
    return stat.f_bavail * stat.f_frsize


def driver() -> str | None:
    """The kernel driver: NVIDIA's module version, or amdgpu's where it is a module with a version."""
    nvidia = _read(_NVIDIA_DRIVER)
    if nvidia is not None:
        match = re.search(r"Kernel Module\s+(?:for \S+\s+)?(\S+)", nvidia)
        return f"nvidia {match.group(1)}" if match else nvidia.splitlines()[0]
    amdgpu = _read(_AMDGPU_DRIVER)
    return f"amdgpu {amdgpu}" if amdgpu else None


def _collectives_version(runtime: Runtime) -> str | None:
    """NCCL's version, or RCCL's on ROCm (torch reports it through the same call)."""
    if not runtime.accelerator:
        return None
    try:
        version = torch.cuda.nccl.version()  # type: ignore[no-untyped-call]
    except (RuntimeError, AttributeError):
        return None
    name = "RCCL" if torch.version.hip else "NCCL"
    return f"{name} {'.'.join(map(str, version)) if isinstance(version, tuple) else version}"


def _architecture(runtime: Runtime) -> str | None:
    """The gfx architecture on ROCm, the compute capability on CUDA."""
    if not runtime.accelerator:
        return None
    if torch.version.hip:
        return str(torch.cuda.get_device_properties(runtime.device).gcnArchName)
    major, minor = torch.cuda.get_device_capability(runtime.device)
    return f"sm_{major}{minor}"


def filesystem(path: Path) -> dict[str, str] | None:
    """The type and mount point of the file system holding `path`, from /proc/self/mountinfo."""
    target = str(path.resolve())
    best: tuple[str, str] | None = None
    for line in (_read(_MOUNTS) or "").splitlines():
        fields = line.split()
        if "-" not in fields[6:]:
            continue
        mount_point = _OCTAL_ESCAPE.sub(lambda m: chr(int(m.group(1), 8)), fields[4])
        kind = fields[fields.index("-", 6) + 1]
        inside = target == mount_point or target.startswith(mount_point.rstrip("/") + "/")
        if inside and (best is None or len(mount_point) >= len(best[1])):
            best = (kind, mount_point)
    return None if best is None else {"type": best[0], "mount_point": best[1]}


def _git_folder(root: Path) -> Path | None:
    dot_git = root / ".git"
    if dot_git.is_file():  # a worktree or submodule: "gitdir: PATH"
        text = _read(dot_git) or ""
        return (root / text.removeprefix("gitdir:").strip()).resolve() if text.startswith("gitdir:") else None
    return dot_git if dot_git.is_dir() else None


def _ref(git: Path, ref: str) -> str | None:
    common = git / (_read(git / "commondir") or ".")
    for folder in dict.fromkeys((git, common.resolve())):
        loose = _read(folder / ref)
        if loose:
            return loose
        for line in (_read(folder / "packed-refs") or "").splitlines():
            sha, _, name = line.partition(" ")
            if name == ref:
                return sha
    return None


def megatron_lm_commit() -> str | None:
    """The commit of the Megatron-LM checkout megatron.core is imported from; None for a wheel."""
    try:
        spec = importlib.util.find_spec("megatron.core")
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    root = Path(spec.origin).resolve().parents[2]  # CHECKOUT/megatron/core/__init__.py
    git = _git_folder(root)
    head = _read(git / "HEAD") if git is not None else None
    if git is None or head is None:
        return None
    return _ref(git, head.removeprefix("ref:").strip()) if head.startswith("ref:") else head


def platform_facts(runtime: Runtime, workdir: Path) -> dict[str, Any]:
    """Platform facts for the report; the caller adds what the run itself decided."""
    device = runtime.device
    rocm = _read(_ROCM_VERSION) if torch.version.hip else None
    return {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "hip": torch.version.hip,
        "rocm": rocm.splitlines()[0] if rocm else None,
        "driver": driver() if runtime.accelerator else None,
        "collectives": _collectives_version(runtime),
        "device": torch.cuda.get_device_name(device) if runtime.accelerator else _cpu_name(),
        "device_kind": runtime.device_kind,
        "architecture": _architecture(runtime),
        "gpu_count": torch.cuda.device_count() if runtime.accelerator else 0,
        "host_memory_bytes": _meminfo("MemTotal"),
        "cpu_count": os.cpu_count(),
        "megatron_core": megatron.version(),
        "megatron_lm_commit": megatron_lm_commit(),
        "world_size": runtime.world_size,
        "process_group": runtime.process_group_backend,
        "python": platform.python_version(),
        "workdir": str(workdir),
        "workdir_filesystem": filesystem(workdir),
    }
