"""The harness's results and their forms: JSON (`schemas/checkpoint-report.schema.json`), JUnit XML,
a Markdown summary, a plain-text table and a progress line. No torch here.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, TextIO
from xml.etree import ElementTree

SAVE = "save"
VERIFY = "verify"
CRASH = "crash"
THROUGHPUT = "throughput"
# Only these decide the exit code; a missed throughput goal is reported, not failed.
GATING_CHECKS = frozenset({SAVE, VERIFY, CRASH})
RAW = "raw"  # the reference row: a plain sequential write + fsync of the same bytes
IN_PLACE = "dcp-in-place"  # the row demonstrating the hazard of saving over a checkpoint

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_ENVIRONMENT = 2


@dataclass(frozen=True)
class Result:
    """One backend x check. `passed` is None when the check was not judged (skipped)."""

    backend: str
    check: str
    passed: bool | None
    detail: str
    gb_per_s: float | None = None
    ratio_to_raw: float | None = None
    blocking_s: float | None = None
    total_s: float | None = None


@dataclass
class Outcome:
    platform: dict[str, Any] = field(default_factory=dict)
    results: list[Result] = field(default_factory=list)
    environment_errors: list[str] = field(default_factory=list)


def exit_code(outcome: Outcome) -> int:
    if outcome.environment_errors:
        return EXIT_ENVIRONMENT
    if any(r.passed is False and r.check in GATING_CHECKS for r in outcome.results):
        return EXIT_FAILED
    return EXIT_OK


def to_json(outcome: Outcome) -> str:
    document = {"version": 1, "platform": outcome.platform, "results": [asdict(r) for r in outcome.results]}
    return json.dumps(document, indent=2) + "\n"


def _verdict(result: Result) -> str:
    if result.check == THROUGHPUT:  # a goal, which does not decide the exit code
        return {True: "met", False: "missed", None: "-"}[result.passed]
    return {True: "pass", False: "FAIL", None: "skip"}[result.passed]


def _number(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _cells(result: Result) -> list[str]:
    return [
        result.backend,
        result.check,
        _verdict(result),
        _number(result.gb_per_s, 2),
        _number(result.ratio_to_raw, 2),
        _number(result.blocking_s, 3),
        _number(result.total_s, 3),
        result.detail,
    ]


_HEADERS = ["backend", "check", "result", "GB/s", "x raw", "blocking s", "total s", "detail"]


def headline(platform: dict[str, Any]) -> str:
    parts = [
        f"{platform['size_bytes'] / (1 << 20):.1f} MiB in {platform['tensors']} tensors",
        f"world size {platform['world_size']}",
        f"{platform['device']} ({platform['device_kind']})",
        f"torch {platform['torch']}",
    ]
    if platform.get("hip"):
        parts.append(f"HIP {platform['hip']}")
    elif platform.get("cuda"):
        parts.append(f"CUDA {platform['cuda']}")
    if platform.get("megatron_core"):
        parts.append(f"megatron-core {platform['megatron_core']}")
    if platform.get("emulation"):
        parts.append(f"megatron-async {platform['emulation']}")
    return ", ".join(parts)


def to_text(outcome: Outcome) -> str:
    rows = [_HEADERS] + [_cells(r) for r in outcome.results]
    widths = [max(len(row[i]) for row in rows) for i in range(len(_HEADERS))]
    lines = [f"ci-checks checkpoint: {headline(outcome.platform)}"] if outcome.platform else []
    for row in rows:
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))
    lines.extend(f"environment error: {message}" for message in outcome.environment_errors)
    return "\n".join(line.rstrip() for line in lines) + "\n"


def _markdown_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(outcome: Outcome) -> str:
    lines = ["### ci-checks checkpoint", ""]
    if outcome.platform:
        lines += [headline(outcome.platform), ""]
    lines += ["| " + " | ".join(_HEADERS) + " |", "|" + "---|" * len(_HEADERS)]
    lines += ["| " + " | ".join(_markdown_cell(c) for c in _cells(r)) + " |" for r in outcome.results]
    lines += [f"\n**Environment error:** {_markdown_cell(m)}" for m in outcome.environment_errors]
    return "\n".join(lines) + "\n\n"


def to_junit(outcome: Outcome) -> str:
    """A test case per backend x check; the raw-write reference row is not a test."""
    cases = [r for r in outcome.results if r.backend != RAW]
    suite = ElementTree.Element(
        "testsuite",
        name="ci-checks checkpoint",
        tests=str(len(cases) + len(outcome.environment_errors)),
        failures=str(sum(r.passed is False for r in cases)),
        errors=str(len(outcome.environment_errors)),
        skipped=str(sum(r.passed is None for r in cases)),
    )
    properties = ElementTree.SubElement(suite, "properties")
    for name, value in outcome.platform.items():
        text = value if isinstance(value, str) else json.dumps(value)
        ElementTree.SubElement(properties, "property", name=name, value=text)
    for result in cases:
        case = ElementTree.SubElement(
            suite,
            "testcase",
            classname=f"checkpoint.{result.backend}",
            name=result.check,
            time=f"{result.total_s or 0:.3f}",
        )
        if result.passed is False:
            # A missed throughput goal is listed as a failure of its own type, but does not fail the run.
            kind = "goal" if result.check == THROUGHPUT else "check"
            ElementTree.SubElement(case, "failure", message=result.detail, type=kind).text = result.detail
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
