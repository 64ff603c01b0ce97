"""`--select` / `--ignore` and the configuration's `select:` / `ignore:`: one vocabulary, resolved in one place."""

from __future__ import annotations

import pytest

from ci_checks.cli import main as cli
from ci_checks.config import load as config
from ci_checks.config.load import Config
from ci_checks.config.selection import SelectionError, resolve
from ci_checks.core.diagnostics import Diagnostic, Severity, Span
from ci_checks.core.repository import Repository
from ci_checks.engine.options import NOT_ASKED, asked
from ci_checks.engine.runs import plan
from tests.ci.linter.conftest import MakeRepo, run_cli


def finding(code: str, rule: str, policy: bool = False) -> Diagnostic:
    """A finding of the built-in rule or linter `rule`, or (`policy`) of the policy rule whose id is `rule`."""
    return Diagnostic(code, rule, Severity.ERROR, "m", Span.point("x.yml"), policy_id=rule if policy else None)


@pytest.mark.parametrize(
    ("selectors", "kept", "dropped"),
    [
        (["CC011"], [("CC011", "duplicate-key")], [("CC013", "empty-file"), ("SC2086", "shellcheck")]),
        (["duplicate-key"], [("CC011", "duplicate-key")], [("CC013", "empty-file")]),
        (["CC0"], [("CC011", "duplicate-key")], [("ZZ-artipacked", "zizmor-artipacked"), ("CC101", "r", True)]),
        (
            ["my-rule"],
            [("CC101", "my-rule", True), ("CC104", "my-rule", True)],
            [("CC101", "other", True), ("CC011", "duplicate-key")],
        ),
        (["SC"], [("SC2086", "shellcheck"), ("CC090", "backend-unavailable")], [("AL-expression", "actionlint-x")]),
        (["zizmor-artipacked"], [("ZZ-artipacked", "zizmor-artipacked")], [("ZZ-unpinned-uses", "zizmor-x")]),
        (["actionlint-expression"], [("AL-expression", "actionlint-expression")], [("AL-syntax-check", "y")]),
        (["shellcheck"], [("SC1000", "shellcheck")], [("ZZ-artipacked", "zizmor-artipacked")]),
    ],
)
def test_a_selector_names_built_in_rules_policy_rules_or_linter_codes(
    selectors: list[str], kept: list[tuple[str, str]], dropped: list[tuple[str, str]]
) -> None:
    selection = resolve(selectors, [], ["my-rule", "other"])
    assert [selection.keeps(finding(*pair)) for pair in kept] == [True] * len(kept)
    assert [selection.keeps(finding(*pair)) for pair in dropped] == [False] * len(dropped)


UNREADABLE = ["CC001", "CC002", "CC003", "CC004", "CC010", "CC012", "CC014"]


@pytest.mark.parametrize("selectors", [["CC040"], ["CC1"], ["my-rule"], ["SC"]])
def test_a_file_no_selected_rule_could_read_is_reported_under_any_select_until_ignored(selectors: list[str]) -> None:
    selection = resolve(selectors, [], ["my-rule"])
    assert [selection.keeps(finding(code, "x")) for code in UNREADABLE] == [True] * len(UNREADABLE)
    assert {rule.code for rule in selection.rules} >= set(UNREADABLE)
    assert not selection.keeps(finding("CC011", "duplicate-key"))  # the file was read: its duplicate key is a finding
    ignoring = resolve(selectors, ["CC010"], ["my-rule"])
    assert not ignoring.keeps(finding("CC010", "yaml-syntax"))
    assert "CC010" not in {rule.code for rule in ignoring.rules}


def test_ignore_wins_over_select_for_every_kind_of_name() -> None:
    selection = resolve(None, ["my-rule", "CC011", "ZZ-artipacked", "SC"], ["my-rule"], profile="security")
    assert not selection.keeps(finding("CC101", "my-rule", policy=True))
    assert not selection.keeps(finding("CC011", "duplicate-key"))
    assert not selection.keeps(finding("ZZ-artipacked", "zizmor-artipacked"))
    assert not selection.keeps(finding("SC2086", "shellcheck"))
    assert selection.keeps(finding("ZZ-unpinned-uses", "zizmor-unpinned-uses"))
    assert not selection.runs_linter("shellcheck") and selection.runs_linter("zizmor")
    assert not selection.runs_policy_rule("my-rule", ["CC101"])


def _linter_finding(code: str, severity: Severity, message: str = "m", confidence: str | None = None) -> Diagnostic:
    return Diagnostic(code, code.lower(), severity, message, Span.point("x.yml"), confidence=confidence)


DEPRECATED = 'runtime "node16" is deprecated in GitHub Actions; removal is scheduled for September 23rd, 2026'
PROFILE_CASES = [
    (_linter_finding("ZZ-template-injection", Severity.ERROR, confidence="high"), ["correctness", "security", "all"]),
    (_linter_finding("ZZ-template-injection", Severity.WARNING, confidence="medium"), ["security", "all"]),
    (_linter_finding("ZZ-unpinned-uses", Severity.ERROR, confidence="high"), ["security", "all"]),
    (_linter_finding("ZZ-excessive-permissions", Severity.ERROR, confidence="high"), ["security", "all"]),
    (_linter_finding("ZZ-artipacked", Severity.INFO, confidence="low"), ["all"]),
    (_linter_finding("AL-action", Severity.ERROR, DEPRECATED), ["security", "all"]),
    (_linter_finding("AL-action", Severity.ERROR, 'the runtime or service used by "a" action is retired'), None),
    (_linter_finding("AL-cache-call-unrestricted", Severity.ERROR), ["security", "all"]),
    (_linter_finding("AL-expression", Severity.ERROR), None),
    (_linter_finding("SC2046", Severity.WARNING), None),
    (_linter_finding("SC2086", Severity.INFO), ["all"]),
    (finding("CC043", "self-hosted-timeout"), None),
]


@pytest.mark.parametrize(("diagnostic", "profiles"), PROFILE_CASES, ids=lambda case: getattr(case, "code", ""))
def test_each_profile_keeps_what_it_says(diagnostic: Diagnostic, profiles: list[str] | None) -> None:
    kept = [
        profile
        for profile in ("correctness", "security", "all")
        if resolve(None, [], [], profile=profile).keeps(diagnostic)
    ]
    assert kept == (profiles or ["correctness", "security", "all"])
    # A selector that names a finding keeps it whatever the profile; an ignore drops it.
    assert resolve([diagnostic.code], [], [], profile="correctness").keeps(diagnostic)
    assert not resolve(None, [diagnostic.code], [], profile="all").keeps(diagnostic)


def test_the_profile_comes_from_the_option_then_the_configuration(make_repo: MakeRepo) -> None:
    root = make_repo({".github/workflows/ci.yml": "on: push\n", ".github/ci-checks.yml": "profile: security\n"})
    for arguments, profile in (([], "security"), (["--profile", "all"], "all")):
        args = cli.build_parser().parse_args(["check", *arguments, str(root)])
        settings = config.of_repository(Repository(root))
        assert plan(cli.options(args), settings).selection.profile == profile
    assert plan(cli.options(cli.build_parser().parse_args(["check", str(root)])), Config()).selection.profile == (
        "correctness"
    )
    # A kept run is reused only under the same profile: the option is part of its key, the configuration by its text.
    assert asked(cli.options(cli.build_parser().parse_args(["check", "--profile", "all", str(root)])))["profile"] == (
        "all"
    )
    assert "profile" not in NOT_ASKED
    (root / ".github" / "ci-checks.yml").write_text("profile: strict\n")
    result = run_cli("check", root)
    assert (result.code, result.err.split(": error: ")[0]) == (2, ".github/ci-checks.yml:1:10")


@pytest.mark.parametrize(("selector", "hint"), [("duplicate-keys", "duplicate-key"), ("no-amd-patc", "no-amd-patch")])
def test_an_unknown_selector_is_an_error_with_the_closest_name(selector: str, hint: str) -> None:
    with pytest.raises(SelectionError, match=f"did you mean {hint}"):
        resolve([selector], [], ["no-amd-patch"])


def test_a_linter_runs_only_when_something_of_it_is_selected(make_repo: MakeRepo) -> None:
    root = make_repo({".github/workflows/ci.yml": "on: push\n"})
    for selected, linters in (
        (["CC0"], []),
        (["SC2086"], ["shellcheck"]),
        (["AL", "zizmor-artipacked"], ["actionlint", "zizmor"]),
    ):
        args = cli.build_parser().parse_args(["check", "--backends", "all", "--select", ",".join(selected), str(root)])
        assert plan(cli.options(args), Config()).backends == linters


def test_an_unknown_name_in_the_configuration_is_a_positioned_error(make_repo: MakeRepo) -> None:
    root = make_repo(
        {".github/workflows/ci.yml": "on: push\n", ".github/ci-checks.yml": "ignore: [CC011, duplicat-key]\n"}
    )
    result = run_cli("check", root)
    assert (result.code, result.err) == (
        2,
        ".github/ci-checks.yml:1:17: error: unknown rule 'duplicat-key' (did you mean duplicate-key?); "
        "see `ci-checks rules`\n",
    )


WARNED = 'on: push\njobs:\n  t:\n    runs-on: a\n    steps:\n      - run: echo "::set-output name=v::1"\n'
"""CC031 reports `::set-output` as a warning: it still works, but is deprecated."""


def test_fail_on_and_exit_zero_decide_the_exit_code(make_repo: MakeRepo) -> None:
    root = make_repo({".github/workflows/ci.yml": WARNED})
    assert run_cli("check", root).code == 1
    assert run_cli("check", root, "--fail-on", "error").code == 0
    assert run_cli("check", root, "--fail-on", "info").code == 1
    assert run_cli("check", root, "--exit-zero").code == 0
    assert run_cli("check", root, "--exit-zero", "--fail-on", "bogus").code == 2


def test_severity_overrides_in_the_configuration(make_repo: MakeRepo) -> None:
    root = make_repo(
        {".github/workflows/ci.yml": WARNED, ".github/ci-checks.yml": "severity: {CC0: info, CC031: error}\n"}
    )
    result = run_cli("check", root)
    assert result.headers[0].startswith(".github/workflows/ci.yml:6:14: CC031 ")
    assert "(1 error)" in result.out.splitlines()[-1]
    (root / ".github" / "ci-checks.yml").write_text("severity: {deprecated-workflow-command: info}\n")
    assert run_cli("check", root).code == 0
    (root / ".github" / "ci-checks.yml").write_text("severity: {CC999: info}\n")
    result = run_cli("check", root)
    assert (result.code, result.err) == (
        2,
        ".github/ci-checks.yml:1:12: error: unknown rule 'CC999' (did you mean CC092?); see `ci-checks rules`\n",
    )


def test_statistics_count_findings_by_rule(make_repo: MakeRepo) -> None:
    root = make_repo({".github/workflows/ci.yml": WARNED.replace("echo", 'echo "::set-output name=w::2"; echo')})
    result = run_cli("check", root, "--statistics")
    assert result.out.splitlines() == [
        "     2  CC031  deprecated-workflow-command  (warning)",
        "Found 2 problems (2 warnings); 1 file checked.",
    ]
    assert result.code == 1


@pytest.mark.parametrize(
    ("value", "names"),
    [
        ('"none"', []),
        ("[none]", []),
        ("[]", []),
        ('"all"', ["actionlint", "shellcheck", "zizmor"]),
        ("[zizmor]", ["zizmor"]),
    ],
)
def test_the_configuration_names_linters_as_the_command_line_does(
    make_repo: MakeRepo, value: str, names: list[str]
) -> None:
    root = make_repo({".github/workflows/ci.yml": "on: push\n", ".github/ci-checks.yml": f"backends: {value}\n"})
    from ci_checks.config import load as config

    assert config.load(".github/ci-checks.yml", root / ".github" / "ci-checks.yml").backends == names
    assert cli._backends(value.strip('"[]') or "none") == names


@pytest.mark.parametrize(
    ("option", "selector", "hint"),
    [
        ("--select", "ZZ-bogus", ""),
        ("--ignore", "ZZ-unpined-uses", " (did you mean ZZ-unpinned-uses?)"),
        ("--select", "AL-expresion", " (did you mean AL-expression?)"),
        ("--select", "SC99999", ""),
    ],
)
def test_a_mistyped_linter_code_is_an_error_not_a_silent_no_op(
    make_repo: MakeRepo, option: str, selector: str, hint: str
) -> None:
    root = make_repo({".github/workflows/ci.yml": WARNED})
    result = run_cli("check", root, option, selector)
    assert (result.code, result.err) == (
        2,
        f"ci-checks: error: unknown rule {selector!r}{hint}; see `ci-checks rules`\n",
    )


def test_what_each_kind_of_selection_runs_and_keeps() -> None:
    policy = ["my-rule", "Amd-rule"]
    by_code = resolve(["CC0"], ["CC011"], policy)
    assert [rule.code for rule in by_code.rules if rule.code in ("CC010", "CC011", "CC101")] == ["CC010"]
    assert not by_code.runs_policy_rule("my-rule", ["CC101"])
    assert resolve(["CC1"], [], policy).runs_policy_rule("my-rule", ["CC101"])
    assert not resolve(["CC1"], ["CC101"], policy).runs_policy_rule("my-rule", ["CC101"])
    assert not resolve(["Amd-rule"], [], policy).runs_policy_rule("my-rule", ["CC101"])
    linters_only = resolve(["SC", "ZZ", "AL", "zizmor-template-injection"], [], policy)
    assert not linters_only.keeps(finding("CC011", "duplicate-key"))
    assert linters_only.keeps(finding("CC091", "backend-failed"))  # a linter that failed is said to have failed
    assert linters_only.keeps(_linter_finding("ZZ-template-injection", Severity.INFO, confidence="low"))
    assert linters_only.keeps(_linter_finding("AL-expression", Severity.INFO))


@pytest.mark.parametrize(
    ("levels", "diagnostic", "level"),
    [
        ({"CC0": Severity.WARNING, "CC011": Severity.INFO}, finding("CC011", "duplicate-key"), Severity.INFO),
        (
            {"CC1": Severity.INFO, "Amd-rule": Severity.WARNING},
            finding("CC101", "Amd-rule", policy=True),
            Severity.WARNING,
        ),
        ({"CC101": Severity.WARNING, "p": Severity.INFO}, finding("CC101", "p", policy=True), Severity.INFO),
        ({"CC": Severity.INFO, "CC04": Severity.WARNING}, finding("CC041", "dangling-reference"), Severity.WARNING),
        ({"Amd-rule": Severity.INFO}, finding("CC011", "duplicate-key"), Severity.ERROR),
        (
            {"shellcheck": Severity.INFO, "SC2086": Severity.WARNING},
            _linter_finding("SC2086", Severity.INFO),
            Severity.WARNING,
        ),
        ({"SC2": Severity.WARNING, "SC": Severity.INFO}, _linter_finding("SC2086", Severity.ERROR), Severity.WARNING),
        (
            {"ZZ": Severity.INFO, "ZZ-template-injection": Severity.WARNING},
            _linter_finding("ZZ-template-injection", Severity.ERROR),
            Severity.WARNING,
        ),
    ],
)
def test_the_most_specific_severity_override_wins(
    levels: dict[str, Severity], diagnostic: Diagnostic, level: Severity
) -> None:
    """A policy id before a code (CC101 names every forbid rule), a code before a prefix, a prefix before a shorter
    one, a linter's code before the linter (`shellcheck` is the longer word, but names every SC code)."""
    selection = resolve(None, [], ["Amd-rule", "p"], levels)
    assert selection.severity(diagnostic) is level
    assert selection.adjusted(diagnostic).severity is level


@pytest.mark.parametrize(
    ("selector", "hint"),
    [
        ("shellchek", "shellcheck"),
        ("zizmor-unpined-uses", "zizmor-unpinned-uses"),
        ("actionlint-expresion", "actionlint-expression"),
        ("zizmr", "zizmor"),
    ],
)
def test_a_misspelt_linter_name_suggests_the_name_not_a_code(make_repo: MakeRepo, selector: str, hint: str) -> None:
    root = make_repo({".github/workflows/ci.yml": WARNED})
    result = run_cli("check", root, "--select", selector)
    assert (result.code, result.err) == (
        2,
        f"ci-checks: error: unknown rule {selector!r} (did you mean {hint}?); see `ci-checks rules`\n",
    )


def test_a_linters_own_name_selects_all_of_its_findings() -> None:
    finding = Diagnostic("ZZ-artipacked", "zizmor-artipacked", Severity.ERROR, "m", Span.point("a.yml"))
    for name, code in (("zizmor", "ZZ"), ("actionlint", "AL"), ("shellcheck", "SC")):
        assert resolve([name], [], []).runs_linter(name)
        assert not resolve(["CC0"], [name], []).runs_linter(name)
        assert resolve([name], [], []).keeps(finding) is (code == "ZZ")
