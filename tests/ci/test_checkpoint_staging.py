"""The seed's regression, brought back the way the consumer project had it: a subclass of Megatron-Core's
`FileSystemWriterAsync` forcing `non_blocking=False`, installed as
`filesystem_async.FileSystemWriterAsync` before `strategies.torch` is imported. With the
project's module given to `--import` the harness must fail and name the class; without it the
run passes its staging checks (the full run in test_checkpoint_harness.py, which imports a
harmless project module the same way).
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch", reason="needs the checkpoint extra: pip install -e '.[checkpoint]'")

from ci_checks.checkpoint.options import installed
from tests.ci.checkpoint_run import PATCHES, run

pytestmark = [
    pytest.mark.checkpoint,
    pytest.mark.skipif(not installed("megatron.core"), reason="needs megatron-core: pip install -e '.[megatron]'"),
]

SMALL = ["--backend", "megatron-async", "--size", "1MiB", "--tensors", "4"]
SEED = "tests.ci.checkpoint_patches.rocm_writer.ROCmFileSystemWriterAsync"


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
