"""This repository's own reusable ROCm workflow, asked the seed's questions through the plugin's fixtures.

The same two assertions are policy rules in `.github/ci-checks.yml`
(`megatron-override-order`, `no-amd-patch`), which pytest collects as tests
because `ci_checks = true` is set in pyproject.toml.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sysconfig
from collections.abc import Callable
from typing import TYPE_CHECKING

from tests.ci.conftest import PROJECT

if TYPE_CHECKING:
    from ci_checks.model import Workflow
    from ci_checks.query import CIRepository


def test_megatron_override_installs_the_checked_out_ref_unpatched(workflow: Callable[[str], Workflow]) -> None:
    script = workflow("_run-ci-rocm.yml").step("Install Megatron").script
    assert script is not None
    override = script.branch('[ -n "$MEGATRON_PR" ]')
    assert override.comes_before("git checkout -f FETCH_HEAD", "pip install -e .")
    assert override.occurrences("amd_patch") == []


def test_checkout_comes_first_and_keeps_no_credentials(workflow: Callable[[str], Workflow]) -> None:
    for name in ("_run-ci.yml", "_run-ci-rocm.yml"):
        first = workflow(name).job("checkpoint").steps[0]
        assert first.uses is not None and first.uses.name == "actions/checkout"
        assert first.with_["persist-credentials"].text == "false"


def test_the_repository_has_no_amd_patch_in_workflows(ci_repo: CIRepository) -> None:
    assert ci_repo.occurrences("amd_patch", files=".github/workflows/*.yml") == []


def test_cuda_and_rocm_paths_take_the_same_inputs(workflow: Callable[[str], Workflow]) -> None:
    cuda, rocm = workflow("_run-ci.yml"), workflow("_run-ci-rocm.yml")
    assert cuda.workflow_call is not None and rocm.workflow_call is not None
    assert list(cuda.workflow_call.inputs) == list(rocm.workflow_call.inputs)
    assert list(rocm.workflow_call.inputs) == [
        "runs_on",
        "container_image",
        "skip_dependency_install",
        "ref",
        "megatron_ref",
        "import_modules",
        "setup_functions",
        "as_platform",
        "quick",
    ]


def _tool(name: str) -> str:
    """A linter binary installed by the `linters` extra, next to this Python."""
    found = shutil.which(name, path=sysconfig.get_path("scripts")) or shutil.which(name)
    assert found is not None, f"{name} is missing: install the linters extra"
    return found


def test_own_workflows_pass_actionlint_with_shellcheck() -> None:
    workflows = sorted(str(path) for path in (PROJECT / ".github" / "workflows").glob("*.yml"))
    command = [_tool("actionlint"), f"-shellcheck={_tool('shellcheck')}", "-no-color", *workflows]
    result = subprocess.run(command, cwd=PROJECT, capture_output=True, text=True, check=False)
    assert (result.returncode, result.stdout) == (0, ""), result.stdout + result.stderr


def test_own_workflows_have_nothing_at_medium_or_above_under_zizmor() -> None:
    command = [_tool("zizmor"), "--offline", "--format", "json", ".github/workflows"]
    result = subprocess.run(command, cwd=PROJECT, capture_output=True, text=True, check=False)
    findings = json.loads(result.stdout)
    serious = [f for f in findings if f["determinations"]["severity"] in ("Medium", "High")]
    assert serious == [], json.dumps(serious, indent=1)[:2000]
