"""The mutation testing configuration stays true to the code: every module it names exists, every test file it
runs exists, and every mutant listed as equivalent belongs to a module it mutates and says why."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from collections import Counter
from fnmatch import fnmatch
from pathlib import Path
from types import ModuleType

import pytest

from tests.ci.conftest import PROJECT


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutation", PROJECT / "scripts" / "mutation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


MUTATION = _script()


def test_the_groups_mutate_the_modules_whose_mistakes_reach_users() -> None:
    mutated = {module for group in MUTATION.GROUPS.values() for module in MUTATION._group_modules(group)}
    wanted = [
        *PROJECT.glob("ci_checks/rules/*.py"),
        *PROJECT.glob("ci_checks/rules/schema/*.py"),
        *PROJECT.glob("ci_checks/model/files/*.py"),
        *PROJECT.glob("ci_checks/policy/**/*.py"),
        *PROJECT.glob("ci_checks/reporters/*.py"),
        *(PROJECT / "ci_checks" / name for name in ("core/escaping.py", "engine/errors.py")),
        *(PROJECT / "ci_checks" / "engine" / name for name in ("baseline.py", "changes.py")),
        *(PROJECT / "ci_checks" / "config" / name for name in ("selection.py", "suppression.py")),
        PROJECT / "ci_checks" / "engine" / "fixes.py",
    ]
    assert sorted(path.relative_to(PROJECT).as_posix() for path in wanted) == sorted(mutated)


def test_each_group_runs_test_files_that_exist() -> None:
    missing = [test for group in MUTATION.GROUPS.values() for test in group.tests if not (PROJECT / test).is_file()]
    assert missing == []


def test_each_equivalent_mutant_is_of_a_mutated_module_with_its_digest_and_a_reason() -> None:
    modules = {
        MUTATION._module_name(module) for group in MUTATION.GROUPS.values() for module in MUTATION._group_modules(group)
    }
    listed = MUTATION._equivalents()
    lines = [line for line in MUTATION.EQUIVALENT.read_text().splitlines() if line.strip() and line[0] != "#"]
    assert len(listed) == len(lines), "a mutant is listed twice"
    for entry in listed.values():
        assert entry.mutant.rpartition(".")[0] in modules, entry.mutant
        assert "__mutmut_" in entry.mutant and re.fullmatch(r"[0-9a-f]{10}", entry.digest), entry
        assert len(entry.reason.split()) >= 4, f"{entry.mutant}: say why it behaves the same"


def test_a_module_is_named_as_mutmut_names_its_mutants() -> None:
    assert MUTATION._module_name("ci_checks/rules/cc040_workspace_before_checkout.py") == (
        "ci_checks.rules.cc040_workspace_before_checkout"
    )
    assert MUTATION._module_name("ci_checks/policy/items/__init__.py") == "ci_checks.policy.items"
    assert MUTATION._owner("ci_checks/policy/kinds/order.py") == "policy"
    assert MUTATION._owner(str(Path("ci_checks") / "cli.py")) is None


def test_a_package_init_is_tested_alone_not_with_every_module_of_its_package() -> None:
    patterns = MUTATION._mutant_patterns("ci_checks/rules/__init__.py")
    own = ["ci_checks.rules.x_rule_modules__mutmut_1", "ci_checks.rules.xǁRuleǁcheck__mutmut_2"]
    others = [
        "ci_checks.rules.schema.github.x_events__mutmut_1",
        "ci_checks.rules.cc041_dangling_reference.x_check__mutmut_1",
    ]
    assert [name for name in own + others if any(fnmatch(name, pattern) for pattern in patterns)] == own


def test_a_module_another_group_tests_is_not_mutated_twice() -> None:
    owners = Counter(module for group in MUTATION.GROUPS.values() for module in MUTATION._group_modules(group))
    assert [module for module, count in owners.items() if count > 1] == []
    assert MUTATION._owner("ci_checks/rules/schema/messages.py") == "schema"


def test_a_sample_is_the_same_on_every_run_and_a_larger_one_contains_a_smaller() -> None:
    mutants = [f"ci_checks.engine.fixes.x_apply__mutmut_{number}" for number in range(1, 2001)]
    fifth = [mutant for mutant in mutants if MUTATION._in_sample(mutant, 20)]
    half = {mutant for mutant in mutants if MUTATION._in_sample(mutant, 50)}
    assert 300 < len(fifth) < 500 and 900 < len(half) < 1100
    assert set(fifth) < half
    # another process, with another seed for str hashes, picks the same mutants
    program = (
        "import runpy, sys; script = runpy.run_path(sys.argv[1]);"
        " print(sum(script['_in_sample'](f'ci_checks.engine.fixes.x_apply__mutmut_{n}', 20) for n in range(1, 2001)))"
    )
    elsewhere = subprocess.run(
        [sys.executable, "-c", program, str(PROJECT / "scripts" / "mutation.py")],
        env={**os.environ, "PYTHONHASHSEED": "4242"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert int(elsewhere.stdout) == len(fifth)


def test_a_sample_of_a_group_passes_over_a_module_without_mutants(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(MUTATION, "WORK", tmp_path)
    folder = tmp_path / "policy" / "mutants" / "ci_checks" / "policy"
    folder.mkdir(parents=True)
    (folder / "__init__.py.meta").write_text('{"exit_code_by_key": {}}')
    mutants = {f"ci_checks.policy.scopes.x_scope__mutmut_{number}": None for number in range(1, 201)}
    (folder / "scopes.py.meta").write_text(json.dumps({"exit_code_by_key": mutants}))
    modules = ["ci_checks/policy/__init__.py", "ci_checks/policy/scopes.py"]
    sample = MUTATION._sampled("policy", modules, 50)
    assert sample == sorted(mutant for mutant in mutants if MUTATION._in_sample(mutant, 50)) and 60 < len(sample) < 140
    with pytest.raises(SystemExit, match="no mutants known yet"):
        MUTATION._sampled("policy", modules[:1], 50)


def test_a_sample_takes_at_least_a_number_of_each_modules_mutants_and_all_of_a_smaller_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(MUTATION, "WORK", tmp_path)
    folder = tmp_path / "policy" / "mutants" / "ci_checks" / "policy"
    folder.mkdir(parents=True)
    large = {f"ci_checks.policy.scopes.x_scope__mutmut_{number}": None for number in range(1, 401)}
    small = {f"ci_checks.policy.model.x_name__mutmut_{number}": None for number in range(1, 13)}
    (folder / "scopes.py.meta").write_text(json.dumps({"exit_code_by_key": large}))
    (folder / "model.py.meta").write_text(json.dumps({"exit_code_by_key": small}))
    modules = ["ci_checks/policy/scopes.py", "ci_checks/policy/model.py"]
    share = {mutant for mutant in large if MUTATION._in_sample(mutant, 5)}
    assert 5 < len(share) < 40  # the 5% share of the large module is below the 40 asked for
    sample = MUTATION._sampled("policy", modules, 5, at_least=40)
    taken = [mutant for mutant in sample if mutant in large]
    assert len(taken) == 40 and share < set(taken)
    assert set(sample) - set(taken) == set(small)  # all 12 of the small one
    # a larger floor holds a smaller one; a share above the floor is the share itself
    assert set(taken) < set(MUTATION._sampled("policy", modules[:1], 5, at_least=60))
    assert set(MUTATION._sampled("policy", modules[:1], 50, at_least=40)) == {
        mutant for mutant in large if MUTATION._in_sample(mutant, 50)
    }


def test_survivors_are_judged_again_with_a_test_map_made_anew(tmp_path: Path) -> None:
    """A test written after mutmut mapped tests to functions would never run for the survivor it was written for."""
    stats = tmp_path / "mutants" / "mutmut-stats.json"
    stats.parent.mkdir()
    stats.write_text("{}")
    MUTATION._forget_test_map(tmp_path)
    assert not stats.exists() and stats.parent.is_dir()
    MUTATION._forget_test_map(tmp_path)  # none to forget: nothing happens


def test_a_floor_without_a_sample_is_refused_before_anything_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(MUTATION, "WORK", tmp_path)
    with pytest.raises(SystemExit) as refused:
        MUTATION.main(["run", "--at-least", "40", "fixes"])
    assert refused.value.code == 2 and "--at-least goes with --sample" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_a_mutants_tests_start_with_ci_checks_caches_empty() -> None:
    from ci_checks.config import schema as config_schema
    from tests.ci.linter.conftest import empty_caches

    config_schema.build(precise=True)
    assert config_schema.build.cache_info().currsize >= 1
    empty_caches()
    assert config_schema.build.cache_info().currsize == 0
