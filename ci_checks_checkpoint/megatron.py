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
import os
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

from ci_checks_checkpoint import attribution, facts, processes
from ci_checks_checkpoint.options import (
    MEGATRON_HINT,
    STAGING_PINNED,
    STAGING_SYNCHRONOUS,
    StagingExpectation,
    distribution_version,
    megatron_too_old,
)

OWN_MODULE = "megatron.core.dist_checkpointing.strategies.filesystem_async"
OWN_WRITER = "FileSystemWriterAsync"
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


@functools.cache
def library() -> attribution.Library:
    """The megatron-core this interpreter imports: where its package is, its version and its commit."""
    spec = importlib.util.find_spec("megatron.core")
    folder = os.path.realpath(Path(spec.origin).parent) if spec is not None and spec.origin else ""
    return attribution.Library("Megatron-Core", "megatron.core", folder, version(), facts.megatron_core_commit())


def _origin(thing: Any) -> attribution.Origin:
    return attribution.origin_of(thing, (library(),))


# The methods of the writer and of the strategy that decide how a save stages: which function stages, with
# which non_blocking, and which request is made. A project's replacement of any of them fails the check.
_WRITER_METHODS = ("preload_tensors", "get_save_function_and_args")
_STRATEGY_METHODS = ("async_save", "_get_save_and_finalize_callbacks")
_ROW_NAMES = 3  # replacements a row names; the JSON report has them all


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


@dataclass(frozen=True)
class StagingSeen:
    """What one rank's Megatron-Core save did to stage its tensors, and whose code did it. Plain data: ranks
    gather it."""

    writer: attribution.Origin  # the class of the writer the strategy instantiated
    preload: attribution.Origin  # the preload_tensors the save request calls
    # What of the save path the project replaced: (the role it has, where the replacement is defined).
    replaced: tuple[tuple[str, attribution.Origin], ...]
    requested_non_blocking: object  # the argument the request bound for it
    copies: int  # tensor copies made inside that call
    blocking_copies: int  # of them, those with non_blocking=False
    staged: int  # tensors it returned
    pinned: int  # of them, those in pinned host memory

    def _unexpected(self, accelerator: bool, expect: StagingExpectation) -> list[str]:
        """How the copies differ from what the run expects of them."""
        if self.copies == 0:
            return ["preload_tensors made no tensor copy"]
        found = []
        if expect.expected == STAGING_PINNED:
            if self.requested_non_blocking is not True:
                found.append(
                    f"the request binds preload_tensors with non_blocking={_short(self.requested_non_blocking)}"
                )
            if self.blocking_copies:
                found.append(f"{self.blocking_copies} of {self.copies} copies used non_blocking=False")
            if accelerator and self.pinned < self.staged:
                found.append(f"{self.staged - self.pinned} of {self.staged} staged tensors are in pageable memory")
        elif expect.expected == STAGING_SYNCHRONOUS and self.blocking_copies < self.copies:
            found.append(f"{self.copies - self.blocking_copies} of {self.copies} copies used non_blocking=True")
        return found

    def verdict(self, accelerator: bool, expect: StagingExpectation) -> tuple[bool, str, str]:
        """Passed, the row's text and the whole of it (the JSON report's)."""
        expected = f"expected: {expect.expected} ({expect.chosen_by})"
        unexpected = self._unexpected(accelerator, expect)
        if self.replaced:
            # The project's code: a failure whatever Megatron-Core does, with what its copies did.
            copies = f"{self.blocking_copies} of {self.copies} copies used non_blocking=False"
            observed = unexpected if copies in unexpected or not self.blocking_copies else [*unexpected, copies]
            first_role, first = self.replaced[0]
            others = [origin.qualname for _, origin in self.replaced[1:_ROW_NAMES]]
            more = len(self.replaced) - _ROW_NAMES
            also = [f"also {', '.join(others)}" + (f" and {more} more" if more > 0 else "")] if others else []
            row = "; ".join([f"{first.describe()} replaced {first_role}", *also, *observed])
            whole = [f"{role} is {origin.describe()}" for role, origin in self.replaced]
            return False, row, "; ".join([*whole, *observed, expected])
        own = self.preload.describe()
        if unexpected:
            text = f"{own}: {'; '.join(unexpected)}; {expected}"
            return False, text, f"{text}; writer: {self.writer.describe()}"
        if self.blocking_copies == self.copies:
            platform = " on HIP" if expect.hip else ""
            library_name = attribution.named(self.preload.owner, self.preload.version, self.preload.commit)
            text = (
                f"{library_name} stages synchronously{platform} itself: its own {self.preload.qualname} made "
                f"{self.copies} of {self.copies} copies with non_blocking=False; no project code replaced the "
                f"writer, its preload_tensors or the save strategy; {expected}"
            )
        else:
            if expect.expected != STAGING_PINNED:
                memory = "pinned memory not required"
            elif accelerator:
                memory = f"all {self.staged} staged tensors are pinned"
            else:
                memory = "on the CPU they return the tensors themselves, with no pinned memory to check"
            blocking = f", {self.blocking_copies} with non_blocking=False" if self.blocking_copies else ""
            text = (
                f"{own} made the save's {self.copies} copies to the host, "
                f"{self.copies - self.blocking_copies} with non_blocking=True{blocking}; {memory}"
            )
        return True, text, f"{text}; {expected}; writer: {self.writer.describe()}"

    def describe(self, accelerator: bool, expect: StagingExpectation) -> dict[str, object]:
        _, _, whole = self.verdict(accelerator, expect)
        return {
            "pinned_memory": accelerator and self.staged > 0 and self.pinned == self.staged,
            "non_blocking": self.copies > 0 and self.blocking_copies == 0,
            "shared_memory": False,
            "writer": f"{self.writer.module}.{self.writer.qualname}",
            "preload": f"{self.preload.module}.{self.preload.qualname}",
            "copies": self.copies,
            "blocking_copies": self.blocking_copies,
            "made_by": self.preload.to_json(),
            "replaced": [{"role": role, **origin.to_json()} for role, origin in self.replaced],
            "expected": expect.to_json(),
            "detail": whole,
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

    def __init__(self, request: Any, strategy: Any) -> None:
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
        defined = inspect.getattr_static(writer_class, "preload_tensors", None)
        if defined is not None and _origin(defined).is_project:
            function = defined  # the class overrides it, whatever the request holds
        self._facts: dict[str, Any] = {
            "writer": _origin(writer_class),
            "preload": _origin(function),
            "replaced": _replaced(writer_class, type(strategy), function),
            "requested_non_blocking": requested,
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


def _replaced(writer_class: type, strategy_class: type, preload: Any) -> tuple[tuple[str, attribution.Origin], ...]:
    """What of the save path is the project's code: the writer class and the methods that decide how it stages,
    the preload the request calls, `filesystem_async.FileSystemWriterAsync` as a program that imports it now
    gets it, the strategy class and its methods that make the request. Each once, in that order."""
    module_writer = module(".strategies.filesystem_async").FileSystemWriterAsync
    candidates: list[tuple[str, Any]] = [("Megatron-Core's writer class", writer_class)]
    candidates += [
        (f"{OWN_WRITER}.{name}", inspect.getattr_static(writer_class, name, None)) for name in _WRITER_METHODS
    ]
    candidates.append(("the preload the save request calls", preload))
    # A program that imports the module's name before strategies.torch binds it saves through it.
    candidates.append((f"filesystem_async.{OWN_WRITER}", module_writer))
    candidates.append(("Megatron-Core's save strategy", strategy_class))
    candidates += [
        (f"TorchDistSaveShardedStrategy.{name}", inspect.getattr_static(strategy_class, name, None))
        for name in _STRATEGY_METHODS
    ]
    found: list[tuple[str, attribution.Origin]] = []
    seen: set[tuple[str, str]] = set()
    for role, thing in candidates:
        if thing is None:
            continue
        origin = _origin(thing)
        if origin.is_project and (origin.module, origin.qualname) not in seen:
            seen.add((origin.module, origin.qualname))
            found.append((role, origin))
    return tuple(found)


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
