"""The report forms and the exit code, from results as the harness produces them."""

from __future__ import annotations

import io
import json
from xml.etree import ElementTree

import pytest

from ci_checks_checkpoint import report, throughput
from ci_checks_checkpoint.report import Outcome, Result

pytestmark = pytest.mark.checkpoint

PLATFORM = {
    "size_bytes": 64 << 20,
    "tensors": 16,
    "world_size": 2,
    "device": "AMD Instinct MI300X",
    "device_kind": "rocm",
    "torch": "2.13.0",
    "hip": "6.4",
    "cuda": None,
    "megatron_core": "0.16.0",
    "emulation": None,
}


def outcome(*results: Result) -> Outcome:
    return Outcome(dict(PLATFORM), list(results))


SAVED = Result("dcp-sync", report.SAVE, True, "saved", blocking_s=0.5, total_s=0.5)
VERIFIED = Result("dcp-sync", report.VERIFY, True, "bit-exact")
MISSED = report.Goal("blocking <= 1.50x d2h", False, "blocked 3.00x the device-to-host copy (0.100 s): missed")
MET = report.Goal("durable >= 0.80x raw", True, "durable at 0.90x the raw write with the same threads: met")
GOAL_MISSED = Result(
    "dcp-async-thread", report.THROUGHPUT, False, "goal not met", 0.6, 0.47, 0.3, 1.1, goals=(MET, MISSED)
)
RAW = Result(report.RAW, report.THROUGHPUT, None, "reference", 1.3, 1.0, None, 0.8)
D2H = Result(report.D2H, report.THROUGHPUT, None, "reference", 20.0, None, None, 0.1)


def test_all_passed_is_exit_0_even_when_a_throughput_goal_is_missed() -> None:
    assert report.exit_code(outcome(RAW, SAVED, VERIFIED, GOAL_MISSED)) == 0


@pytest.mark.parametrize("check", [report.SAVE, report.STAGING, report.VERIFY, report.CRASH])
def test_a_failed_save_verification_or_crash_check_is_exit_1(check: str) -> None:
    assert report.exit_code(outcome(SAVED, Result("megatron-async", check, False, "tensor 't' differs"))) == 1


def test_an_environment_error_is_exit_2_whatever_else_happened() -> None:
    broken = outcome(Result("megatron-async", report.SAVE, False, "timed out"))
    broken.environment_errors.append("psutil is not installed")
    assert report.exit_code(broken) == 2


def test_a_skipped_check_does_not_fail() -> None:
    assert report.exit_code(outcome(Result("megatron-async", report.SAVE, None, "skipped"))) == 0


def test_json_has_the_public_shape() -> None:
    document = json.loads(report.to_json(outcome(SAVED)))
    assert document["version"] == 1
    assert (document["verdict"], document["exit_code"]) == ("Verdict: PASS (exit 0): 1 checks passed", 0)
    assert (document["errors"], document["cleanup"]) == ([], {})
    assert document["platform"]["device_kind"] == "rocm"
    assert document["results"] == [
        {
            "backend": "dcp-sync",
            "check": "save",
            "passed": True,
            "detail": "saved",
            "gb_per_s": None,
            "ratio_to_raw": None,
            "blocking_s": 0.5,
            "total_s": 0.5,
            "goals": [],
            "ranks": [],
        }
    ]


def test_json_lists_each_throughput_goal() -> None:
    [row] = json.loads(report.to_json(outcome(GOAL_MISSED)))["results"]
    assert row["goals"] == [
        {"name": "durable >= 0.80x raw", "met": True, "detail": MET.detail, "required": False},
        {"name": "blocking <= 1.50x d2h", "met": False, "detail": MISSED.detail, "required": False},
    ]


def test_junit_has_a_case_per_backend_and_check_but_none_for_the_references() -> None:
    skipped = Result("megatron-async", report.SAVE, None, "skipped: megatron-core is not installed")
    failed = Result("dcp-sync", report.CRASH, False, "previous checkpoint bit-exact 19/20")
    junit = report.to_junit(outcome(RAW, D2H, SAVED, failed, skipped, GOAL_MISSED))
    suite = ElementTree.fromstring(junit).find("testsuite")
    assert suite is not None
    cases = suite.findall("testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("checkpoint.dcp-sync", "save"),
        ("checkpoint.dcp-sync", "crash"),
        ("checkpoint.megatron-async", "save"),
        ("checkpoint.dcp-async-thread", "throughput"),
    ]
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("4", "1", "1")
    failure = cases[1].find("failure")
    assert failure is not None
    assert (failure.get("type"), failure.get("message")) == ("check", "previous checkpoint bit-exact 19/20")
    assert cases[2].find("skipped") is not None
    properties = {p.get("name"): p.get("value") for p in suite.findall("properties/property")}
    assert properties["device_kind"] == "rocm"
    assert properties["world_size"] == "2"
    assert str(properties["verdict"]).startswith("Verdict: FAIL (exit 1): 1 of 3 checks failed: dcp-sync crash;")


def test_a_missed_goal_is_a_property_of_a_passing_case_never_a_failure() -> None:
    junit = report.to_junit(outcome(RAW, SAVED, VERIFIED, GOAL_MISSED))
    suite = ElementTree.fromstring(junit).find("testsuite")
    assert suite is not None
    assert (suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("0", "0", "0")
    [case] = [c for c in suite.findall("testcase") if c.get("name") == "throughput"]
    assert case.find("failure") is None and case.find("skipped") is None
    measured = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert measured["goal: blocking <= 1.50x d2h"] == f"missed: {MISSED.detail}"
    assert measured["goal: durable >= 0.80x raw"] == f"met: {MET.detail}"
    assert measured["blocking_s"] == "0.3"


def test_the_verdict_says_the_exit_code_and_why() -> None:
    passing = outcome(RAW, SAVED, VERIFIED, GOAL_MISSED, Result("megatron-async", report.SAVE, None, "skipped"))
    assert report.verdict(passing) == (
        "Verdict: PASS (exit 0): 2 checks passed, 1 skipped; throughput goals met 1 of 2 "
        "(reported, never failing the run)"
    )
    staging = Result("megatron-async", report.STAGING, False, "the save instantiated ROCmFileSystemWriterAsync")
    assert report.verdict(outcome(SAVED, staging)) == (
        "Verdict: FAIL (exit 1): 1 of 2 checks failed: megatron-async staging"
    )
    broken = outcome(SAVED)
    broken.environment_errors.append("psutil is not installed")
    assert report.verdict(broken) == "Verdict: ERROR (exit 2): psutil is not installed"


def test_markdown_summary_is_a_table_with_platform_facts() -> None:
    text = report.to_markdown(outcome(RAW, SAVED, GOAL_MISSED))
    assert text.startswith("### ci-checks checkpoint\n\n**Verdict: PASS (exit 0): 1 checks passed; ")
    assert "AMD Instinct MI300X (rocm), torch 2.13.0, HIP 6.4, megatron-core 0.16.0" in text
    assert "| dcp-async-thread | throughput | missed | 0.60 | 0.47 | 0.300 | 1.100 | goal not met |" in text


def test_markdown_cells_escape_pipes() -> None:
    text = report.to_markdown(outcome(Result("dcp-sync", report.VERIFY, False, "a | b")))
    assert "| a \\| b |" in text


def test_text_table_lines_up_and_names_environment_errors() -> None:
    broken = outcome(RAW, SAVED)
    broken.environment_errors.append("psutil is not installed")
    lines = report.to_text(broken).splitlines()
    assert lines[0].startswith("ci-checks checkpoint: 64.0 MiB in 16 tensors, world size 2")
    header, raw, saved = lines[1:4]
    assert header.index("GB/s") == raw.index("1.30") == saved.index("-    ")
    assert lines[-2:] == ["environment error: psutil is not installed", report.verdict(broken)]


def test_progress_rewrites_one_line_on_a_terminal_only() -> None:
    terminal, pipe = io.StringIO(), io.StringIO()
    report.Progress(terminal, enabled=True).show("dcp-sync: saving")
    report.Progress(terminal, enabled=True).muted().show("rank 1")
    report.Progress(pipe, enabled=False).show("dcp-sync: saving")
    report.Progress(terminal, enabled=True).clear()
    assert terminal.getvalue() == "\r\x1b[Kdcp-sync: saving\r\x1b[K"
    assert pipe.getvalue() == ""


FIGURES = (
    report.RankFigures(0, 0.2, 1.0, 0.5, 0.1, 0.5, 0.5),
    report.RankFigures(1, 0.4, 2.0, 0.5, 0.1, 0.25, 0.25),
)


def test_a_min_ratio_threshold_is_judged_on_the_lowest_rank_and_fails_the_run() -> None:
    met = throughput.threshold("durable", 0.2, FIGURES, applies=True)
    missed = throughput.threshold("blocking", 0.3, FIGURES, applies=True)
    assert (met.met, met.required, missed.met) == (True, True, False)
    assert missed.detail == (
        "--min-ratio blocking=0.3: rank 1 (the lowest of 2): its device-to-host copy (0.100 s) 0.25x the 0.400 s "
        "it blocked: missed"
    )
    assert throughput.threshold("blocking", 0.3, FIGURES, applies=False).met is None
    row = Result("dcp-async-thread", report.THROUGHPUT, True, "", 1.0, 0.25, 0.4, 2.0, (MET, met, missed), FIGURES)
    failing = outcome(SAVED, row)
    assert report.exit_code(failing) == 1
    assert report.verdict(failing).startswith(
        "Verdict: FAIL (exit 1): 1 of 2 checks failed: dcp-async-thread throughput"
    )
    suite = ElementTree.fromstring(report.to_junit(failing)).find("testsuite")
    assert suite is not None and suite.get("failures") == "1"
    [failure] = suite.iter("failure")
    assert (failure.get("type"), failure.get("message")) == ("threshold", missed.detail)
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties["rank 1"] == "durable 0.25x raw, d2h/blocking 0.25"


def test_a_timeout_is_the_verdict_whatever_else_failed() -> None:
    timed_out = Result("megatron-async", report.TIMEOUT, False, "--timeout 30 s reached during megatron-async save")
    broken = outcome(SAVED, Result("dcp-sync", report.VERIFY, False, "differs"), timed_out)
    assert report.exit_code(broken) == 1
    assert report.verdict(broken) == "Verdict: TIMEOUT (exit 1): --timeout 30 s reached during megatron-async save"


def test_the_json_report_reads_back_as_it_was_written() -> None:
    row = Result("dcp-async-thread", report.THROUGHPUT, True, "d", 1.0, 0.5, 0.4, 2.0, (MET,), FIGURES)
    written = outcome(RAW, SAVED, row)
    written.environment_errors.append("No space left on device: /x")
    written.cleanup = {"processes_ended": 2, "left_behind": []}
    assert report.from_json(report.to_json(written)) == written
