"""One run on every rank: the project's own code, the references (a raw write and a device-to-host copy),
then for each backend a full-size warm-up, a timed save committed atomically, a check of how it
staged, a bit-exact load on every rank and on the resharding ranks, and optionally the crash test
(started from rank 0, after the other ranks have finished, with writer groups of as many ranks).

Every stage is written into the run folder as a rank enters it and every finding as rank 0 makes
it, so that a run that is ended (its --timeout, a dead rank) still has a report naming where it was.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from ci_checks_checkpoint import crash, facts, megatron, project, report, runtime, saving, throughput
from ci_checks_checkpoint.backends import Backends, DcpStagingSeen
from ci_checks_checkpoint.options import (
    ACCELERATOR_SIZE_PER_RANK,
    ASYNC_BACKENDS,
    BACKENDS,
    CPU_DEFAULT_SIZE,
    CRASH_SIZE_LIMIT,
    DCP_SYNC,
    MEGATRON_ASYNC,
    MEGATRON_HINT,
    EnvironmentProblem,
    Options,
    StagingExpectation,
    UsageError,
    default_timeout,
)
from ci_checks_checkpoint.report import Result
from ci_checks_checkpoint.runfolder import Stages
from ci_checks_checkpoint.state import LiveState, TensorSpec, layout

# Of an accelerator's free memory a rank's state dict takes at most a third: the live tensors,
# the fresh ones a checkpoint is loaded into, and room for the libraries' own buffers.
_DEVICE_SHARE = 3
# Of the host's available memory each local rank's state dict takes at most a quarter: staging
# copies (pinned, and cached by torch's host allocator), the device-to-host reference's
# buffers, and the page cache the writes go through.
_HOST_SHARE = 4
# Of the free shared memory (/dev/shm, 64 MiB by default in a container) each local rank's
# state dict takes at most half: dcp-async-process stages into it on an accelerator.
_SHARED_MEMORY_SHARE = 2


@dataclass(frozen=True)
class _RankRecord:
    """What one rank found for one backend; rank 0 gathers them."""

    blocking_s: float
    total_s: float
    save_error: str | None
    difference: str | None
    staging: megatron.StagingSeen | DcpStagingSeen | None = None
    environment: str | None = None  # the save failed for want of space or permission: where, and why


class _Findings:
    """Rank 0's results, each written into the run folder as it is made; the environment errors."""

    def __init__(self, stages: Stages, first: list[Result]) -> None:
        self.stages = stages
        self.results: list[Result] = []
        self.environment_errors: list[str] = []
        self.add(*first)

    def add(self, *results: Result) -> None:
        self.results += results
        if self.stages.rank == 0:
            for result in results:
                self.stages.folder.add_result(result)

    def environment(self, problem: str | None) -> None:
        if problem is not None and problem not in self.environment_errors:
            self.environment_errors.append(problem)


def _backends(options: Options) -> tuple[list[str], list[Result]]:
    """The backends to run, and a row for each one that cannot (failed when --require names it).

    Megatron-Core's strategies are imported here, so only after the project's modules."""
    chosen = list(options.backends or BACKENDS)
    if MEGATRON_ASYNC not in chosen:
        return chosen, []
    reason = megatron.unusable()
    if reason is None:
        return chosen, []
    if MEGATRON_ASYNC in options.backends:
        raise UsageError(f"--backend {MEGATRON_ASYNC}: {reason}")
    if MEGATRON_ASYNC in options.required:
        row = Result(MEGATRON_ASYNC, report.SAVE, False, f"not run, and required by --require: {reason}")
    else:
        row = Result(MEGATRON_ASYNC, report.SAVE, None, f"skipped: {reason}")
    return [b for b in chosen if b != MEGATRON_ASYNC], [row]


def _default_size(rt: runtime.Runtime, tensors: int) -> int:
    """64 MiB on the CPU; on an accelerator, each rank holding 8 GiB of it where its device and host
    memory allow, the same on every rank."""
    if not rt.accelerator:
        return CPU_DEFAULT_SIZE
    free, _ = torch.cuda.mem_get_info(rt.device)
    local_ranks = int(os.environ.get("LOCAL_WORLD_SIZE", str(rt.world_size)))
    host = facts.host_memory_available()
    limits = [ACCELERATOR_SIZE_PER_RANK, free // _DEVICE_SHARE]
    if host is not None:
        limits.append(host // (_HOST_SHARE * local_ranks))
    shared = facts.shared_memory_free()
    if shared is not None:
        limits.append(shared // (_SHARED_MEMORY_SHARE * local_ranks))
    agreed: list[int | None] = [None] * rt.world_size
    dist.all_gather_object(agreed, min(limits))
    return size_for(min(a for a in agreed if a is not None), tensors, rt.world_size)


def size_for(per_rank: int, tensors: int, world_size: int) -> int:
    """The state dict size, in whole MiB, of which each of `world_size` ranks holds `per_rank` bytes:
    its share of the sharded tensors and all of the replicated ones."""
    probe = layout(world_size << 30, tensors, world_size)
    held = sum(s.local_nbytes(world_size) for s in probe) / sum(s.nbytes for s in probe)
    return max(1 << 20, int(per_rank / held) >> 20 << 20)


def _layout(size: int, tensors: int, world_size: int, what: str, loaded_on: int = 1) -> list[TensorSpec]:
    try:
        return layout(size, tensors, world_size, loaded_on)
    except ValueError as error:
        raise UsageError(f"{what}: {error}") from None


def run(
    options: Options, stages: Stages, progress: report.Progress, setups: Sequence[project.Setup]
) -> report.Outcome | None:
    """The outcome on rank 0, None on the other ranks. Raises RunTimedOut where a stage would begin after the
    deadline."""
    stages.enter("setup: the project's platform, modules and setup functions")
    packages = project.project_packages(options.imports, setups)
    project.emulate(options.as_platform, stages.folder.path, packages)  # ROCM_PATH below the run folder
    # Before Megatron-Core's strategies are imported.
    prepared = project.prepare(
        options.as_platform, options.imports, setups, options.stub_missing_imports, options.setup_may_raise
    )
    backends, skipped = _backends(options)
    stages.enter("start: the process group")
    rt = runtime.start(stages.deadline.remaining())
    try:
        reporting = progress if rt.rank == 0 else progress.muted()
        return _run(options, rt, backends, _Findings(stages, skipped), reporting, setups, prepared)
    finally:
        runtime.stop(rt)


def _every_rank(measure: Callable[[], float], repeat: int = 1) -> list[float]:
    """Once untimed, then the best of `repeat` timed runs on every rank at once; each rank's, by rank."""
    measure()
    best = []
    for _ in range(repeat):
        dist.barrier()
        best.append(measure())
    seconds: list[float | None] = [None] * dist.get_world_size()
    dist.all_gather_object(seconds, min(best))
    return [s for s in seconds if s is not None]


@dataclass(frozen=True)
class _References:
    """Each rank's seconds for the raw write and the device-to-host copy of its bytes."""

    raw_s: list[float]
    d2h_s: list[float]


def _references(rt: runtime.Runtime, live: LiveState, folder: Path, threads: int) -> _References:
    """The raw write and the device-to-host copy, on every rank at once."""
    share = live.nbytes // rt.world_size + (live.nbytes % rt.world_size if rt.rank == 0 else 0)
    raw_s = _every_rank(throughput.RawWrite(folder, live, share, threads))
    d2h_s = _every_rank(throughput.DeviceToHost(live), repeat=3)  # cheap, and the smaller the stricter
    return _References(raw_s, d2h_s)


def _measure(
    saver: Backends, backend: str, live: LiveState, folder: Path, stages: Stages
) -> tuple[_RankRecord, Path | None]:
    """This rank's record, and the checkpoint committed (to be loaded again on the resharding ranks)."""
    stages.enter(f"{backend} warm-up save", backend)
    saved = saving.warm_up(saver, backend, folder, live)
    if saved.error is not None:
        record = _RankRecord(0.0, 0.0, f"warm-up save failed: {saved.error}", None, environment=saved.environment)
        return record, None
    stages.enter(f"{backend} save", backend)
    saved = saving.save_and_commit(saver, backend, live, folder, backend)
    if saved.directory is None:
        return _RankRecord(saved.blocking_s, saved.total_s, saved.error, None, saved.staging, saved.environment), None
    stages.enter(f"{backend} verify", backend)
    _, difference = saving.load_and_compare(saver, backend, live.specs, saved.directory, live.expected())
    dist.barrier()
    return _RankRecord(saved.blocking_s, saved.total_s, None, difference, saved.staging), saved.directory


def _reshard(
    verifiers: crash.Verifiers, backend: str, directory: Path, seed: int, saved_by: int, specs: list[TensorSpec]
) -> Result:
    """The checkpoint `saved_by` ranks saved, loaded again on the verifiers' ranks (each its rows of every
    sharded tensor, the replicated ones whole) and compared bit for bit."""
    ranks = verifiers.base.verifier_ranks
    moved = f"saved on {saved_by} rank(s), loaded on {ranks} rank(s) with the library's own loader"
    try:
        [(loaded, problem)] = verifiers.verify(backend, [(directory, seed)])
    except crash.CrashTestError as error:  # a loading rank died or said why it could not load
        return Result(backend, report.RESHARD, False, f"{moved}: {error}")
    if not loaded or problem is not None:
        return Result(backend, report.RESHARD, False, f"{moved}: {problem}")
    sharded = sum(spec.sharded for spec in specs)
    return Result(backend, report.RESHARD, True, f"{moved}: bit-exact, {len(specs)} tensors, {sharded} resharded")


def _staging_judged(
    backend: str, records: list[_RankRecord], saver: Backends, expect: StagingExpectation
) -> tuple[int, bool, str, str] | None:
    """The staging verdict of the first rank that failed it, else rank 0's: rank, passed, the row's text and the
    whole of it. None for dcp-sync, or where no rank recorded a save."""
    if backend not in ASYNC_BACKENDS or not records:
        return None
    judged = []
    for rank, record in enumerate(records):
        seen = record.staging
        if seen is None:
            judged.append((rank, False, "not observed: the save never staged", "not observed: the save never staged"))
        elif isinstance(seen, megatron.StagingSeen):
            judged.append((rank, *seen.verdict(saver.runtime.accelerator, expect)))
        else:
            judged.append((rank, *seen.verdict(saver.staging_of(backend))))
    return next((verdict for verdict in judged if not verdict[1]), judged[0])


def _staging(backend: str, records: list[_RankRecord], saver: Backends, expect: StagingExpectation) -> Result | None:
    """How the save staged its tensors, as observed on every rank, in a row of at most report.ROW_LIMIT
    characters; None for dcp-sync."""
    judged = _staging_judged(backend, records, saver, expect)
    if judged is None:
        return None
    rank, passed, row, _ = judged
    where = f"on {len(records)} rank(s)" if passed else f"rank {rank}"
    return Result(backend, report.STAGING, passed, report.row(f"{where}: {row}"))


def _figures(records: list[_RankRecord], references: _References) -> tuple[report.RankFigures, ...]:
    return tuple(
        report.RankFigures(
            rank,
            record.blocking_s,
            record.total_s,
            raw,
            d2h,
            raw / record.total_s,
            d2h / record.blocking_s if record.blocking_s > 0 else None,
        )
        for rank, (record, raw, d2h) in enumerate(zip(records, references.raw_s, references.d2h_s, strict=True))
    )


def _results(
    backend: str,
    records: list[_RankRecord],
    specs: list[TensorSpec],
    nbytes: int,
    references: _References,
    saver: Backends,
    expect: StagingExpectation,
) -> list[Result]:
    save_error = next((r.save_error for r in records if r.save_error), None)
    observed = save_error is None or all(r.staging for r in records)
    staging = _staging(backend, records, saver, expect) if observed else None
    if save_error is not None:
        failed = [Result(backend, report.SAVE, False, save_error)]
        return (
            failed
            + ([staging] if staging else [])
            + [Result(backend, report.VERIFY, None, "not verified: the save failed")]
        )
    blocking = max(r.blocking_s for r in records)
    total = max(r.total_s for r in records)
    gb_per_s = nbytes / total / throughput.GB
    notes = (
        runtime.CPU_EMULATED + " torch.cuda calls"
        if backend == MEGATRON_ASYNC and not saver.runtime.accelerator
        else ""
    )
    saved = Result(
        backend,
        report.SAVE,
        True,
        f"saved {nbytes / (1 << 20):.1f} MiB into a fresh directory after a full-size warm-up, committed by rename"
        + (f"; {notes}" if notes else ""),
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
        ratio_to_raw=max(references.raw_s) / total,
        blocking_s=blocking,
        total_s=total,
        ranks=_figures(records, references),
    )
    return [saved] + ([staging] if staging else []) + [verified, measured]


def _judge(
    results: list[Result], backends: list[str], d2h_s: float, min_ratio: tuple[tuple[str, float], ...] = ()
) -> list[Result]:
    """Fill in the throughput goals, which compare backends with the references and each other, and the
    --min-ratio thresholds, which every rank must meet."""
    sync = next((r for r in results if r.backend == DCP_SYNC and r.check == report.THROUGHPUT), None)
    sync_state = "was not selected" if DCP_SYNC not in backends else "failed"
    judged = []
    for result in results:
        if result.check == report.THROUGHPUT and result.backend in BACKENDS and result.ratio_to_raw is not None:
            goals = [throughput.durable_goal(result.ratio_to_raw)]
            if result.backend in ASYNC_BACKENDS and result.blocking_s is not None and result.total_s is not None:
                goals.append(throughput.blocking_goal(result.blocking_s, d2h_s))
                goals.append(throughput.async_total_goal(result.total_s, sync.total_s if sync else None, sync_state))
            if result.ranks:
                applies = {throughput.DURABLE: True, throughput.BLOCKING: result.backend in ASYNC_BACKENDS}
                goals += [throughput.threshold(kind, least, result.ranks, applies[kind]) for kind, least in min_ratio]
            verdicts = [g.met for g in goals if g.met is not None and not g.required]
            passed = all(verdicts) if verdicts else None
            result = replace(result, passed=passed, detail="; ".join(g.detail for g in goals), goals=tuple(goals))
        judged.append(result)
    return judged


def _staging_facts(
    backends: list[str], records: dict[str, list[_RankRecord]], saver: Backends, expect: StagingExpectation
) -> dict[str, Any]:
    """Per backend, how its tensors were staged: what Megatron-Core's save was seen to do (on the rank its row
    names), what the harness asked DCP for, whose code staged, and the whole of the row's verdict."""
    found: dict[str, Any] = {}
    for backend in backends:
        ranks = records.get(backend, [])
        judged = _staging_judged(backend, ranks, saver, expect)
        seen = ranks[judged[0] if judged else 0].staging if ranks else None
        if isinstance(seen, megatron.StagingSeen):
            found[backend] = seen.describe(saver.runtime.accelerator, expect)
        elif isinstance(seen, DcpStagingSeen):
            found[backend] = seen.describe(saver.staging_of(backend))
        else:
            found[backend] = saver.staging_of(backend).describe()
            if judged is not None:
                found[backend]["detail"] = judged[3]
    return found


def _platform(
    options: Options, rt: runtime.Runtime, stages: Stages, size: int, crash_size: int, reshard_ranks: int | None,
    backends: list[str],
) -> dict[str, Any]:  # fmt: skip
    """The platform facts known once the process group stands, written down at once for a report of a run
    that does not finish; the run adds how each backend staged when it is done."""
    platform = facts.base_platform(options, stages.folder.path.parent, rt.world_size, stages.deadline.limit_s)
    platform.update(runtime.device_facts(rt))
    platform.update(
        size_bytes=size,
        as_platform=project.emulation_facts(options.as_platform),
        expect_staging=StagingExpectation.of(options.expect_staging, bool(torch.version.hip)).to_json(),
        emulation=runtime.CPU_EMULATED if MEGATRON_ASYNC in backends and not rt.accelerator else None,
        crash_size_bytes=crash_size if options.crash_test else None,
        reshard_ranks=reshard_ranks,
    )
    return platform


def _run(
    options: Options,
    rt: runtime.Runtime,
    backends: list[str],
    findings: _Findings,
    progress: report.Progress,
    setups: Sequence[project.Setup],
    prepared: project.Prepared,
) -> report.Outcome | None:
    stages = findings.stages
    size = options.size or _default_size(rt, options.tensors)
    reshard_ranks = options.reshard_ranks or (1 if rt.world_size > 1 else None)
    specs = _layout(size, options.tensors, rt.world_size, "--size", reshard_ranks or 1)
    crash_size = options.crash_size or min(size, CRASH_SIZE_LIMIT)
    if options.crash_test:
        _layout(crash_size, options.tensors, rt.world_size, "--crash-size")
    folder = stages.folder.saves
    platform = _platform(options, rt, stages, size, crash_size, reshard_ranks, backends)
    platform.update(prepared.facts())
    if rt.rank == 0:
        stages.folder.write_platform(platform)
    stages.enter("generating the state dict")
    progress.show(f"generating {size / (1 << 20):.1f} MiB of tensors")
    live = _live_state(specs, options.seed, rt, size)
    nbytes = live.nbytes
    saver = Backends(rt, options.threads, options.save_timeout_s or default_timeout(size), stages.deadline)
    stages.enter("references: raw write + fsync, device-to-host copy")
    progress.show("references: raw write + fsync, device-to-host copy")
    measured = _references(rt, live, folder, options.threads)
    raw_s, d2h_s = max(measured.raw_s), max(measured.d2h_s)  # the slowest rank's
    references = [
        Result(
            report.RAW,
            report.THROUGHPUT,
            None,
            f"reference: {options.threads} thread(s) per rank, each writing its share of the same bytes "
            "into a new file + fsync, same file system (the slowest rank's)",
            gb_per_s=nbytes / raw_s / throughput.GB,
            ratio_to_raw=1.0,
            total_s=raw_s,
        ),
        Result(
            report.D2H,
            report.THROUGHPUT,
            None,
            "reference: every live tensor copied into host buffers made beforehand"
            + (" (pinned, non-blocking)" if rt.accelerator else " (the CPU: plain memory copies)")
            + " (the slowest rank's)",
            gb_per_s=nbytes / d2h_s / throughput.GB,
            total_s=d2h_s,
        ),
    ]
    findings.results[:0] = references
    if rt.rank == 0:
        for result in references:
            stages.folder.add_result(result)
    records: dict[str, list[_RankRecord]] = {}
    expect = StagingExpectation.of(options.expect_staging, bool(torch.version.hip))
    verifiers = _verifiers(options, rt, stages, size, reshard_ranks, setups)
    for backend in backends:
        progress.show(f"{backend}: saving {nbytes / (1 << 20):.1f} MiB and loading it back")
        record, directory = _measure(saver, backend, live, folder, stages)
        saver.release(backend)
        if directory is not None and reshard_ranks is not None:
            stages.enter(f"{backend} reshard: loaded on {reshard_ranks} rank(s)", backend)
            if verifiers is not None:  # rank 0's; the others wait
                progress.show(f"{backend}: loading it on {reshard_ranks} rank(s)")
                findings.add(_reshard(verifiers, backend, directory, options.seed, rt.world_size, specs))
            dist.barrier()
        if directory is not None and rt.rank == 0:
            shutil.rmtree(directory)
        gathered: list[_RankRecord | None] = [None] * rt.world_size
        dist.all_gather_object(gathered, record)
        records[backend] = [r for r in gathered if r is not None]
        for found in records[backend]:
            findings.environment(found.environment)
        findings.add(*_results(backend, records[backend], specs, nbytes, measured, saver, expect))
    saver.close()
    if verifiers is not None:
        verifiers.close()
    del live
    if rt.rank != 0:
        return None
    platform.update(staging=_staging_facts(backends, records, saver, expect))
    stages.folder.write_platform(platform)
    if options.crash_test and not findings.environment_errors:
        _crash_tests(options, backends, crash_size, rt.world_size, findings, progress, setups)
    progress.clear()
    judged = _judge(findings.results, backends, d2h_s, options.min_ratio)
    outcome = report.Outcome(platform, judged, findings.environment_errors)
    if MEGATRON_ASYNC in backends and not megatron.has_psutil():
        outcome.environment_errors.append(
            f"Megatron-Core's async writer needs psutil, which is not installed: {MEGATRON_HINT}"
        )
    return outcome


def _live_state(specs: list[TensorSpec], seed: int, rt: runtime.Runtime, size: int) -> LiveState:
    try:
        return LiveState(specs, seed, rt.rank, rt.world_size, rt.device)
    except (torch.OutOfMemoryError, MemoryError, RuntimeError) as error:  # a failed allocation
        where = "device" if rt.accelerator else "host"
        raise EnvironmentProblem(
            f"--size {size / (1 << 20):.1f} MiB: rank {rt.rank} cannot hold its part of the state dict in "
            f"{where} memory: {' '.join(str(error).split())[:200]}"
        ) from None


def _job(
    options: Options, stages: Stages, backend: str, size: int, world_size: int, area: Path, **more: Any
) -> crash.Job:
    """What a process of the fork server is to do: everything of the run it needs, in plain data."""
    return crash.Job(
        backend,
        size,
        options.tensors,
        options.threads,
        options.save_timeout_s or default_timeout(size),
        stages.deadline,
        area=area,
        run_folder=stages.folder.path,
        platform=options.as_platform,
        imports=options.imports,
        stub_missing_imports=options.stub_missing_imports,
        setup_may_raise=options.setup_may_raise,
        world_size=world_size,
        **more,
    )


def _verifiers(
    options: Options,
    rt: runtime.Runtime,
    stages: Stages,
    size: int,
    reshard_ranks: int | None,
    setups: Sequence[project.Setup],
) -> crash.Verifiers | None:
    """Rank 0's group of resharding ranks (None elsewhere, or without resharding)."""
    if reshard_ranks is None or rt.rank != 0:
        return None
    area = stages.folder.saves / "reshard"
    area.mkdir()
    sent = project.sendable(setups)
    job = _job(options, stages, "", size, rt.world_size, area, setups=sent, verifier_ranks=reshard_ranks)
    return crash.Verifiers(crash.fork_server(), job)


def _crash_tests(
    options: Options,
    backends: list[str],
    size: int,
    world_size: int,
    findings: _Findings,
    progress: report.Progress,
    setups: Sequence[project.Setup],
) -> None:
    stages = findings.stages
    setups = project.sendable(setups)

    def job(backend: str, area: Path) -> crash.Job:
        (area / "checkpoints").mkdir(parents=True)
        return _job(options, stages, backend, size, world_size, area, setups=setups, root=area / "checkpoints")

    folder = stages.folder.saves
    area = folder / "crash-verifier"
    area.mkdir()
    verifiers = crash.Verifiers(crash.fork_server(), _job(options, stages, "", size, world_size, area, setups=setups))
    try:
        for backend in backends:
            result, problem = crash.crash_test(
                job(backend, folder / f"crash-{backend}"), options.crash_test, options.seed, progress, stages, verifiers
            )
            findings.add(result)
            findings.environment(problem)
    finally:
        verifiers.close()
    stages.enter("in-place hazard demonstration", report.IN_PLACE)
    progress.show("in-place hazard demonstration")
    result, problem = crash.in_place_hazard(job(DCP_SYNC, folder / "in-place"), options.seed)
    findings.add(result)
    findings.environment(problem)
