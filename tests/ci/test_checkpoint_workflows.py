"""The GPU script and the GPU jobs run the harness so that nothing passes silently: every backend
required, the project's patch modules imported, Megatron-LM found rather than assumed, and time
limits that follow from the durations measured on the CPU, as their comments state."""

from __future__ import annotations

import math
import re

import pytest
import yaml

from tests.ci.conftest import PROJECT

pytestmark = pytest.mark.checkpoint

SCRIPT = (PROJECT / "scripts" / "gpu-checkpoint-checks.sh").read_text(encoding="utf-8")
ALL = "dcp-sync,dcp-async-thread,dcp-async-process,megatron-async"
REUSABLE = ["_run-ci.yml", "_run-ci-rocm.yml"]
MARGIN = 3


def steps_of(name: str) -> dict[str, dict[str, object]]:
    workflow = yaml.safe_load((PROJECT / ".github" / "workflows" / name).read_text(encoding="utf-8"))
    return {step["name"]: step for step in workflow["jobs"]["checkpoint"]["steps"] if "name" in step}


def script_limits() -> dict[int, tuple[float, int]]:
    """Step number -> (measured CPU seconds, limit) as the script's comment states them."""
    stated = re.findall(r"^#   step (\d): measured ([\d.]+) s on the CPU, x 3 = (\d+) s", SCRIPT, re.MULTILINE)
    return {int(number): (float(measured), int(limit)) for number, measured, limit in stated}


def test_the_gpu_script_s_limits_are_its_measured_durations_times_the_margin() -> None:
    limits = script_limits()
    assert sorted(limits) == [1, 2, 3, 4]
    used = [int(limit) for limit in re.findall(r"^step [\w-]+ (\d+) [01] ", SCRIPT, re.MULTILINE)]
    assert used == [limits[number][1] for number in (1, 2, 3, 4)]
    for measured, limit in limits.values():
        assert limit == math.ceil(measured * MARGIN)


def test_the_gpu_script_requires_every_backend_and_expects_the_seed_swap_to_fail() -> None:
    assert SCRIPT.count(f"all={ALL}") == 1
    assert SCRIPT.count('--require "$all"') == 2
    assert "step seed-swap" in SCRIPT and "--import tests.ci.checkpoint_patches.rocm_writer" in SCRIPT
    assert re.search(r"^step seed-swap \d+ 1 ", SCRIPT, re.MULTILINE)


@pytest.mark.parametrize("name", REUSABLE)
def test_the_gpu_jobs_require_every_backend_and_import_the_named_modules(name: str) -> None:
    harness = steps_of(name)["Run the checkpoint-save harness"]
    script = str(harness["run"])
    assert f"ci-checks checkpoint --require {ALL}" in script
    assert "--crash-test 20" in script
    assert harness["env"] == {"IMPORT_MODULES": "${{ inputs.import_modules }}"}
    assert 'imports+=(--import "$module")' in script and '"${imports[@]}"' in script


@pytest.mark.parametrize("name", REUSABLE)
def test_the_gpu_jobs_find_megatron_lm_instead_of_assuming_where_it_is(name: str) -> None:
    install = str(steps_of(name)["Install Megatron"]["run"])
    assert "/opt/Megatron-LM" not in install
    assert 'find_spec("megatron.core")' in install
    assert 'git -C "$megatron_dir" rev-parse --git-dir' in install


@pytest.mark.parametrize("name", REUSABLE)
def test_the_gpu_jobs_time_limits_cover_the_script_s_harness_steps(name: str) -> None:
    workflow = yaml.safe_load((PROJECT / ".github" / "workflows" / name).read_text(encoding="utf-8"))
    job = workflow["jobs"]["checkpoint"]
    harness = steps_of(name)["Run the checkpoint-save harness"]
    limits = script_limits()
    # the job's harness step runs the script's steps 2 and 3 in one run
    assert harness["timeout-minutes"] == math.ceil((limits[2][1] + limits[3][1]) / 60)
    assert job["timeout-minutes"] > harness["timeout-minutes"]
