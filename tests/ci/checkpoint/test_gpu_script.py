"""scripts/gpu-checkpoint-checks.sh --quick, run on the CPU (--allow-cpu) as it runs on a GPU runner with one GPU,
under this interpreter and under Python 3.10 (the oldest the harness supports, where .ci/run found one): its results
folder is what the schema says, its checks hold, its time within the budget, nothing left running, a project's own
`tests` package not shadowed; its checks judged on reports of two ranks too; its installs never replace torch or what
was built against it; its options never taken for its results folder."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

pytest.importorskip("torch", reason="needs the checkpoint extra: pip install -e '.[checkpoint]'")

from ci_checks_checkpoint import gpu_checks
from ci_checks_checkpoint.options import installed
from tests.ci.checkpoint.run import Run, observed
from tests.ci.conftest import PROJECT

pytestmark = [
    pytest.mark.checkpoint,
    pytest.mark.skipif(not installed("megatron.core"), reason="needs megatron-core: pip install -e '.[megatron]'"),
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc"),
]

SCRIPT = PROJECT / "scripts" / "gpu-checkpoint-checks.sh"
SUMMARY_SCHEMA = json.loads((PROJECT / "schemas" / "gpu-checkpoint-results.schema.json").read_text(encoding="utf-8"))
REPORT_SCHEMA = json.loads((PROJECT / "schemas" / "checkpoint-report.schema.json").read_text(encoding="utf-8"))


THIS_PYTHON = {**os.environ, "PYTHON": sys.executable}  # what the script runs, not whichever python3 is first
# .ci/run sets it to a Python 3.10 with the megatron extra installed, where it finds a 3.10 interpreter.
PYTHON310 = os.environ.get("CI_CHECKS_PYTHON310")
# A project's own top-level `tests` package, on the project's PYTHONPATH: the checkout's must not shadow it.
PROJECT_TESTS = "tests.project_checkpoint_setup"


@pytest.fixture(
    scope="module",
    params=[
        pytest.param(sys.executable, id="this-python"),
        pytest.param(
            PYTHON310,
            id="python3.10",
            marks=pytest.mark.skipif(
                not PYTHON310, reason="no Python 3.10 here: CI_CHECKS_PYTHON310 names one (.ci/run sets it)"
            ),
        ),
    ],
)
def quick(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, Path]:
    tmp = tmp_path_factory.mktemp("quick")
    (tmp / "project" / "tests").mkdir(parents=True)
    (tmp / "project" / "tests" / "__init__.py").write_text("", encoding="utf-8")
    (tmp / "project" / "tests" / "project_checkpoint_setup.py").write_text(
        "SAVES_CHECKED = True  # a module of the project's own tests\n", encoding="utf-8"
    )
    command = [str(SCRIPT), "--quick", "--skip-install", "--allow-cpu", "--size-per-gpu", "2MiB"]
    process = subprocess.run(
        observed(tmp / "observed.json", [*command, str(tmp / "results"), "--", "--import", PROJECT_TESTS]),
        cwd=tmp,  # the script finds its checkout itself
        env={**os.environ, "PYTHON": request.param, "PYTHONPATH": str(tmp / "project")},
        capture_output=True,
        text=True,
        timeout=gpu_checks.QUICK_BUDGET_S + 60,
        check=False,
    )
    seen = json.loads((tmp / "observed.json").read_text(encoding="utf-8"))
    run = Run(seen["code"], process.stdout, process.stderr, {}, seen["wall_s"], seen["left_below"],
              seen["left_in_session"], seen["pids_seen"])  # fmt: skip
    return run, tmp / "results"


def summary_of(results: Path) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((results / "summary.json").read_text(encoding="utf-8"))
    return found


@pytest.mark.thorough  # the quick form on the CPU: every backend saved, crash-tested and resharded
def test_the_quick_form_passes_within_its_budget_and_leaves_nothing(quick: tuple[Run, Path]) -> None:
    run, _ = quick
    assert run.code == 0, run.stdout + run.stderr[-3000:]
    assert run.wall_s <= gpu_checks.QUICK_BUDGET_S
    run.assert_left_nothing_running()
    assert run.stdout.splitlines()[-1].startswith("gpu checkpoint checks passed in ")


@pytest.mark.thorough  # the quick form on the CPU: every backend saved, crash-tested and resharded
def test_the_results_folder_is_what_its_schemas_say(quick: tuple[Run, Path]) -> None:
    _, results = quick
    summary = summary_of(results)
    jsonschema.validate(summary, SUMMARY_SCHEMA)
    assert sorted(path.name for path in results.iterdir()) == [
        "constraints.txt", "quick.json", "quick.txt", "quick.xml", "seed.json", "seed.txt", "summary.json",
    ]  # fmt: skip
    for step in summary["steps"]:
        jsonschema.validate(json.loads((results / step["report"]).read_text(encoding="utf-8")), REPORT_SCHEMA)


@pytest.mark.thorough  # the quick form on the CPU: every backend saved, crash-tested and resharded
def test_every_promise_of_the_quick_form_is_checked_and_held(quick: tuple[Run, Path]) -> None:
    _, results = quick
    summary = summary_of(results)
    assert (summary["mode"], summary["passed"], summary["gpus"], summary["ranks"]) == ("quick", True, 0, 1)
    assert summary["checks"] == {
        "seed_regression_caught": True,
        "every_backend_bit_exact": True,
        "one_kill_per_backend": True,
        "every_gpu_used": True,
        "multi_rank": None,  # one rank: nothing to load on another number of ranks
        "throughput": True,
    }
    seed, main = summary["steps"]
    assert (seed["name"], seed["expected_exit_code"], seed["exit_code"], seed["passed"]) == ("seed", 1, 1, True)
    assert seed["command"][seed["command"].index("--setup") + 1] == "ci_checks_checkpoint.examples.rocm_workaround:main"
    assert "--as-platform" in seed["command"]
    assert (main["name"], main["exit_code"], main["passed"]) == ("quick", 0, True)
    assert seed["limit_s"] + main["limit_s"] + gpu_checks.BACKSTOP_S <= gpu_checks.QUICK_BUDGET_S
    report = json.loads((results / "quick.json").read_text(encoding="utf-8"))
    assert report["platform"]["world_size"] == 1 and report["platform"]["reshard_ranks"] is None
    assert report["platform"]["imports"] == [PROJECT_TESTS]  # the project's `tests`, not the checkout's


@pytest.mark.thorough  # the quick form on the CPU: every backend saved, crash-tested and resharded
def test_every_step_ran_under_the_python_it_was_given(quick: tuple[Run, Path], request: pytest.FixtureRequest) -> None:
    _, results = quick
    given = request.node.callspec.params["quick"]
    version = subprocess.run(
        [given, "-c", "import platform; print(platform.python_version())"], capture_output=True, text=True, check=True
    ).stdout.strip()
    for step in summary_of(results)["steps"]:
        report = json.loads((results / step["report"]).read_text(encoding="utf-8"))
        assert (step["command"][0], report["platform"]["python"]) == (given, version)


@pytest.mark.thorough  # the quick form on the CPU: every backend saved, crash-tested and resharded
def test_with_two_gpus_the_quick_checks_want_both_ranks_and_the_resharding(quick: tuple[Run, Path]) -> None:
    # The one-rank report, as two ranks would have written it, then without its resharding rows.
    _, results = quick
    report = json.loads((results / "quick.json").read_text(encoding="utf-8"))
    seed = json.loads((results / "seed.json").read_text(encoding="utf-8"))
    report["platform"]["world_size"] = 2
    rows = report["results"]
    for row in [r for r in rows if r["check"] == "throughput" and r["ranks"]]:
        row["ranks"] = [row["ranks"][0], {**row["ranks"][0], "rank": 1}]
    backends = [r["backend"] for r in rows if r["check"] == "verify"]
    resharded = [{"backend": b, "check": "reshard", "passed": True, "detail": "bit-exact"} for b in backends]
    assert gpu_checks.quick_checks({**report, "results": rows + resharded}, seed, gpus=2, ranks=2)["multi_rank"]
    checks = gpu_checks.quick_checks({**report, "results": rows}, seed, gpus=2, ranks=2)
    assert (checks["multi_rank"], checks["every_gpu_used"], checks["throughput"]) == (False, True, True)
    assert gpu_checks.quick_checks(report, seed, gpus=4, ranks=4)["every_gpu_used"] is False


def test_nothing_installed_is_ever_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # megatron-core and psutil made absent to the installer's look-up only: a stand-in for an image without them
    real = importlib.util.find_spec
    absent = {"megatron.core", "psutil"}
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None if name in absent else real(name))
    summary = gpu_checks.Summary("quick", tmp_path, 0, 1, gpu_checks.QUICK_BUDGET_S)
    assert gpu_checks.install(summary, skip=True, quick=True)
    constraints = (tmp_path / "constraints.txt").read_text(encoding="utf-8").splitlines()
    torch_version = importlib.metadata.version("torch")
    assert summary.installs["torch"] == f"torch=={torch_version}" and f"torch=={torch_version}" in constraints
    assert f"megatron-core=={importlib.metadata.version('megatron-core')}" in constraints  # it requires torch
    assert f"numpy=={importlib.metadata.version('numpy')}" in constraints
    # megatron-core needs packaging>=24.2: an image's older packaging, or any other distribution that is neither
    # torch's accelerator stack nor built against torch, may be upgraded by the install.
    pinned = {line.split("==")[0].lower() for line in constraints}
    assert not pinned & {"packaging", "pyyaml", "pytest", "jsonschema", "psutil"}, constraints
    assert summary.installs["missing"] == ["psutil", "megatron-core>=0.16,<0.17"]
    assert summary.installs["command"] == [
        sys.executable, "-m", "pip", "install", "--constraint", str(tmp_path / "constraints.txt"),
        "psutil", "megatron-core>=0.16,<0.17",
    ]  # fmt: skip
    assert summary.installs["skipped"] is True


def test_a_seed_run_that_does_not_name_the_swap_fails_the_check() -> None:
    named = {"results": [{"backend": "megatron-async", "check": "staging", "passed": False,
                          "detail": "rank 0: the save instantiated x.ROCmFileSystemWriterAsync"}]}  # fmt: skip
    other = {"results": [{"backend": "megatron-async", "check": "staging", "passed": False, "detail": "timed out"}]}
    assert gpu_checks.quick_checks({}, named, 1, 1)["seed_regression_caught"] is True
    checks = gpu_checks.quick_checks({}, other, 1, 1)
    assert checks["seed_regression_caught"] is False and checks["every_backend_bit_exact"] is False
    assert checks["multi_rank"] is None  # one GPU: nothing to load on another number of ranks


def test_without_an_accelerator_it_says_so_and_exits_2(tmp_path: Path) -> None:
    result = subprocess.run(
        [str(SCRIPT), "--quick", str(tmp_path / "results")], env=THIS_PYTHON, capture_output=True, text=True,
        timeout=60, check=False,
    )  # fmt: skip
    assert (result.returncode, result.stderr) == (2, "no CUDA or ROCm accelerator is visible to torch\n")


@pytest.mark.parametrize(
    ("argv", "results", "harness"),
    [
        (["--quick", "--", "--setup", "x:y"], "gpu-checkpoint-results", ["--setup", "x:y"]),
        (["--quick", "out", "--", "--import", "m", "--", "z"], "out", ["--import", "m", "--", "z"]),
        (["--", "out"], "gpu-checkpoint-results", ["out"]),
        (["./-out", "--quick"], "-out", []),
    ],
)
def test_after_dashes_everything_is_the_harness_s_and_never_the_results_folder(
    argv: list[str], results: str, harness: list[str]
) -> None:
    parsed = gpu_checks.arguments(argv)
    assert (parsed.results, parsed.harness) == (Path(results), harness)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--quick", "-out"], "-out: not an option of this script; the harness's options go after --; a results "
                              "folder whose name starts with '-' is given as ./NAME"),
        (["--quick", "-1"], "RESULTS_DIR -1: starts with '-'; a results folder whose name starts with '-' is given "
                            "as ./NAME"),
        # forgotten `--`: neither taken for the folder nor for an abbreviation of --size-per-gpu
        (["--quick", "out", "--size", "1GiB"], "--size: not an option of this script; the harness's options go "
                                               "after --; a results folder whose name starts with '-' is given as "
                                               "./NAME"),
        (["--quick", "out", "again"], "again: not an option of this script; the harness's options go after --; "
                                      "a results folder whose name starts with '-' is given as ./NAME"),
    ],
)  # fmt: skip
def test_an_option_where_the_results_folder_goes_is_one_clear_error(
    tmp_path: Path, argv: list[str], message: str
) -> None:
    result = subprocess.run(
        [str(SCRIPT), *argv], cwd=tmp_path, env=THIS_PYTHON, capture_output=True, text=True, timeout=60, check=False
    )
    assert (result.returncode, result.stderr.splitlines()[-1]) == (
        2,
        f"scripts/gpu-checkpoint-checks.sh: error: {message}",
    )
    assert not list(tmp_path.iterdir()) and not (PROJECT / "out").exists()
