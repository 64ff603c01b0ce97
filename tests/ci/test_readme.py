"""The policy and pytest examples in README.md run against a GPU-CI fixture repository, so none goes stale.

An example is a fenced block right after `<!-- example: policy holds -->` (a
policy file's rules, which must hold on the fixture) or `<!-- example: pytest
-->` (test functions, which must pass there).
"""

from __future__ import annotations

import re
import shutil
import textwrap
from pathlib import Path

import pytest

from tests.ci.conftest import FIXTURES, PROJECT, run_cli

README = (PROJECT / "README.md").read_text(encoding="utf-8")
REPOSITORY = FIXTURES / "readme"
_EXAMPLE = re.compile(
    r"<!-- example: (?P<kind>policy holds|pytest) -->\n(?P<indent>[ ]*)```(?P<lang>\w+)\n(?P<body>.*?)\n(?P=indent)```",
    re.DOTALL,
)
_FENCE = re.compile(r"^(?P<indent>[ ]*)```yaml\n(?P<body>.*?)\n(?P=indent)```", re.DOTALL | re.MULTILINE)


def _examples(kind: str) -> list[str]:
    return [textwrap.dedent(m.group("body")) for m in _EXAMPLE.finditer(README) if m.group("kind") == kind]


def _repository(folder: Path) -> Path:
    shutil.copytree(REPOSITORY, folder, dirs_exist_ok=True)
    (folder / ".git").mkdir(exist_ok=True)
    return folder


def test_every_policy_block_in_the_readme_is_an_example_that_runs() -> None:
    policies = [m for m in _FENCE.finditer(README) if "kind:" in m.group("body")]
    marked = {m.group("body") for m in _EXAMPLE.finditer(README)}
    assert policies, "README shows no policy"
    assert [m.group("body")[:60] for m in policies if m.group("body") not in marked] == []
    assert len(_examples("policy holds")) >= 7
    assert len(_examples("pytest")) >= 2


@pytest.mark.parametrize("policy", _examples("policy holds"), ids=lambda text: re.findall(r"id: (\S+)", text)[0])
def test_a_readme_policy_holds_on_the_fixture_repository(tmp_path: Path, policy: str) -> None:
    root = _repository(tmp_path / "repo")
    (root / ".github" / "ci-checks.yml").write_text(f"version: 1\n{policy}\n", encoding="utf-8")
    result = run_cli("check", root, "--select", "CC1")
    assert (result.code, result.err) == (0, ""), result.out


@pytest.mark.parametrize("tests", _examples("pytest"), ids=lambda text: re.findall(r"def (test_\w+)", text)[0])
def test_a_readme_pytest_example_passes_on_the_fixture_repository(pytester: pytest.Pytester, tests: str) -> None:
    _repository(pytester.path)
    pytester.makepyfile(test_example=tests)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=len(re.findall(r"^def test_", tests, flags=re.MULTILINE)))


def test_the_fixture_repository_would_fail_the_examples_once_broken(tmp_path: Path) -> None:
    """The examples check something: each of these edits breaks the rules that guard it."""
    edits = {
        "needs: build-image": ("needs: lint", "gpu-stages-need-the-image"),
        '    - cron: "0 13 * * *"\n': ("", "nightly-crons"),
        "options: [gfx942, gfx950]": ("options: [gfx942]", "dispatch-inputs"),
        "  stage-b-gpu-3:": ("  stage-b-gpu-9:\n    runs-on: x\n    steps: [{run: make}]\n  stage-b-gpu-3:", None),
    }
    policies = "\n".join(_examples("policy holds")).replace("rules:\n", "")
    for old, (new, rule_id) in edits.items():
        root = _repository(tmp_path / f"repo-{len(list(tmp_path.iterdir()))}")
        workflow = root / ".github" / "workflows" / "ci.yml"
        text = workflow.read_text(encoding="utf-8")
        assert old in text
        workflow.write_text(text.replace(old, new, 1), encoding="utf-8")
        (root / ".github" / "ci-checks.yml").write_text(f"version: 1\nrules:\n{policies}\n", encoding="utf-8")
        result = run_cli("check", root, "--select", "CC1")
        failed = {line.rsplit("[", 1)[1].rstrip("]") for line in result.headers}
        assert result.code == 1
        assert (rule_id or "five-gpu-stages") in failed, result.out
