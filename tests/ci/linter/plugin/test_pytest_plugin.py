"""The pytest plugin, run for real with pytester: policy rules as test items, and the fixtures."""

from __future__ import annotations

import pytest

WORKFLOW = """on: workflow_call
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with:
          persist-credentials: false
      - name: Install Megatron
        run: |
          if [ -n "$MEGATRON_PR" ]; then
            git fetch origin "$MEGATRON_PR"
            git checkout -f FETCH_HEAD
            pip install -e . --no-deps
          fi
"""

POLICY = """version: 1
rules:
  - id: override-order
    kind: order
    where: {workflow: .github/workflows/rocm.yml, step: Install Megatron, branch: '[ -n "$MEGATRON_PR" ]'}
    order:
      - command: git checkout -f FETCH_HEAD
      - command: pip install -e .
  - id: no-amd-patch
    kind: forbid
    where: {files: .github/workflows/*.yml}
    forbid:
      - text: amd_patch
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    (pytester.path / ".github" / "workflows").mkdir(parents=True)
    (pytester.path / ".github" / "workflows" / "rocm.yml").write_text(WORKFLOW)
    (pytester.path / ".github" / "ci-checks.yml").write_text(POLICY)
    return pytester


def test_policy_rules_are_collected_as_items(project: pytest.Pytester) -> None:
    result = project.runpytest("--ci-checks", "--collect-only", "-q")
    result.stdout.fnmatch_lines([".github/ci-checks.yml::override-order", ".github/ci-checks.yml::no-amd-patch"])
    assert result.ret == pytest.ExitCode.OK


def test_without_the_option_nothing_is_collected(project: pytest.Pytester) -> None:
    result = project.runpytest("--collect-only", "-q")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_passing_rules_pass(project: pytest.Pytester) -> None:
    result = project.runpytest("--ci-checks")
    result.assert_outcomes(passed=2)


def test_a_failing_rule_shows_the_position_the_source_line_and_the_message(project: pytest.Pytester) -> None:
    workflow = project.path / ".github" / "workflows" / "rocm.yml"
    workflow.write_text(WORKFLOW.replace("--no-deps\n", "--no-deps\n            git apply /tmp/amd_patch/x.patch\n"))
    result = project.runpytest("--ci-checks")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*ci-checks policy rule no-amd-patch*",
            ".github/workflows/rocm.yml:15:28: CC101 'amd_patch' is forbidden here [[]no-amd-patch[]]",
            "15 |             git apply /tmp/amd_patch/x.patch",
            "   |                            ^^^^^^^^^",
            "FAILED .github/ci-checks.yml::no-amd-patch*",
        ]
    )


def test_the_ini_option_turns_collection_on(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\nci_checks = true\n")
    project.runpytest().assert_outcomes(passed=2)


def test_a_bad_policy_file_is_a_positioned_collection_error(project: pytest.Pytester) -> None:
    (project.path / ".github" / "ci-checks.yml").write_text(POLICY.replace("kind: forbid", "kind: forbidd"))
    result = project.runpytest("--ci-checks")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        ["*.github/ci-checks.yml:10:11: rules.1.kind: unknown value 'forbidd' (did you mean 'forbid'?)*"]
    )


def test_policy_in_pyproject_toml(pytester: pytest.Pytester) -> None:
    (pytester.path / ".github" / "workflows").mkdir(parents=True)
    (pytester.path / ".github" / "workflows" / "rocm.yml").write_text(WORKFLOW)
    pytester.makepyprojecttoml(
        "[tool.ci-checks]\n\n[[tool.ci-checks.rules]]\n"
        'id = "no-git-apply"\nkind = "forbid"\nwhere = {workflow = ".github/workflows/*.yml"}\n'
        'forbid = [{command = "git fetch"}]\n'
    )
    result = pytester.runpytest("--ci-checks")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*rocm.yml:12:13: CC101 `git fetch` is forbidden here [[]no-git-apply[]]"])


def test_fixtures_in_a_hand_written_test(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_override="""
        def test_checkout_before_install(workflow):
            override = workflow("rocm.yml").step("Install Megatron").script.branch('[ -n "$MEGATRON_PR" ]')
            assert override.comes_before("git checkout -f FETCH_HEAD", "pip install -e .")
            assert override.occurrences("amd_patch") == []

        def test_install_before_checkout(workflow):
            override = workflow("rocm.yml").step("Install Megatron").script.branch('[ -n "$MEGATRON_PR" ]')
            assert override.comes_before("pip install -e .", "git checkout -f FETCH_HEAD")

        def test_repository_wide_search(ci_repo):
            assert [o.span.line for o in ci_repo.occurrences("FETCH_HEAD", files=".github/workflows/*")] == [13]
        """
    )
    result = project.runpytest()
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "E       AssertionError: assert `pip install -e . --no-deps` (.github/workflows/rocm.yml:14:13) "
            "is not written before `git checkout -f FETCH_HEAD` (.github/workflows/rocm.yml:13:13)*"
        ]
    )


def test_the_ci_repo_fixture_can_be_overridden(project: pytest.Pytester) -> None:
    other = project.path / "other"
    (other / ".github" / "workflows").mkdir(parents=True)
    (other / ".github" / "workflows" / "ci.yml").write_text(WORKFLOW)
    project.makeconftest(
        """
        import pytest
        from ci_checks.query import CIRepository

        @pytest.fixture(scope="session")
        def ci_repo(pytestconfig):
            return CIRepository(pytestconfig.rootpath / "other")
        """
    )
    project.makepyfile(test_other="def test_other(workflow):\n    assert workflow('ci.yml').job('test')\n")
    project.runpytest().assert_outcomes(passed=1)
