"""The seed's two assertions, written both ways: as policy lines and as query-API lines.

miles' test split `_run-ci-rocm.yml` on `if [ -n "$MEGATRON_PR" ]; then` and on
a ten-space `cd $GITHUB_WORKSPACE`, then asserted that `git checkout -f
FETCH_HEAD` comes before `pip install -e .` and that `amd_patch` is absent.
Both ways below must pass on the workflow after the change, fail on the one
before it (which applies the patch) and on one with the install moved above
the checkout, with positions; and give the same verdicts under every
reformatting in `variants.py`. Expected positions are found in each variant's
text, not taken from ci-checks.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ci_checks.query import CIRepository
from tests.ci.linter.conftest import FIXTURES, MakeRepo, run_cli
from tests.ci.linter.variants import VARIANTS, line_of

AFTER = (FIXTURES / "seed" / "_run-ci-rocm.yml").read_text(encoding="utf-8")
BEFORE = (FIXTURES / "seed" / "_run-ci-rocm.before.yml").read_text(encoding="utf-8")
INSTALL_LINE = "            pip install -e . --no-deps --break-system-packages\n"
MOVED = AFTER.replace(INSTALL_LINE, "").replace(
    "            git checkout -f FETCH_HEAD\n", INSTALL_LINE + "            git checkout -f FETCH_HEAD\n"
)
WORKFLOW = ".github/workflows/_run-ci-rocm.yml"
BRANCH = 'if [ -n "$MEGATRON_PR" ]; then'

# The seed test as policy lines (9 lines).
POLICY = """rules:
  - id: override-order
    kind: order
    where: {workflow: .github/workflows/_run-ci-rocm.yml, step: Install Megatron, branch: '[ -n "$MEGATRON_PR" ]'}
    order: [{command: git checkout -f FETCH_HEAD}, {command: pip install -e .}]
  - id: no-amd-patch
    kind: forbid
    where: {workflow: .github/workflows/_run-ci-rocm.yml, step: Install Megatron, branch: '[ -n "$MEGATRON_PR" ]'}
    forbid: [{text: amd_patch}]
"""


# The seed test as query-API lines (3 lines); a step without a script fails it, as it would a project's test.
def seed_assertions(repo: CIRepository) -> None:
    override = repo.workflow("_run-ci-rocm.yml").step("Install Megatron").script.branch('[ -n "$MEGATRON_PR" ]')  # type: ignore[union-attr]
    assert override.comes_before("git checkout -f FETCH_HEAD", "pip install -e .")
    assert override.occurrences("amd_patch") == []


def test_each_way_is_at_most_ten_lines() -> None:
    import inspect

    assert len(POLICY.splitlines()) <= 10
    assert len(inspect.getsource(seed_assertions).splitlines()) <= 10


def repository(make_repo: MakeRepo, text: str) -> Path:
    return make_repo({WORKFLOW: text, ".github/ci-checks.yml": POLICY})


def policy_findings(root: Path) -> tuple[int, list[str]]:
    result = run_cli("check", root, "--select", "override-order,no-amd-patch")
    assert result.err == ""
    return result.code, [line for line in result.out.splitlines() if line in result.headers or "= note:" in line]


@pytest.mark.parametrize("variant", VARIANTS.values(), ids=VARIANTS.keys())
def test_after_the_change_both_ways_pass(make_repo: MakeRepo, variant: Callable[[str], str]) -> None:
    root = repository(make_repo, variant(AFTER))
    assert policy_findings(root) == (0, [])
    seed_assertions(CIRepository(root))


@pytest.mark.parametrize("variant", VARIANTS.values(), ids=VARIANTS.keys())
def test_before_the_change_both_ways_report_each_amd_patch(make_repo: MakeRepo, variant: Callable[[str], str]) -> None:
    text = variant(BEFORE)
    root = repository(make_repo, text)
    branch_start = text.index(BRANCH)
    expected = []
    index = text.find("amd_patch", branch_start)
    while index >= 0:
        line = text.count("\n", 0, index) + 1
        column = index - text.rfind("\n", 0, index)
        expected.append(f"{WORKFLOW}:{line}:{column}: CC101 'amd_patch' is forbidden here [no-amd-patch]")
        index = text.find("amd_patch", index + 1)
    assert len(expected) == 5
    assert policy_findings(root) == (1, expected)
    with pytest.raises(AssertionError) as failure:
        seed_assertions(CIRepository(root))
    first_line, first_column = line_of(text, "amd_patch", after=BRANCH)
    assert f"{WORKFLOW}:{first_line}:{first_column}: 'amd_patch'" in str(failure.value)


@pytest.mark.parametrize("variant", VARIANTS.values(), ids=VARIANTS.keys())
def test_install_above_the_checkout_fails_both_ways(make_repo: MakeRepo, variant: Callable[[str], str]) -> None:
    text = variant(MOVED)
    root = repository(make_repo, text)
    install = line_of(text, "pip install -e . --no-deps --break-system-packages", after=BRANCH)
    checkout = line_of(text, "git checkout -f FETCH_HEAD", after=BRANCH)
    assert install[0] < checkout[0]
    code, headers = policy_findings(root)
    assert code == 1
    assert headers == [
        f"{WORKFLOW}:{install[0]}:{install[1]}: CC100 `pip install -e .` comes before "
        '`git checkout -f FETCH_HEAD` in the `[ -n "$MEGATRON_PR" ]` branch of '
        "step 'Install Megatron' [override-order]",
        f"  = note: `git checkout -f FETCH_HEAD` is first written here at {checkout[0]}:{checkout[1]}",
    ]
    with pytest.raises(AssertionError) as failure:
        seed_assertions(CIRepository(root))
    message = str(failure.value)
    assert (
        f"`git checkout -f FETCH_HEAD` ({WORKFLOW}:{checkout[0]}:{checkout[1]}) is not written before "
        f"`pip install -e . --no-deps --break-system-packages` ({WORKFLOW}:{install[0]}:{install[1]})"
    ) in message
