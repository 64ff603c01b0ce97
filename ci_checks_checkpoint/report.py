"""The harness's results and their forms: JSON (`schemas/checkpoint-report.schema.json`), JUnit XML,
a Markdown summary, a plain-text table and a progress line. No torch here.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, TextIO
from xml.etree import ElementTree

SAVE = "save"
STAGING = "staging"
VERIFY = "verify"
RESHARD = "reshard"  # the checkpoint loaded on another number of ranks
CRASH = "crash"
TIMEOUT = "timeout"  # the run reached --timeout in this stage and was ended
ABORTED = "aborted"  # a rank died (a signal, an exit) in this stage without saying why
THROUGHPUT = "throughput"
# Only these decide the exit code; a missed throughput goal is reported, not failed, unless it is a
# threshold asked for with --min-ratio.
GATING_CHECKS = frozenset({SAVE, STAGING, VERIFY, RESHARD, CRASH, TIMEOUT, ABORTED})
RAW = "raw"  # a reference row: a write + fsync of the same bytes with the same threads
D2H = "d2h"  # a reference row: a copy of the same bytes into host memory made beforehand
REFERENCES = frozenset({RAW, D2H})
IN_PLACE = "dcp-in-place"  # the row demonstrating the hazard of saving over a checkpoint
RUN = "run"  # a row of the run as a whole: a stage that belongs to no backend timed out or died

# A staging row's detail is at most this long (a table row, a JUnit message); the JSON report's platform.staging
# has the whole of it.
ROW_LIMIT = 300
_CUT = " [...] (the whole: platform.staging)"

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_ENVIRONMENT = 2


def row(text: str) -> str:
    """`text`, or its beginning with a mark saying where the rest is when it is longer than ROW_LIMIT."""
    if len(text) <= ROW_LIMIT:
        return text
    return text[: ROW_LIMIT - len(_CUT)].rstrip() + _CUT


@dataclass(frozen=True)
class Goal:
    """One throughput goal of one backend; `met` is None when it was not judged (`detail` says why).
    A `required` goal is a threshold asked for with --min-ratio: missing it fails the run."""

    name: str
    met: bool | None
    detail: str
    required: bool = False


@dataclass(frozen=True)
class RankFigures:
    """One rank's part of a backend's throughput: its save against its own references, each of the bytes that
    rank holds. `durable_ratio` is its raw write's time over its save's total (the save's durable rate as a
    fraction of the raw write's); `blocking_ratio` its device-to-host copy's time over the time its save call
    blocked (1.0: it blocked no longer than the copy it cannot avoid)."""

    rank: int
    blocking_s: float
    total_s: float
    raw_s: float
    d2h_s: float
    durable_ratio: float
    blocking_ratio: float | None  # None: the save call did not block measurably


@dataclass(frozen=True)
class Result:
    """One backend x check. `passed` is None when the check was not judged (skipped); for a throughput
    row it says whether every judged goal was met."""

    backend: str
    check: str
    passed: bool | None
    detail: str
    gb_per_s: float | None = None
    ratio_to_raw: float | None = None
    blocking_s: float | None = None
    total_s: float | None = None
    goals: tuple[Goal, ...] = ()
    ranks: tuple[RankFigures, ...] = ()  # throughput rows: each rank's figures


@dataclass
class Outcome:
    platform: dict[str, Any] = field(default_factory=dict)
    results: list[Result] = field(default_factory=list)
    environment_errors: list[str] = field(default_factory=list)
    # What the end of the run had to do: processes it ended, run folders of killed runs it removed.
    cleanup: dict[str, Any] = field(default_factory=dict)


def _missed_thresholds(result: Result) -> list[Goal]:
    return [goal for goal in result.goals if goal.required and goal.met is False]


def _failed(outcome: Outcome) -> list[Result]:
    gating = [r for r in outcome.results if r.passed is False and r.check in GATING_CHECKS]
    return gating + [r for r in outcome.results if r.check == THROUGHPUT and _missed_thresholds(r)]


def exit_code(outcome: Outcome) -> int:
    if outcome.environment_errors:
        return EXIT_ENVIRONMENT
    if _failed(outcome):
        return EXIT_FAILED
    return EXIT_OK


def verdict(outcome: Outcome) -> str:
    """One line: the exit code and why, and how the throughput goals went (which never decide it, unless
    --min-ratio made them thresholds)."""
    checks = [r for r in outcome.results if r.check in GATING_CHECKS]
    thresholds = [r for r in outcome.results if any(g.required for g in r.goals)]
    failed = [f"{r.backend} {r.check}" for r in _failed(outcome)]
    skipped = sum(r.passed is None for r in checks)
    goals = [g for r in outcome.results for g in r.goals if g.met is not None and not g.required]
    met = sum(bool(g.met) for g in goals)
    timed_out = next((r for r in outcome.results if r.check == TIMEOUT), None)
    judged = len(checks) + len(thresholds)
    if outcome.environment_errors:
        head = f"ERROR (exit {EXIT_ENVIRONMENT}): {outcome.environment_errors[0]}"
    elif timed_out is not None:
        head = f"TIMEOUT (exit {EXIT_FAILED}): {timed_out.detail}"
    elif failed:
        head = f"FAIL (exit {EXIT_FAILED}): {len(failed)} of {judged} checks failed: {', '.join(failed)}"
    else:
        head = f"PASS (exit {EXIT_OK}): {judged - skipped} checks passed"
        head += f", {skipped} skipped" if skipped else ""
    goals_part = f"; throughput goals met {met} of {len(goals)} (reported, never failing the run)" if goals else ""
    return f"Verdict: {head}{goals_part}"


def to_json(outcome: Outcome) -> str:
    document = {
        "version": 1,
        "verdict": verdict(outcome),
        "exit_code": exit_code(outcome),
        "errors": outcome.environment_errors,
        "platform": outcome.platform,
        "results": [asdict(r) for r in outcome.results],
        "cleanup": outcome.cleanup,
    }
    return json.dumps(document, indent=2) + "\n"


def result_from_json(record: dict[str, Any]) -> Result:
    goals = tuple(Goal(**goal) for goal in record.get("goals", ()))
    ranks = tuple(RankFigures(**figures) for figures in record.get("ranks", ()))
    return Result(**{**record, "goals": goals, "ranks": ranks})


def from_json(text: str) -> Outcome:
    """An Outcome from what to_json wrote."""
    document = json.loads(text)
    return Outcome(
        document["platform"],
        [result_from_json(record) for record in document["results"]],
        list(document.get("errors", [])),
        dict(document.get("cleanup", {})),
    )


def _result_cell(result: Result) -> str:
    if result.check == THROUGHPUT:  # a goal, which does not decide the exit code
        return {True: "met", False: "missed", None: "-"}[result.passed]
    return {True: "pass", False: "FAIL", None: "skip"}[result.passed]


def _number(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _cells(result: Result) -> list[str]:
    return [
        result.backend,
        result.check,
        _result_cell(result),
        _number(result.gb_per_s, 2),
        _number(result.ratio_to_raw, 2),
        _number(result.blocking_s, 3),
        _number(result.total_s, 3),
        result.detail,
    ]


_HEADERS = ["backend", "check", "result", "GB/s", "x raw", "blocking s", "total s", "detail"]


def headline(platform: dict[str, Any]) -> str:
    """The platform in one line, from what is known of it (a run ended early may not know the device)."""
    parts = []
    if platform.get("size_bytes"):
        parts.append(f"{platform['size_bytes'] / (1 << 20):.1f} MiB in {platform['tensors']} tensors")
    parts.append(f"world size {platform.get('world_size')}")
    if platform.get("device"):
        architecture = f", {platform['architecture']}" if platform.get("architecture") else ""
        parts.append(f"{platform['device']} ({platform['device_kind']}{architecture})")
    if platform.get("torch"):
        parts.append(f"torch {platform['torch']}")
    if platform.get("hip"):
        parts.append(f"HIP {platform['hip']}")
    elif platform.get("cuda"):
        parts.append(f"CUDA {platform['cuda']}")
    if platform.get("megatron_core"):
        parts.append(f"megatron-core {platform['megatron_core']}")
    if platform.get("emulation"):
        parts.append(f"megatron-async {platform['emulation']}")
    if platform.get("as_platform"):
        parts.append(f"torch.version.hip emulated as {platform['as_platform']['hip']} (--as-platform rocm)")
    return ", ".join(parts)


def project_notes(platform: dict[str, Any]) -> list[str]:
    """What running the project's own code took: the modules stubbed, each setup that raised after a swap."""
    notes = []
    if platform.get("stubbed_imports"):
        stubbed = ", ".join(platform["stubbed_imports"])
        notes.append(f"stubbed, not installed here (--stub-missing-imports): {stubbed}")
    for raised in platform.get("setup_exceptions") or ():
        if raised["replaced"]:
            judged = f"after it replaced {', '.join(raised['replaced'])}: the checks above judge what it replaced"
        else:
            judged = (
                "having replaced nothing of Megatron-Core's (--setup-may-raise): the checks above judge what is in "
                "effect"
            )
        notes.append(f"setup {raised['setup']} raised {raised['exception']} ({raised['where']}) {judged}")
    return notes


def to_text(outcome: Outcome) -> str:
    rows = [_HEADERS] + [_cells(r) for r in outcome.results] if outcome.results else []
    widths = [max(len(row[i]) for row in rows) for i in range(len(_HEADERS))] if rows else []
    lines = [f"ci-checks checkpoint: {headline(outcome.platform)}"] if outcome.platform else []
    for row in rows:
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))
    lines.extend(f"note: {note}" for note in project_notes(outcome.platform))
    lines.extend(f"environment error: {message}" for message in outcome.environment_errors)
    lines.append(verdict(outcome))
    return "\n".join(line.rstrip() for line in lines) + "\n"


def _markdown_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(outcome: Outcome) -> str:
    lines = ["### ci-checks checkpoint", "", f"**{_markdown_cell(verdict(outcome))}**", ""]
    if outcome.platform:
        lines += [headline(outcome.platform), ""]
    if outcome.results:
        lines += ["| " + " | ".join(_HEADERS) + " |", "|" + "---|" * len(_HEADERS)]
        lines += ["| " + " | ".join(_markdown_cell(c) for c in _cells(r)) + " |" for r in outcome.results]
    lines += [f"\n**Note:** {_markdown_cell(note)}" for note in project_notes(outcome.platform)]
    lines += [f"\n**Environment error:** {_markdown_cell(m)}" for m in outcome.environment_errors]
    return "\n".join(lines) + "\n\n"


def to_junit(outcome: Outcome) -> str:
    """A test case per backend x check; the reference rows are not tests.

    A throughput row is a passing case whatever its goals did: they are `<property>` elements
    of the case (met, missed, not judged), since a missed goal never fails the run and a red
    case on a green job would mislead a dashboard; only a --min-ratio threshold it missed is a
    `<failure type="threshold">`.
    """
    cases = [r for r in outcome.results if r.backend not in REFERENCES]
    failed = [r for r in _failed(outcome) if r.backend not in REFERENCES]
    skipped = [r for r in cases if r.passed is None and r.check in GATING_CHECKS]
    suite = ElementTree.Element(
        "testsuite",
        name="ci-checks checkpoint",
        tests=str(len(cases) + len(outcome.environment_errors)),
        failures=str(len(failed)),
        errors=str(len(outcome.environment_errors)),
        skipped=str(len(skipped)),
    )
    properties = ElementTree.SubElement(suite, "properties")
    for name, value in outcome.platform.items():
        text = value if isinstance(value, str) else json.dumps(value)
        ElementTree.SubElement(properties, "property", name=name, value=text)
    ElementTree.SubElement(properties, "property", name="verdict", value=verdict(outcome))
    for result in cases:
        case = ElementTree.SubElement(
            suite,
            "testcase",
            classname=f"checkpoint.{result.backend}",
            name=result.check,
            time=f"{result.total_s or 0:.3f}",
        )
        if result.check == THROUGHPUT:
            measured = ElementTree.SubElement(case, "properties")
            for key in ("gb_per_s", "ratio_to_raw", "blocking_s", "total_s"):
                value = getattr(result, key)
                if value is not None:
                    ElementTree.SubElement(measured, "property", name=key, value=f"{value:.6g}")
            for figures in result.ranks:
                blocking = "-" if figures.blocking_ratio is None else f"{figures.blocking_ratio:.3g}"
                value = f"durable {figures.durable_ratio:.3g}x raw, d2h/blocking {blocking}"
                ElementTree.SubElement(measured, "property", name=f"rank {figures.rank}", value=value)
            for goal in result.goals:
                state = {True: "met", False: "missed", None: "not judged"}[goal.met]
                ElementTree.SubElement(measured, "property", name=f"goal: {goal.name}", value=f"{state}: {goal.detail}")
            missed = "; ".join(goal.detail for goal in _missed_thresholds(result))
            if missed:
                ElementTree.SubElement(case, "failure", message=missed, type="threshold").text = missed
            ElementTree.SubElement(case, "system-out").text = result.detail
        elif result.passed is False:
            ElementTree.SubElement(case, "failure", message=result.detail, type="check").text = result.detail
        elif result.passed is None:
            ElementTree.SubElement(case, "skipped", message=result.detail)
        else:
            ElementTree.SubElement(case, "system-out").text = result.detail
    for message in outcome.environment_errors:
        case = ElementTree.SubElement(suite, "testcase", classname="checkpoint", name="environment")
        ElementTree.SubElement(case, "error", message=message).text = message
    root = ElementTree.Element("testsuites")
    root.append(suite)
    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"


class Progress:
    """One self-overwriting status line, shown only on a terminal."""

    def __init__(self, stream: TextIO, enabled: bool) -> None:
        self._stream = stream
        self._enabled = enabled

    def show(self, text: str) -> None:
        if self._enabled:
            self._stream.write(f"\r\x1b[K{text}")
            self._stream.flush()

    def muted(self) -> Progress:
        return Progress(self._stream, False)

    def clear(self) -> None:
        self.show("")
