"""The seed's regression, brought back the ways the consumer project had it: a subclass of Megatron-Core's
`FileSystemWriterAsync` forcing `non_blocking=False`, installed as
`filesystem_async.FileSystemWriterAsync` (and `strategies.torch`'s) at import (`--import`), or
inside the project's setup functions under `if torch.version.hip:` (`--setup`, with
`--as-platform rocm` on a machine without ROCm). The harness must fail and name the class; without
it the run passes its staging checks (the full run in test_checkpoint_harness.py, which calls the
HIP-guarded setup without the emulation, where it does nothing).
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch", reason="needs the checkpoint extra: pip install -e '.[checkpoint]'")

from ci_checks.checkpoint import project
from ci_checks.checkpoint.options import UsageError, installed
from tests.ci.checkpoint_run import PATCHES, WORKAROUND, run

pytestmark = [
    pytest.mark.checkpoint,
    pytest.mark.skipif(not installed("megatron.core"), reason="needs megatron-core: pip install -e '.[megatron]'"),
]

SMALL = ["--backend", "megatron-async", "--size", "1MiB", "--tensors", "4"]
SEED = "tests.ci.checkpoint_patches.rocm_writer.ROCmFileSystemWriterAsync"
SETUP_SEED = "ci_checks.checkpoint.examples.rocm_workaround.ROCmFileSystemWriterAsync"
OWN = "megatron.core.dist_checkpointing.strategies.filesystem_async.FileSystemWriterAsync"


def test_the_seed_s_writer_swap_fails_the_run_and_is_named(tmp_path: Path) -> None:
    outcome = run(tmp_path, *SMALL, "--import", f"{PATCHES}.rocm_writer")
    assert outcome.code == 1, outcome.stdout + outcome.stderr
    staging = outcome.result("megatron-async", "staging")
    assert staging["passed"] is False
    assert staging["detail"] == (
        f"rank 0: the save instantiated {SEED}, not Megatron-Core's own "
        "megatron.core.dist_checkpointing.strategies.filesystem_async.FileSystemWriterAsync; "
        f"its preload_tensors is {SEED}.preload_tensors, which overrides Megatron-Core's; "
        "4 of 4 copies in preload_tensors used non_blocking=False"
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
    assert staging["detail"] == (
        f"rank 0: the save instantiated {SETUP_SEED}, not Megatron-Core's own {OWN}; "
        f"its preload_tensors is {SETUP_SEED}.preload_tensors, which overrides Megatron-Core's"
    )
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
        f"rank 0: the save instantiated {SETUP_SEED}, not Megatron-Core's own {OWN}; "
        f"its preload_tensors is {SETUP_SEED}.preload_tensors, which overrides Megatron-Core's; "
        "4 of 4 copies in preload_tensors used non_blocking=False"
    )
    assert outcome.report["platform"]["as_platform"] == {"platform": "rocm", "hip": "6.4.0"}
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
         "(ci_checks.checkpoint.api.check_saves)"),
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
