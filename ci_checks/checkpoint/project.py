"""The project under test's own code, run in every process that saves as its training runs it before it
saves: the platform it believes it is on, its modules imported, its setup functions called.

A project's workaround for one platform is often applied inside a function of its own (the seed's
was in `initialize_model_and_optimizer()`, and in a conversion tool's `main()`), under
`if torch.version.hip:`. Importing its module runs none of that; calling the function does, and
the HIP branch runs only where `torch.version.hip` reads as set: on ROCm, or under the emulation
below.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import re
import site
import sys
import sysconfig
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ci_checks.checkpoint.options import UsageError

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
_LIBRARY_PACKAGES = frozenset({"ci_checks", "torch", "megatron"})

# A setup is `MODULE:FUNCTION` from the command line, or (the Python API) a callable taking no arguments.
Setup = str | Callable[[], object]

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
    installed."""
    names = [*imports, *(setup_name(setup).partition(":")[0] for setup in setups)]
    return tuple(dict.fromkeys(name.partition(".")[0] for name in names if name))


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
        package = str(caller.f_globals.get("__name__", "")).partition(".")[0]
        if package in project:
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
            importlib.import_module(name)
        except (Exception, SystemExit) as error:  # whatever the project's import raises is the reason
            raise UsageError(f"--import {name}: {_raised(error)}") from None


def setup_name(setup: Setup) -> str:
    """MODULE:FUNCTION, as --setup takes it; a functools.partial's function, with `(...)` for its arguments."""
    if isinstance(setup, str):
        return setup
    function = setup.func if isinstance(setup, functools.partial) else setup
    module = getattr(function, "__module__", None)
    qualname = getattr(function, "__qualname__", None)
    named = f"{module}:{qualname}" if module and qualname else repr(function)
    return named + ("(...)" if isinstance(setup, functools.partial) else "")


def _describe(setup: Setup) -> str:
    return f"--setup {setup}" if isinstance(setup, str) else f"setup {setup_name(setup)}"


def _resolve(setup: str) -> Callable[[], object]:
    module_name, _, path = setup.partition(":")
    _search_working_directory()
    try:
        found: object = importlib.import_module(module_name)
    except (Exception, SystemExit) as error:
        raise UsageError(f"--setup {setup}: importing {module_name}: {_raised(error)}") from None
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


def call_setups(setups: Sequence[Setup]) -> None:
    """Call each setup with no arguments, in order, as the project's own code would before it saves. One that
    cannot be found, needs arguments or raises is a usage error naming it."""
    for setup in setups:
        function = _resolve(setup) if isinstance(setup, str) else setup
        needed = _required_parameters(function)
        if needed:
            raise UsageError(
                f"{_describe(setup)}: it takes arguments ({', '.join(needed)}) and is called with none; a setup "
                "that needs arguments goes through the Python API (ci_checks.checkpoint.api.check_saves)"
            )
        try:
            function()
        except (Exception, SystemExit) as error:  # whatever the project's setup raises is the reason
            raise UsageError(f"{_describe(setup)}: raised {_raised(error)}") from None


def prepare(platform: str | None, imports: Sequence[str], setups: Sequence[Setup]) -> None:
    """In a process that saves or loads, before Megatron-Core's strategies are imported: the emulated platform
    first (a module may read torch.version.hip when it is imported), then the modules, then the setups."""
    emulate(platform)
    import_modules(imports)
    call_setups(setups)
