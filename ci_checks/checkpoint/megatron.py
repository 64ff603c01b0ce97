"""Megatron-Core, as the project under test has it: found, versioned, imported after the project's own
modules, and watched while it saves.

The seed's regression was a project's subclass of Megatron-Core's `FileSystemWriterAsync`,
installed as `filesystem_async.FileSystemWriterAsync` before `strategies.torch` bound the name,
whose `preload_tensors` forced `non_blocking=False`. A staging fact written down in advance
cannot see that; so the harness looks at the save itself: which writer class the strategy
instantiated, which `preload_tensors` the save request calls and with what argument, the
`non_blocking` of every copy that call makes, and on an accelerator whether what it returned
is pinned.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import inspect
import re
import sys
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import torch
from torch.distributed.checkpoint.filesystem import FileSystemWriter
from torch.overrides import TorchFunctionMode

from ci_checks.checkpoint import processes
from ci_checks.checkpoint.options import MEGATRON_HINT, distribution_version, megatron_too_old

OWN_MODULE = "megatron.core.dist_checkpointing.strategies.filesystem_async"
OWN_WRITER = "FileSystemWriterAsync"
OWN_PRELOAD = f"{OWN_WRITER}.preload_tensors"
_PACKAGE_INFO = re.compile(r"^(MAJOR|MINOR|PATCH|PRE_RELEASE)\s*=\s*['\"]?([^'\"\s#]*)", re.MULTILINE)
# The strategy modules a save goes through; importing them binds the writer class.
STRATEGY_MODULES = ("", ".mapping", ".strategies.filesystem_async", ".strategies.torch", ".strategies.async_utils")


def module(name: str) -> ModuleType:
    # megatron-core ships no type information, so it is imported by name; it also warns at
    # import about optional fused kernels (Transformer Engine, Apex) that saving does not use.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return importlib.import_module(f"megatron.core.dist_checkpointing{name}")


def version() -> str | None:
    """The version of the megatron-core this interpreter would import (its package_info.py, which
    a Megatron-LM checkout on the path has too), else its distribution's; None when absent."""
    try:
        spec = importlib.util.find_spec("megatron.core")
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.origin is not None:
        try:
            text = (Path(spec.origin).parent / "package_info.py").read_text(encoding="utf-8")
        except OSError:
            text = ""
        parts = dict(_PACKAGE_INFO.findall(text))
        if {"MAJOR", "MINOR", "PATCH"} <= parts.keys():
            return f"{parts['MAJOR']}.{parts['MINOR']}.{parts['PATCH']}{parts.get('PRE_RELEASE', '')}"
    return distribution_version("megatron-core")


def unusable() -> str | None:
    """Why the megatron-async backend cannot run here, or None. Imports Megatron-Core's strategies:
    call it only after the project's own modules (--import) are imported."""
    found = version()
    if found is None:
        return f"megatron-core is not installed: {MEGATRON_HINT}"
    too_old = megatron_too_old(found)
    if too_old is not None:
        return too_old
    try:
        for name in STRATEGY_MODULES:
            module(name)
    except Exception as error:  # whatever its import raises, it is why the backend cannot run
        return f"megatron-core {found} is installed but cannot be imported: {type(error).__name__}: {error}"
    return None


def stop_result_queue() -> None:
    """Megatron-Core keeps the queue its writers report to in a module global, served by a manager process it
    spawns on first use (about 275 MB) and stops only when the program exits; the harness stops it when
    it is done, so that no run (and no call of the Python API) leaves it behind."""
    loaded = sys.modules.get(OWN_MODULE)
    queue = getattr(loaded, "_results_queue", None)
    if queue is None:
        return
    manager = getattr(queue, "_manager", None)
    loaded._results_queue = None  # type: ignore[union-attr]
    if manager is not None:
        manager.shutdown()


def has_psutil() -> bool:
    """Megatron-Core's writer process dies without psutil, and its parent then waits forever."""
    return bool(module(".strategies.filesystem_async").HAVE_PSUTIL)


def _path(thing: Any) -> str:
    return f"{getattr(thing, '__module__', '?')}.{getattr(thing, '__qualname__', repr(thing))}"


def _is_own(thing: Any, qualname: str) -> bool:
    return getattr(thing, "__module__", None) == OWN_MODULE and getattr(thing, "__qualname__", None) == qualname


@dataclass(frozen=True)
class StagingSeen:
    """What one rank's Megatron-Core save did to stage its tensors. Plain data: ranks gather it."""

    writer: str  # the class of the writer the strategy instantiated
    writer_is_own: bool
    preload: str  # the preload_tensors the save request calls
    preload_is_own: bool
    requested_non_blocking: object  # the argument the request bound for it
    copies: int  # tensor copies made inside that call
    blocking_copies: int  # of them, those with non_blocking=False
    staged: int  # tensors it returned
    pinned: int  # of them, those in pinned host memory
    module_writer: str  # filesystem_async.FileSystemWriterAsync as that module has it now
    module_writer_is_own: bool

    def problems(self, accelerator: bool) -> list[str]:
        found = []
        if not self.writer_is_own:
            found.append(f"the save instantiated {self.writer}, not Megatron-Core's own {OWN_MODULE}.{OWN_WRITER}")
        if not self.preload_is_own:
            found.append(f"its preload_tensors is {self.preload}, which overrides Megatron-Core's")
        if self.requested_non_blocking is not True:
            found.append(f"the save request binds preload_tensors with non_blocking={self.requested_non_blocking!r}")
        if self.copies == 0:
            found.append("preload_tensors made no tensor copy")
        if self.blocking_copies:
            found.append(f"{self.blocking_copies} of {self.copies} copies in preload_tensors used non_blocking=False")
        if accelerator and self.pinned < self.staged:
            found.append(f"{self.staged - self.pinned} of {self.staged} staged tensors are in pageable memory")
        if not self.module_writer_is_own and self.module_writer != self.writer:
            found.append(
                f"filesystem_async.{OWN_WRITER} is {self.module_writer}: a program that imports it before "
                "strategies.torch saves through it"
            )
        return found

    def verdict(self, accelerator: bool) -> tuple[bool, str]:
        problems = self.problems(accelerator)
        if problems:
            return False, "; ".join(problems)
        memory = (
            f"all {self.staged} staged tensors are pinned"
            if accelerator
            else "on the CPU those return the tensors themselves, and there is no pinned memory to check"
        )
        return True, (
            f"the save instantiated Megatron-Core's own {OWN_WRITER} and called its preload_tensors, whose "
            f"{self.copies} copies to the host all used non_blocking=True; {memory}"
        )

    def describe(self, accelerator: bool) -> dict[str, object]:
        return {
            "pinned_memory": accelerator and self.staged > 0 and self.pinned == self.staged,
            "non_blocking": self.copies > 0 and self.blocking_copies == 0,
            "shared_memory": False,
            "writer": self.writer,
            "preload": self.preload,
            "copies": self.copies,
        }


class _CopyRecorder(TorchFunctionMode):
    """Records the `non_blocking` of every tensor copy made while it is entered."""

    def __init__(self) -> None:
        super().__init__()
        self.non_blocking: list[bool] = []

    def __torch_function__(
        self, func: Callable[..., Any], types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if name in ("to", "copy_"):
            flag = kwargs.get("non_blocking")
            if flag is None:  # positional: the first bool after the tensor, in every overload
                flag = next((arg for arg in args[1:] if isinstance(arg, bool)), False)
            self.non_blocking.append(bool(flag))
        elif name == "cpu":
            self.non_blocking.append(False)
        return func(*args, **kwargs)


def _tensors(value: Any, depth: int = 0) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, list | tuple) and depth < 6:
        for item in value:
            yield from _tensors(item, depth + 1)


def _writer_of(request: Any) -> Any:
    """The writer the strategy instantiated: its finalize step holds it (Megatron-Core 0.16:
    a closure over `(writer, metadata, dist_wrapper)`). None when it is not found there."""
    for finalize in request.finalize_fns:
        for cell in getattr(finalize, "__closure__", None) or ():
            try:
                content = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            for candidate in content if isinstance(content, list | tuple) else (content,):
                if isinstance(candidate, FileSystemWriter):
                    return candidate
    return None


class Watch:
    """Wraps a save request's preload so that what it does is recorded; `seen` after it ran."""

    def __init__(self, request: Any) -> None:
        strategies = module(".strategies.torch")
        writer = _writer_of(request)
        # Not found: the class strategies.torch instantiates, as the name is bound there.
        writer_class = type(writer) if writer is not None else strategies.FileSystemWriterAsync
        preload = request.preload_fn
        function = preload.func if isinstance(preload, functools.partial) else preload
        if isinstance(preload, functools.partial):
            requested = preload.keywords.get("non_blocking", preload.args[1] if len(preload.args) > 1 else True)
        else:
            requested = None
        staticmethod_ = inspect.getattr_static(writer_class, "preload_tensors", None)
        defined = getattr(staticmethod_, "__func__", staticmethod_)
        if defined is not None and not _is_own(defined, OWN_PRELOAD):
            function = defined  # the class overrides it, whatever the request holds
        module_writer = module(".strategies.filesystem_async").FileSystemWriterAsync
        self._facts: dict[str, Any] = {
            "writer": _path(writer_class),
            "writer_is_own": _is_own(writer_class, OWN_WRITER),
            "preload": _path(function) if function is not None else "none",
            "preload_is_own": function is not None and _is_own(function, OWN_PRELOAD),
            "requested_non_blocking": requested,
            "module_writer": _path(module_writer),
            "module_writer_is_own": _is_own(module_writer, OWN_WRITER),
        }
        self.seen: StagingSeen | None = None
        self.request = request._replace(preload_fn=self._preload(preload)) if preload is not None else request

    def _preload(self, preload: Callable[[], Any]) -> Callable[[], Any]:
        def watched() -> Any:
            recorder = _CopyRecorder()
            with recorder:
                staged = preload()
            tensors = list(_tensors(staged))
            self.seen = StagingSeen(
                **self._facts,
                copies=len(recorder.non_blocking),
                blocking_copies=recorder.non_blocking.count(False),
                staged=len(tensors),
                pinned=sum(t.device.type == "cpu" and t.is_pinned() for t in tensors),
            )
            return staged

        return watched


class WriterDied(Exception):
    """A signal killed Megatron-Core's writer process, or a process it forked to write a bucket."""


class WriterWatch:
    """The process a non-persistent AsyncCallsQueue forked for a save, and the processes that one forks to write
    its buckets. Megatron-Core says neither that one died nor of what: a writer killed by a signal (SIGSEGV,
    the ROCm pinned-memory fault) leaves the save to fail with "results_queue should not be empty", and a
    bucket writer killed by one leaves the writer waiting for it for good."""

    def __init__(self) -> None:
        self.process: Any = None  # a multiprocessing.Process; None until followed, or when nothing was forked
        self.bucket_writer: tuple[int, int] | None = None  # (pid, signal) of one a signal killed

    def follow(self, calls: Any) -> None:
        """Follow the writer of the call an AsyncCallsQueue scheduled last: right after it scheduled it, for the
        queue forgets the process once it has collected it."""
        if calls.async_calls:
            self.process = getattr(calls.async_calls[-1].async_caller, "process", None)

    def notice_bucket_writers(self) -> bool:
        """Whether a bucket writer was killed by a signal (noted once). The writer would wait for it forever;
        once this returns True the caller ends the writer, and Megatron-Core's own save fails on every rank."""
        if self.bucket_writer is not None or self.process is None or self.process.pid is None:
            return False
        killed = processes.killed_children(self.process.pid)
        if killed:
            self.bucket_writer = killed[0]
        return bool(killed)

    def death(self) -> str | None:
        """How the writer died, when a signal killed it or one of its bucket writers; call it before ending it
        (a bucket writer's death is the news even then: the writer was ended because of it)."""
        if self.bucket_writer is not None:
            pid, signum = self.bucket_writer
            return (
                f"a process Megatron-Core's writer forked to write a bucket (pid {pid}) was killed by "
                f"{processes.signal_name(signum)} during the save; the writer, which would have waited for it, "
                "was ended"
            )
        if self.process is not None and self.process.pid is not None:
            code = self.process.exitcode  # collects it, when it has exited
            if code is not None and code < 0:
                return (
                    f"Megatron-Core's writer process (pid {self.process.pid}) was killed by "
                    f"{processes.signal_name(-code)} during the save"
                )
        return None
