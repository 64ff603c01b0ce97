"""Metamorphic tests: rewriting a workflow in another YAML style never changes a policy or built-in verdict; meaning
does.

`tests/ci/linter/metamorphic.py` generates the repository, its rewrites and the rules.
Each rule must give the same findings (code and message; messages carry no
positions) under every rewrite, of the intact repository and of one where
every rule is broken, and its own semantic mutation must flip it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from ci_checks.core import source
from ci_checks.policy.items import BY_KEY
from ci_checks.policy.items.key import COMPARATORS
from ci_checks.policy.kinds import BY_NAME
from ci_checks.syntax import yamlpos
from tests.ci.linter import metamorphic
from tests.ci.linter.conftest import run_cli

Verdicts = dict[str, list[tuple[str, str]]]


def verdicts(root: Path, repository: metamorphic.Repository, style: metamorphic.Style) -> Verdicts:
    files = {**metamorphic.render(repository, style), ".github/ci-checks.yml": metamorphic.policy()}
    metamorphic.write(root, files)
    result = run_cli("check", root, "--select", "CC1", "--output-format", "json")
    assert result.err == "", result.err
    found: Verdicts = {case.id: [] for case in metamorphic.RULES}
    for diagnostic in json.loads(result.out)["diagnostics"]:
        found.setdefault(diagnostic["rule"], []).append((diagnostic["code"], diagnostic["message"]))
    return {rule: sorted(messages) for rule, messages in found.items()}


@pytest.mark.parametrize("style", metamorphic.STYLES, ids=lambda style: style.name)
def test_each_rewrite_reads_as_the_same_data(style: metamorphic.Style) -> None:
    for path, text in metamorphic.render(metamorphic.REPOSITORY, style).items():
        data = metamorphic.REPOSITORY[path]
        if not isinstance(data, dict):
            continue
        document = yamlpos.parse(source.decode(path, text.encode("utf-8")))
        assert document.issues == [], (path, document.issues)
        assert document.root is not None
        read, written = yamlpos.to_plain(document.root), json.loads(json.dumps(data))
        assert _unchomped(read, style) == _unchomped(written, style), path
        if style.newline == "\r\n":
            assert "\r\n" in text
        if style.anchors:
            assert ("&a1" in text and "*a1" in text) or path != ".github/workflows/ci.yml"


def _unchomped(value: object, style: metamorphic.Style) -> object:
    """`|-` drops a script's final line break, which the shell does not read: compare without it."""
    if isinstance(value, dict):
        return {key: _unchomped(item, style) for key, item in value.items()}
    if isinstance(value, list):
        return [_unchomped(item, style) for item in value]
    if style.block == "|-" and isinstance(value, str):
        return value.removesuffix("\n")
    return value


def test_no_rewrite_changes_a_verdict_of_the_intact_repository(tmp_path: Path) -> None:
    canonical = verdicts(tmp_path / "canonical", metamorphic.REPOSITORY, metamorphic.CANONICAL)
    assert {rule: found for rule, found in canonical.items() if found} == {}
    for index, style in enumerate(metamorphic.STYLES[1:]):
        assert verdicts(tmp_path / f"style-{index}", metamorphic.REPOSITORY, style) == canonical, style.name


def test_no_rewrite_changes_a_verdict_of_the_broken_repository(tmp_path: Path) -> None:
    broken = metamorphic.all_mutated()
    canonical = verdicts(tmp_path / "canonical", broken, metamorphic.CANONICAL)
    failing = [rule for rule, found in canonical.items() if found]
    assert len(failing) >= 0.8 * len(metamorphic.RULES)
    for index, style in enumerate(metamorphic.STYLES[1:]):
        assert verdicts(tmp_path / f"style-{index}", broken, style) == canonical, style.name


@pytest.mark.parametrize("case", metamorphic.RULES, ids=lambda case: case.id)
def test_the_semantic_mutation_flips_the_rule(tmp_path: Path, case: metamorphic.Case) -> None:
    found = verdicts(tmp_path, metamorphic.mutated(case), metamorphic.CANONICAL)
    assert found[case.id], f"{case.id} still holds after its mutation"


def test_the_battery_covers_every_kind_item_and_comparator() -> None:
    rules = yaml.safe_load(metamorphic.policy())["rules"]
    assert len(rules) >= 60 and len(metamorphic.STYLES) >= 9
    kinds = {rule["kind"] for rule in rules}
    items = [item for rule in rules for item in rule.get(rule["kind"], [])]
    assert kinds == set(BY_NAME)
    assert {key for item in items for key in item if key in BY_KEY} == set(BY_KEY)
    assert {key for item in items for key in item if key in COMPARATORS} == set(COMPARATORS)
    assert any("count" in item for item in items)
    assert any("count" in item and set(item) & set(COMPARATORS) for item in items)
    assert any("without" in item for item in items) and any("exact" in item for item in items)
    assert {item.get("referenced_by") for item in items} >= {None, False, ".github/workflows/*.yml"}
    assert any("**" in str(item.get("key", "")) for item in items)
    constants = [
        value["from"]["name"]
        for item in items
        for value in item.values()
        if isinstance(value, dict) and "from" in value
    ]
    assert {"SUPPORTED_ARCHES", "SCHEDULE_POLICIES", "GPU_ARCHES"} <= {name for name in constants if name}
    wheres = [rule["where"] for rule in rules if isinstance(rule.get("where"), dict)]
    listed = [where for rule in rules if isinstance(rule.get("where"), list) for where in rule["where"]]
    own = [item["where"] for item in items if "where" in item]
    assert listed and own and any(isinstance(where.get("job"), list) for where in wheres)
    scopes = {key for where in [*wheres, *listed, *own] for key in where}
    assert {"files", "workflow", "action", "trigger", "job", "step", "branch"} <= scopes


def file_verdicts(root: Path, repository: metamorphic.Repository, style: metamorphic.Style) -> list[tuple[str, str]]:
    """The findings of the rules on the file model (code and message: messages carry no positions)."""
    metamorphic.write(root, metamorphic.render(repository, style))
    result = run_cli("check", root, "--select", ",".join(metamorphic.FILE_RULES), "--output-format", "json")
    assert result.err == "", result.err
    return sorted((d["code"], d["message"]) for d in json.loads(result.out)["diagnostics"])


@pytest.mark.parametrize("broken", [False, True], ids=["intact", "broken"])
def test_no_rewrite_nor_step_id_renaming_changes_a_file_model_verdict(tmp_path: Path, broken: bool) -> None:
    repository = metamorphic.files_mutated() if broken else metamorphic.FILES_REPOSITORY
    canonical = file_verdicts(tmp_path / "canonical", repository, metamorphic.CANONICAL)
    if broken:
        assert {code for code, _ in canonical} == set(metamorphic.FILE_RULES)
    else:
        assert canonical == []
    renamed = metamorphic.renamed_ids(repository)
    assert renamed != repository
    assert file_verdicts(tmp_path / "renamed", renamed, metamorphic.CANONICAL) == canonical
    for index, style in enumerate(metamorphic.STYLES[1:]):
        assert file_verdicts(tmp_path / f"style-{index}", repository, style) == canonical, style.name


@pytest.mark.parametrize("case", metamorphic.FILE_CASES, ids=lambda case: f"{case.id} {case.rule}")
def test_the_semantic_mutation_makes_the_file_model_rule_report(tmp_path: Path, case: metamorphic.Case) -> None:
    found = file_verdicts(tmp_path, metamorphic.files_mutated(case), metamorphic.CANONICAL)
    assert case.id in {code for code, _ in found}, found


def test_the_file_model_battery_covers_each_of_its_rules() -> None:
    assert {case.id for case in metamorphic.FILE_CASES} == set(metamorphic.FILE_RULES)


def built_in_verdicts(root: Path, repository: metamorphic.Repository, style: metamorphic.Style) -> Verdicts:
    """The built-in rules' findings (code and message) with no configuration, by code."""
    metamorphic.write(root, metamorphic.render(repository, style))
    result = run_cli("check", root, "--select", ",".join(metamorphic.BUILT_IN_CODES), "--output-format", "json")
    assert result.err == "", result.err
    found: Verdicts = {code: [] for code in metamorphic.BUILT_IN_CODES}
    for diagnostic in json.loads(result.out)["diagnostics"]:
        found[diagnostic["code"]].append((diagnostic["code"], diagnostic["message"]))
    return {code: sorted(messages) for code, messages in found.items()}


@pytest.mark.parametrize("broken", [False, True], ids=["intact", "broken"])
def test_no_rewrite_nor_renamed_step_id_changes_a_built_in_verdict(tmp_path: Path, broken: bool) -> None:
    repository = metamorphic.built_in_mutated() if broken else metamorphic.BUILT_IN_REPOSITORY
    canonical = built_in_verdicts(tmp_path / "canonical", repository, metamorphic.CANONICAL)
    failing = {code for code, found in canonical.items() if found}
    assert failing == (set(metamorphic.BUILT_IN_CODES) if broken else set())
    renamed = metamorphic.renamed_ids(repository)
    assert built_in_verdicts(tmp_path / "renamed", renamed, metamorphic.CANONICAL) == canonical
    for index, style in enumerate(metamorphic.STYLES[1:]):
        assert built_in_verdicts(tmp_path / f"style-{index}", repository, style) == canonical, style.name


@pytest.mark.parametrize("case", metamorphic.BUILT_IN, ids=lambda case: case.id)
def test_the_semantic_mutation_flips_the_built_in_rule(tmp_path: Path, case: metamorphic.BuiltInCase) -> None:
    found = built_in_verdicts(tmp_path, metamorphic.built_in_mutated(case), metamorphic.CANONICAL)
    assert {code for code, messages in found.items() if messages} == {case.code}
