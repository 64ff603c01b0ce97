"""A probe of CUDA initialisation in every interpreter started with this folder on PYTHONPATH, and
`$CI_CHECKS_TEST_CUDA_PROBE` naming a file.

torch.cuda's entry points that reach the driver (`cudaGetDeviceCount` through is_available and
device_count, `cuInit` through init and the lazy initialisation) are wrapped to count their
calls as soon as torch.cuda is imported. On a CPU build torch never reaches the driver, so the
count of these calls stands in for driver initialisation, which cannot happen here. Every
process forked writes one line: its parent's command line, the calls its parent had made
before the fork, and whether torch.cuda was initialised. (A child of a forked process has the
same command line as its parent's parent; it says "a forked process" instead.) A fork server's children must see
none, or on a GPU they could not use it.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import json
import os
import sys
import types
from pathlib import Path

_LOG = os.environ.get("CI_CHECKS_TEST_CUDA_PROBE")
_ENTRY_POINTS = ("is_available", "device_count", "init", "_lazy_init", "set_device", "current_device")
calls: list[str] = []
# The process this interpreter started as; a forked child inherits it, so a child whose parent
# has this pid was forked by the interpreter itself (the fork server), not by one of its forks.
_STARTED_AS = os.getpid()


def _wrap(module: object) -> None:
    for name in _ENTRY_POINTS:
        real = getattr(module, name)

        def counted(*args: object, _real: object = real, _name: str = name, **kwargs: object) -> object:
            calls.append(_name)
            return _real(*args, **kwargs)  # type: ignore[operator]

        setattr(module, name, counted)
    if hasattr(sys.modules["torch"]._C, "_cuda_getDeviceCount"):  # a CUDA or ROCm build: the call itself
        real_count = sys.modules["torch"]._C._cuda_getDeviceCount

        def device_count_call() -> int:
            calls.append("cudaGetDeviceCount")
            return int(real_count())

        sys.modules["torch"]._C._cuda_getDeviceCount = device_count_call


class _Loader(importlib.abc.Loader):
    def __init__(self, inner: importlib.abc.Loader) -> None:
        self.inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self.inner.create_module(spec)

    def exec_module(self, module: object) -> None:
        self.inner.exec_module(module)  # type: ignore[arg-type]
        _wrap(module)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: object, target: object = None) -> importlib.machinery.ModuleSpec | None:
        if name != "torch.cuda":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            spec.loader = _Loader(spec.loader)
        return spec


def _forked() -> None:
    torch = sys.modules.get("torch")
    initialized = bool(torch is not None and torch.cuda.is_initialized())
    parent = os.getppid()
    try:
        command = Path(f"/proc/{parent}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        command = ""
    line = {
        "pid": os.getpid(),
        "parent": command if parent == _STARTED_AS else "a forked process",
        "calls_before_fork": list(calls),
        "initialized": initialized,
    }
    with Path(_LOG or os.devnull).open("a", encoding="utf-8") as log:
        log.write(json.dumps(line) + "\n")


if _LOG:
    import importlib.util

    sys.meta_path.insert(0, _Finder())
    os.register_at_fork(after_in_child=_forked)
