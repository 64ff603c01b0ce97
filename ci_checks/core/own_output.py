"""Recognising what ci-checks wrote itself among a repository's files: a baseline, or a report.

`ci-checks baseline write .github/ci-checks-baseline.json` records each
finding with its path, and a report written with `--output FORMAT=FILE`
quotes paths and commands in its messages. Such a file is about the
repository, not part of it: a rule that reads the repository's files for
mentions (a patch's path, say) must not count them, or the findings it
records would clear themselves on the next check.

They are told by their content, whatever their name: a baseline is a JSON
object with `"version"` `baseline.FORMAT` and `"findings"` entries that
carry a fingerprint; a JSON report has `"version": 1` and `"diagnostics"`
with code, rule and severity; SARIF names `ci-checks` as its tool's driver;
JUnit XML is a `testsuites` named `ci-checks`; a text or concise report
ends with its summary line (`Found 3 problems (3 errors); 9 files checked.`),
a Markdown one starts with its `## ci-checks` heading, and GitHub's format is
workflow commands titled with a code alone. The files a run was told to read
or write (`--baseline`, `baseline write`, `--output`) are known by their path
as well (`RepositoryContext.own_files`).
"""

from __future__ import annotations

import json
import re
from typing import Any

_TOOL = "ci-checks"
_JSON_FORMAT = 1
"""The `version` of `--output-format json` (see `schemas/ci-checks-output.schema.json`)."""
_SUMMARY = re.compile(
    r"(Found \d+ problems? \(\d+ \w+(, \d+ \w+)*\)|No problems found); \d+ files? checked\.", re.ASCII
)
_MARKDOWN_HEADING = f"## {_TOOL}\n"
_GITHUB_COMMAND = re.compile(r"::(error|warning|notice) [^\n]*title=[A-Z][^,:\n]*::[^\n]*")
_JUNIT = re.compile(rf'<testsuites name="{_TOOL}"')

BASELINE_FORMAT = 1
"""The version a baseline file is written with (`engine.baseline`), and the only one it reads."""


def written_by_ci_checks(text: str) -> bool:
    """Whether a file's text is a baseline or a report that ci-checks wrote (see the module)."""
    body = text.strip()
    if body.startswith("{"):
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):
            return False
        return isinstance(data, dict) and (_baseline(data) or _json_report(data) or _sarif(data))
    if body.startswith("<?xml"):
        return _JUNIT.search(body[:1000]) is not None
    if body.startswith(_MARKDOWN_HEADING):
        return True
    lines = body.splitlines()
    if not lines:
        return False
    return _SUMMARY.fullmatch(lines[-1]) is not None or all(_GITHUB_COMMAND.fullmatch(line) for line in lines)


def _baseline(data: dict[str, Any]) -> bool:
    findings = data.get("findings")
    return (
        data.get("version") == BASELINE_FORMAT
        and isinstance(findings, list)
        and all(isinstance(entry, dict) and isinstance(entry.get("fingerprint"), str) for entry in findings)
    )


def _json_report(data: dict[str, Any]) -> bool:
    found = data.get("diagnostics")
    return (
        data.get("version") == _JSON_FORMAT
        and isinstance(found, list)
        and all(isinstance(item, dict) and {"code", "rule", "severity"} <= item.keys() for item in found)
    )


def _sarif(data: dict[str, Any]) -> bool:
    runs = data.get("runs")
    return isinstance(runs, list) and bool(runs) and all(_driver_name(run) == _TOOL for run in runs)


def _driver_name(run: object) -> object:
    tool = run.get("tool") if isinstance(run, dict) else None
    driver = tool.get("driver") if isinstance(tool, dict) else None
    return driver.get("name") if isinstance(driver, dict) else None
