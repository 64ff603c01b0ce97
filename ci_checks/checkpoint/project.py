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
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from ci_checks.checkpoint.options import UsageError

ROCM = "rocm"
PLATFORMS = (ROCM,)
# What torch.version.hip reads under --as-platform rocm on a build without HIP: the form of a ROCm
# release, so that code comparing or splitting it works.
EMULATED_HIP = "6.4.0"

# A setup is `MODULE:FUNCTION` from the command line, or (the Python API) a callable taking no arguments.
Setup = str | Callable[[], object]

# torch.version.hip as the build has it, once the emulation has been asked for.
_built_with: dict[str, object] = {}


def real_hip() -> str | None:
    """torch.version.hip as the build has it, whatever the emulation made it read since."""
    import torch

    hip = _built_with.get("hip", torch.version.hip)
    return hip if isinstance(hip, str) else None


def emulate(platform: str | None) -> str | None:
    """Make torch.version.hip read as ROCm's, and nothing else: no HIP function works because of it. What it
    reads now, when the emulation changed it; None when there is nothing to change (no platform asked
    for, or ROCm's torch already)."""
    if platform != ROCM:
        return None
    import torch

    if _built_with.setdefault("hip", torch.version.hip):
        return None
    if torch.cuda.is_available():
        # CUDA's lazy initialisation counts the devices through ROCm's SMI once torch.version.hip is set, which
        # fails on a CUDA machine: both are done first, with the build's value, and torch keeps the count.
        torch.cuda.init()  # type: ignore[no-untyped-call]
        torch.cuda.device_count()
    torch.version.hip = EMULATED_HIP
    return EMULATED_HIP


def end_emulation() -> None:
    """torch.version.hip as the build has it again: for a process that lives on after a run (the Python API)."""
    import torch

    if "hip" in _built_with:
        torch.version.hip = _built_with.pop("hip")  # type: ignore[assignment]


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
