"""What one run of the harness does, as parsed from the command line. No torch here."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

DCP_SYNC = "dcp-sync"
DCP_ASYNC_THREAD = "dcp-async-thread"
DCP_ASYNC_PROCESS = "dcp-async-process"
MEGATRON_ASYNC = "megatron-async"
BACKENDS = (DCP_SYNC, DCP_ASYNC_THREAD, DCP_ASYNC_PROCESS, MEGATRON_ASYNC)
ASYNC_BACKENDS = frozenset({DCP_ASYNC_THREAD, DCP_ASYNC_PROCESS, MEGATRON_ASYNC})
EXTRA_HINT = "pip install 'ci-checks[checkpoint]'"
MEGATRON_HINT = "pip install 'ci-checks[checkpoint,megatron]'"

# A save slower than this (after a fixed allowance for process start-up) is reported as hung.
SLOWEST_EXPECTED_BYTES_PER_S = 50_000_000
START_UP_ALLOWANCE_S = 60.0


class UsageError(Exception):
    """Bad options or an unusable environment: exit code 2, one line on stderr."""


def installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:  # a parent package that cannot be imported
        return False


def default_timeout(size: int) -> float:
    return round(START_UP_ALLOWANCE_S + size / SLOWEST_EXPECTED_BYTES_PER_S, 1)


@dataclass(frozen=True)
class Options:
    size: int
    tensors: int
    backends: tuple[str, ...]
    threads: int
    workdir: Path | None
    crash_test: int
    report_json: Path | None
    junit: Path | None
    seed: int
    timeout_s: float
