"""The GitHub Action (`action.yml`), run the way the runner runs a composite action, against real repositories.

There is no GitHub runner here (nor `act`), so `run_action` does the runner's part, which for this action is
small: the inputs with their defaults; `${{ inputs.NAME }}` and `${{ steps.ID.outputs.NAME }}` in a step's `env:`
and `with:` (any other expression fails the test, so that one the runner would evaluate is never silently
dropped); each `run:` written to a file and run as `shell: bash` runs it (`bash --noprofile --norc -eo pipefail
FILE`) in the workspace, with `GITHUB_OUTPUT`, `GITHUB_STEP_SUMMARY`, `GITHUB_ACTION_PATH` (this project) and
`RUNNER_TEMP`; outputs read back from `GITHUB_OUTPUT`; the steps after a failing one not run. The install step
runs for real once for the module (pip installs this project with its linters into a virtual environment under
`RUNNER_TEMP`), and every check runs the ci-checks and linters it installed.

The one step that uses another action, actions/setup-python, cannot run here (it downloads a Python build): it
is replaced by its output, `python-path`, the Python running these tests.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from ci_checks.model import Workflow
from tests.ci.conftest import PROJECT
from tests.ci.linter.conftest import run_cli
from tests.ci.linter.reporters.test_reporters import validate_sarif

ACTION = yaml.safe_load((PROJECT / "action.yml").read_text(encoding="utf-8"))
STEPS: list[dict[str, Any]] = ACTION["runs"]["steps"]
_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
_REFERENCE = re.compile(
    r"inputs\.(?P<input>[A-Za-z0-9_-]+)|steps\.(?P<step>[A-Za-z0-9_-]+)\.outputs\.(?P<output>[A-Za-z0-9_-]+)"
)

CLEAN = """name: ci
on: push
permissions: {}
jobs:
  build:
    runs-on: ubuntu-latest
    timeout-minutes: 10
    steps:
      - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1
        with:
          persist-credentials: false
      - run: make test
"""
BROKEN = """name: ci
on: push
permissions: {}
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1
        with:
          persist-credentials: false
      - run: rm -rf $(ls build)
      - run: echo "::set-output name=version::1.0"
      - run: echo "${{ github.event.head_commit.message }}"
"""
ACTION_YML = """name: setup
description: set up the build
runs:
  using: composite
  steps:
    - run: echo "building"
      shell: bash
"""
POLICY = """version: 1
rules:
  - id: no-make
    kind: forbid
    message: call the build script instead
    where: {workflow: .github/workflows/*.yml}
    forbid: [{command: make}]
"""


@dataclass
class ActionRun:
    returncode: int
    stdout: str
    stderr: str
    outputs: dict[str, dict[str, str]]
    summary: str
    changed_job: str
    """What the steps added to the job's PATH and environment (GITHUB_PATH, GITHUB_ENV)."""

    @property
    def annotations(self) -> list[str]:
        return [line for line in self.stdout.splitlines() if re.match(r"::(error|warning|notice) ", line)]

    @property
    def command_line(self) -> str:
        """The command the check step says it runs (its first line of output)."""
        return next(line for line in self.stdout.splitlines() if line.startswith("ci-checks check "))


def _evaluate(value: object, inputs: dict[str, str], outputs: dict[str, dict[str, str]]) -> str:
    """A value of `env:` or `with:` as the runner passes it: a string, its expressions evaluated."""
    if isinstance(value, bool):
        return "true" if value else "false"

    def replace(match: re.Match[str]) -> str:
        reference = _REFERENCE.fullmatch(match.group(1))
        assert reference is not None, f"an expression this test cannot evaluate: {match.group(0)}"
        if reference["input"]:
            return inputs[reference["input"]]
        return outputs.get(reference["step"], {}).get(reference["output"], "")

    return _EXPRESSION.sub(replace, str(value))


def _read_outputs(path: Path) -> dict[str, str]:
    outputs = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        name, separator, value = line.partition("=")
        assert separator and "<<" not in name, f"an output line this test cannot read: {line!r}"
        outputs[name] = value
    return outputs


def run_action(
    workspace: Path, runner_temp: Path, given: dict[str, str], done: dict[str, dict[str, str]] | None = None
) -> ActionRun:
    """Run action.yml's steps with these inputs; `done` holds the outputs of steps already run (they are skipped)."""
    unknown = set(given) - set(ACTION["inputs"])
    assert not unknown, f"inputs action.yml does not declare: {unknown}"
    inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()} | given
    outputs: dict[str, dict[str, str]] = dict(done or {})
    summary, job_path, job_env = runner_temp / "step-summary.md", runner_temp / "path", runner_temp / "env"
    for file in (summary, job_path, job_env):
        file.write_text("", encoding="utf-8")
    environment = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("GITHUB_", "INPUT_", "RUNNER_", "CI_CHECKS_"))
    }
    environment |= {
        "XDG_CACHE_HOME": str(runner_temp / "cache"),
        "GITHUB_ACTION_PATH": str(PROJECT),
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_PATH": str(job_path),
        "GITHUB_ENV": str(job_env),
        "RUNNER_TEMP": str(runner_temp),
    }
    stdout, stderr = [], []
    for index, step in enumerate(STEPS):
        if step.get("id") in outputs:
            continue
        with_ = {name: _evaluate(value, inputs, outputs) for name, value in step.get("with", {}).items()}
        if "uses" in step:
            # A test double: setup-python cannot run here; its output is the Python running the tests.
            assert step["uses"].startswith("actions/setup-python@"), step
            assert with_["update-environment"] == "false", "the action must leave the job's Python as it was"
            outputs[step["id"]] = {"python-path": sys.executable}
            continue
        assert step["shell"] == "bash", step
        script = runner_temp / f"step-{index}.sh"
        script.write_text(step["run"], encoding="utf-8")
        output_file = runner_temp / f"output-{index}"
        output_file.write_text("", encoding="utf-8")
        env = environment | {"GITHUB_OUTPUT": str(output_file)}
        env |= {name: _evaluate(value, inputs, outputs) for name, value in step.get("env", {}).items()}
        command = ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)]
        finished = subprocess.run(
            command, cwd=workspace, env=env, capture_output=True, text=True, timeout=900, check=False
        )
        stdout.append(finished.stdout)
        stderr.append(finished.stderr)
        outputs[step.get("id", str(index))] = _read_outputs(output_file)
        if finished.returncode != 0:
            break
    changed_job = job_path.read_text("utf-8") + job_env.read_text("utf-8")
    return ActionRun(
        finished.returncode, "".join(stdout), "".join(stderr), outputs, summary.read_text("utf-8"), changed_job
    )


def git_repo(parent: Path, files: dict[str, str]) -> Path:
    root = parent / "workspace"
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content, encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


@pytest.fixture(scope="module")
def runner_temp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("runner-temp")


@pytest.fixture(scope="module")
def clean_run(runner_temp: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[ActionRun, Path]:
    """The whole action, install included, on a clean repository."""
    workspace = git_repo(tmp_path_factory.mktemp("clean"), {".github/workflows/ci.yml": CLEAN})
    return run_action(workspace, runner_temp, {}), workspace


@pytest.fixture(scope="module")
def installed(clean_run: tuple[ActionRun, Path]) -> dict[str, dict[str, str]]:
    """The outputs of the setup and install steps, for the runs that check other repositories."""
    run, _ = clean_run
    assert run.returncode == 0, run.stdout + run.stderr
    return {step: run.outputs[step] for step in ("python", "install")}


def test_a_clean_repository_passes_with_sarif_and_a_summary(
    clean_run: tuple[ActionRun, Path], runner_temp: Path
) -> None:
    run, workspace = clean_run
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.annotations == []
    assert run.summary == "## ci-checks\n\nNo problems found; 1 file checked.\n"
    # No option for an empty input.
    assert (
        run.command_line == "ci-checks check --backends all --output-format github --output sarif=ci-checks.sarif  -- "
    )
    assert run.outputs["check"] == {"sarif-file": "ci-checks.sarif"}
    log = json.loads((workspace / "ci-checks.sarif").read_text(encoding="utf-8"))
    assert log["runs"][0]["results"] == []
    validate_sarif(log, "oasis")
    installed_at = Path(run.outputs["install"]["ci-checks"])
    assert installed_at == runner_temp / "ci-checks-venv" / "bin" / "ci-checks" and installed_at.is_file()
    for linter in ("actionlint", "shellcheck", "zizmor"):
        assert (installed_at.parent / linter).is_file(), f"the action installed no {linter}"
    assert run.changed_job == "", "the action must leave the job's PATH and environment as they were"


def test_findings_become_annotations_sarif_and_the_summary_and_fail_the_step(
    tmp_path: Path, runner_temp: Path, installed: dict[str, dict[str, str]]
) -> None:
    workspace = git_repo(tmp_path, {".github/workflows/ci.yml": BROKEN})
    run = run_action(workspace, runner_temp, {"sarif-file": "results.sarif"}, installed)
    assert run.returncode == 1, run.stdout + run.stderr
    shellcheck, set_output, *injection = run.annotations
    assert shellcheck == (
        "::warning file=.github/workflows/ci.yml,line=11,col=21,endLine=11,endColumn=32,title=SC2046 shellcheck::"
        "Quote this to prevent word splitting"
    )
    assert set_output.startswith("::warning file=.github/workflows/ci.yml,line=12,col=14,")
    assert all(line.startswith("::error file=.github/workflows/ci.yml,line=13,") for line in injection), injection
    titles = {re.search(r",title=(\S+) ", line)[1] for line in injection}  # type: ignore[index]
    assert titles == {"AL-expression", "ZZ-template-injection"}, injection
    log = json.loads((workspace / "results.sarif").read_text(encoding="utf-8"))
    validate_sarif(log, "oasis")
    results = log["runs"][0]["results"]
    assert len(results) == len(run.annotations)
    assert {"SC2046", "CC031", "ZZ-template-injection"} <= {result["ruleId"] for result in results}
    assert run.outputs["check"] == {"sarif-file": "results.sarif"}
    assert run.summary.startswith("## ci-checks\n\nFound ")
    assert run.summary.count("\n| ") == len(results) + 1  # the header row and one row per finding


def test_paths_config_and_args_are_passed_through(
    tmp_path: Path, runner_temp: Path, installed: dict[str, dict[str, str]]
) -> None:
    files = {
        ".github/workflows/ci.yml": CLEAN,
        ".github/workflows/other.yml": BROKEN,
        ".github/actions/setup/action.yml": ACTION_YML,
        "ci/policy.yml": POLICY,
    }
    workspace = git_repo(tmp_path, files)
    inputs = {
        "paths": ".github/workflows/ci.yml\n.github/actions/setup/action.yml",
        "config": "ci/policy.yml",
        "args": "--select no-make  --report-unused-ignores",
    }
    run = run_action(workspace, runner_temp, inputs, installed)
    assert run.returncode == 1, run.stdout + run.stderr
    assert run.command_line == (
        "ci-checks check --backends all --output-format github --output sarif=ci-checks.sarif --config ci/policy.yml "
        "--select no-make --report-unused-ignores -- .github/workflows/ci.yml .github/actions/setup/action.yml"
    )
    [annotation] = run.annotations
    assert annotation.startswith("::error file=.github/workflows/ci.yml,line=12,col=14,")
    assert annotation.endswith("title=CC101 no-make::`make` is forbidden here: call the build script instead")
    assert "2 files checked" in run.summary  # the two paths named, not other.yml


def test_fail_on_sets_the_severity_that_fails_the_step(
    tmp_path: Path, runner_temp: Path, installed: dict[str, dict[str, str]]
) -> None:
    warnings_only = CLEAN.replace("run: make test", 'run: echo "::set-output name=version::1.0"')
    workspace = git_repo(tmp_path, {".github/workflows/ci.yml": warnings_only})
    by_default = run_action(workspace, runner_temp, {}, installed)
    assert by_default.returncode == 1, by_default.stdout + by_default.stderr
    on_errors = run_action(workspace, runner_temp, {"fail-on": "error"}, installed)
    assert on_errors.returncode == 0, on_errors.stdout + on_errors.stderr
    assert "--output sarif=ci-checks.sarif --fail-on error  -- " in on_errors.command_line
    [annotation] = on_errors.annotations
    assert annotation.startswith("::warning file=.github/workflows/ci.yml,line=12,col=14,")


def test_a_baseline_accepts_the_findings_it_holds(
    tmp_path: Path, runner_temp: Path, installed: dict[str, dict[str, str]]
) -> None:
    workspace = git_repo(tmp_path, {".github/workflows/ci.yml": BROKEN})
    written = subprocess.run(
        [installed["install"]["ci-checks"], "baseline", "write", "ci-baseline.json", "--backends", "all"],
        cwd=workspace,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "XDG_CACHE_HOME": str(runner_temp / "cache")},
    )
    assert written.returncode == 0, written.stderr
    run = run_action(workspace, runner_temp, {"baseline": "ci-baseline.json"}, installed)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "--output sarif=ci-checks.sarif --baseline ci-baseline.json  -- " in run.command_line
    assert run.annotations == []
    assert "ci-baseline.json accepted" in run.stderr
    assert json.loads((workspace / "ci-checks.sarif").read_text(encoding="utf-8"))["runs"][0]["results"] == []


def test_config_ref_judges_a_change_by_the_policy_it_was_made_against(
    tmp_path: Path, runner_temp: Path, installed: dict[str, dict[str, str]]
) -> None:
    workspace = git_repo(tmp_path, {".github/workflows/ci.yml": CLEAN, ".github/ci-checks.yml": POLICY})
    identity = ["-c", "user.name=ci", "-c", "user.email=ci@example.com"]
    subprocess.run(["git", "add", "-A"], cwd=workspace, check=True)
    subprocess.run(["git", *identity, "commit", "-qm", "base"], cwd=workspace, check=True)
    # The change under review deletes the rule that its own workflow breaks.
    (workspace / ".github" / "ci-checks.yml").write_text("version: 1\n", encoding="utf-8")
    subprocess.run(["git", *identity, "commit", "-qam", "drop the rule"], cwd=workspace, check=True)
    by_the_change = run_action(workspace, runner_temp, {}, installed)
    assert by_the_change.returncode == 0, by_the_change.stdout + by_the_change.stderr
    by_the_base = run_action(workspace, runner_temp, {"config-ref": "HEAD^1"}, installed)
    assert by_the_base.returncode == 1, by_the_base.stdout + by_the_base.stderr
    assert "--output sarif=ci-checks.sarif --config-ref HEAD^1  -- " in by_the_base.command_line
    [annotation] = by_the_base.annotations
    assert "title=CC101 no-make::`make` is forbidden here" in annotation


def test_new_since_reports_what_the_change_brought_where_it_did_not_touch(
    tmp_path: Path, runner_temp: Path, installed: dict[str, dict[str, str]]
) -> None:
    # zizmor's excessive-permissions is a hardening audit, kept by the security profile.
    workspace = git_repo(tmp_path, {".github/workflows/ci.yml": CLEAN, ".github/ci-checks.yml": "profile: security\n"})
    identity = ["-c", "user.name=ci", "-c", "user.email=ci@example.com"]
    subprocess.run(["git", "add", "-A"], cwd=workspace, check=True)
    subprocess.run(["git", *identity, "commit", "-qm", "base"], cwd=workspace, check=True)
    # The change deletes `permissions: {}`: zizmor's finding is on the job's line, which the change did not touch.
    workflow = workspace / ".github" / "workflows" / "ci.yml"
    workflow.write_text(CLEAN.replace("permissions: {}\n", ""), encoding="utf-8")
    subprocess.run(["git", *identity, "commit", "-qam", "drop the permissions"], cwd=workspace, check=True)
    run = run_action(
        workspace, runner_temp, {"new-since": "HEAD^1", "config-ref": "HEAD^1", "args": "--profile security"}, installed
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert "--config-ref HEAD^1 --new-since HEAD^1 --profile security -- " in run.command_line
    assert any("title=ZZ-excessive-permissions" in annotation for annotation in run.annotations), run.annotations


def test_a_run_that_writes_no_sarif_announces_none_and_fails_once(
    tmp_path: Path, runner_temp: Path, installed: dict[str, dict[str, str]]
) -> None:
    workspace = git_repo(tmp_path, {".github/workflows/ci.yml": CLEAN})
    (workspace / "ci-checks.sarif").write_text("left by an earlier run\n", encoding="utf-8")
    run = run_action(workspace, runner_temp, {"config": "no-such-file.yml"}, installed)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "no-such-file.yml: configuration file not found" in run.stderr
    # No output: README's upload step (`if: steps.ci-checks.outputs.sarif-file != ''`) is skipped, not failed.
    assert run.outputs["check"] == {}
    assert not (workspace / "ci-checks.sarif").exists()


def test_inputs_never_become_part_of_the_script(
    tmp_path: Path, runner_temp: Path, installed: dict[str, dict[str, str]]
) -> None:
    workspace = git_repo(tmp_path, {".github/workflows/ci.yml": CLEAN})
    hostile = {"paths": '$(touch injected) ";touch injected;"', "config": "`touch injected`", "args": "'$(id)'"}
    run = run_action(workspace, runner_temp, hostile, installed)
    assert not (workspace / "injected").exists()
    assert run.returncode == 2
    assert "ci-checks: error:" in run.stderr


def test_every_input_reaches_the_check_and_empty_ones_add_no_option() -> None:
    check = next(step for step in STEPS if step.get("id") == "check")
    references = [match for value in check["env"].values() for match in _REFERENCE.finditer(str(value))]
    used = {match["input"] for match in references if match["input"]}
    assert used | {"python-version"} == set(ACTION["inputs"])
    options = {"config": "--config", "baseline": "--baseline", "config-ref": "--config-ref", "new-since": "--new-since"}
    for name, option in options.items():
        variable = "INPUT_" + name.upper().replace("-", "_")
        assert f'if [ -n "${variable}" ]; then options+=({option} "${variable}"); fi' in check["run"]
    assert 'if [ -n "$INPUT_FAIL_ON" ]; then options+=(--fail-on "$INPUT_FAIL_ON"); fi' in check["run"]
    assert all(not spec.get("required") and "default" in spec for spec in ACTION["inputs"].values())


def test_the_action_is_clean_under_its_own_checks_and_zizmor() -> None:
    result = run_cli("check", PROJECT / "action.yml", "--backends", "all")
    assert (result.code, result.out.splitlines()[-1]) == (0, "No problems found; 1 file checked."), result.out
    zizmor = Path(sys.executable).parent / "zizmor"
    audit = subprocess.run(
        [zizmor, "--offline", "--format", "json", "--persona", "auditor", "action.yml"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert json.loads(audit.stdout) == [], audit.stdout


def test_this_repositorys_pr_check_uses_the_action(workflow: Callable[[str], Workflow]) -> None:
    job = workflow("pr-checks.yml").job("ci-checks")
    [own] = job.steps_matching(id="ci-checks")
    [upload] = job.steps_matching(uses="github/codeql-action/upload-sarif")
    assert own.uses is not None and own.uses.raw == "./"
    assert own.with_["config-ref"].text == "${{ github.event_name == 'pull_request' && 'HEAD^1' || 'HEAD' }}"
    assert upload.with_["sarif_file"].text == "${{ steps.ci-checks.outputs.sarif-file }}"
    assert job.get("permissions").value == {"contents": "read", "security-events": "write"}
