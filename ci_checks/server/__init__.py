"""`ci-checks server`: a Language Server over standard input and output, for workflows, composite actions,
Dockerfiles and the configuration (`.github/ci-checks.yml`).

It needs the `server` extra (pygls and lsprotocol): `pip install 'ci-checks[server]'`. Everything else is the
engine the command line uses (`ci_checks.engine`); `language_server` holds the protocol, `documents` the
editor's text and its positions, `actions` the fixes and ignore comments it offers.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Sequence
from typing import TextIO

USAGE = "usage: ci-checks server [--stdio]"


def main(arguments: Sequence[str], err: TextIO) -> int:
    """Serve over standard input and output until the client says exit: 0 when it asked for a shutdown first, as
    the protocol has it, else 1; 2 for a usage mistake."""
    if any(argument in ("-h", "--help") for argument in arguments):
        err.write(f"{USAGE}\n\nA Language Server over standard input and output (the only transport); see README.\n")
        return 0
    unknown = [argument for argument in arguments if argument != "--stdio"]
    if unknown:
        err.write(f"ci-checks: error: unrecognized arguments: {' '.join(unknown)}\n{USAGE}\n")
        return 2
    _installed_only()
    try:
        from ci_checks.server.language_server import SERVER
    except ImportError as error:
        err.write(
            f"ci-checks: error: the language server needs pygls and lsprotocol ({error}); "
            "install them with: pip install 'ci-checks[server]'\n"
        )
        return 2
    SERVER.start_io()
    # pygls has closed standard output once the client left: there is nothing more to flush there.
    sys.stdout = io.StringIO()
    return 0 if SERVER.shut_down else 1


def _installed_only() -> None:
    """From now on, modules are imported from the installed packages only.

    An editor starts the server in the repository it checks, and `python -m`
    puts that folder first on `sys.path`: a repository's `yaml.py` or
    `jsonschema.py` would otherwise run when the server first needs that module.
    """
    from ci_checks.core import installed_imports

    locations = installed_imports.installed_locations()
    sys.path[:] = [entry for entry in sys.path if installed_imports.within(entry or os.curdir, locations)]
