"""The GPU script and the GPU jobs run the harness so that nothing passes silently: every backend required, the
project's modules and setups passed on, Megatron-LM found rather than assumed, no installed torch replaced,
and time limits that follow from the script's own."""

from __future__ import annotations

import math
import re

import pytest
import yaml

from ci_checks_checkpoint import gpu_checks
from tests.ci.conftest import PROJECT

pytestmark = pytest.mark.checkpoint

SCRIPT = (PROJECT / "scripts" / "gpu-checkpoint-checks.sh").read_text(encoding="utf-8")
REUSABLE = ["_run-ci.yml", "_run-ci-rocm.yml"]
CALLERS = ["cuda.yml", "rocm.yml"]
_LIMITS = re.compile(r"\$\{\{ inputs\.quick && (\d+) \|\| (\d+) \}\}")


def workflow(name: str) -> dict[str, object]:
    found: dict[str, object] = yaml.safe_load((PROJECT / ".github" / "workflows" / name).read_text(encoding="utf-8"))
    return found


def steps_of(name: str) -> dict[str, dict[str, object]]:
    job = workflow(name)["jobs"]["checkpoint"]  # type: ignore[index]
    return {step["name"]: step for step in job["steps"] if "name" in step}


def limits(value: object) -> tuple[int, int]:
    """(quick, full) minutes of a `${{ inputs.quick && Q || F }}` limit."""
    match = _LIMITS.fullmatch(str(value))
    assert match is not None, value
    return int(match.group(1)), int(match.group(2))


def test_the_script_runs_the_checks_from_this_checkout_with_every_option_passed_on() -> None:
    # Only the packages go on the path (links to the harness and the linter's core it uses), never the checkout,
    # whose `tests` would shadow a project's.
    assert 'ln -s "$checkout/ci_checks_checkpoint" "$package_path/ci_checks_checkpoint"' in SCRIPT
    assert 'ln -s "$checkout/ci_checks" "$package_path/ci_checks"' in SCRIPT
    assert 'export PYTHONPATH="$package_path${PYTHONPATH:+:$PYTHONPATH}"' in SCRIPT
    assert SCRIPT.rstrip().endswith('"${PYTHON:-python3}" -m ci_checks_checkpoint.gpu_checks "$@"')
    assert "CUDA_VISIBLE_DEVICES" not in SCRIPT  # every GPU of the runner


def test_the_full_form_s_limits_add_up_to_what_the_jobs_allow() -> None:
    full = sum(gpu_checks.FULL_LIMITS_S.values()) + len(gpu_checks.FULL_LIMITS_S) * gpu_checks.BACKSTOP_S
    quick_minutes = math.ceil(gpu_checks.QUICK_BUDGET_S / 60) + 1  # the budget holds the installs and backstops
    full_minutes = math.ceil((full + gpu_checks.INSTALL_LIMIT_S) / 60)
    for name in REUSABLE:
        harness = steps_of(name)["Run the checkpoint-save harness"]
        assert limits(harness["timeout-minutes"]) == (quick_minutes, full_minutes)
        assert limits(workflow(name)["jobs"]["checkpoint"]["timeout-minutes"]) == (  # type: ignore[index]
            quick_minutes + 15,
            full_minutes + 15,
        )


@pytest.mark.parametrize("name", REUSABLE)
def test_the_gpu_jobs_run_the_script_with_the_project_s_modules_setups_and_platform(name: str) -> None:
    harness = steps_of(name)["Run the checkpoint-save harness"]
    script = str(harness["run"])
    assert 'scripts/gpu-checkpoint-checks.sh "${form[@]}" gpu-checkpoint-results -- "${project[@]}"' in script
    for option in ('--import "$module"', '--setup "$setup"', '--as-platform "$AS_PLATFORM"', "--quick"):
        assert option in script
    assert harness["env"] == {
        "QUICK": "${{ inputs.quick }}",
        "IMPORT_MODULES": "${{ inputs.import_modules }}",
        "SETUP_FUNCTIONS": "${{ inputs.setup_functions }}",
        "AS_PLATFORM": "${{ inputs.as_platform }}",
        "PIP_BREAK_SYSTEM_PACKAGES": "1",
    }
    assert "pip install" not in script  # the script installs what is missing, pinning what is there
    assert steps_of(name)["Keep the reports"]["with"]["path"] == "gpu-checkpoint-results/"  # type: ignore[index]


@pytest.mark.parametrize("name", CALLERS)
def test_a_push_gets_the_quick_form_and_the_nightly_run_the_full_one(name: str) -> None:
    job = next(iter(workflow(name)["jobs"].values()))  # type: ignore[attr-defined]
    assert job["with"]["quick"] == (
        "${{ github.event_name == 'push' || (github.event_name == 'workflow_dispatch' && inputs.quick) }}"
    )
    assert {"setup_functions", "as_platform", "import_modules"} <= job["with"].keys()


@pytest.mark.parametrize("name", REUSABLE)
def test_the_gpu_jobs_find_megatron_lm_instead_of_assuming_where_it_is(name: str) -> None:
    install = str(steps_of(name)["Install Megatron"]["run"])
    assert "/opt/Megatron-LM" not in install
    assert 'find_spec("megatron.core")' in install
    assert 'git -C "$megatron_dir" rev-parse --git-dir' in install
