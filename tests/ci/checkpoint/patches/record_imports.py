"""Writes a line for every process that imports it, saying whether Megatron-Core's strategies were
imported before it was, into the file `$CI_CHECKS_TEST_IMPORTS` names; and `record_setup` (a setup for
`--setup`) a line for every process that calls it, with what torch.version.hip and sys.argv read there and
what importing a package no registry has gives it (a stub under --stub-missing-imports)."""

import json
import os
import sys
from pathlib import Path


def _write(line: dict[str, object]) -> None:
    log = os.environ.get("CI_CHECKS_TEST_IMPORTS")
    if log:
        with Path(log).open("a", encoding="utf-8") as stream:
            stream.write(json.dumps(line) + "\n")


_write({"pid": os.getpid(), "strategies_first": "megatron.core.dist_checkpointing.strategies.torch" in sys.modules})


def record_setup() -> None:
    import torch

    try:
        import absent_cluster  # type: ignore[import-not-found]

        missing = type(absent_cluster).__name__
    except ImportError:
        missing = None
    _write({"pid": os.getpid(), "setup": True, "hip": torch.version.hip, "argv": sys.argv, "absent_cluster": missing})
