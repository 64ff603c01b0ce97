"""The project under test's own code, run in every process that saves as its training runs it before it
saves: the platform it believes it is on, its modules imported, its setup functions called.

A project's workaround for one platform is often applied inside a function of its own (the seed's
was in `initialize_model_and_optimizer()`, and in a conversion tool's `main()`), under
`if torch.version.hip:`. Importing its module runs none of that; calling the function does, and
the HIP branch runs only where `torch.version.hip` reads as set: on ROCm, or under the emulation
below.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import os
import pickle
import re
import site
import sys
import sysconfig
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ci_checks_checkpoint import stubs
from ci_checks_checkpoint.options import UsageError

ROCM = "rocm"
PLATFORMS = (ROCM,)
# What torch.version.hip reads under --as-platform rocm on a build without HIP, unless rocm:VERSION says
# otherwise: the form of a ROCm release, so that code comparing or splitting it works.
EMULATED_HIP = "6.4.0"
_VERSION = re.compile(r"[0-9]+(\.[0-9]+)*([-+][0-9A-Za-z.]+)?\Z")
# The folder below the run folder that ROCM_PATH names under the emulation: empty but for .info/version,
# where a ROCm installation says its release.
ROCM_FOLDER = "rocm-emulated"
# ROCM_PATH where no run folder is given: where ROCm installs itself.
ROCM_PLACEHOLDER = "/opt/rocm"
_VARIABLES = ("ROCM_PATH", "HIP_PLATFORM")
# Code of these packages reads the real torch.cuda.is_available() under the emulation: the harness's copies,
# devices and collectives stay on the real device, and so do the libraries'.
_LIBRARY_PACKAGES = frozenset({*stubs.HARNESS_PACKAGES, "torch", "megatron"})


@dataclass(frozen=True)
class Pickled:
    """A setup of the Python API on its way to a process the run starts. Unpickling it imports its module, so
    it is unpickled there only inside the setup stage: after the emulation, with missing imports stubbed."""

    name: str  # setup_name of the callable
    data: bytes


# A setup is `MODULE:FUNCTION` from the command line, or (the Python API) a callable taking no arguments.
Setup = str | Callable[[], object] | Pickled

# What the emulation changed, as it was before: torch.version.hip as the build has it (once the emulation
# was asked for), torch.cuda.is_available, the environment variables.
_built_with: dict[str, Any] = {}


def real_hip() -> str | None:
    """torch.version.hip as the build has it, whatever the emulation made it read since."""
    import torch

    hip = _built_with.get("hip", torch.version.hip)
    return hip if isinstance(hip, str) else None


def parse_platform(value: str) -> tuple[str, str]:
    """(platform, version) of `rocm` or `rocm:VERSION`; ValueError saying what is wrong."""
    name, colon, version = value.partition(":")
    if name not in PLATFORMS:
        raise ValueError(f"{value!r} is not a platform (choose from rocm, rocm:VERSION)")
    if colon and not _VERSION.match(version):
        raise ValueError(f"{version!r} is not a ROCm version such as 6.2.4")
    return name, version if colon else EMULATED_HIP


def project_packages(imports: Sequence[str], setups: Sequence[Setup]) -> tuple[str, ...]:
    """The top-level packages of the project's modules and setups: their code sees the emulation wherever they are
    installed. A module inside one of the libraries (the seed's workaround kept in ci_checks_checkpoint) is named
    whole: the rest of its library keeps the real answer."""
    names = [*imports, *(setup_name(setup).partition(":")[0] for setup in setups)]
    return tuple(
        dict.fromkeys(
            name if name.partition(".")[0] in _LIBRARY_PACKAGES else name.partition(".")[0] for name in names if name
        )
    )


def _installed_folders() -> tuple[str, ...]:
    """Where the standard library and installed distributions live: their code is not the project's."""
    paths = sysconfig.get_paths()
    found = [paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in paths]
    found += site.getsitepackages() if hasattr(site, "getsitepackages") else []
    found.append(site.getusersitepackages())
    return tuple(os.path.realpath(folder).rstrip(os.sep) + os.sep for folder in dict.fromkeys(found))


def _for_the_project(real: Callable[[], bool], packages: Sequence[str]) -> Callable[[], bool]:
    """torch.cuda.is_available as the project's code sees it under the emulation: True when its caller is the
    project's (a module of `packages`, or code outside the libraries and installed distributions), the real
    answer for everyone else."""
    installed = _installed_folders()
    project = frozenset(packages)

    def is_available() -> bool:
        caller = sys._getframe(1)
        module = str(caller.f_globals.get("__name__", ""))
        package = module.partition(".")[0]
        if package in project or any(module == name or module.startswith(name + ".") for name in project):
            return True
        if package in _LIBRARY_PACKAGES or caller.f_code.co_filename.startswith("<frozen"):
            return real()
        file = os.path.realpath(caller.f_code.co_filename)
        return True if not file.startswith(installed) else real()

    is_available.__doc__ = real.__doc__
    return is_available


def _rocm_folder(run_folder: Path | None, version: str) -> str:
    """A folder for ROCM_PATH: below the run folder (removed with it), saying `version` in .info/version."""
    if run_folder is None:
        return ROCM_PLACEHOLDER
    info = run_folder / ROCM_FOLDER / ".info"
    info.mkdir(parents=True, exist_ok=True)
    written = info / f"version.{os.getpid()}"  # several ranks write it: each its own file, renamed in place
    written.write_text(version + "\n", encoding="utf-8")
    written.replace(info / "version")
    return str(run_folder / ROCM_FOLDER)


def emulate(platform: str | None, run_folder: Path | None = None, packages: Sequence[str] = ()) -> str | None:
    """Make the project's code believe it runs on ROCm: torch.version.hip reads as the release, ROCM_PATH names a
    folder (below `run_folder`) and HIP_PLATFORM is amd, and torch.cuda.is_available() is True when the
    project's code asks (see _for_the_project). No HIP function works because of it, and the harness's
    copies stay on the real device. What torch.version.hip reads now, when the emulation changed it; None
    when there is nothing to change (no platform asked for, ROCm's torch already, emulated already)."""
    if platform is None:
        return None
    _, version = parse_platform(platform)
    import torch

    if _built_with.setdefault("hip", torch.version.hip) or "is_available" in _built_with:
        return None
    if torch.cuda.is_available():
        # CUDA's lazy initialisation counts the devices through ROCm's SMI once torch.version.hip is set, which
        # fails on a CUDA machine: both are done first, with the build's value, and torch keeps the count.
        torch.cuda.init()  # type: ignore[no-untyped-call]
        torch.cuda.device_count()
    _built_with["environment"] = {name: os.environ.get(name) for name in _VARIABLES}
    os.environ["ROCM_PATH"] = _rocm_folder(run_folder, version)
    os.environ["HIP_PLATFORM"] = "amd"
    _built_with["is_available"] = torch.cuda.is_available
    torch.cuda.is_available = _for_the_project(torch.cuda.is_available, packages)
    torch.version.hip = version
    return version


def emulation_facts(platform: str | None) -> dict[str, object] | None:
    """What the report says of --as-platform: what torch.version.hip read, ROCM_PATH and HIP_PLATFORM, and
    whether the project's code saw torch.cuda.is_available() as True; None without it."""
    if platform is None:
        return None
    import torch

    return {
        "platform": parse_platform(platform)[0],
        "hip": torch.version.hip,
        "rocm_path": os.environ.get("ROCM_PATH"),
        "hip_platform": os.environ.get("HIP_PLATFORM"),
        "cuda_available_to_project": "is_available" in _built_with or torch.cuda.is_available(),
    }


def end_emulation() -> None:
    """Everything as the build and the environment had it again: for a process that lives on after a run (the
    Python API)."""
    import torch

    real = _built_with.pop("is_available", None)
    if real is not None:
        torch.cuda.is_available = real
    environment: dict[str, str | None] = _built_with.pop("environment", {})
    for name, value in environment.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    if "hip" in _built_with:
        torch.version.hip = _built_with.pop("hip")


def _raised(error: BaseException) -> str:
    if isinstance(error, SystemExit):
        return f"SystemExit (sys.exit({error.code!r}))"
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


def _import_failed(name: str, error: BaseException) -> str:
    """Why importing `name` failed; where a module it imports is not installed, the option that stubs it."""
    text = _raised(error)
    missing = error.name if isinstance(error, ModuleNotFoundError) else None
    named = missing is not None and (name == missing or name.startswith(f"{missing}."))
    if missing and not named and not stubs.active():
        text += f" ({missing} is not installed here: --stub-missing-imports gives the project's code a stub of it)"
    return text


_HARNESS_FOLDERS = tuple(Path(__file__).resolve().parent.parent / package for package in stubs.HARNESS_PACKAGES)


def _is_harness(filename: str) -> bool:
    parents = Path(filename).resolve().parents
    return any(folder in parents for folder in _HARNESS_FOLDERS)


def _where(error: BaseException) -> str:
    """Where `error` was raised: the innermost line of the project's own code (not an installed library's, not
    the harness's) in its traceback, else the innermost line; `path:line in function`."""
    frames = traceback.extract_tb(error.__traceback__)
    own = [f for f in frames if not stubs.is_installed_file(f.filename) and not _is_harness(f.filename)]
    if not frames:
        return "?"
    frame = (own or frames)[-1]
    path = Path(frame.filename)
    with contextlib.suppress(ValueError):
        path = path.relative_to(Path.cwd())
    return f"{path}:{frame.lineno} in {frame.name}"


@contextlib.contextmanager
def _program(name: str) -> Iterator[None]:
    """sys.argv as the project's code sees it: its own program's name and no arguments, never the harness's
    (a setup that parses its command line gets its defaults)."""
    saved = sys.argv
    sys.argv = [name]
    try:
        yield
    finally:
        sys.argv = saved


def _search_working_directory() -> None:
    # As for `python -m`, but last, so that the project's folder never shadows an installed package.
    here = str(Path.cwd())
    if here not in sys.path and "" not in sys.path:
        sys.path.append(here)


def import_modules(names: Sequence[str]) -> None:
    """Import `names` in order, before Megatron-Core's strategies are, so that a patch a module makes
    to Megatron-Core at import (a writer class swapped in) is in effect for the saves, as it is in
    training. An import that fails is a usage error."""
    if names:
        _search_working_directory()
    for name in names:
        try:
            with _program(name):
                importlib.import_module(name)
        except (Exception, SystemExit) as error:  # whatever the project's import raises is the reason
            raise UsageError(f"--import {name}: {_import_failed(name, error)}") from None


def setup_name(setup: Setup) -> str:
    """MODULE:FUNCTION, as --setup takes it; a functools.partial's function, with `(...)` for its arguments."""
    if isinstance(setup, str):
        return setup
    if isinstance(setup, Pickled):
        return setup.name
    function = setup.func if isinstance(setup, functools.partial) else setup
    module = getattr(function, "__module__", None)
    qualname = getattr(function, "__qualname__", None)
    named = f"{module}:{qualname}" if module and qualname else repr(function)
    return named + ("(...)" if isinstance(setup, functools.partial) else "")


def _describe(setup: Setup) -> str:
    return f"--setup {setup}" if isinstance(setup, str) else f"setup {setup_name(setup)}"


def sendable(setups: Sequence[Setup]) -> tuple[Setup, ...]:
    """The setups as a process the run starts gets them: names as they are, callables pickled."""
    return tuple(s if isinstance(s, str | Pickled) else Pickled(setup_name(s), pickle.dumps(s)) for s in setups)


def _unpickle(setup: Pickled) -> Callable[[], object]:
    module = setup.name.partition(":")[0]
    try:
        with _program(module):
            found: object = pickle.loads(setup.data)
    except (Exception, SystemExit) as error:  # importing its module raised: that is the reason
        raise UsageError(f"setup {setup.name}: importing {module}: {_import_failed(module, error)}") from None
    if not callable(found):
        raise UsageError(f"setup {setup.name}: a {type(found).__name__}, not a function")
    return found


def _resolve(setup: str) -> Callable[[], object]:
    module_name, _, path = setup.partition(":")
    _search_working_directory()
    try:
        with _program(module_name):
            found: object = importlib.import_module(module_name)
    except (Exception, SystemExit) as error:
        raise UsageError(f"--setup {setup}: importing {module_name}: {_import_failed(module_name, error)}") from None
    for part in path.split("."):
        if not hasattr(found, part):
            raise UsageError(f"--setup {setup}: {module_name} has no {path}")
        found = getattr(found, part)
    if not callable(found):
        raise UsageError(f"--setup {setup}: {path} is a {type(found).__name__}, not a function")
    return found


def _required_parameters(function: Callable[[], object]) -> list[str]:
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # a builtin without a signature: called as it is
        return []
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return [
        name
        for name, parameter in signature.parameters.items()
        if parameter.default is inspect.Parameter.empty and parameter.kind not in variadic
    ]


# What a project's workaround replaces to change how Megatron-Core stages a save: the writer class, as
# filesystem_async has it and as strategies.torch bound it, its preload_tensors, the save strategy class the
# harness instantiates and the default save strategies. The staging check judges the save itself; these
# tell, when a setup raises, whether it had replaced one of them before it did.
_STRATEGIES = "megatron.core.dist_checkpointing.strategies"
_WATCHED = (
    ("filesystem_async", "FileSystemWriterAsync"),
    ("filesystem_async", "FileSystemWriterAsync.preload_tensors"),
    ("torch", "FileSystemWriterAsync"),
    ("torch", "TorchDistSaveShardedStrategy"),
)
_MEGATRON_CORE = "megatron.core."


def _megatron_bindings() -> dict[str, Any]:
    """The watched objects as they are now, of the Megatron-Core modules imported so far (none is imported here)."""
    found: dict[str, Any] = {}
    for module_name, path in _WATCHED:
        value: Any = sys.modules.get(f"{_STRATEGIES}.{module_name}")
        for part in path.split("."):
            value = inspect.getattr_static(value, part, None) if value is not None else None
        found[f"strategies.{module_name}.{path}"] = getattr(value, "__func__", value)  # a staticmethod's function
    base = sys.modules.get(f"{_STRATEGIES}.base")
    defaults = getattr(base, "default_strategies", None)
    saving = defaults.get("save_sharded", {}) if isinstance(defaults, dict) else {}
    for key, strategy in dict(saving).items():
        found[f"the default save strategy {key}"] = strategy
    return found


def _made_by(value: Any) -> str:
    kind = value if isinstance(value, type) or callable(value) else type(value)
    return f"{getattr(kind, '__module__', '?')}.{getattr(kind, '__qualname__', repr(kind))}"


def _replaced(before: dict[str, Any], after: dict[str, Any]) -> tuple[str, ...]:
    """What changed between `before` and `after` to something not of Megatron-Core: `NAME (now MODULE.CLASS)`."""
    return tuple(
        f"{name} (now {_made_by(value)})"
        for name, value in after.items()
        if value is not None and value is not before.get(name) and not _made_by(value).startswith(_MEGATRON_CORE)
    )


@dataclass(frozen=True)
class SetupRaised:
    """A setup that raised after it had replaced a writer, its preload or a save strategy (or, with
    --setup-may-raise, having replaced nothing): the run judges what is in effect, and the report gives the
    exception beside the verdict."""

    setup: str  # MODULE:FUNCTION
    exception: str  # its type and message
    where: str  # path:line in function, of the project's own code where there is one
    replaced: tuple[str, ...]  # what it had replaced, and with what


def call_setups(setups: Sequence[Setup], may_raise: bool = False) -> list[SetupRaised]:
    """Call each setup with no arguments, in order, as the project's own code would before it saves. One that
    cannot be found or needs arguments is a usage error naming it; so is one that raises before it replaced
    any of Megatron-Core's writer, preload or save strategy, unless `may_raise`. One that raises after it did
    (or with `may_raise`) is returned: the run goes on, and judges what is in effect."""
    raised = []
    for setup in setups:
        if isinstance(setup, str):
            function = _resolve(setup)
        elif isinstance(setup, Pickled):
            function = _unpickle(setup)
        else:
            function = setup
        needed = _required_parameters(function)
        if needed:
            raise UsageError(
                f"{_describe(setup)}: it takes arguments ({', '.join(needed)}) and is called with none; a setup "
                "that needs arguments goes through the Python API (ci_checks_checkpoint.api.check_saves)"
            )
        before = _megatron_bindings()
        try:
            with _program(setup_name(setup).partition(":")[0]):
                function()
        except (Exception, SystemExit) as error:  # whatever the project's setup raises is the reason
            replaced = _replaced(before, _megatron_bindings())
            if not replaced and not may_raise:
                raise UsageError(
                    f"{_describe(setup)}: raised {_raised(error)} ({_where(error)}); --setup-may-raise judges the "
                    "run on what is in effect instead"
                ) from None
            raised.append(SetupRaised(setup_name(setup), _raised(error), _where(error), replaced))
    return raised


@dataclass(frozen=True)
class Prepared:
    """What running the project's own code found: the stubs it was given, the setups that raised after a swap."""

    stubbed: tuple[str, ...] | None  # None: --stub-missing-imports was not given
    raised: tuple[SetupRaised, ...]

    def facts(self) -> dict[str, Any]:
        """The report's platform fields for it."""
        return {
            "stubbed_imports": sorted(self.stubbed) if self.stubbed is not None else None,
            "setup_exceptions": [
                {"setup": r.setup, "exception": r.exception, "where": r.where, "replaced": list(r.replaced)}
                for r in self.raised
            ],
        }


def prepare(
    platform: str | None,
    imports: Sequence[str],
    setups: Sequence[Setup],
    stub_missing_imports: bool = False,
    setup_may_raise: bool = False,
) -> Prepared:
    """In a process that saves or loads, before Megatron-Core's strategies are imported: the emulated platform
    first (a module may read torch.version.hip when it is imported), then the modules, then the setups; with
    `stub_missing_imports`, what the project's code imports and is not installed is stubbed meanwhile; with
    `setup_may_raise`, a setup that raises having replaced nothing is reported rather than a usage error."""
    emulate(platform)
    project_modules = [*imports, *(setup_name(s).partition(":")[0] for s in setups)]
    with stubs.missing_imports_stubbed(stub_missing_imports, project_modules):
        import_modules(imports)
        raised = call_setups(setups, setup_may_raise)
    # Every stub of this process: the Python API's caller may have imported the project's module under stubs.
    return Prepared(tuple(stubs.made_in_this_process()) if stub_missing_imports else None, tuple(raised))
