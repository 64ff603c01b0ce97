"""Output formats: SARIF against the official schema, GitHub commands, JUnit read back, the step summary."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import jsonschema
import pytest
from junitparser import Failure, JUnitXml

from ci_checks import own_schemas
from ci_checks.check import Outcome
from ci_checks.diagnostics import Diagnostic, Severity, Span
from ci_checks.reporters import github, markdown
from tests.ci.conftest import run_cli

SARIF_SCHEMA = os.environ.get("CI_CHECKS_SARIF_SCHEMA")
needs_sarif_schema = pytest.mark.skipif(not SARIF_SCHEMA, reason="CI_CHECKS_SARIF_SCHEMA is not set")

WORKFLOW = """on: push
env:
  A: 1
  A: 2
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - run: echo "::set-output name=v::1"
      - run: echo "::set-env name=X::1" # ::set-env
      - uses: actions/checkout
"""
POLICY = """version: 1
rules:
  - id: no-set-env
    kind: forbid
    message: "use GITHUB_ENV: it is safe, 100% of the time"
    where: {workflow: .github/workflows/ci.yml}
    forbid: [{text: "::set-env"}]
  - id: tests-after-checkout
    kind: order
    where: {workflow: .github/workflows/ci.yml}
    order: [{step: {uses: actions/checkout}}, {command: echo}]
"""


@pytest.fixture
def repo(make_repo) -> Path:  # type: ignore[no-untyped-def]
    return make_repo({".github/workflows/ci.yml": WORKFLOW, ".github/ci-checks.yml": POLICY})


@needs_sarif_schema
def test_sarif_validates_against_the_official_schema_and_keeps_everything(repo: Path, tmp_path: Path) -> None:
    assert SARIF_SCHEMA is not None
    result = run_cli("check", repo, "--output-format", "sarif")
    assert result.code == 1
    log = json.loads(result.out)
    schema = json.loads(Path(SARIF_SCHEMA).read_text(encoding="utf-8"))
    jsonschema.validators.validator_for(schema)(schema).validate(log)
    [run] = log["runs"]
    rule_ids = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    results = run["results"]
    assert {result["ruleId"] for result in results} == set(rule_ids)
    assert {"CC011", "CC030", "CC031", "CC101/no-set-env", "CC100/tests-after-checkout"} <= set(rule_ids)
    assert all(rule_ids[result["ruleIndex"]] == result["ruleId"] for result in results)
    duplicate = next(result for result in results if result["ruleId"] == "CC011")
    assert duplicate["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 4,
        "startColumn": 3,
        "endLine": 4,
        "endColumn": 4,
    }
    assert duplicate["relatedLocations"][0]["physicalLocation"]["region"]["startLine"] == 3
    set_output = next(result for result in results if result["ruleId"] == "CC031" and "set-output" in str(result))
    [change] = set_output["fixes"][0]["artifactChanges"]
    assert change["replacements"][0]["insertedContent"]["text"] == 'echo "v=1" >> "$GITHUB_OUTPUT"'
    json_count = len(json.loads(run_cli("check", repo, "--output-format", "json").out)["diagnostics"])
    assert len(results) == json_count
    assert run["columnKind"] == "unicodeCodePoints"


def parse_command(line: str) -> tuple[str, dict[str, str], str]:
    """A workflow command read back the way the runner reads it (an independent parser, for the round trip)."""
    match = re.fullmatch(r"::(\w+) ([^:]*)::(.*)", line)
    assert match is not None, line

    def unescape(text: str, extra: bool) -> str:
        if extra:
            text = text.replace("%3A", ":").replace("%2C", ",")
        return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")

    properties = dict(part.split("=", 1) for part in match.group(2).split(","))
    return match.group(1), {k: unescape(v, True) for k, v in properties.items()}, unescape(match.group(3), False)


def test_github_commands_round_trip_percent_comma_colon_and_newline() -> None:
    message = "100% sure: a, b\nsecond line %0A stays literal\r"
    path = "dir,with:odd%chars/ci.yml"
    diagnostic = Diagnostic("CC101", "no-x", Severity.WARNING, message, Span(path, 3, 5, 4, 2))
    line = github.command(diagnostic)
    assert "\n" not in line and "\r" not in line
    kind, properties, text = parse_command(line)
    assert (kind, text) == ("warning", message)
    assert properties == {
        "file": path,
        "line": "3",
        "col": "5",
        "endLine": "4",
        "endColumn": "2",
        "title": "CC101 no-x",
    }


def test_github_output_has_one_command_per_finding(repo: Path) -> None:
    lines = run_cli("check", repo, "--output-format", "github").out.splitlines()
    kinds = [parse_command(line)[0] for line in lines]
    assert len(lines) == len(json.loads(run_cli("check", repo, "--output-format", "json").out)["diagnostics"])
    assert set(kinds) == {"error", "warning"}


def test_junit_reads_back_with_a_junit_parser(repo: Path, tmp_path: Path) -> None:
    report = tmp_path / "ci-checks.xml"
    assert run_cli("check", repo, "--output", f"junit={report}").code == 1
    xml = JUnitXml.fromfile(str(report))
    cases = [(suite.name, case) for suite in xml for case in suite]
    failures = [result for _, case in cases for result in case.result if isinstance(result, Failure)]
    diagnostics = json.loads(run_cli("check", repo, "--output-format", "json").out)["diagnostics"]
    assert len(cases) == len(diagnostics)
    assert len(failures) == sum(1 for d in diagnostics if d["severity"] != "info")
    assert {suite for suite, _ in cases} == {".github/workflows/ci.yml"}
    duplicate = next(case for _, case in cases if case.name.startswith("CC011"))
    assert duplicate.name == "CC011 duplicate-key at 4:3"
    assert "4 |   A: 2" in duplicate.result[0].text


def test_junit_of_a_clean_run_and_of_unprintable_characters(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    clean = make_repo(
        {".github/workflows/ci.yml": "on: push\njobs:\n  t:\n    runs-on: x\n    steps: [{run: echo ok}]\n"}
    )
    report = tmp_path / "clean.xml"
    assert run_cli("check", clean, "--output", f"junit={report}").code == 0
    [suite] = list(JUnitXml.fromfile(str(report)))
    assert [case.is_passed for case in suite] == [True]
    outcome = Outcome([Diagnostic("CC011", "duplicate-key", Severity.ERROR, "key '\x1b[31m'", Span.point("a.yml"))])
    from ci_checks.reporters import junit

    path = tmp_path / "escaped.xml"
    path.write_text(junit.render(outcome), encoding="utf-8")
    [suite] = list(JUnitXml.fromfile(str(path)))
    assert next(iter(suite)).result[0].message == "key '\\x1b[31m'"


def test_markdown_summary_is_appended_to_the_step_summary(repo: Path, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    summary = tmp_path / "summary.md"
    summary.write_text("# earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = run_cli("check", repo)
    assert result.code == 1
    text = summary.read_text()
    assert text.startswith("# earlier step\n## ci-checks\n")
    assert "| error | \\.github/workflows/ci\\.yml:4:3 | CC011 | duplicate\\-key | duplicate key 'A' |" in text


def test_markdown_escapes_what_a_pull_request_could_inject() -> None:
    message = "key '<img src=x onerror=alert(1)>' | [link](https://evil) `code`"
    outcome = Outcome([Diagnostic("CC011", "duplicate-key", Severity.ERROR, message, Span.point("a.yml"))], files=1)
    row = markdown.render(outcome).splitlines()[-1]
    assert not re.search(r"(?<!\\)[<>|\[\]`]", row.strip("| ").replace(" | ", "")), row
    assert row.count(" | ") == 4


def test_several_outputs_at_once_and_bad_output_options(repo: Path, tmp_path: Path) -> None:
    sarif, junit_file = tmp_path / "r.sarif", tmp_path / "r.xml"
    result = run_cli(
        "check", repo, "--output-format", "json", "--output", f"sarif={sarif}", "--output", f"junit={junit_file}"
    )
    assert json.loads(result.out)["diagnostics"]
    assert json.loads(sarif.read_text())["version"] == "2.1.0"
    assert junit_file.read_text().startswith("<?xml")
    bad = run_cli("check", repo, "--output", "pdf=x.pdf")
    assert bad.code == 2 and "unknown format 'pdf'" in bad.err
    missing = run_cli("check", repo, "--output", f"sarif={tmp_path / 'no' / 'such' / 'dir.sarif'}")
    assert missing.code == 2 and "cannot write output" in missing.err


LINTED = """on: pull_request_target
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with:
          ref: ${{ github.event.pull_request.head.sha }}
      - run: echo ${{ github.event.pull_request.title }}
      - run: |
          cd $HOME/src
          echo "${{ matrix.missing }}"
      - run: echo "::set-output name=x::1"
"""


@needs_sarif_schema
def test_sarif_with_findings_from_every_backend_validates(make_repo) -> None:  # type: ignore[no-untyped-def]
    assert SARIF_SCHEMA is not None
    root = make_repo({".github/workflows/ci.yml": LINTED, ".github/ci-checks.yml": POLICY})
    result = run_cli("check", root, "--backends", "all", "--select", "CC,AL,SC,ZZ", "--output-format", "sarif")
    assert result.code == 1
    log = json.loads(result.out)
    schema = json.loads(Path(SARIF_SCHEMA).read_text(encoding="utf-8"))
    jsonschema.validators.validator_for(schema)(schema).validate(log)
    rule_ids = {result["ruleId"] for result in log["runs"][0]["results"]}
    prefixes = {rule_id.split("-")[0] if rule_id[:2] in ("AL", "ZZ") else rule_id[:2] for rule_id in rule_ids}
    assert {"AL", "ZZ", "SC", "CC"} <= prefixes, rule_ids
    assert "CC031" in rule_ids and "AL-deprecated-commands" not in rule_ids  # one finding, merged into ours
    as_json = json.loads(
        run_cli("check", root, "--backends", "all", "--select", "CC,AL,SC,ZZ", "--output-format", "json").out
    )
    jsonschema.Draft202012Validator(own_schemas.load(own_schemas.OUTPUT)).validate(as_json)
    assert len(as_json["diagnostics"]) == len(log["runs"][0]["results"])


def test_this_repository_is_clean_with_every_linter() -> None:
    from tests.ci.conftest import PROJECT

    result = run_cli("check", PROJECT, "--backends", "all")
    assert result.code == 0, result.out
    assert "CC090" not in result.out and "CC091" not in result.out
