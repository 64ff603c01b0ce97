"""One run: a raw-write reference, then for each backend a warm-up, a timed save committed
atomically, a bit-exact load on every rank, and optionally the crash test (on rank 0 alone,
after the other ranks have finished).
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import torch.distributed as dist

from ci_checks.checkpoint import crash, report, runtime, saving, throughput
from ci_checks.checkpoint.backends import Backends, megatron_has_psutil
from ci_checks.checkpoint.options import (
    ASYNC_BACKENDS,
    BACKENDS,
    DCP_SYNC,
    MEGATRON_ASYNC,
    MEGATRON_HINT,
    Options,
    UsageError,
    installed,
)
from ci_checks.checkpoint.report import Result
from ci_checks.checkpoint.state import LiveState, TensorSpec, first_difference, layout


@dataclass(frozen=True)
class _RankRecord:
    """What one rank found for one backend; rank 0 gathers them."""

    blocking_s: float
    total_s: float
    save_error: str | None
    difference: str | None


def _backends(options: Options) -> tuple[list[str], list[Result]]:
    if options.backends:
        return list(options.backends), []
    if installed("megatron.core"):
        return list(BACKENDS), []
    skipped = Result(MEGATRON_ASYNC, report.SAVE, None, "skipped: megatron-core is not installed")
    return [b for b in BACKENDS if b != MEGATRON_ASYNC], [skipped]


def _run_folder(rt: runtime.Runtime, workdir: Path | None) -> Path:
    """A new folder for this run, made by rank 0 and shared; every rank fails alike if it cannot be."""
    made: list[Path | str | None] = [None]
    if rt.rank == 0:
        try:
            made[0] = Path(tempfile.mkdtemp(prefix="ci-checks-checkpoint-", dir=workdir))
        except OSError as error:
            made[0] = f"cannot create a folder in {workdir or tempfile.gettempdir()}: {error.strerror or error}"
    dist.broadcast_object_list(made, src=0)
    if not isinstance(made[0], Path):
        raise UsageError(str(made[0]))
    return made[0]


def _measure(saver: Backends, backend: str, live: LiveState, folder: Path) -> _RankRecord:
    error = saving.warm_up(saver, backend, folder)
    if error is not None:
        return _RankRecord(0.0, 0.0, error, None)
    saved = saving.save_and_commit(saver, backend, live, folder, backend)
    if saved.directory is None:
        return _RankRecord(saved.blocking_s, saved.total_s, saved.error, None)
    try:
        loaded = saver.load(backend, live.specs, saved.directory)
    except Exception as failure:
        difference: str | None = f"the checkpoint does not load: {type(failure).__name__}: {failure}"
    else:
        difference = first_difference(live.specs, loaded, live.seed, saver.runtime.rank, saver.runtime.world_size)
    dist.barrier()
    if saver.runtime.rank == 0:
        shutil.rmtree(saved.directory)
    return _RankRecord(saved.blocking_s, saved.total_s, None, difference)


def _results(
    backend: str,
    records: list[_RankRecord],
    specs: list[TensorSpec],
    nbytes: int,
    raw_gb_per_s: float,
    notes: str,
) -> list[Result]:
    save_error = next((r.save_error for r in records if r.save_error), None)
    if save_error is not None:
        return [
            Result(backend, report.SAVE, False, save_error),
            Result(backend, report.VERIFY, None, "not verified: the save failed"),
        ]
    blocking = max(r.blocking_s for r in records)
    total = max(r.total_s for r in records)
    gb_per_s = nbytes / total / throughput.GB
    saved = Result(
        backend,
        report.SAVE,
        True,
        f"saved {nbytes / (1 << 20):.1f} MiB into a fresh directory, committed by rename; {notes}",
        blocking_s=blocking,
        total_s=total,
    )
    differences = [(rank, r.difference) for rank, r in enumerate(records) if r.difference is not None]
    sharded = sum(s.sharded for s in specs)
    if differences:
        rank, difference = differences[0]
        verified = Result(backend, report.VERIFY, False, f"rank {rank}: {difference}")
    else:
        verified = Result(
            backend,
            report.VERIFY,
            True,
            f"bit-exact on {len(records)} rank(s): {len(specs)} tensors, {sharded} sharded, "
            f"{len(specs) - sharded} replicated; the live tensors were overwritten as soon as the save returned",
        )
    measured = Result(
        backend,
        report.THROUGHPUT,
        None,
        "",
        gb_per_s=gb_per_s,
        ratio_to_raw=gb_per_s / raw_gb_per_s,
        blocking_s=blocking,
        total_s=total,
    )
    return [saved, verified, measured]


def _judge(results: list[Result]) -> list[Result]:
    """Fill in the throughput goals, which compare backends with each other."""
    sync_total = next((r.total_s for r in results if r.backend == DCP_SYNC and r.check == report.THROUGHPUT), None)
    judged = []
    for result in results:
        if result.check == report.THROUGHPUT and result.backend in ASYNC_BACKENDS and result.blocking_s is not None:
            passed, detail = throughput.async_goal(result.blocking_s, sync_total)
            result = replace(result, passed=passed, detail=detail)
        elif result.check == report.THROUGHPUT and result.backend == DCP_SYNC and result.ratio_to_raw is not None:
            passed, detail = throughput.sync_goal(result.ratio_to_raw)
            result = replace(result, passed=passed, detail=detail)
        judged.append(result)
    return judged


def _notes(backend: str, staging: runtime.Staging, rt: runtime.Runtime) -> str:
    pinned = "pinned" if staging.pinned_memory else "pageable"
    copies = "non-blocking" if staging.non_blocking else "blocking"
    shared = ", shared with the checkpoint process" if staging.shared_memory else ""
    if backend == DCP_SYNC:
        return "DCP writes straight from the live tensors"
    if backend == MEGATRON_ASYNC:
        how = f"preload_tensors(non_blocking=True) into {pinned} host memory, then a forked writer"
        return how + ("; torch.cuda calls " + runtime.CPU_EMULATED if not rt.accelerator else "")
    return f"staged into {pinned} host memory{shared} with {copies} copies"


def run(options: Options, progress: report.Progress) -> report.Outcome | None:
    """The outcome on rank 0, None on the other ranks."""
    rt = runtime.start(options.timeout_s)
    try:
        return _run(options, rt, progress if rt.rank == 0 else progress.muted())
    finally:
        runtime.stop()


def _run(options: Options, rt: runtime.Runtime, progress: report.Progress) -> report.Outcome | None:
    try:
        specs = layout(options.size, options.tensors, rt.world_size)
    except ValueError as error:
        raise UsageError(str(error)) from None
    backends, results = _backends(options)
    folder = _run_folder(rt, options.workdir)
    try:
        progress.show(f"generating {options.size / (1 << 20):.1f} MiB of tensors")
        live = LiveState(specs, options.seed, rt.rank, rt.world_size, rt.device)
        nbytes = live.nbytes
        saver = Backends(rt, options.threads, options.timeout_s)
        staging = {backend: saver.staging_of(backend) for backend in backends}
        raw_s = 0.0
        if rt.rank == 0:
            progress.show("raw write + fsync")
            raw_s = throughput.raw_write(folder / "raw-write", live, nbytes)
        box = [raw_s]
        dist.broadcast_object_list(box, src=0)
        raw_gb_per_s = nbytes / box[0] / throughput.GB
        results.insert(
            0,
            Result(
                report.RAW,
                report.THROUGHPUT,
                None,
                "reference: one sequential write + fsync of the same bytes, same file system",
                gb_per_s=raw_gb_per_s,
                ratio_to_raw=1.0,
                total_s=box[0],
            ),
        )
        for backend in backends:
            progress.show(f"{backend}: saving {nbytes / (1 << 20):.1f} MiB and loading it back")
            record = _measure(saver, backend, live, folder)
            gathered: list[_RankRecord | None] = [None] * rt.world_size
            dist.all_gather_object(gathered, record)
            records = [r for r in gathered if r is not None]
            results += _results(backend, records, specs, nbytes, raw_gb_per_s, _notes(backend, staging[backend], rt))
        del live
        if rt.rank != 0:
            return None
        platform = runtime.facts(rt, staging)
        platform.update(
            size_bytes=nbytes,
            tensors=len(specs),
            threads=options.threads,
            seed=options.seed,
            timeout_s=options.timeout_s,
            crash_test=options.crash_test,
            workdir=str(folder.parent),
            emulation=runtime.CPU_EMULATED if MEGATRON_ASYNC in backends and not rt.accelerator else None,
        )
        if options.crash_test:
            results += _crash_tests(options, backends, folder, progress)
        progress.clear()
        outcome = report.Outcome(platform, _judge(results))
        if MEGATRON_ASYNC in backends and not megatron_has_psutil():
            outcome.environment_errors.append(
                f"Megatron-Core's async writer needs psutil, which is not installed: {MEGATRON_HINT}"
            )
        return outcome
    finally:
        if rt.rank == 0:
            shutil.rmtree(folder, ignore_errors=True)


def _crash_tests(options: Options, backends: list[str], folder: Path, progress: report.Progress) -> list[Result]:
    def job(backend: str, area: Path) -> crash.Job:
        (area / "checkpoints").mkdir(parents=True)
        return crash.Job(
            backend,
            options.size,
            options.tensors,
            options.threads,
            options.timeout_s,
            log=area / "writers.log",
            root=area / "checkpoints",
        )

    results = [
        crash.crash_test(job(backend, folder / f"crash-{backend}"), options.crash_test, options.seed, progress)
        for backend in backends
    ]
    progress.show("in-place hazard demonstration")
    results.append(crash.in_place_hazard(job(DCP_SYNC, folder / "in-place"), options.seed))
    return results
