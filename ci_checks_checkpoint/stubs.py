"""Stand-ins for the modules a project imports that this machine does not have (`--stub-missing-imports`).

A real project's setup module imports far more than its save path needs: a serving engine, a cluster
scheduler, Megatron-LM's `megatron.training` (which megatron-core's wheel does not ship, though
`megatron` itself is there). A CPU runner lacks them, and without them the module never imports, so
the swap its setup makes is never seen. While the project's modules are imported and its setups
called, an import *the project's own code* makes of a module that no finder can find gets a stub:
a module whose every attribute is a stub class, which can be called (giving another stub), derived
from, used as a decorator or subscripted, so that `from engine.srt import Args`, `@cluster.remote`
and `class Actor(cluster.actor.ActorClass)` all work at import time. A value actually used (a stub
added to a number, say) fails there, as it would: the stub only gets the project's code as far as
its swap.

What is never stubbed:
- a module some finder finds: installed packages (torch, megatron.core, numpy), the project's own;
- an import made by an installed library or the standard library (its `try: import x except
  ImportError:` keeps its meaning), or by the harness itself (an `--import` that is not installed
  stays a usage error);
- a missing submodule of the project's own packages (a real fault of the project): only a missing
  top-level module is stubbed, with its submodules, and a missing submodule of an installed package
  (`megatron.training` beside a real `megatron.core`).

Every stub made is recorded (the report lists them), and once the project's code has run they are
taken out of `sys.modules`, so that nothing imported later (Megatron-Core's strategies, a save) finds
them; the project's modules keep the ones they bound.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.abc
import importlib.machinery
import site
import sys
import sysconfig
import types
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

# Frames of the import machinery itself, between the code that imports and a finder: the frozen bootstrap and
# importlib.import_module.
_BOOTSTRAP = "<frozen importlib._bootstrap"
_IMPORT_MODULE = frozenset({importlib.__file__, str(Path(importlib.__file__).resolve())})
HARNESS_PACKAGES = ("ci_checks_checkpoint", "ci_checks")
"""The harness, and the command line it is started from (`ci-checks checkpoint`): never the project's code."""
# Every stub made in this process, in order: the project's modules keep what they bound from them.
_made_here: list[str] = []


class StubClass(type):
    """The metaclass of every stub: an attribute a stub lacks is another stub, and calling a stub (not a class
    the project derived from one) gives another stub."""

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):  # probes (pickle, inspect, typing) see a plain class
            raise AttributeError(name)
        found = _stub_class(cls.__module__, f"{cls.__qualname__}.{name}")
        setattr(cls, name, found)  # the same stub each time: `ray.remote is ray.remote`
        return found

    def __call__(cls, *args: object, **kwargs: object) -> Any:
        if "_ci_checks_stub" not in cls.__dict__:  # a project's class derived from a stub: a real instance
            return super().__call__(*args, **kwargs)
        return _stub_class(cls.__module__, f"{cls.__qualname__}()")

    def __getitem__(cls, item: object) -> Any:  # `ObjectRef[int]` in an annotation
        return cls

    def __iter__(cls) -> Iterator[Any]:
        return iter(())

    def __repr__(cls) -> str:
        return f"<stub {cls.__module__}.{cls.__qualname__}>"


def _stub_class(module: str, qualname: str) -> StubClass:
    name = qualname.rpartition(".")[2]
    return StubClass(name, (), {"__module__": module, "__qualname__": qualname, "_ci_checks_stub": True})


class StubModule(types.ModuleType):
    """A module that is not installed, as `--stub-missing-imports` gives it to the project's code. `twin`: the
    stub its parent gave for the same name before it was imported as a module (`from a import b`, then `from
    a.b import C`), whose attributes it gives, so that both ways reach the same stubs."""

    def __init__(self, name: str, twin: StubClass | None = None) -> None:
        super().__init__(name)
        self._ci_checks_twin = twin

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):  # `from m import *` reads __all__, tools probe others
            raise AttributeError(name)
        twin = self.__dict__.get("_ci_checks_twin")
        found = getattr(twin, name) if twin is not None else _stub_class(self.__name__, name)
        setattr(self, name, found)
        return found

    def __repr__(self) -> str:
        return f"<stub module {self.__name__!r} (not installed; --stub-missing-imports)>"


class _StubLoader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        parent_name, _, child = spec.name.rpartition(".")
        parent = sys.modules.get(parent_name) if parent_name else None
        twin = vars(parent).get(child) if parent is not None else None
        return StubModule(spec.name, twin if isinstance(twin, StubClass) else None)

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing to run: every attribute is made when it is first read."""


@functools.cache
def _installed_roots() -> tuple[Path, ...]:
    """The interpreter's folders of installed code: the standard library and every site-packages."""
    paths = sysconfig.get_paths()
    found = [paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in paths]
    found += site.getsitepackages() if hasattr(site, "getsitepackages") else []
    found += [site.getusersitepackages()] if hasattr(site, "getusersitepackages") else []
    return tuple(dict.fromkeys(Path(path).resolve() for path in found))


@functools.cache
def is_installed_file(filename: str) -> bool:
    """Whether `filename` is code of the interpreter's installed libraries (site-packages, the standard library)."""
    if filename.startswith("<"):  # frozen modules are the standard library's; `python -c` code is not
        return filename.startswith("<frozen ")
    path = Path(filename).resolve()
    return any(root == path or root in path.parents for root in _installed_roots())


def _is_installed_package(module: types.ModuleType) -> bool:
    places = [*getattr(module, "__path__", ())] or [getattr(module, "__file__", None) or "<unknown>"]
    return all(is_installed_file(str(place)) for place in places)


class StubFinder(importlib.abc.MetaPathFinder):
    """The last finder on `sys.meta_path` while it is active: an import reaches it only when every other finder
    failed. `project_packages`: top-level names of the project's own modules, whose imports are the project's
    wherever it is installed."""

    def __init__(self, project_packages: Iterable[str]) -> None:
        self.project_packages = frozenset(project_packages)
        self.made: list[str] = []
        self._loader = _StubLoader()

    def _importer_is_project(self) -> bool:
        frame = sys._getframe(2)  # above find_spec and this method
        while frame is not None and (
            frame.f_code.co_filename.startswith(_BOOTSTRAP) or frame.f_code.co_filename in _IMPORT_MODULE
        ):
            frame = frame.f_back  # type: ignore[assignment]
        if frame is None:
            return False
        importer = str(frame.f_globals.get("__name__", ""))
        top = importer.partition(".")[0]
        if top in HARNESS_PACKAGES:
            return False
        return top in self.project_packages or not is_installed_file(frame.f_code.co_filename)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        parent_name, _, _ = fullname.rpartition(".")
        parent = sys.modules.get(parent_name) if parent_name else None
        if isinstance(parent, StubModule):
            pass  # below a stub everything is a stub, whoever imports it
        elif not self._importer_is_project():
            return None
        elif parent is not None and not _is_installed_package(parent):
            return None  # a submodule the project's own package lacks is the project's fault, not a missing package
        self.made.append(fullname)
        _made_here.append(fullname)
        return importlib.machinery.ModuleSpec(fullname, self._loader, is_package=True)

    def remove(self) -> None:
        """Take the stubs out of `sys.modules` and off the real packages they were set on."""
        for name in reversed(self.made):
            if isinstance(sys.modules.get(name), StubModule):
                del sys.modules[name]
            parent_name, _, child = name.rpartition(".")
            parent = sys.modules.get(parent_name)
            if parent is not None and isinstance(getattr(parent, child, None), StubModule):
                delattr(parent, child)


def made_in_this_process() -> list[str]:
    """The modules stubbed in this process so far, sorted: those of a test that imported the project's module
    itself, under `missing_imports_stubbed`, before it called the Python API, included."""
    return sorted(set(_made_here))


def active() -> bool:
    """Whether the project's missing imports are being stubbed now."""
    return any(isinstance(finder, StubFinder) for finder in sys.meta_path)


@contextlib.contextmanager
def missing_imports_stubbed(enabled: bool, project_modules: Iterable[str]) -> Iterator[list[str]]:
    """While inside, the project's imports of modules that are not installed get stubs; the names of those
    made, in order (empty when not `enabled`)."""
    if not enabled:
        yield []
        return
    finder = StubFinder(name.partition(".")[0] for name in project_modules)
    sys.meta_path.append(finder)
    try:
        yield finder.made
    finally:
        sys.meta_path.remove(finder)
        finder.remove()
