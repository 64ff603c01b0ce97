"""The harness as a Python function, for a project whose setup needs arguments: its test calls its own setup
code, then `check_saves`, which runs the saves, the staging check, the verification, the resharding load
and the crash test in the test's process, where that setup is in effect.

    import functools
    from ci_checks_checkpoint.api import check_saves
    from myproject.model import initialize_model_and_optimizer

    def test_rocm_save_path(args):
        setup = functools.partial(initialize_model_and_optimizer, args, role="actor")
        check_saves(setup=setup, as_platform="rocm", backends=["megatron-async"], crash_test=1).assert_passed()

`setup` is called in this process before the first save and in every process the run starts to save or
load (the crash test's writers and verifiers, the resharding ranks): those start from a fork server, as
fresh interpreters, so what the test did in its own process before the call is not in them otherwise.
It must pickle: a module's function, or a functools.partial of one with arguments that pickle.

A project module that imports packages this machine lacks is imported by the test under
`missing_imports_stubbed()`, and the run given `stub_missing_imports=True`, so that the processes the run
starts stub them too:

    with missing_imports_stubbed():
        from miles.backends.megatron_utils.model import initialize_model_and_optimizer
    setup = functools.partial(initialize_model_and_optimizer, args, role="actor")
    check_saves(setup=setup, stub_missing_imports=True, as_platform="rocm", backends=["megatron-async"])

The pytest fixture `checkpoint_harness` (installed with ci-checks) is this function with the test's
tmp_path as the workdir. Nothing of the run outlives the call: the processes it started, Megatron-Core's
result-queue manager, multiprocessing's fork server and resource tracker (when the run started them), the
run folder, --as-platform's emulation and the process group it started are all ended or undone. What the
setup itself changed in this process stays: a test that swaps a class undoes it (pytest's monkeypatch).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ci_checks.core.source import parse_size
from ci_checks_checkpoint import facts, processes, project, report, stubs
from ci_checks_checkpoint.options import (
    CPU_DEFAULT_SIZE,
    CRASH_SIZE_LIMIT,
    STAGING_EXPECTATIONS,
    Deadline,
    EnvironmentProblem,
    Options,
    UsageError,
    check_torch_version,
    default_run_timeout,
)
from ci_checks_checkpoint.runfolder import RunFolder, RunTimedOut, Stages
from ci_checks_checkpoint.supervisor import Journal
from ci_checks_checkpoint.worker import describe_failure

__all__ = ["Checked", "UsageError", "check_saves", "missing_imports_stubbed"]


def missing_imports_stubbed(*project_modules: str) -> contextlib.AbstractContextManager[list[str]]:
    """Inside it, the modules the test's own code (and the project's, which it imports) imports and this machine
    lacks are stubs, as `stub_missing_imports=True` gives them in the run (see ci_checks_checkpoint.stubs);
    `project_modules` names top-level packages that count as the project's wherever they are installed. The
    names stubbed, which the run's report lists too."""
    return stubs.missing_imports_stubbed(True, project_modules)


@dataclass(frozen=True)
class Checked:
    """The outcome of a run: what `ci-checks checkpoint --report-json` would have written, and its verdict."""

    outcome: report.Outcome

    @property
    def exit_code(self) -> int:
        return report.exit_code(self.outcome)

    @property
    def passed(self) -> bool:
        return self.exit_code == report.EXIT_OK

    @property
    def verdict(self) -> str:
        return report.verdict(self.outcome)

    @property
    def results(self) -> list[report.Result]:
        return self.outcome.results

    @property
    def platform(self) -> dict[str, object]:
        return self.outcome.platform

    def result(self, backend: str, check: str) -> report.Result:
        """The one result of `backend` and `check` (KeyError when there is none)."""
        for found in self.outcome.results:
            if (found.backend, found.check) == (backend, check):
                return found
        raise KeyError(f"no {check} result for {backend}")

    def failures(self) -> list[str]:
        failed = [r for r in self.outcome.results if r.passed is False and r.check in report.GATING_CHECKS]
        missed = [r for r in self.outcome.results if any(g.required and g.met is False for g in r.goals)]
        return [f"{r.backend} {r.check}: {r.detail}" for r in failed + missed] + list(self.outcome.environment_errors)

    def assert_passed(self) -> None:
        if not self.passed:
            raise AssertionError("\n".join([self.verdict, *self.failures()]))

    def to_json(self) -> str:
        return report.to_json(self.outcome)


def _sendable(setups: Sequence[project.Setup]) -> None:
    """The processes of the crash test and the resharding ranks get the setups pickled: say so before the run."""
    for setup in setups:
        try:
            pickle.dumps(setup)
        except (pickle.PicklingError, TypeError, AttributeError) as error:
            raise UsageError(
                f"setup {project.setup_name(setup)} cannot be sent to the processes of the crash test and the "
                f"resharding ranks ({error}): give a module's function, or a functools.partial of one"
            ) from None


def _bytes(value: int | str | None) -> int | None:
    if value is None or isinstance(value, int):
        return value
    return parse_size(value)


@contextlib.contextmanager
def _watched(folder: RunFolder, since: int, deadline: Deadline) -> Iterator[list[int]]:
    """At the deadline, end every process the run started (below this process, or in a session it recorded),
    so that whatever this process waits on returns; at the end, whatever is left. The pids ended."""
    me = os.getpid()
    ended: list[int] = []
    done = threading.Event()

    def started_by_the_run() -> list[int]:
        table = processes.table()
        below = [pid for pid in processes.descendants(me, table) if table[pid].started >= since]
        return below + processes.members(folder.sessions(), since, table)

    def watch() -> None:
        if not done.wait(deadline.remaining()):
            ended.extend(processes.end(started_by_the_run))

    watcher = threading.Thread(target=watch, name="ci-checks checkpoint deadline", daemon=True)
    watcher.start()
    try:
        yield ended
    finally:
        done.set()
        watcher.join()
        ended.extend(processes.end(started_by_the_run))
        processes.remove_shared_memory(ended)


def check_saves(
    *,
    setup: Callable[[], object] | str | Sequence[Callable[[], object] | str] = (),
    backends: Sequence[str] = (),
    required: Sequence[str] = (),
    imports: Sequence[str] = (),
    stub_missing_imports: bool = False,
    setup_may_raise: bool = False,
    as_platform: str | None = None,
    expect_staging: str | None = None,
    size: int | str = CPU_DEFAULT_SIZE,
    tensors: int = 16,
    threads: int = 2,
    crash_test: int = 0,
    crash_size: int | str | None = None,
    reshard_ranks: int | None = None,
    min_ratio: Mapping[str, float] | None = None,
    timeout: float | None = None,
    save_timeout: float | None = None,
    seed: int = 0,
    workdir: Path | str | None = None,
) -> Checked | None:
    """Run the harness in this process, after the project's own setup; the outcome on rank 0 (None on the other
    ranks of a process group the project started, which every rank must call this in). The arguments are
    the command's options; `setup` takes callables (or MODULE:FUNCTION names). UsageError for bad ones."""
    check_torch_version()
    if as_platform is not None:
        try:
            project.parse_platform(as_platform)
        except ValueError as error:
            raise UsageError(f"as_platform: {error}") from None
    if expect_staging is not None and expect_staging not in STAGING_EXPECTATIONS:
        raise UsageError(f"expect_staging: {expect_staging!r} is not one of {', '.join(STAGING_EXPECTATIONS)}")
    setups = [setup] if callable(setup) or isinstance(setup, str) else list(setup)
    if crash_test or reshard_ranks:
        _sendable(setups)
    options = Options(
        size=_bytes(size),
        tensors=tensors,
        backends=tuple(backends),
        required=tuple(required),
        imports=tuple(imports),
        threads=threads,
        workdir=Path(workdir) if workdir is not None else None,
        crash_test=crash_test,
        crash_size=_bytes(crash_size),
        report_json=None,
        junit=None,
        seed=seed,
        timeout_s=timeout,
        setups=tuple(project.setup_name(s) for s in setups),
        stub_missing_imports=stub_missing_imports,
        setup_may_raise=setup_may_raise,
        as_platform=as_platform,
        reshard_ranks=reshard_ranks,
        min_ratio=tuple((min_ratio or {}).items()),
        save_timeout_s=save_timeout,
        expect_staging=expect_staging,
    )
    largest = options.size or CPU_DEFAULT_SIZE
    limit = timeout or default_run_timeout(
        largest, len(backends) or 4, crash_test, options.crash_size or min(largest, CRASH_SIZE_LIMIT)
    )
    deadline = Deadline.after(limit)
    parent = options.workdir or Path(tempfile.gettempdir())
    record = {"options": options.to_json(), "deadline": deadline.at, "timeout_s": limit, "progress": False}
    folder = RunFolder.create(parent, record)
    helpers = processes.Helpers.now()
    environment = dict(os.environ)
    since = processes.ticks_now()
    import torch.distributed as dist

    from ci_checks_checkpoint import harness

    rank, ranks = (dist.get_rank(), dist.get_world_size()) if dist.is_initialized() else (0, 1)
    stages = Stages(folder, rank, deadline)
    try:
        with _watched(folder, since, deadline) as ended:
            try:
                outcome = harness.run(options, stages, report.Progress(sys.stderr, False), setups)
            except RunTimedOut:
                platform = facts.base_platform(options, parent, ranks, limit)
                return Checked(Journal.of(folder).timed_out(deadline, len(ended), platform))
            except (EnvironmentProblem, OSError) as problem:
                platform = folder.platform() or facts.base_platform(options, parent, ranks, limit)
                return Checked(report.Outcome(platform, folder.results(), [describe_failure(problem, folder)]))
            finally:
                helpers.stop_since()  # before the sweep, which would count them as left behind
    finally:
        project.end_emulation()
        os.environ.clear()
        os.environ.update(environment)
        folder.remove()
    if outcome is None:
        return None
    outcome.cleanup = {"processes_ended": len(ended), "left_behind": []}
    return Checked(outcome)
