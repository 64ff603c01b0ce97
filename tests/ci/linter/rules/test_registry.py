"""Meta-tests: every rule is declared where it belongs, registered once, documented, and has error and clean
fixtures."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import ci_checks.rules
from ci_checks import registry
from ci_checks.config.registry import RETIRED_CODES, built_in
from ci_checks.config.selection import SelectionError, resolve
from ci_checks.rules.rule import DOC_SECTIONS, Rule, RuleGroup
from tests.ci.conftest import PROJECT
from tests.ci.linter.conftest import FIXTURES, is_repository_fixture, run_cli

DECLARED_BESIDE_THEIR_FINDINGS = {
    "ci_checks.backends.notices": {"CC090", "CC091"},
    "ci_checks.policy.kinds.order": {"CC100"},
    "ci_checks.policy.kinds.forbid": {"CC101"},
    "ci_checks.policy.kinds.require": {"CC102"},
    "ci_checks.policy.kinds.parity": {"CC103"},
    "ci_checks.policy.findings": {"CC104", "CC106"},
    "ci_checks.config.suppression": {"CC105"},
}
"""The modules outside `ci_checks/rules/` that make a rule's findings and declare it, with the codes they
declare."""


def _declarations() -> list[tuple[str, Rule]]:
    """Every `NAME = Rule(...)` at the top level of a module of ci_checks, with the module's name."""
    package = PROJECT / "ci_checks"
    found: list[tuple[str, Rule]] = []
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module = ".".join(path.relative_to(PROJECT).with_suffix("").parts)
        for node in tree.body:
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Name)
                and node.value.func.id == "Rule"
            ):
                for target in node.targets:
                    assert isinstance(target, ast.Name)
                    found.append((module, getattr(importlib.import_module(module), target.id)))
    return found


def test_every_rule_module_is_in_the_registry_table() -> None:
    names = {m.name for m in pkgutil.iter_modules(ci_checks.rules.__path__)}
    modules = {name for name in names if re.match(r"cc[0-9]{3}_", name)}
    registered = {module.__name__.rsplit(".", 1)[1] for module in ci_checks.rules.rule_modules()}
    assert modules == registered
    # The other modules are what several rules share (`_common`, the schema validation): none of them is a rule.
    assert [
        name for name in names - modules if hasattr(importlib.import_module(f"ci_checks.rules.{name}"), "RULE")
    ] == []


def test_every_declared_rule_is_registered_once_and_declared_where_its_findings_are_made() -> None:
    declarations = _declarations()
    assert sorted(rule.code for _, rule in declarations) == [rule.code for rule in registry.RULES]
    assert {id(rule) for _, rule in declarations} == {id(rule) for rule in registry.RULES}
    beside: dict[str, set[str]] = {}
    for module, rule in declarations:
        if module.startswith("ci_checks.rules."):
            assert module.rsplit(".", 1)[1].startswith(rule.code.lower())
            # A module of `ci_checks/rules/` holds a rule's logic, not only its description.
            assert rule.check is not None or rule.check_repository is not None, f"{module} only describes {rule.code}"
        else:
            beside.setdefault(module, set()).add(rule.code)
    assert beside == DECLARED_BESIDE_THEIR_FINDINGS


def test_the_table_names_each_rule_as_the_rule_does() -> None:
    assert {rule.code: rule.name for rule in registry.RULES} == ci_checks.rules.NAMES_BY_CODE
    assert list(ci_checks.rules.NAMES_BY_CODE) == [rule.code for rule in registry.RULES]


def test_codes_and_names_are_unique_and_well_formed() -> None:
    codes = [rule.code for rule in registry.RULES]
    names = [rule.name for rule in registry.RULES]
    assert len(set(codes)) == len(codes)
    assert len(set(names)) == len(names)
    assert codes == sorted(codes)
    for rule in registry.RULES:
        assert re.fullmatch(r"CC\d{3}", rule.code)
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name)


def test_no_rule_takes_a_retired_code() -> None:
    """Old reports, baselines and ignore comments still name a retired code: it must never mean another rule."""
    assert all(re.fullmatch(r"CC\d{3}", code) for code in RETIRED_CODES)
    assert sorted(RETIRED_CODES & {rule.code for rule in registry.RULES}) == []


LINTER_GROUPS = {RuleGroup.LINTER_RUN, RuleGroup.LINTER_CONFIG}
CC1_GROUPS = {RuleGroup.POLICY, RuleGroup.POLICY_INPUT, RuleGroup.SUPPRESSION}


@pytest.mark.parametrize("rule", registry.RULES, ids=lambda r: r.code)
def test_a_rules_code_is_in_its_groups_range_and_it_says_since_when_it_is(rule: Rule) -> None:
    """CC0xx files and workflows, CC09x the external linters, CC1xx policy rules and ignore comments."""
    prefix = "CC09" if rule.group in LINTER_GROUPS else "CC1" if rule.group in CC1_GROUPS else "CC0"
    assert rule.code.startswith(prefix) and (prefix != "CC0" or not rule.code.startswith("CC09"))
    assert re.fullmatch(r"\d+\.\d+\.\d+", rule.since)


def test_the_rule_command_says_a_rules_group_and_status() -> None:
    page = run_cli("rule", "duplicate-key").out
    assert page.startswith(
        "# CC011 duplicate-key\n\nDefault severity: error\n\nGroup: yaml; status: stable since 0.1.0\n\n"
    )


@pytest.mark.parametrize("rule", built_in(), ids=lambda r: r.code)
def test_module_is_named_after_its_rule(rule: Rule) -> None:
    module = next(m for m in ci_checks.rules.rule_modules() if m.RULE is rule)
    assert module.__name__.rsplit(".", 1)[1] == f"{rule.code.lower()}_{rule.name.replace('-', '_')}"


@pytest.mark.parametrize("rule", registry.RULES, ids=lambda r: r.code)
def test_rule_documents_what_why_example_and_fix(rule: Rule) -> None:
    headings = re.findall(r"^## (.+)$", rule.docs, flags=re.MULTILINE)
    assert headings == list(DOC_SECTIONS)
    for section in re.split(r"^## .+$", rule.docs, flags=re.MULTILINE)[1:]:
        assert section.strip(), "an empty section"
    assert rule.summary and not rule.summary.endswith(".")


@pytest.mark.parametrize("rule", registry.RULES, ids=lambda r: r.code)
def test_rule_has_error_and_clean_fixtures(rule: Rule) -> None:
    prefix = rule.code.lower() + "_"
    errors = [p for p in (FIXTURES / "err").rglob("*.out") if _fixture_name(p).startswith(prefix)]
    clean = [p for p in (FIXTURES / "ok").rglob("*") if p.is_file() and _fixture_name(p).startswith(prefix)]
    assert errors, f"no error fixture for {rule.code}"
    assert clean, f"no clean fixture for {rule.code}"
    for golden in errors:
        assert f": {rule.code} " in golden.read_text(encoding="utf-8"), f"{golden.name} never reports {rule.code}"


def _fixture_name(path: Path) -> str:
    """A fixture is named by its file, by its folder when the file must be called action.yml, or by the
    repository fixture (a folder with its own `.github`) it is part of."""
    inside = [folder for folder in path.parents if FIXTURES in folder.parents]
    repository = next((folder for folder in inside if is_repository_fixture(folder)), None)
    if repository is not None:
        return repository.name
    if path.suffix not in (".yml", ".yaml", ".out"):
        return ""
    return path.parent.name if path.stem == "action" else path.stem


def test_rules_command_lists_every_rule() -> None:
    result = run_cli("rules")
    assert result.code == 0
    listed = [line.split()[0] for line in result.out.splitlines()]
    assert listed == [rule.code for rule in registry.RULES]


@pytest.mark.parametrize("query", ["CC011", "cc011", "duplicate-key"])
def test_rule_command_prints_the_documentation(query: str) -> None:
    result = run_cli("rule", query)
    assert result.code == 0
    assert result.out.startswith("# CC011 duplicate-key\n")
    assert "## Why it matters" in result.out


def test_unknown_rule_suggests_the_closest() -> None:
    result = run_cli("rule", "duplicate-keys")
    assert result.code == 2
    assert "did you mean duplicate-key?" in result.err


def test_selectors_accept_codes_prefixes_and_names() -> None:
    selection = resolve(["CC01", "invalid-uses"], ["CC013"], [])
    # CC01 and invalid-uses, without CC013; CC001-CC004 report a file no selected rule could read, under any select.
    assert [r.code for r in selection.rules] == [
        "CC001",
        "CC002",
        "CC003",
        "CC004",
        "CC010",
        "CC011",
        "CC012",
        "CC014",
        "CC030",
    ]
    with pytest.raises(SelectionError, match="unknown rule 'CC9'"):
        resolve(["CC9"], [], [])
