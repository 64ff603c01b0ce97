"""Whose code a save ran: the installed library's own (Megatron-Core, PyTorch) or the project's.

A staging verdict must tell "the project replaced the writer" from "the installed Megatron-Core does
this itself": a Megatron-LM fork may make its own `preload_tensors` copy with non_blocking=False on
HIP, which the project cannot change and the job may accept. The names an object carries
(`__module__`, `__qualname__`) are copied by `functools.wraps` and can be set by hand, so the
decision rests on where its code was compiled from (`__code__.co_filename`, a class's source file):
inside the library's package folder, and named as one of its modules, it is the library's own;
anywhere else it is the project's. No project code is run and no git command: files only.
"""

from __future__ import annotations

import functools
import inspect
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROJECT = "project"
# A name longer than this is cut in the report: a generated class or a closure's qualified name has no bound.
_LONGEST_NAME = 160
# How many wrappers (functools.partial, staticmethod, bound methods) are looked through for the function inside.
_DEEPEST_WRAPPING = 8


def named(label: str, version: str | None, commit: str | None) -> str:
    """`Megatron-Core 0.16.1 (git 0123abcd4567)`, or as much of it as is known."""
    return label + (f" {version}" if version else "") + (f" (git {commit[:12]})" if commit else "")


@dataclass(frozen=True)
class Library:
    """An installed library whose code may do the staging, as this interpreter imports it."""

    label: str  # as a person names it: "Megatron-Core", "PyTorch"
    package: str  # its import name: "megatron.core", "torch"
    folder: str  # its package folder, resolved
    version: str | None
    commit: str | None  # the git commit it was built or checked out from, where that is known

    def named(self) -> str:
        return named(self.label, self.version, self.commit)


@dataclass(frozen=True)
class Origin:
    """Where one class or function was defined: `owner` is a library's label, or PROJECT."""

    owner: str
    module: str
    qualname: str
    file: str | None
    line: int | None
    version: str | None = None  # the library's; None for the project
    commit: str | None = None

    @property
    def is_project(self) -> bool:
        return self.owner == PROJECT

    def where(self) -> str:
        """`file:line`, the file relative to the working directory when it is below it."""
        if self.file is None:
            return "source file unknown"
        try:
            shown = str(Path(self.file).relative_to(Path.cwd()))
        except ValueError:
            shown = self.file
        return f"{shown}:{self.line}" if self.line else shown

    def describe(self) -> str:
        """Who, what and where, in one phrase: `the project's ROCmFileSystemWriterAsync (module, file:line)`."""
        if self.is_project:
            return f"the project's {self.qualname} ({self.module}, {self.where()})"
        return f"{named(self.owner, self.version, self.commit)}'s own {self.qualname}"

    def to_json(self) -> dict[str, object]:
        return {
            "owner": self.owner,
            "name": f"{self.module}.{self.qualname}",
            "file": self.file,
            "line": self.line,
            "version": self.version,
            "commit": self.commit,
        }


def _clip(name: str) -> str:
    return name if len(name) <= _LONGEST_NAME else name[: _LONGEST_NAME - 3] + "..."


def unwrapped(thing: Any) -> Any:
    """The function or class inside staticmethods, classmethods, bound methods and functools.partials."""
    for _ in range(_DEEPEST_WRAPPING):
        if isinstance(thing, functools.partial):
            thing = thing.func
        elif isinstance(thing, staticmethod | classmethod) or inspect.ismethod(thing):
            thing = thing.__func__
        else:
            break
    return thing


def name_of(thing: Any) -> str:
    """`module.qualname` of what is inside the wrappers; never the repr of an object (a partial's repr holds
    every argument it binds: once a whole bucket list of tensors)."""
    inner = unwrapped(thing)
    module = getattr(inner, "__module__", None)
    qualname = getattr(inner, "__qualname__", None)
    if not isinstance(qualname, str):
        qualname = f"<{type(inner).__qualname__} object>"
    return _clip(f"{module}.{qualname}" if isinstance(module, str) else qualname)


def _source(inner: Any) -> tuple[str | None, int | None]:
    code = getattr(inner, "__code__", None)
    if code is not None:
        return code.co_filename, code.co_firstlineno
    if inspect.isclass(inner):
        try:
            file = inspect.getsourcefile(inner)
            _, line = inspect.findsource(inner)
        except (OSError, TypeError):  # a class made at run time, or one whose module has no source file
            return None, None
        return file, line + 1
    return None, None


def _inside(file: str, folder: str) -> bool:
    try:
        resolved = os.path.realpath(file)
    except (OSError, ValueError):
        return False
    return resolved.startswith(folder.rstrip(os.sep) + os.sep)


def origin_of(thing: Any, libraries: tuple[Library, ...]) -> Origin:
    """Where `thing` (a class, a function, or one wrapped) was defined, and whose it is."""
    inner = unwrapped(thing)
    module = getattr(inner, "__module__", None)
    module = _clip(module) if isinstance(module, str) else "?"
    qualname = name_of(inner).removeprefix(f"{module}.")
    file, line = _source(inner)
    for library in libraries:
        own_module = module == library.package or module.startswith(library.package + ".")
        if file is not None and own_module and _inside(file, library.folder):
            return Origin(library.label, module, qualname, file, line, library.version, library.commit)
    return Origin(PROJECT, module, qualname, file, line)
