"""Real checkpoint saves end to end: every backend on one and two ranks (torchrun, gloo), verified
bit-exact, crash-tested with real SIGKILLs, reported as JSON, JUnit and Markdown; and without
torchrun, where the harness starts its own one-rank group.

64 MiB state dicts, as CI runs them; the Megatron-Core backend runs when megatron-core is installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import jsonschema
import pytest

torch = pytest.importorskip("torch", reason="needs the checkpoint extra: pip install -e '.[checkpoint]'")

from ci_checks.checkpoint.options import installed  # noqa: E402
from tests.ci.conftest import PROJECT  # noqa: E402

pytestmark = pytest.mark.checkpoint

HAS_MEGATRON = installed("megatron.core")
DCP_BACKENDS = ["dcp-sync", "dcp-async-thread", "dcp-async-process"]
BACKENDS = DCP_BACKENDS + (["megatron-async"] if HAS_MEGATRON else [])
SCHEMA = json.loads((PROJECT / "schemas" / "checkpoint-report.schema.json").read_text(encoding="utf-8"))
needs_megatron = pytest.mark.skipif(not HAS_MEGATRON, reason="needs megatron-core: pip install -e '.[megatron]'")


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str
    report: dict[str, Any]

    def result(self, backend: str, check: str) -> dict[str, Any]:
        [found] = [r for r in self.report["results"] if r["backend"] == backend and r["check"] == check]
        return found


def run(tmp: Path, *args: str, torchrun: int = 0, env: dict[str, str] | None = None, prelude: str = "") -> Run:
    report = tmp / "report.json"
    if torchrun:
        launcher = ["-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={torchrun}"]
        command = [sys.executable, *launcher, "-m", "ci_checks.checkpoint"]
    else:
        code = f"import sys\n{prelude}\nfrom ci_checks.checkpoint import main\nif __name__ == '__main__':\n"
        command = [sys.executable, "-c", code + "    sys.exit(main(sys.argv[1:]))\n"]
    command += [*args, "--report-json", str(report)]
    environment = {**os.environ, **(env or {})}
    result = subprocess.run(
        command, cwd=PROJECT, env=environment, capture_output=True, text=True, timeout=600, check=False
    )
    document = json.loads(report.read_text(encoding="utf-8")) if report.exists() else {}
    return Run(result.returncode, result.stdout, result.stderr, document)


@pytest.fixture(scope="module")
def one_rank(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, Path]:
    """torchrun with one rank, crash test included: its writers must not join torchrun's group."""
    tmp = tmp_path_factory.mktemp("one-rank")
    (tmp / "work").mkdir()
    env = {"GITHUB_STEP_SUMMARY": str(tmp / "summary.md")}
    args = ["--size", "64MiB", "--crash-test", "2", "--workdir", str(tmp / "work"), "--junit", str(tmp / "junit.xml")]
    return run(tmp, *args, torchrun=1, env=env), tmp


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
    assert set(platform["staging"]) == set(BACKENDS)
    assert platform["staging"]["dcp-sync"] == {"pinned_memory": False, "non_blocking": False, "shared_memory": False}
    if torch.cuda.is_available():
        assert platform["emulation"] is None
    else:
        assert platform["device_kind"] == "cpu"
        assert platform["emulation"] == ("cpu-emulated" if HAS_MEGATRON else None)
        assert platform["staging"]["dcp-async-thread"] == {
            "pinned_memory": False,
            "non_blocking": False,
            "shared_memory": False,
        }
    if HAS_MEGATRON:
        assert platform["megatron_core"].startswith("0.16")
        assert platform["staging"]["megatron-async"]["non_blocking"] is True


def test_throughput_is_reported_against_a_raw_write(one_rank: tuple[Run, Path]) -> None:
    outcome, _ = one_rank
    raw = outcome.result("raw", "throughput")
    assert raw["gb_per_s"] > 0 and raw["ratio_to_raw"] == 1.0
    for backend in BACKENDS:
        measured = outcome.result(backend, "throughput")
        assert measured["gb_per_s"] > 0
        assert measured["ratio_to_raw"] == pytest.approx(measured["gb_per_s"] / raw["gb_per_s"])
        assert 0 < measured["blocking_s"] <= measured["total_s"]
        assert measured["passed"] in (True, False)  # judged against a goal, whichever way it went
        assert "goal" in measured["detail"]


def test_each_sigkill_leaves_the_previous_checkpoint_and_no_partial_one(one_rank: tuple[Run, Path]) -> None:
    outcome, _ = one_rank
    for backend in BACKENDS:
        crash = outcome.result(backend, "crash")
        assert crash["passed"] is True, crash["detail"]
        assert "previous checkpoint bit-exact 2/2, partial never valid 2/2" in crash["detail"]


def test_the_in_place_hazard_is_demonstrated_not_hidden(one_rank: tuple[Run, Path]) -> None:
    outcome, _ = one_rank
    hazard = outcome.result("dcp-in-place", "crash")
    assert hazard["passed"] is True
    assert hazard["detail"].endswith("loading returned the new save's data with no error. Demonstrated.")


def test_junit_has_a_case_per_backend_and_check(one_rank: tuple[Run, Path]) -> None:
    _, tmp = one_rank
    cases = ElementTree.parse(tmp / "junit.xml").getroot().iter("testcase")
    names = {(case.get("classname"), case.get("name")) for case in cases}
    for backend in BACKENDS:
        for check in ("save", "verify", "crash", "throughput"):
            assert (f"checkpoint.{backend}", check) in names


def test_the_step_summary_gets_a_markdown_table(one_rank: tuple[Run, Path]) -> None:
    _, tmp = one_rank
    summary = (tmp / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("### ci-checks checkpoint\n")
    assert "| dcp-sync | verify | pass |" in summary


def test_nothing_is_left_in_the_workdir(one_rank: tuple[Run, Path]) -> None:
    _, tmp = one_rank
    assert list((tmp / "work").iterdir()) == []


def test_two_ranks_each_verify_their_shards(tmp_path: Path) -> None:
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    outcome = run(tmp_path, "--size", "64MiB", torchrun=2, env={"TMPDIR": str(temporary)})
    assert outcome.code == 0, outcome.stdout + outcome.stderr
    assert outcome.report["platform"]["world_size"] == 2
    for backend in BACKENDS:
        verified = outcome.result(backend, "verify")
        assert verified["passed"] is True
        assert verified["detail"].startswith("bit-exact on 2 rank(s): 16 tensors, 11 sharded, 5 replicated")
    # The default workdir is a new temporary folder, removed afterwards (torch keeps its own there).
    assert outcome.report["platform"]["workdir"] == str(temporary)
    assert list(temporary.glob("ci-checks-checkpoint-*")) == []


def test_without_torchrun_or_megatron_core_the_dcp_backends_run_and_megatron_is_skipped(tmp_path: Path) -> None:
    # `None` in sys.modules makes megatron unimportable in that interpreter only: a stand-in for
    # an environment without megatron-core, which cannot be produced in one that has it.
    outcome = run(tmp_path, "--size", "1MiB", "--tensors", "4", prelude="sys.modules['megatron'] = None")
    assert outcome.code == 0, outcome.stdout + outcome.stderr
    assert outcome.report["platform"]["world_size"] == 1
    skipped = outcome.result("megatron-async", "save")
    assert (skipped["passed"], skipped["detail"]) == (None, "skipped: megatron-core is not installed")
    assert outcome.report["platform"]["megatron_core"] is None
    assert all(outcome.result(b, "verify")["passed"] for b in DCP_BACKENDS)


@needs_megatron
def test_a_megatron_writer_that_dies_times_out_instead_of_hanging(tmp_path: Path) -> None:
    # Without psutil Megatron-Core's forked writer really dies and its parent really waits
    # forever; psutil is made unimportable in that interpreter (as above) to get there.
    args = ["--backend", "megatron-async", "--size", "1MiB", "--tensors", "4", "--timeout", "3"]
    outcome = run(tmp_path, *args, prelude="sys.modules['psutil'] = None")
    assert outcome.code == 2
    saved = outcome.result("megatron-async", "save")
    assert saved["passed"] is False
    assert "did not finish within 3 s; psutil is not installed" in saved["detail"]
    assert "needs psutil, which is not installed: pip install 'ci-checks[checkpoint,megatron]'" in outcome.stderr
