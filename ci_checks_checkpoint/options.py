"""What one run of the harness does, as parsed from the command line. No torch here."""

from __future__ import annotations

import dataclasses
import importlib.metadata
import importlib.util
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DCP_SYNC = "dcp-sync"
DCP_ASYNC_THREAD = "dcp-async-thread"
DCP_ASYNC_PROCESS = "dcp-async-process"
MEGATRON_ASYNC = "megatron-async"
BACKENDS = (DCP_SYNC, DCP_ASYNC_THREAD, DCP_ASYNC_PROCESS, MEGATRON_ASYNC)
ASYNC_BACKENDS = frozenset({DCP_ASYNC_THREAD, DCP_ASYNC_PROCESS, MEGATRON_ASYNC})
EXTRA_HINT = "pip install 'ci-checks[checkpoint]'"
MEGATRON_HINT = "pip install 'ci-checks[checkpoint,megatron]'"

# DCP's DefaultStager and StagingOptions, which every async DCP save here is given, came in 2.9.
MINIMUM_TORCH = (2, 9)
# The first Megatron-Core whose async writer, strategy and request the harness inspects as they
# are (0.16.0 and 0.16.1 tested); a later one is accepted, and a changed layout is a failed check.
MINIMUM_MEGATRON = (0, 16)

# What --expect-staging accepts of how Megatron-Core's own preload_tensors copies tensors to the host: pinned
# (every copy non_blocking=True, into pinned memory on an accelerator), synchronous (every copy
# non_blocking=False, as a Megatron-LM fork may do on HIP), or any. A replacement of the writer, its
# preload_tensors or the save strategy by the project fails under each.
STAGING_PINNED = "pinned"
STAGING_SYNCHRONOUS = "synchronous"
STAGING_ANY = "any"
STAGING_EXPECTATIONS = (STAGING_PINNED, STAGING_SYNCHRONOUS, STAGING_ANY)

# A save slower than this (after a fixed allowance for process start-up) is reported as hung.
SLOWEST_EXPECTED_BYTES_PER_S = 50_000_000
START_UP_ALLOWANCE_S = 60.0
# What the default --timeout allows each backend besides its bytes (its helpers' start, a fork server's
# processes importing Megatron-Core, the loads), and each writer group of the crash test (a fork, Megatron-
# Core's import, a process group, a warm-up save): on two shared CPU cores a 1 MiB backend took up to 12 s.
BACKEND_ALLOWANCE_S = 60.0
WRITER_START_ALLOWANCE_S = 20.0
# The longest --timeout: a week, far below what a timedelta or a collective's timeout can hold.
LONGEST_TIMEOUT_S = 7 * 24 * 3600.0

CPU_DEFAULT_SIZE = 64 << 20
# On an accelerator each rank holds this much of the state dict by default, less where its
# device or host memory is short (see harness.default_size).
ACCELERATOR_SIZE_PER_RANK = 8 << 30
# The crash test's state dict, unless --crash-size says otherwise: big enough that the random
# kills spread over a real save, small enough for 20 kills per backend to take minutes.
CRASH_SIZE_LIMIT = 256 << 20


class UsageError(Exception):
    """Bad options or an unusable environment: exit code 2, one line on stderr."""


class EnvironmentProblem(Exception):
    """What the run needs and the machine does not give it (space on disk, a writable folder, memory), found
    once the run started: exit code 2, and the report is written, naming the path."""


@dataclass(frozen=True)
class Deadline:
    """When a run must be over: `--timeout` after it began."""

    at: float  # time.time()
    limit_s: float

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        return cls(time.time() + seconds, seconds)

    def remaining(self) -> float:
        return max(0.0, self.at - time.time())

    def expired(self) -> bool:
        return time.time() >= self.at

    def bound(self, seconds: float) -> float:
        """`seconds`, or what is left of the run if that is less."""
        return min(seconds, self.remaining())


def installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package that cannot be imported, or one marked absent
        return False


def default_timeout(size: int) -> float:
    """How long one save of `size` bytes may take before it has failed: the start-up allowance plus 1 s per 50 MB."""
    return round(START_UP_ALLOWANCE_S + size / SLOWEST_EXPECTED_BYTES_PER_S, 1)


def default_run_timeout(size: int, backends: int, crash_test: int, crash_size: int) -> float:
    """The default --timeout of a whole run: the start-up allowance and each backend's, then 1 s per 50 MB
    of everything it writes or reads, as counted below, and each crash-test writer group's start.

    Per backend: a warm-up save, the timed save, its load on every rank and its load on the resharding
    ranks (the references count as two more); per crash-test kill: the writer group's save and three
    loads (previous, newest, partial), and the complete save before the first kill; the in-place
    hazard as one more backend's crash test of one kill.
    """
    seconds_per_byte = 1 / SLOWEST_EXPECTED_BYTES_PER_S
    saves = backends * BACKEND_ALLOWANCE_S + (2 + 4 * backends) * size * seconds_per_byte
    crash = 0.0
    if crash_test:
        per_group = WRITER_START_ALLOWANCE_S + crash_size * seconds_per_byte
        per_backend = (crash_test + 1) * per_group + 3 * crash_test * crash_size * seconds_per_byte
        crash = (backends + 1) * per_backend
    return round(START_UP_ALLOWANCE_S + saves + crash, 1)


_RELEASE = re.compile(r"(\d+)\.(\d+)")


def release(version: str) -> tuple[int, int] | None:
    """(major, minor) of a version string such as `2.13.0+cpu` or `0.16.0rc1`; None if it has none."""
    match = _RELEASE.match(version)
    return (int(match.group(1)), int(match.group(2))) if match else None


def distribution_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def check_torch_version() -> None:
    """One line and exit 2 for a torch the harness cannot use, before torch is imported."""
    version = distribution_version("torch")
    if version is None:  # importable without metadata (a source build on the path): judged on import
        return
    found = release(version)
    if found is not None and found < MINIMUM_TORCH:
        wanted = ".".join(map(str, MINIMUM_TORCH))
        raise UsageError(
            f"torch {version} is installed; the harness needs torch >= {wanted} (DCP's DefaultStager): {EXTRA_HINT}"
        )


def megatron_too_old(version: str | None) -> str | None:
    """Why this megatron-core cannot be used, or None."""
    found = release(version) if version else None
    if found is not None and found < MINIMUM_MEGATRON:
        wanted = ".".join(map(str, MINIMUM_MEGATRON))
        return f"megatron-core {version} is installed; {MEGATRON_ASYNC} needs megatron-core >= {wanted}"
    return None


@dataclass(frozen=True)
class StagingExpectation:
    """What a run accepts of Megatron-Core's own staging, and why that."""

    expected: str  # one of STAGING_EXPECTATIONS
    chosen_by: str  # "--expect-staging", or the default it is and where
    hip: bool  # torch.version.hip reads as set: a ROCm build, or --as-platform rocm

    @classmethod
    def of(cls, asked: str | None, hip: bool) -> StagingExpectation:
        """The default is what a job needs: on ROCm the installed Megatron-Core may stage synchronously itself
        (a fork's fix of the pinned-memory fault), elsewhere its own pinned, non-blocking staging is wanted."""
        if asked is not None:
            return cls(asked, "--expect-staging", hip)
        if hip:
            return cls(STAGING_ANY, "the default on ROCm", hip)
        return cls(STAGING_PINNED, "the default off ROCm", hip)

    def to_json(self) -> dict[str, str]:
        return {"expected": self.expected, "chosen_by": self.chosen_by}


@dataclass(frozen=True)
class Options:
    size: int | None  # None: CPU_DEFAULT_SIZE, or ACCELERATOR_SIZE_PER_RANK per rank on an accelerator
    tensors: int
    backends: tuple[str, ...]  # empty: every usable one
    required: tuple[str, ...]
    imports: tuple[str, ...]
    threads: int
    workdir: Path | None
    crash_test: int
    crash_size: int | None  # None: the run's size, at most CRASH_SIZE_LIMIT
    report_json: Path | None
    junit: Path | None
    seed: int
    timeout_s: float | None  # the whole run's limit; None: default_run_timeout of the largest size it may choose
    setups: tuple[str, ...] = ()  # MODULE:FUNCTION, called with no arguments in every process that saves
    stub_missing_imports: bool = False  # the project's code gets stubs of the modules it imports that are missing
    setup_may_raise: bool = False  # a setup that raises having replaced nothing is reported, not a usage error
    as_platform: str | None = None  # "rocm" or "rocm:VERSION": ROCm emulated (project.emulate)
    nproc_per_node: int | None = None  # ranks; None: every visible GPU, or one on the CPU
    reshard_ranks: int | None = None  # None: one when several ranks save, else no resharding load
    min_ratio: tuple[tuple[str, float], ...] = ()  # (durable or blocking, the least ratio that passes)
    save_timeout_s: float | None = None  # of one save or load; None: default_timeout of its size
    expect_staging: str | None = None  # one of STAGING_EXPECTATIONS; None: StagingExpectation.of's default

    def to_json(self) -> dict[str, Any]:
        return {
            field.name: str(value) if isinstance(value, Path) else value
            for field in dataclasses.fields(self)
            for value in [getattr(self, field.name)]
        }

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> Options:
        paths = {"workdir", "report_json", "junit"}
        given: dict[str, Any] = {
            name: (Path(value) if name in paths and value is not None else value) for name, value in record.items()
        }
        for name in ("backends", "required", "imports", "setups"):
            given[name] = tuple(given[name])
        given["min_ratio"] = tuple((kind, float(ratio)) for kind, ratio in given["min_ratio"])
        return cls(**given)
