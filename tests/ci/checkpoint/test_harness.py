"""Real checkpoint saves end to end: every backend on one rank and on two (torchrun, gloo), verified
bit-exact, staging observed, crash-tested with real SIGKILLs whose partial folders are loaded back,
reported as JSON, JUnit and Markdown; and every run watched by an observer that lists the processes
it left alive (by parentage and session) and the files it left on disk.

64 MiB state dicts (8 MiB for the crash test), as CI runs them; the Megatron-Core backend runs
when megatron-core is installed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import jsonschema
import pytest

torch = pytest.importorskip("torch", reason="needs the checkpoint extra: pip install -e '.[checkpoint]'")

from ci_checks_checkpoint import harness, megatron, report, state  # noqa: E402
from ci_checks_checkpoint.options import MEGATRON_HINT, Options, installed, megatron_too_old  # noqa: E402
from ci_checks_checkpoint.report import Result  # noqa: E402
from tests.ci.checkpoint.run import PATCHES, PROBE, WORKAROUND, Run, run  # noqa: E402
from tests.ci.conftest import PROJECT  # noqa: E402

pytestmark = pytest.mark.checkpoint

HAS_MEGATRON = installed("megatron.core")
DCP_BACKENDS = ["dcp-sync", "dcp-async-thread", "dcp-async-process"]
BACKENDS = DCP_BACKENDS + (["megatron-async"] if HAS_MEGATRON else [])
ASYNC_BACKENDS = BACKENDS[1:]
SCHEMA = json.loads((PROJECT / "schemas" / "checkpoint-report.schema.json").read_text(encoding="utf-8"))
needs_megatron = pytest.mark.skipif(not HAS_MEGATRON, reason="needs megatron-core: pip install -e '.[megatron]'")
OWN_WRITER = "megatron.core.dist_checkpointing.strategies.filesystem_async.FileSystemWriterAsync"
KILLS = 1


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def one_rank(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, Path]:
    """One rank; the project's module `record_imports` given to --import; TMPDIR a folder of its own."""
    tmp = tmp_path_factory.mktemp("one-rank")
    (tmp / "work").mkdir()
    (tmp / "tmp").mkdir()
    env = {
        "GITHUB_STEP_SUMMARY": str(tmp / "summary.md"),
        "CI_CHECKS_TEST_IMPORTS": str(tmp / "imports.jsonl"),
        "TMPDIR": str(tmp / "tmp"),
    }
    args = ["--size", "64MiB", "--workdir", str(tmp / "work"), "--junit", str(tmp / "junit.xml")]
    # The seed's workaround as the project had it, under `if torch.version.hip:`: not seen without ROCm or
    # --as-platform rocm (test_staging.py has it seen).
    args += ["--import", f"{PATCHES}.record_imports", "--setup", f"{WORKAROUND}:initialize_model_and_optimizer"]
    return run(tmp, *args, ranks=1, env=env), tmp


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, Path]:
    """torchrun with two ranks, a one-kill crash test of two-rank writers (which must not join
    torchrun's group), `record_imports` given to --import, and the CUDA probe
    (tests/ci/checkpoint/probe) in every interpreter."""
    tmp = tmp_path_factory.mktemp("two-ranks")
    (tmp / "tmp").mkdir()
    env = {
        "TMPDIR": str(tmp / "tmp"),
        "CI_CHECKS_TEST_IMPORTS": str(tmp / "imports.jsonl"),
        "CI_CHECKS_TEST_CUDA_PROBE": str(tmp / "cuda-probe.jsonl"),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(PROBE), os.environ.get("PYTHONPATH")])),
    }
    args = ["--size", "32MiB", "--crash-test", str(KILLS), "--crash-size", "8MiB"]
    args += ["--import", f"{PATCHES}.record_imports", "--setup", f"{PATCHES}.record_imports:record_setup"]
    args += ["--as-platform", "rocm", "--min-ratio", "1e-6", "--stub-missing-imports"]
    return run(tmp, *args, ranks=2, env=env), tmp


def test_every_backend_saves_and_loads_back_bit_exact(one_rank: tuple[Run, Path]) -> None:
    outcome, _ = one_rank
    assert outcome.code == 0, outcome.stdout + outcome.stderr
    for backend in BACKENDS:
        assert outcome.result(backend, "save")["passed"] is True
        verified = outcome.result(backend, "verify")
        assert verified["passed"] is True
        assert verified["detail"].startswith("bit-exact on 1 rank(s): 16 tensors, 11 sharded, 5 replicated")


def test_the_report_follows_its_schema(one_rank: tuple[Run, Path]) -> None:
    outcome, _ = one_rank
    jsonschema.validate(outcome.report, SCHEMA)


def test_the_report_says_what_it_ran_against(one_rank: tuple[Run, Path]) -> None:
    platform = one_rank[0].report["platform"]
    assert platform["torch"] == torch.__version__
    assert platform["world_size"] == 1
    assert platform["size_bytes"] == 64 << 20
    assert (platform["crash_test"], platform["crash_size_bytes"]) == (0, None)
    assert platform["imports"] == [f"{PATCHES}.record_imports"]
    assert platform["setups"] == [f"{WORKAROUND}:initialize_model_and_optimizer"]
    assert (platform["as_platform"], platform["reshard_ranks"], platform["min_ratio"]) == (None, None, {})
    assert (platform["stubbed_imports"], platform["setup_exceptions"]) == (None, [])
    assert platform["host_memory_bytes"] > 0
    assert platform["workdir_filesystem"]["type"]
    assert set(platform["staging"]) == set(BACKENDS)
    assert platform["staging"]["dcp-sync"] == {"pinned_memory": False, "non_blocking": False, "shared_memory": False}
    if torch.cuda.is_available():
        assert platform["emulation"] is None
    else:
        assert (platform["device_kind"], platform["gpu_count"], platform["architecture"]) == ("cpu", 0, None)
        assert (platform["driver"], platform["collectives"]) == (None, None)
        assert platform["emulation"] == ("cpu-emulated" if HAS_MEGATRON else None)
        thread = platform["staging"]["dcp-async-thread"]
        assert (thread["pinned_memory"], thread["non_blocking"], thread["shared_memory"]) == (False, False, False)
        assert (thread["made_by"]["owner"], thread["made_by"]["version"]) == ("PyTorch", torch.__version__)
    if HAS_MEGATRON:
        assert platform["megatron_core"] == megatron.version()
        seen = platform["staging"]["megatron-async"]
        assert (seen["writer"], seen["preload"]) == (OWN_WRITER, f"{OWN_WRITER}.preload_tensors")
        assert (seen["non_blocking"], seen["copies"]) == (True, 16)


def test_every_async_backend_s_staging_is_checked_on_what_the_save_did(one_rank: tuple[Run, Path]) -> None:
    outcome, _ = one_rank
    assert "staging" not in {r["check"] for r in outcome.report["results"] if r["backend"] == "dcp-sync"}
    for backend in ASYNC_BACKENDS:
        staging = outcome.result(backend, "staging")
        assert staging["passed"] is True, staging["detail"]
    if HAS_MEGATRON:
        assert outcome.result("megatron-async", "staging")["detail"].startswith(
            f"on 1 rank(s): Megatron-Core {megatron.version()}'s own FileSystemWriterAsync.preload_tensors made the "
            "save's 16 copies to the host, 16 with non_blocking=True; "
        )
    assert outcome.result("dcp-async-thread", "staging")["detail"].startswith(
        f"on 1 rank(s): PyTorch {torch.__version__}"
    )


def test_the_project_s_modules_and_setups_run_in_every_process_that_saves_before_megatron(
    one_rank: tuple[Run, Path], two_ranks: tuple[Run, Path]
) -> None:
    [line] = lines(one_rank[1] / "imports.jsonl")
    assert line["strategies_first"] is False
    recorded = lines(two_ranks[1] / "imports.jsonl")
    imported = [line for line in recorded if "strategies_first" in line]
    # the two ranks and the resharding rank; per backend KILLS + 1 two-rank writer groups, and one verifier for
    # them all; the hazard's verifier and its two one-rank writers
    processes = 3 + len(BACKENDS) * 2 * (KILLS + 1) + 1 + 3
    assert len({line["pid"] for line in imported}) == processes
    assert not any(line["strategies_first"] for line in imported)
    # --setup, after the imports, in each of them; --as-platform rocm made torch.version.hip read as set there,
    # --stub-missing-imports gave the package no registry has as a stub, and sys.argv was the setup's own name
    set_up = [line for line in recorded if line.get("setup")]
    assert {line["pid"] for line in set_up} == {line["pid"] for line in imported}
    assert {line["hip"] for line in set_up} == {"6.4.0"}
    assert {(line["absent_cluster"], *line["argv"]) for line in set_up} == {("StubModule", f"{PATCHES}.record_imports")}
    platform = two_ranks[0].report["platform"]
    assert platform["stubbed_imports"] == ["absent_cluster"]
    emulated = platform["as_platform"]
    assert (emulated["platform"], emulated["hip"], emulated["hip_platform"]) == ("rocm", "6.4.0", "amd")
    assert emulated["rocm_path"].endswith("/rocm-emulated") and emulated["cuda_available_to_project"] is True
    assert platform["hip"] is None and platform["device_kind"] == "cpu"  # the build's own, not the emulation
    assert platform["setups"] == [f"{PATCHES}.record_imports:record_setup"]


@pytest.mark.thorough  # two ranks under torchrun, with a crash test: the longest run here
def test_the_fork_server_initialises_no_gpu_driver_before_it_forks(two_ranks: tuple[Run, Path]) -> None:
    _, tmp = two_ranks
    forked = [line for line in lines(tmp / "cuda-probe.jsonl") if "multiprocessing.forkserver" in line["parent"]]
    assert len(forked) == len(BACKENDS) * 2 * (KILLS + 1) + 1 + 3 + 1
    assert [(line["calls_before_fork"], line["initialized"]) for line in forked] == [([], False)] * len(forked)


def test_throughput_is_reported_against_a_raw_write_and_a_device_to_host_copy(one_rank: tuple[Run, Path]) -> None:
    outcome, _ = one_rank
    raw = outcome.result("raw", "throughput")
    assert raw["gb_per_s"] > 0 and raw["ratio_to_raw"] == 1.0
    assert raw["detail"].startswith("reference: 2 thread(s) per rank, each writing its share of the same bytes")
    d2h = outcome.result("d2h", "throughput")
    assert d2h["gb_per_s"] > 0 and d2h["total_s"] > 0
    for backend in BACKENDS:
        measured = outcome.result(backend, "throughput")
        assert measured["gb_per_s"] > 0
        assert measured["ratio_to_raw"] == pytest.approx(measured["gb_per_s"] / raw["gb_per_s"])
        assert 0 < measured["blocking_s"] <= measured["total_s"]
        names = [goal["name"] for goal in measured["goals"]]
        if backend == "dcp-sync":
            assert names == ["durable >= 0.80x raw"]
        else:
            assert names == ["durable >= 0.80x raw", "blocking <= 1.50x d2h", "total <= 1.25x dcp-sync"]
        assert all(goal["met"] in (True, False) for goal in measured["goals"])  # judged, whichever way it went
        assert measured["passed"] is all(goal["met"] for goal in measured["goals"])


@pytest.mark.thorough  # two ranks under torchrun, with a crash test: the longest run here
def test_each_sigkill_leaves_the_previous_checkpoint_and_a_partial_folder_that_never_loads_wrong_data(
    two_ranks: tuple[Run, Path],
) -> None:
    outcome, _ = two_ranks
    for backend in BACKENDS:
        crash = outcome.result(backend, "crash")
        assert crash["passed"] is True, crash["detail"]
        detail = crash["detail"]
        assert detail.startswith(f"{KILLS} SIGKILLs of 2-rank writers at random points of a ")
        assert f"previous checkpoint bit-exact {KILLS}/{KILLS}, newest committed one valid {KILLS}/{KILLS}" in detail
        partial = re.search(r"(\d+) partial folder\(s\) loaded: (\d+) failed with an error, (\d+) complete", detail)
        after_commit = re.search(r"(\d+) after commit\)", detail)
        assert partial is not None and after_commit is not None, detail
        # every kill before the commit leaves a partial folder, and every one of them was loaded
        assert int(partial.group(1)) == KILLS - int(after_commit.group(1))
        assert int(partial.group(1)) == int(partial.group(2)) + int(partial.group(3))
        assert ", 0 other data without an error" in detail


@pytest.mark.thorough  # two ranks under torchrun, with a crash test: the longest run here
def test_the_in_place_hazard_is_demonstrated_not_hidden(two_ranks: tuple[Run, Path]) -> None:
    outcome, _ = two_ranks
    hazard = outcome.result("dcp-in-place", "crash")
    assert hazard["passed"] is True
    assert hazard["detail"].endswith("loading returned the new save's data with no error. Demonstrated.")


def test_junit_has_a_case_per_backend_and_check_and_no_failure_on_a_passing_run(one_rank: tuple[Run, Path]) -> None:
    _, tmp = one_rank
    suite = ElementTree.parse(tmp / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    names = {(case.get("classname"), case.get("name")) for case in suite.iter("testcase")}
    for backend in BACKENDS:
        for check in ("save", "verify", "throughput"):
            assert (f"checkpoint.{backend}", check) in names
    assert (suite.get("failures"), suite.get("errors")) == ("0", "0")
    assert list(suite.iter("failure")) == []


def test_the_step_summary_gets_a_verdict_and_a_markdown_table(one_rank: tuple[Run, Path]) -> None:
    _, tmp = one_rank
    summary = (tmp / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("### ci-checks checkpoint\n\n**Verdict: PASS (exit 0): ")
    assert "| dcp-sync | verify | pass |" in summary


def test_a_run_with_megatron_leaves_no_process_and_nothing_on_disk(one_rank: tuple[Run, Path]) -> None:
    # Megatron-Core's result-queue manager, multiprocessing's resource tracker and forkserver, DCP's
    # checkpoint process: none outlives the run, in its session or any other; no pymp-* folder, no
    # torch cache folder in TMPDIR, nothing in the workdir, no shared memory of any of its processes.
    outcome, tmp = one_rank
    assert "megatron-async" in BACKENDS or not HAS_MEGATRON
    outcome.assert_left_nothing_running()
    assert len(outcome.pids_seen) >= 4  # the harness, its rank, and the helpers above
    assert outcome.report["cleanup"] == {"processes_ended": 0, "left_behind": []}  # they ended by themselves
    assert list((tmp / "work").iterdir()) == []
    assert list((tmp / "tmp").iterdir()) == []


@pytest.mark.thorough  # two ranks under torchrun, with a crash test: the longest run here
def test_two_ranks_each_verify_their_shards(two_ranks: tuple[Run, Path]) -> None:
    outcome, tmp = two_ranks
    assert outcome.code == 0, outcome.stdout + outcome.stderr
    jsonschema.validate(outcome.report, SCHEMA)
    assert outcome.report["platform"]["world_size"] == 2
    for backend in BACKENDS:
        verified = outcome.result(backend, "verify")
        assert verified["passed"] is True
        assert verified["detail"].startswith("bit-exact on 2 rank(s): 16 tensors, 11 sharded, 5 replicated")
    for backend in ASYNC_BACKENDS:
        assert outcome.result(backend, "staging")["detail"].startswith("on 2 rank(s): ")
    # every checkpoint the two ranks saved, loaded again on one rank (whole) and compared bit for bit
    assert outcome.report["platform"]["reshard_ranks"] == 1
    for backend in BACKENDS:
        resharded = outcome.result(backend, "reshard")
        assert resharded["passed"] is True
        assert resharded["detail"] == (
            "saved on 2 rank(s), loaded on 1 rank(s) with the library's own loader: bit-exact, 16 tensors, 11 resharded"
        )
    # The default workdir is a new temporary folder, removed afterwards with everything the ranks put in TMPDIR.
    assert outcome.report["platform"]["workdir"] == str(tmp / "tmp")
    assert list((tmp / "tmp").iterdir()) == []
    outcome.assert_left_nothing_running()


def options(**given: Any) -> Options:
    defaults: dict[str, Any] = {
        "size": None, "tensors": 16, "backends": (), "required": (), "imports": (), "threads": 2, "workdir": None,
        "crash_test": 0, "crash_size": None, "report_json": None, "junit": None, "seed": 0, "timeout_s": None,
    }  # fmt: skip
    return Options(**{**defaults, **given})


def test_options_travel_to_the_ranks_unchanged(tmp_path: Path) -> None:
    given = options(
        size=1 << 20, backends=("dcp-sync",), imports=("a.b",), workdir=tmp_path, junit=tmp_path / "j.xml",
        setups=("a.b:c",), as_platform="rocm:6.2.4", nproc_per_node=2, reshard_ranks=1, min_ratio=(("durable", 0.5),),
        save_timeout_s=3.0, expect_staging="synchronous",
    )  # fmt: skip
    assert Options.from_json(json.loads(json.dumps(given.to_json()))) == given


_BACKENDS_WITHOUT_MEGATRON = f"""
import json
import {PATCHES}.without_megatron
from ci_checks_checkpoint import harness
from ci_checks_checkpoint.options import UsageError
from tests.ci.checkpoint.test_harness import options
for given in ({{}}, {{"required": ("megatron-async",)}}, {{"backends": ("megatron-async",)}}):
    try:
        chosen, rows = harness._backends(options(**given))
        print(json.dumps([chosen, [[row.backend, row.check, row.passed, row.detail] for row in rows]]))
    except UsageError as error:
        print(json.dumps(str(error)))
"""


@pytest.mark.parametrize(
    ("version", "reason"),
    [
        ("0.15.2", "megatron-core 0.15.2 is installed; megatron-async needs megatron-core >= 0.16"),
        ("0.16.0", None),
        ("0.17.1", None),
        (None, None),
    ],
)
def test_a_megatron_core_older_than_0_16_is_refused_by_its_version(version: str | None, reason: str | None) -> None:
    assert megatron_too_old(version) == reason


def test_a_missing_megatron_core_is_skipped_unless_required() -> None:
    """In an interpreter where megatron cannot be imported (checkpoint_patches/without_megatron.py)."""
    result = subprocess.run(
        [sys.executable, "-c", _BACKENDS_WITHOUT_MEGATRON], cwd=PROJECT, capture_output=True, text=True, check=True
    )
    reason = f"megatron-core is not installed: {MEGATRON_HINT}"
    assert [json.loads(line) for line in result.stdout.splitlines()] == [
        [DCP_BACKENDS, [["megatron-async", "save", None, f"skipped: {reason}"]]],
        [DCP_BACKENDS, [["megatron-async", "save", False, f"not run, and required by --require: {reason}"]]],
        f"--backend megatron-async: {reason}",
    ]


@pytest.mark.thorough  # two ranks under torchrun, with a crash test: the longest run here
def test_throughput_is_reported_for_each_rank_against_its_own_references(two_ranks: tuple[Run, Path]) -> None:
    outcome, _ = two_ranks
    assert outcome.report["platform"]["min_ratio"] == {"durable": 1e-6, "blocking": 1e-6}
    for backend in BACKENDS:
        measured = outcome.result(backend, "throughput")
        assert [figures["rank"] for figures in measured["ranks"]] == [0, 1]
        for figures in measured["ranks"]:
            assert figures["durable_ratio"] == pytest.approx(figures["raw_s"] / figures["total_s"])
            if figures["blocking_ratio"] is not None:
                assert figures["blocking_ratio"] == pytest.approx(figures["d2h_s"] / figures["blocking_s"])
            assert figures["raw_s"] > 0 and figures["d2h_s"] > 0
            assert 0 <= figures["blocking_s"] <= figures["total_s"]
        assert measured["total_s"] == max(figures["total_s"] for figures in measured["ranks"])
        thresholds = [goal for goal in measured["goals"] if goal["required"]]
        assert [goal["name"] for goal in thresholds] == ["--min-ratio durable=1e-06", "--min-ratio blocking=1e-06"]
        assert thresholds[0]["met"] is True and "(the lowest of 2)" in thresholds[0]["detail"]
        if backend == "dcp-sync":  # a synchronous save blocks for the whole save: no blocking threshold
            assert thresholds[1]["met"] is None
        else:
            assert thresholds[1]["met"] is True


def test_a_required_backend_that_cannot_run_and_a_missed_min_ratio_fail_the_run(tmp_path: Path) -> None:
    # The patch makes megatron unimportable in the ranks (see its docstring); the durable threshold is out of reach.
    args = [
        "--size",
        "1MiB",
        "--tensors",
        "4",
        "--require",
        "megatron-async",
        "--import",
        f"{PATCHES}.without_megatron",
    ]
    args += ["--min-ratio", "durable=1000", "--min-ratio", "blocking=0.000001", "--junit", str(tmp_path / "junit.xml")]
    outcome = run(tmp_path, *args)
    assert outcome.code == 1, outcome.stdout + outcome.stderr
    assert outcome.report["platform"]["world_size"] == 1
    assert outcome.report["platform"]["required"] == ["megatron-async"]
    missing = outcome.result("megatron-async", "save")
    assert missing["passed"] is False
    assert missing["detail"].startswith("not run, and required by --require: megatron-core is not installed")
    assert all(outcome.result(b, "verify")["passed"] for b in DCP_BACKENDS)
    failed = ", ".join(["megatron-async save", *(f"{b} throughput" for b in DCP_BACKENDS)])
    assert outcome.report["verdict"].startswith(f"Verdict: FAIL (exit 1): 4 of 12 checks failed: {failed}")
    assert outcome.stdout.splitlines()[-1] == outcome.report["verdict"]
    [missed] = [g for g in outcome.result("dcp-sync", "throughput")["goals"] if g["required"] and g["met"] is False]
    assert missed["detail"].startswith("--min-ratio durable=1000: rank 0 (the lowest of 1): its durable rate ")
    assert missed["detail"].endswith(": missed")
    failures = ElementTree.parse(tmp_path / "junit.xml").getroot().iter("failure")
    assert ("threshold", missed["detail"]) in [(f.get("type"), f.get("message")) for f in failures]


def test_an_async_total_is_not_judged_without_dcp_sync_and_the_row_says_why() -> None:
    measured = Result("dcp-async-thread", report.THROUGHPUT, None, "", 1.0, 0.9, 0.1, 1.0)
    reference = Result("dcp-sync", report.THROUGHPUT, None, "", 1.0, 0.9, 1.0, 1.0)
    [unselected] = harness._judge([measured], ["dcp-async-thread"], d2h_s=0.1)
    assert unselected.goals[2].met is None
    assert unselected.goals[2].detail == "total not judged: dcp-sync was not selected in this run"
    [failed] = harness._judge([measured], ["dcp-sync", "dcp-async-thread"], d2h_s=0.1)
    assert failed.goals[2].detail == "total not judged: dcp-sync failed in this run"
    judged = harness._judge([reference, measured], ["dcp-sync", "dcp-async-thread"], d2h_s=0.1)
    assert [g.met for g in judged[1].goals] == [True, True, True]
    assert judged[1].passed is True


@pytest.mark.parametrize(("world_size", "total"), [(1, 8192), (2, 12483), (8, 20560)])
def test_the_accelerator_default_gives_every_rank_8_gib(world_size: int, total: int) -> None:
    size = harness.size_for(8 << 30, 16, world_size)
    assert size == total << 20
    specs = state.layout(size, 16, world_size)
    assert (8 << 30) * 0.99 < sum(s.local_nbytes(world_size) for s in specs) <= 8 << 30


def test_a_checkpoint_that_does_not_load_is_a_failed_check_with_every_report_written(tmp_path: Path) -> None:
    args = ["--backend", "dcp-sync", "dcp-async-thread", "--size", "1MiB", "--tensors", "4"]
    args += ["--import", f"{PATCHES}.unreadable_storage", "--junit", str(tmp_path / "junit.xml")]
    outcome = run(tmp_path, *args, env={"GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")})
    assert outcome.code == 1, outcome.stdout + outcome.stderr
    assert "Traceback" not in outcome.stderr
    for backend in ("dcp-sync", "dcp-async-thread"):
        verified = outcome.result(backend, "verify")
        assert verified["passed"] is False
        assert verified["detail"].startswith(f"rank 0: {backend} does not load: CheckpointException: ")
        assert "unreadable storage, a test's patch" in verified["detail"]
    failures = ElementTree.parse(tmp_path / "junit.xml").getroot().iter("failure")
    assert [f.get("type") for f in failures] == ["check", "check"]
    assert "**Verdict: FAIL (exit 1): 2 of 5 checks failed: dcp-sync verify, dcp-async-thread verify" in (
        (tmp_path / "summary.md").read_text(encoding="utf-8")
    )


@pytest.mark.thorough  # waits out its --timeout
@needs_megatron
def test_a_megatron_writer_that_dies_times_out_instead_of_hanging(tmp_path: Path) -> None:
    # Without psutil Megatron-Core's forked writer really dies and its parent really waits
    # forever; the patch makes psutil unimportable in the ranks to get there.
    args = ["--backend", "megatron-async", "--size", "1MiB", "--tensors", "4", "--save-timeout", "3"]
    outcome = run(tmp_path, *args, "--import", f"{PATCHES}.without_psutil")
    assert outcome.code == 2
    saved = outcome.result("megatron-async", "save")
    assert saved["passed"] is False
    assert "did not finish within 3 s; psutil is not installed" in saved["detail"]
    assert "needs psutil, which is not installed: pip install 'ci-checks[checkpoint,megatron]'" in outcome.stderr
