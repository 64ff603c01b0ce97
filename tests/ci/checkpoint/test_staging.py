"""The seed's regression, brought back the ways the consumer project had it: a subclass of Megatron-Core's
`FileSystemWriterAsync` forcing `non_blocking=False`, installed as
`filesystem_async.FileSystemWriterAsync` (and `strategies.torch`'s) at import (`--import`), or
inside the project's setup functions under `if torch.version.hip:` (`--setup`, with
`--as-platform rocm` on a machine without ROCm). The harness must fail and name the class; without
it the run passes its staging checks (the full run in test_harness.py, which calls the
HIP-guarded setup without the emulation, where it does nothing).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest

pytest.importorskip("torch", reason="needs the checkpoint extra: pip install -e '.[checkpoint]'")

from ci_checks_checkpoint import megatron, project, report, runtime
from ci_checks_checkpoint.options import UsageError, installed
from tests.ci.checkpoint.run import PATCHES, WORKAROUND, run
from tests.ci.conftest import PROJECT

pytestmark = [
    pytest.mark.checkpoint,
    pytest.mark.skipif(not installed("megatron.core"), reason="needs megatron-core: pip install -e '.[megatron]'"),
]

SMALL = ["--backend", "megatron-async", "--size", "1MiB", "--tensors", "4"]
SEED = "tests.ci.checkpoint.patches.rocm_writer.ROCmFileSystemWriterAsync"
SEED_WRITER = (
    "the project's ROCmFileSystemWriterAsync (tests.ci.checkpoint.patches.rocm_writer, "
    "tests/ci/checkpoint/patches/rocm_writer.py:22) replaced Megatron-Core's writer class"
)
SETUP_WRITER = (
    f"the project's ROCmFileSystemWriterAsync ({WORKAROUND}, "
    "ci_checks_checkpoint/examples/rocm_workaround.py:29) replaced Megatron-Core's writer class"
)
# The installed Megatron-Core made into the project's Megatron-LM fork, which stages synchronously on HIP.
FORK = ["--import", f"{PATCHES}.megatron_fork"]
TOOL = f"{PATCHES}.convert_tool"
TOOL_SEED = f"{TOOL}.ROCmFileSystemWriterAsync"
SCHEMA = json.loads((PROJECT / "schemas" / "checkpoint-report.schema.json").read_text(encoding="utf-8"))


def test_the_seed_s_writer_swap_fails_the_run_and_is_named(tmp_path: Path) -> None:
    outcome = run(tmp_path, *SMALL, "--import", f"{PATCHES}.rocm_writer")
    assert outcome.code == 1, outcome.stdout + outcome.stderr
    staging = outcome.result("megatron-async", "staging")
    assert staging["passed"] is False
    assert staging["detail"] == (
        f"rank 0: {SEED_WRITER}; also ROCmFileSystemWriterAsync.preload_tensors; 4 of 4 copies used non_blocking=False"
    )
    assert "ROCmFileSystemWriterAsync" in outcome.stdout
    assert outcome.stdout.splitlines()[-1].startswith(
        "Verdict: FAIL (exit 1): 1 of 3 checks failed: megatron-async staging"
    )
    # the data itself round-trips: only the staging check sees the regression
    assert outcome.result("megatron-async", "verify")["passed"] is True
    seen = outcome.report["platform"]["staging"]["megatron-async"]
    assert (seen["writer"], seen["non_blocking"]) == (SEED, False)


def test_a_project_module_that_does_not_import_is_a_usage_error(tmp_path: Path) -> None:
    outcome = run(tmp_path, *SMALL, "--import", f"{PATCHES}.no_such_patch")
    assert (outcome.code, outcome.stdout, outcome.report) == (2, "", {})
    assert outcome.stderr == (
        f"ci-checks checkpoint: error: --import {PATCHES}.no_such_patch: ModuleNotFoundError: "
        f"No module named '{PATCHES}.no_such_patch'\n"
    )


def test_the_seed_s_swap_inside_a_setup_function_is_caught_through_setup_and_named(tmp_path: Path) -> None:
    # initialize_model_and_optimizer() without its HIP condition: the swap alone, on the CPU
    setup = f"{WORKAROUND}:initialize_model_and_optimizer_on_every_platform"
    outcome = run(tmp_path, *SMALL, "--setup", setup)
    assert outcome.code == 1, outcome.stdout + outcome.stderr
    staging = outcome.result("megatron-async", "staging")
    assert staging["detail"] == f"rank 0: {SETUP_WRITER}; also ROCmFileSystemWriterAsync.preload_tensors"
    assert outcome.report["platform"]["setups"] == [setup]
    outcome.assert_left_nothing_running()


def test_the_hip_only_swap_of_a_conversion_tool_s_main_is_caught_as_rocm(tmp_path: Path) -> None:
    # main() swaps the class in filesystem_async and strategies.torch, only where torch.version.hip is set:
    # --as-platform rocm makes it read as set on this CPU machine, and the HIP branch of its
    # preload_tensors forces every copy to block.
    outcome = run(tmp_path, *SMALL, "--setup", f"{WORKAROUND}:main", "--as-platform", "rocm")
    assert outcome.code == 1, outcome.stdout + outcome.stderr
    staging = outcome.result("megatron-async", "staging")
    assert staging["detail"] == (
        f"rank 0: {SETUP_WRITER}; also ROCmFileSystemWriterAsync.preload_tensors; 4 of 4 copies used non_blocking=False"
    )
    emulated = outcome.report["platform"]["as_platform"]
    assert (emulated["platform"], emulated["hip"], emulated["hip_platform"]) == ("rocm", "6.4.0", "amd")
    assert "torch.version.hip emulated as 6.4.0 (--as-platform rocm)" in outcome.stdout.splitlines()[0]
    assert outcome.result("megatron-async", "verify")["passed"] is True


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (f"{WORKAROUND}:nothing_here", f"--setup {WORKAROUND}:nothing_here: "
         f"{WORKAROUND} has no nothing_here"),
        (f"{WORKAROUND}:torch", f"--setup {WORKAROUND}:torch: torch is a module, not a function"),
        (f"{PATCHES}.no_such:main", f"--setup {PATCHES}.no_such:main: importing {PATCHES}.no_such: "
         f"ModuleNotFoundError: No module named '{PATCHES}.no_such'"),
        (f"{WORKAROUND}:initialize_model_and_optimizer_with",
         f"--setup {WORKAROUND}:initialize_model_and_optimizer_with: it takes arguments (args, role) and is "
         "called with none; a setup that needs arguments goes through the Python API "
         "(ci_checks_checkpoint.api.check_saves)"),
        ("json:loads", "--setup json:loads: it takes arguments (s) and is called with none; "),
        ("sys:exit", "--setup sys:exit: raised SystemExit (sys.exit(None))"),
    ],
)  # fmt: skip
def test_a_setup_that_cannot_be_called_is_named(setup: str, message: str) -> None:
    # In this process, as each rank resolves them; on the command line they are one line and exit 2, as
    # test_a_project_module_that_does_not_import_is_a_usage_error shows for --import.
    with pytest.raises(UsageError) as raised:
        project.call_setups([setup])
    assert str(raised.value).startswith(message)


# -- whose code staged: the project's, or the installed Megatron-Core's own ------------------------------------


def _the_fork_stages_itself() -> str:
    """The staging row of a run against the fork with nothing of the project's in the save path."""
    return (
        f"on 1 rank(s): Megatron-Core {megatron.version()} stages synchronously on HIP itself: its own "
        "FileSystemWriterAsync.preload_tensors made 4 of 4 copies with non_blocking=False; no project code replaced "
        "the writer, its preload_tensors or the save strategy; expected: any (the default on ROCm)"
    )


def test_the_fork_s_own_synchronous_staging_passes_on_rocm_with_a_note_naming_megatron_core(tmp_path: Path) -> None:
    # The seed project's tree after it removed its workaround, against its Megatron-LM fork, whose own
    # preload_tensors copies with non_blocking=False on HIP: nothing of the project's is in the save path.
    setup = f"{PATCHES}.seed_after:main"
    outcome = run(tmp_path, *SMALL, *FORK, "--setup", setup, "--as-platform", "rocm")
    assert outcome.code == 0, outcome.stdout + outcome.stderr
    staging = outcome.result("megatron-async", "staging")
    assert staging["detail"] == _the_fork_stages_itself()
    seen = outcome.report["platform"]["staging"]["megatron-async"]
    assert seen["made_by"]["owner"] == "Megatron-Core"
    assert seen["made_by"]["file"].endswith("megatron/core/dist_checkpointing/strategies/filesystem_async.py")
    assert (seen["replaced"], seen["blocking_copies"]) == ([], 4)
    assert outcome.report["platform"]["expect_staging"] == {"expected": "any", "chosen_by": "the default on ROCm"}


def test_the_seed_s_swap_fails_against_the_fork_naming_the_project_s_class(tmp_path: Path) -> None:
    # The tree before the removal, against the same fork: the project's class is in the save path, whatever
    # Megatron-Core does itself.
    outcome = run(tmp_path, *SMALL, *FORK, "--setup", f"{WORKAROUND}:main", "--as-platform", "rocm")
    assert outcome.code == 1, outcome.stdout + outcome.stderr
    staging = outcome.result("megatron-async", "staging")
    assert staging["detail"] == (
        f"rank 0: {SETUP_WRITER}; also ROCmFileSystemWriterAsync.preload_tensors; 4 of 4 copies used non_blocking=False"
    )
    replaced = outcome.report["platform"]["staging"]["megatron-async"]["replaced"]
    assert [(r["owner"], r["name"], r["line"]) for r in replaced] == [
        ("project", f"{WORKAROUND}.ROCmFileSystemWriterAsync", 29),
        ("project", f"{WORKAROUND}.ROCmFileSystemWriterAsync.preload_tensors", 32),
    ]


def test_a_job_that_expects_pinned_staging_fails_the_fork_naming_megatron_core_not_the_project(tmp_path: Path) -> None:
    setup = f"{PATCHES}.seed_after:main"
    args = [*SMALL, *FORK, "--setup", setup, "--as-platform", "rocm", "--expect-staging", "pinned"]
    outcome = run(tmp_path, *args)
    assert outcome.code == 1, outcome.stdout + outcome.stderr
    assert outcome.result("megatron-async", "staging")["detail"] == (
        f"rank 0: Megatron-Core {megatron.version()}'s own FileSystemWriterAsync.preload_tensors: "
        "4 of 4 copies used non_blocking=False; expected: pinned (--expect-staging)"
    )


def test_a_partial_bound_to_a_large_argument_makes_a_short_row(tmp_path: Path) -> None:
    # Its repr is the whole table it binds (once a 17,248-character row); the row names the class and the function.
    outcome = run(tmp_path, *SMALL, "--import", f"{PATCHES}.partial_preload")
    assert outcome.code == 1, outcome.stdout + outcome.stderr
    staging = outcome.result("megatron-async", "staging")
    assert staging["detail"] == (
        "rank 0: the project's BoundPreloadWriter (tests.ci.checkpoint.patches.partial_preload, "
        "tests/ci/checkpoint/patches/partial_preload.py:22) replaced Megatron-Core's writer class; also _preload; "
        "4 of 4 copies used non_blocking=False"
    )
    seen = outcome.report["platform"]["staging"]["megatron-async"]
    assert seen["preload"] == "tests.ci.checkpoint.patches.partial_preload._preload"
    assert "tensor(" not in outcome.stdout and len(seen["detail"]) < 1000


def test_a_row_longer_than_the_limit_is_cut_and_says_where_the_rest_is() -> None:
    cut = report.row("x" * 5000)
    assert len(cut) == report.ROW_LIMIT
    assert cut.endswith(" [...] (the whole: platform.staging)")
    assert report.row("short") == "short"


# -- --as-platform rocm[:VERSION]: what ROCm code reads -----------------------------------------------------------


def test_rocm_gates_beyond_torch_version_hip_are_seen_under_the_emulation(tmp_path: Path) -> None:
    # ROCM_PATH (a folder saying the release), HIP_PLATFORM, torch.cuda.is_available() and a version compare:
    # all hold for the project's setup, which then swaps its writer in; the harness's own saves stay on the CPU.
    log = tmp_path / "gates.jsonl"
    args = [*SMALL, "--setup", f"{PATCHES}.rocm_gates:swap_on_old_rocm", "--as-platform", "rocm:6.2.4"]
    outcome = run(tmp_path, *args, env={"CI_CHECKS_TEST_IMPORTS": str(log)})
    assert outcome.code == 1, outcome.stdout + outcome.stderr
    [gates] = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert {name: value for name, value in gates.items() if name != "pid"} == {
        "rocm_path": True,
        "rocm_release": True,
        "hip_platform": True,
        "cuda_available": True,
        "hip_older_than_6_3": True,
    }
    assert outcome.result("megatron-async", "staging")["detail"].startswith(
        f"rank 0: the project's ROCmFileSystemWriterAsync ({WORKAROUND}, "
    )
    assert outcome.result("megatron-async", "verify")["passed"] is True
    platform = outcome.report["platform"]
    assert (platform["device_kind"], platform["as_platform"]["hip"]) == ("cpu", "6.2.4")
    assert platform["as_platform"]["cuda_available_to_project"] is True
    outcome.assert_left_nothing_running()


def test_the_emulation_answers_the_project_and_leaves_the_libraries_and_the_process_as_they_were(
    tmp_path: Path,
) -> None:
    import torch

    from tests.ci.checkpoint.patches import rocm_gates

    real = torch.cuda.is_available
    before = {name: os.environ.get(name) for name in ("ROCM_PATH", "HIP_PLATFORM")}
    assert project.emulate("rocm:6.2.4", tmp_path, ("tests",)) == "6.2.4"
    try:
        assert all(rocm_gates.gates().values()), rocm_gates.gates()
        # the harness's own code, and the libraries', read the real device
        assert project.emulation_facts("rocm:6.2.4") == {
            "platform": "rocm",
            "hip": "6.2.4",
            "rocm_path": str(tmp_path / "rocm-emulated"),
            "hip_platform": "amd",
            "cuda_available_to_project": True,
        }
        if not real():  # the harness's own code reads the real answer: no CUDA stand-ins refused on this CPU
            with runtime.megatron_device_calls(torch.device("cpu")):
                pass
        assert project.emulate("rocm:6.2.4", tmp_path) is None  # once per process
    finally:
        project.end_emulation()
    assert torch.cuda.is_available is real and torch.version.hip is None
    assert {name: os.environ.get(name) for name in ("ROCM_PATH", "HIP_PLATFORM")} == before


# -- a real project's setup: missing packages stubbed, a raise after the swap ------------------------------------


def test_a_tool_needing_missing_packages_is_judged_on_the_swap_it_made_before_it_raised(tmp_path: Path) -> None:
    # The conversion tool as a real project has it: its module imports two packages no registry has and
    # megatron.training (not in megatron-core's wheel); main() swaps the writer on HIP, then parses its command
    # line (the harness's argv would make argparse exit 2: it sees only its own name, so gets its defaults) and
    # fails to build the model. The swap is judged; the exception and the stubs are reported beside it.
    outcome = run(tmp_path, *SMALL, "--setup", f"{TOOL}:main", "--stub-missing-imports", "--as-platform", "rocm")
    assert outcome.code == 1, outcome.stdout + outcome.stderr
    staging = outcome.result("megatron-async", "staging")
    assert staging["passed"] is False
    assert staging["detail"] == (
        "rank 0: the project's ROCmFileSystemWriterAsync (tests.ci.checkpoint.patches.convert_tool, "
        "tests/ci/checkpoint/patches/convert_tool.py:27) replaced Megatron-Core's writer class; also "
        "ROCmFileSystemWriterAsync.preload_tensors; 4 of 4 copies used non_blocking=False"
    )
    assert outcome.result("megatron-async", "verify")["passed"] is True
    platform = outcome.report["platform"]
    missing_training = (
        ["megatron.training", "megatron.training.arguments"] if not installed("megatron.training") else []
    )
    assert platform["stubbed_imports"] == [
        "absent_cluster",
        "absent_serving_engine",
        "absent_serving_engine.srt",
        "absent_serving_engine.srt.server_args",
        *missing_training,
    ]
    where = "tests/ci/checkpoint/patches/convert_tool.py:51 in _build_model"
    assert platform["setup_exceptions"] == [
        {
            "setup": f"{TOOL}:main",
            "exception": "FileNotFoundError: no Hugging Face checkpoint at checkpoints/hf",
            "where": where,
            "replaced": [
                f"strategies.filesystem_async.FileSystemWriterAsync (now {TOOL_SEED})",
                f"strategies.filesystem_async.FileSystemWriterAsync.preload_tensors (now {TOOL_SEED}.preload_tensors)",
                f"strategies.torch.FileSystemWriterAsync (now {TOOL_SEED})",
            ],
        }
    ]
    jsonschema.validate(outcome.report, SCHEMA)
    notes = [line for line in outcome.stdout.splitlines() if line.startswith("note: ")]
    assert notes[0] == "note: stubbed, not installed here (--stub-missing-imports): " + ", ".join(
        platform["stubbed_imports"]
    )
    assert notes[1].startswith(
        f"note: setup {TOOL}:main raised FileNotFoundError: no Hugging Face checkpoint at checkpoints/hf ({where}) "
        f"after it replaced strategies.filesystem_async.FileSystemWriterAsync (now {TOOL_SEED}), "
    )
    assert outcome.stdout.splitlines()[-1].startswith("Verdict: FAIL (exit 1): 1 of 3 checks failed: megatron-async")
    outcome.assert_left_nothing_running()


def test_without_stub_missing_imports_the_tool_is_a_usage_error_naming_the_missing_package(tmp_path: Path) -> None:
    outcome = run(tmp_path, *SMALL, "--setup", f"{TOOL}:main", "--as-platform", "rocm")
    assert (outcome.code, outcome.stdout, outcome.report) == (2, "", {}), outcome.stderr
    assert outcome.stderr == (
        f"ci-checks checkpoint: error: --setup {TOOL}:main: importing {TOOL}: ModuleNotFoundError: No module named "
        "'absent_cluster' (absent_cluster is not installed here: --stub-missing-imports gives the project's code a "
        "stub of it)\n"
    )


def test_a_setup_that_raises_before_it_swaps_anything_stays_a_usage_error(tmp_path: Path) -> None:
    setup = f"{TOOL}:main_checking_its_arguments_first"
    outcome = run(tmp_path, *SMALL, "--setup", setup, "--stub-missing-imports", "--as-platform", "rocm")
    assert (outcome.code, outcome.stdout, outcome.report) == (2, "", {}), outcome.stderr
    assert outcome.stderr.splitlines()[-1] == (  # Megatron-Core's import may warn before it
        f"ci-checks checkpoint: error: --setup {setup}: raised FileNotFoundError: no Hugging Face checkpoint at "
        "checkpoints/hf (tests/ci/checkpoint/patches/convert_tool.py:51 in _build_model); --setup-may-raise judges "
        "the run on what is in effect instead"
    )


def test_the_tool_after_the_removal_passes_against_the_fork_with_setup_may_raise(tmp_path: Path) -> None:
    # The seed project's tool after it removed its workaround, against its Megatron-LM fork: main() swaps nothing
    # and still fails to build the model here. --setup-may-raise judges the run on what is in effect, Megatron-Core's
    # own synchronous staging on HIP, and reports the exception beside the verdict.
    setup = f"{TOOL}:main_after_the_removal"
    args = [*SMALL, *FORK, "--setup", setup, "--stub-missing-imports", "--setup-may-raise", "--as-platform", "rocm"]
    outcome = run(tmp_path, *args)
    assert outcome.code == 0, outcome.stdout + outcome.stderr
    assert outcome.result("megatron-async", "staging")["detail"] == _the_fork_stages_itself()
    platform = outcome.report["platform"]
    assert platform["setup_exceptions"] == [
        {
            "setup": setup,
            "exception": "FileNotFoundError: no Hugging Face checkpoint at checkpoints/hf",
            "where": "tests/ci/checkpoint/patches/convert_tool.py:51 in _build_model",
            "replaced": [],
        }
    ]
    jsonschema.validate(outcome.report, SCHEMA)
    assert (
        f"note: setup {setup} raised FileNotFoundError: no Hugging Face checkpoint at checkpoints/hf "
        "(tests/ci/checkpoint/patches/convert_tool.py:51 in _build_model) having replaced nothing of Megatron-Core's "
        "(--setup-may-raise): the checks above judge what is in effect"
    ) in outcome.stdout.splitlines()
    outcome.assert_left_nothing_running()


def test_the_tool_before_the_removal_fails_against_the_fork_naming_its_class(tmp_path: Path) -> None:
    args = [*SMALL, *FORK, "--setup", f"{TOOL}:main", "--stub-missing-imports", "--setup-may-raise", "--as-platform"]
    outcome = run(tmp_path, *args, "rocm")
    assert outcome.code == 1, outcome.stdout + outcome.stderr
    assert outcome.result("megatron-async", "staging")["detail"].startswith(
        "rank 0: the project's ROCmFileSystemWriterAsync (tests.ci.checkpoint.patches.convert_tool, "
    )


def test_a_setup_kept_inside_a_library_gets_the_emulation_for_its_own_module_only() -> None:
    # The seed's workaround lives in the harness's package: naming that package whole would make the harness's own
    # code read a CUDA device under --as-platform rocm on a CPU runner.
    setups = [f"{WORKAROUND}:main", "tools.convert_hf_to_torch_dist:main"]
    assert project.project_packages(["miles.backends"], setups) == ("miles", WORKAROUND, "tools")
