"""A linter is its `Linter` descriptor: one more in `LINTERS` is known to selection, the profiles, `ci-checks rule`
and SARIF, with nothing else told about it.

The descriptor here is made up (a linter that is never run); the real
linters' descriptors are the ones every other test runs with.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest

from ci_checks.config.selection import SelectionError, resolve
from ci_checks.core import linters
from ci_checks.core.diagnostics import Diagnostic, Severity, Span
from ci_checks.core.linters import Linter
from ci_checks.engine.outcome import Outcome
from ci_checks.reporters import sarif
from tests.ci.linter.conftest import MakeRepo, run_cli

FAKELINT = Linter(
    name="fakelint",
    prefix="FK-",
    code_pattern=re.compile(r"FK-[a-z]+(-[a-z]+)*\Z"),
    docs_url=lambda code: f"https://fakelint.test/checks#{code.removeprefix('FK-')}",
    what="a fakelint check, run by ci-checks over every workflow",
    backend="ci_checks.backends.fakelint",
    version_question=("--version",),
    version_answer=re.compile(r"\bfakelint\b"),
    checks={"broken-thing": "correctness", "loose-pin": "security", "chatter": "all"},
    advice={"broken-thing": re.compile(r"deprecated")},
)
WORKFLOW = "on: push\njobs:\n  t:\n    runs-on: x\n    steps:\n      - run: make\n"


@pytest.fixture(autouse=True)
def fakelint(monkeypatch: pytest.MonkeyPatch) -> Iterator[Linter]:
    monkeypatch.setitem(linters.LINTERS, FAKELINT.name, FAKELINT)
    yield FAKELINT


def finding(check: str, message: str = "m", severity: Severity = Severity.ERROR) -> Diagnostic:
    return FAKELINT.finding(check, severity, message, Span("w.yml", 1, 1, 1, 2))


def test_its_codes_are_made_by_its_descriptor() -> None:
    made = finding("loose-pin")
    assert (made.code, made.rule) == ("FK-loose-pin", "fakelint-loose-pin")


@pytest.mark.parametrize("selector", ["FK", "fk", "FK-loose", "fk-LOOSE-pin", "fakelint", "fakelint-loose-pin"])
def test_select_takes_its_prefix_codes_and_names(selector: str) -> None:
    selection = resolve([selector], [], ())
    assert selection.keeps(finding("loose-pin"))
    assert not selection.keeps(Diagnostic("ZZ-artipacked", "zizmor-artipacked", Severity.ERROR, "m", Span.point("a")))


def test_ignore_takes_its_codes_too() -> None:
    selection = resolve(None, ["FK-loose-pin"], ())
    assert not selection.keeps(finding("loose-pin", severity=Severity.WARNING))
    assert selection.keeps(finding("broken-thing"))


def test_a_check_it_does_not_have_is_an_error_that_suggests_one_it_has(make_repo: MakeRepo) -> None:
    with pytest.raises(SelectionError, match=r"did you mean FK-loose-pin\?"):
        resolve(["FK-loose-pun"], [], ())
    root = make_repo(
        {".github/workflows/ci.yml": "on: push\njobs:\n  t:\n    runs-on: x\n    steps:\n      - run: make\n"}
    )
    assert run_cli("check", "--backends", "none", "--select", "fakelint-broken", root).code == 0
    result = run_cli("check", "--backends", "none", "--select", "fakelint-brokn-thing", root)
    assert result.code == 2
    assert "did you mean fakelint-broken-thing?" in result.err


@pytest.mark.parametrize(
    ("check", "message", "severity", "narrowest"),
    [
        ("broken-thing", "m", Severity.ERROR, "correctness"),
        ("broken-thing", "this input is deprecated", Severity.ERROR, "security"),
        ("broken-thing", "m", Severity.INFO, "all"),
        ("loose-pin", "m", Severity.WARNING, "security"),
        ("chatter", "m", Severity.ERROR, "all"),
        ("newer-check", "m", Severity.WARNING, "correctness"),
    ],
)
def test_the_profiles_keep_its_checks_by_the_tier_it_gives(
    check: str, message: str, severity: Severity, narrowest: str
) -> None:
    kept = [
        resolve(None, [], (), profile=profile).keeps(finding(check, message, severity)) for profile in linters.PROFILES
    ]
    assert kept == [
        linters.PROFILES.index(profile) >= linters.PROFILES.index(narrowest) for profile in linters.PROFILES
    ]


def test_ci_checks_rule_documents_its_checks() -> None:
    result = run_cli("rule", "fakelint-loose-pin")
    assert result.code == 0
    assert result.out == (
        "# FK-loose-pin (fakelint)\n\n"
        "FK-loose-pin is a fakelint check, run by ci-checks over every workflow; fakelint's documentation explains it "
        "and how to fix what it finds.\n\n"
        "Online: https://fakelint.test/checks#loose-pin\n"
    )
    assert run_cli("rule", "FK-loose").code == 2  # a prefix is not one check


def test_sarif_gives_its_findings_a_rule_with_its_documentation() -> None:
    document = json.loads(sarif.render(Outcome([finding("loose-pin")])))
    (rule,) = document["runs"][0]["tool"]["driver"]["rules"]
    assert rule["id"] == "FK-loose-pin"
    assert rule["name"] == "fakelint-loose-pin"
    assert rule["helpUri"] == "https://fakelint.test/checks#loose-pin"
    assert rule["shortDescription"] == {"text": "fakelint FK-loose-pin"}
    assert rule["properties"] == {"tags": ["fakelint"]}
