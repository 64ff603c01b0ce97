"""The project under test's own modules, imported as its training imports them before it saves."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from pathlib import Path

from ci_checks.checkpoint.options import UsageError


def import_modules(names: Sequence[str]) -> None:
    """Import `names` in order, before Megatron-Core's strategies are, so that a patch a module makes
    to Megatron-Core at import (a writer class swapped in) is in effect for the saves, as it is in
    training. The working directory is searched last, as for `python -m` but without shadowing
    installed packages. An import that fails is a usage error."""
    here = str(Path.cwd())
    if names and here not in sys.path and "" not in sys.path:
        sys.path.append(here)
    for name in names:
        try:
            importlib.import_module(name)
        except (Exception, SystemExit) as error:  # whatever the project's import raises is the reason
            raise UsageError(f"--import {name}: {type(error).__name__}: {error}") from None
