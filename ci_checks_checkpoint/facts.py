"""What the report says the run ran on: software versions, the host, the file system. No torch here: the
process that owns a run knows these before any rank has started (runtime.device_facts adds the
device's).

Everything is read from files; nothing is executed. A fact that cannot be found is null in the
report, never a failure.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import platform
import re
from pathlib import Path
from typing import Any

from ci_checks_checkpoint.options import Options, distribution_version

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


def cpu_name() -> str:
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
    return free_bytes(_SHARED_MEMORY)


def rocm_release() -> str | None:
    """The ROCm release installed, from /opt/rocm/.info/version."""
    text = _read(_ROCM_VERSION)
    return text.splitlines()[0] if text else None


def driver() -> str | None:
    """The kernel driver: NVIDIA's module version, or amdgpu's where it is a module with a version."""
    nvidia = _read(_NVIDIA_DRIVER)
    if nvidia is not None:
        match = re.search(r"Kernel Module\s+(?:for \S+\s+)?(\S+)", nvidia)
        return f"nvidia {match.group(1)}" if match else nvidia.splitlines()[0]
    amdgpu = _read(_AMDGPU_DRIVER)
    return f"amdgpu {amdgpu}" if amdgpu else None


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


def distribution_commit(name: str) -> str | None:
    """The git commit a distribution was installed from (`pip install git+URL@REF`), as pip recorded it in
    its direct_url.json; None for one installed from an index or a folder."""
    try:
        text = importlib.metadata.distribution(name).read_text("direct_url.json")
        record = json.loads(text) if text else {}
    except (importlib.metadata.PackageNotFoundError, ValueError, OSError):
        return None
    commit = record.get("vcs_info", {}).get("commit_id") if isinstance(record, dict) else None
    return commit if isinstance(commit, str) else None


def megatron_core_commit() -> str | None:
    """The commit of the Megatron-Core this interpreter imports: its Megatron-LM checkout's, else the one its
    distribution was installed from."""
    return megatron_lm_commit() or distribution_commit("megatron-core")


def free_bytes(path: Path) -> int | None:
    """Bytes an unprivileged writer may still use on the file system holding `path`."""
    try:
        stat = os.statvfs(path)
    except OSError:
        return None
    return stat.f_bavail * stat.f_frsize


def where(path: Path | str, folder: Path | None = None) -> str:
    """`path` with the file system and free space of `folder` (by default its own), as error messages name it."""
    system = filesystem(folder or Path(path))
    free = free_bytes(folder or Path(path))
    parts = [f"{system['type']} at {system['mount_point']}"] if system else []
    parts += [f"{free / (1 << 20):.1f} MiB free"] if free is not None else []
    return f"{path} ({', '.join(parts)})" if parts else str(path)


def base_platform(options: Options, workdir: Path, world_size: int, timeout_s: float) -> dict[str, Any]:
    """Every platform fact of the report, as far as it is known without torch; the ranks fill in the rest."""
    torch_version = distribution_version("torch")
    return {
        "torch": torch_version,
        "cuda": None,
        "hip": None,
        "rocm": None,
        "driver": driver(),
        "collectives": None,
        "device": None,
        "device_kind": None,
        "architecture": None,
        "gpu_count": None,
        "host_memory_bytes": _meminfo("MemTotal"),
        "cpu_count": os.cpu_count(),
        "megatron_core": distribution_version("megatron-core"),
        "megatron_lm_commit": megatron_core_commit(),
        "world_size": world_size,
        "process_group": None,
        "python": platform.python_version(),
        "workdir": str(workdir),
        "workdir_filesystem": filesystem(workdir),
        "staging": {},
        "size_bytes": options.size,
        "tensors": options.tensors,
        "threads": options.threads,
        "seed": options.seed,
        "timeout_s": timeout_s,
        "crash_test": options.crash_test,
        "crash_size_bytes": None,
        "imports": list(options.imports),
        "setups": list(options.setups),
        "stubbed_imports": [] if options.stub_missing_imports else None,
        "setup_exceptions": [],
        "as_platform": None,
        "expect_staging": None,
        "reshard_ranks": None,
        "min_ratio": dict(options.min_ratio),
        "required": list(options.required),
        "emulation": None,
    }
