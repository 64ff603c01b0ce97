"""The policy and pytest examples in README.md run against a GPU-CI fixture repository, so none goes stale.

An example is a fenced block right after `<!-- example: policy holds -->` (a
policy file's rules, which must hold on the fixture), `<!-- example: pytest
-->` (test functions, which must pass there) or `<!-- example: string tests
-->` (a test file of string-splitting tests, which must pass there too, and
which the rules after it port).
"""

from __future__ import annotations

import re
import runpy
import shutil
import textwrap
from pathlib import Path

import pytest

from tests.ci.conftest import PROJECT
from tests.ci.linter.conftest import FIXTURES, run_cli

README = (PROJECT / "README.md").read_text(encoding="utf-8")
REPOSITORY = FIXTURES / "readme"
_EXAMPLE = re.compile(
    r"<!-- example: (?P<kind>policy holds|pytest|string tests) -->\n(?P<indent>[ ]*)```(?P<lang>\w+)\n"
    r"(?P<body>.*?)\n(?P=indent)```",
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


STRING_TESTS = _examples("string tests")[0]
"""`tests/ci/test_workflows.py` of the fixture; the policy example right after it in README ports it."""
PORT = README.split("<!-- example: string tests -->", 1)[1]
PORT_POLICY = _EXAMPLE.search(PORT).group("body")  # type: ignore[union-attr]


def _lines(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.strip())


def test_the_port_is_shorter_than_the_string_tests_and_readme_says_by_how_much() -> None:
    said = re.search(r"The tests are (\d+) lines of Python and the rules (\d+)", PORT)
    assert said is not None
    assert (int(said.group(1)), int(said.group(2))) == (_lines(STRING_TESTS), _lines(PORT_POLICY))
    assert _lines(PORT_POLICY) < _lines(STRING_TESTS)
    assert len(re.findall(r"^def test_", STRING_TESTS, flags=re.MULTILINE)) == 4


def _verdicts(root: Path) -> tuple[set[str], set[str]]:
    """The string tests that fail and the rules that fail on a repository.

    The tests are plain functions without fixtures: each is called as pytest would, and fails by raising.
    """
    module = root / "tests" / "ci" / "test_workflows.py"
    module.parent.mkdir(parents=True, exist_ok=True)
    module.write_text(STRING_TESTS + "\n", encoding="utf-8")
    (root / ".github" / "ci-checks.yml").write_text(f"version: 1\n{PORT_POLICY}\n", encoding="utf-8")
    failed_tests = set()
    for name, test in runpy.run_path(str(module)).items():
        if name.startswith("test_"):
            try:
                test()
            except Exception:  # an assertion, or the IndexError of a split that found nothing
                failed_tests.add(name)
    result = run_cli("check", root, "--select", "CC1")
    failed_rules = {line.rsplit("[", 1)[1].rstrip("]") for line in result.headers}
    return failed_tests, failed_rules


_WORKFLOWS = ".github/workflows"
_SEED_TEST = "test_megatron_override_installs_the_checked_out_ref_unpatched"
_BREAKS = {
    "install before checkout": (
        f"{_WORKFLOWS}/_run-ci-rocm.yml",
        "    git checkout -f FETCH_HEAD\n            pip install -e . --no-deps --break-system-packages\n",
        "    pip install -e . --no-deps --break-system-packages\n            git checkout -f FETCH_HEAD\n",
        _SEED_TEST,
        {"megatron-override-installs-the-checked-out-ref"},
    ),
    "patch in the override": (
        f"{_WORKFLOWS}/_run-ci-rocm.yml",
        "    git checkout -f FETCH_HEAD\n",
        "    git checkout -f FETCH_HEAD\n            git apply /tmp/amd_patch/megatron.patch\n",
        _SEED_TEST,
        {"megatron-override-unpatched"},
    ),
    "wrong needs": (
        f"{_WORKFLOWS}/ci.yml",
        "needs: [build-image, stage-a-gpu-2]\n    uses: ./.github/workflows/_run-ci.yml\n    with:\n"
        '      runs_on: \'["self-hosted", "h100"]\'\n      image: ${{ needs.build-image.outputs.image }}\n\n'
        "  stage-b-gpu-3:\n    needs: [build-image, stage-a-gpu-2]",
        "needs: [build-image, stage-a-gpu-2]\n    uses: ./.github/workflows/_run-ci.yml\n    with:\n"
        '      runs_on: \'["self-hosted", "h100"]\'\n      image: ${{ needs.build-image.outputs.image }}\n\n'
        "  stage-b-gpu-3:\n    needs: [build-image, stage-a-gpu-1]",
        "test_stage_needs",
        {"stage-needs"},
    ),
    "cron dropped": (
        f"{_WORKFLOWS}/ci.yml",
        '    - cron: "0 13 * * *"\n',
        "",
        "test_crons_follow_the_schedule_policies",
        {"crons-follow-the-schedule-policies"},
    ),
    "stage without the image": (
        f"{_WORKFLOWS}/ci.yml",
        '      runs_on: \'["self-hosted", "h100"]\'\n      image: ${{ needs.build-image.outputs.image }}\n',
        '      runs_on: \'["self-hosted", "h100"]\'\n',
        "test_every_gpu_stage_passes_the_image",
        {"every-gpu-stage-passes-the-image"},
    ),
}


def test_the_string_tests_and_their_port_pass_on_the_fixture_repository(tmp_path: Path) -> None:
    assert _verdicts(_repository(tmp_path / "repo")) == (set(), set())


@pytest.mark.parametrize("name", _BREAKS)
def test_each_break_fails_the_string_test_and_its_rule_alike(tmp_path: Path, name: str) -> None:
    path, old, new, test, rules = _BREAKS[name]
    root = _repository(tmp_path / "repo")
    text = (root / path).read_text(encoding="utf-8")
    assert old in text
    (root / path).write_text(text.replace(old, new, 1), encoding="utf-8")
    assert _verdicts(root) == ({test}, rules)


def test_restyling_fails_the_string_tests_but_no_rule(tmp_path: Path) -> None:
    root = _repository(tmp_path / "repo")
    ci = root / _WORKFLOWS / "ci.yml"
    text = ci.read_text(encoding="utf-8").replace("needs: build-image\n", "needs: [build-image]\n")
    text = text.replace('cron: "0 1 * * *"', "cron: '0 1 * * *'")
    image = "${{ needs.build-image.outputs.image }}"
    text = text.replace(f"image: {image}", f'image: "{image}"')
    ci.write_text(text, encoding="utf-8")
    failed_tests, failed_rules = _verdicts(root)
    assert failed_rules == set()
    restyled = {"test_stage_needs", "test_crons_follow_the_schedule_policies", "test_every_gpu_stage_passes_the_image"}
    assert failed_tests == restyled
