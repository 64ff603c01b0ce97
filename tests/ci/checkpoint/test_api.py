"""The Python API and its pytest fixture: the harness run in the test's own process after the project's setup
code, with arguments, ran there; the setup replayed in every process the run starts; a timeout that ends
the run's processes; and nothing of the run left in the test's process or on disk afterwards.
"""

from __future__ import annotations

import functools
import json
import multiprocessing.process
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="needs the checkpoint extra: pip install -e '.[checkpoint]'")

from ci_checks_checkpoint import processes  # noqa: E402
from ci_checks_checkpoint.api import Checked, UsageError, check_saves, missing_imports_stubbed  # noqa: E402
from ci_checks_checkpoint.options import installed  # noqa: E402

pytestmark = [
    pytest.mark.checkpoint,
    pytest.mark.skipif(not installed("megatron.core"), reason="needs megatron-core: pip install -e '.[megatron]'"),
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc"),
]

SMALL = {"backends": ["megatron-async"], "size": "1MiB", "tensors": 4}


@pytest.fixture
def megatron_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    """The project's setup swaps Megatron-Core's writer class in this process: put it back afterwards."""
    from megatron.core.dist_checkpointing.strategies import filesystem_async
    from megatron.core.dist_checkpointing.strategies import torch as torch_strategy

    writer = filesystem_async.FileSystemWriterAsync
    monkeypatch.setattr(filesystem_async, "FileSystemWriterAsync", writer)
    monkeypatch.setattr(torch_strategy, "FileSystemWriterAsync", torch_strategy.FileSystemWriterAsync)
    monkeypatch.setattr(writer, "write_preloaded_data", writer.write_preloaded_data)


def test_a_setup_with_arguments_is_caught_here_and_replayed_in_every_process_the_run_starts(
    checkpoint_harness: Callable[..., Checked], megatron_as_it_was: None, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    from ci_checks_checkpoint.examples import rocm_workaround
    from tests.ci.checkpoint.patches import record_imports

    monkeypatch.setenv("CI_CHECKS_TEST_IMPORTS", str(tmp_path / "setups.jsonl"))
    before = set(processes.descendants(os.getpid()))
    temp_dir = multiprocessing.process.current_process()._config.get("tempdir")  # type: ignore[attr-defined]
    # The project's real setup takes arguments: --setup cannot call it, the API calls it with them.
    setup = functools.partial(rocm_workaround.initialize_model_and_optimizer_with, {"lr": 1e-4}, role="actor")
    checked = checkpoint_harness(setup=[setup, record_imports.record_setup], as_platform="rocm", crash_test=1, **SMALL)
    assert checked.exit_code == 1, checked.verdict
    assert checked.verdict.startswith("Verdict: FAIL (exit 1): 1 of ")
    # This process had imported strategies.torch before the setup swapped the class in filesystem_async, as a
    # training process may have: the save went through Megatron-Core's own writer, the swap is named anyway.
    staging = checked.result("megatron-async", "staging")
    assert staging.detail == (
        "rank 0: the project's ROCmFileSystemWriterAsync (ci_checks_checkpoint.examples.rocm_workaround, "
        "ci_checks_checkpoint/examples/rocm_workaround.py:29) replaced filesystem_async.FileSystemWriterAsync"
    )
    assert any(failure.startswith("megatron-async staging: rank 0:") for failure in checked.failures())
    with pytest.raises(AssertionError, match="megatron-async staging"):
        checked.assert_passed()
    assert checked.result("megatron-async", "crash").passed is True
    assert checked.platform["setups"] == [
        "ci_checks_checkpoint.examples.rocm_workaround:initialize_model_and_optimizer_with(...)",
        "tests.ci.checkpoint.patches.record_imports:record_setup",
    ]
    assert json.loads(checked.to_json())["exit_code"] == 1
    # here, then in the crash test's two writer groups and its verifier; the hazard's two writers and verifier
    lines = [json.loads(line) for line in (tmp_path / "setups.jsonl").read_text(encoding="utf-8").splitlines()]
    calls = [line for line in lines if line.get("setup")]
    assert calls[0]["pid"] == os.getpid()
    assert len({call["pid"] for call in calls}) == 1 + 3 + 3
    assert {call["hip"] for call in calls} == {"6.4.0"}
    # nothing of the run outlives the call: processes, the emulation, multiprocessing's helpers, the run folder
    assert torch.version.hip is None
    assert set(processes.descendants(os.getpid())) <= before
    assert multiprocessing.process.current_process()._config.get("tempdir") == temp_dir  # type: ignore[attr-defined]
    assert checked.outcome.cleanup == {"processes_ended": 0, "left_behind": []}
    assert [path.name for path in tmp_path.iterdir()] == ["setups.jsonl"]


def test_a_tool_needing_missing_packages_runs_with_stubs_and_is_judged_on_its_swap(
    checkpoint_harness: Callable[..., Checked], megatron_as_it_was: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The test imports the tool itself (as it would to give a setup its arguments), under stubs; the crash
    # test's processes get it pickled, and unpickle it (importing the tool) with stubs of their own.
    tool = "tests.ci.checkpoint.patches.convert_tool"
    monkeypatch.delitem(sys.modules, tool, raising=False)  # imported afresh, with its stubs
    with missing_imports_stubbed() as stubbed:
        from tests.ci.checkpoint.patches import convert_tool
    assert stubbed[:2] == ["absent_cluster", "absent_serving_engine"]
    argv = list(sys.argv)
    checked = checkpoint_harness(
        setup=convert_tool.main, stub_missing_imports=True, as_platform="rocm", crash_test=1, **SMALL
    )
    assert checked.exit_code == 1, checked.verdict
    assert checked.result("megatron-async", "staging").detail.startswith(
        f"rank 0: the project's ROCmFileSystemWriterAsync ({tool}, tests/ci/checkpoint/patches/convert_tool.py:27) "
        "replaced Megatron-Core's writer class"
    )
    assert checked.result("megatron-async", "crash").passed is True, checked.result("megatron-async", "crash")
    stubbed_imports, setup_exceptions = checked.platform["stubbed_imports"], checked.platform["setup_exceptions"]
    assert isinstance(stubbed_imports, list) and isinstance(setup_exceptions, list)
    assert set(stubbed) <= set(stubbed_imports)
    [raised] = setup_exceptions
    assert (raised["setup"], raised["exception"]) == (
        f"{tool}:main",
        "FileNotFoundError: no Hugging Face checkpoint at checkpoints/hf",
    )
    assert "absent_cluster" not in sys.modules
    assert sys.argv == argv


def test_a_writer_that_never_returns_ends_the_call_at_its_timeout(
    checkpoint_harness: Callable[..., Checked], megatron_as_it_was: None, tmp_path: Path
) -> None:
    before = set(processes.descendants(os.getpid()))
    checked = checkpoint_harness(imports=["tests.ci.checkpoint.patches.hung_writer"], timeout=8, **SMALL)
    [timed_out] = [r for r in checked.results if r.check == "timeout"]
    assert timed_out.detail.startswith("--timeout 8 s reached during megatron-async warm-up save (rank 0, for ")
    assert checked.verdict == f"Verdict: TIMEOUT (exit 1): {timed_out.detail}"
    assert set(processes.descendants(os.getpid())) <= before
    assert list(tmp_path.iterdir()) == []


def test_bad_arguments_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="too few for 16 tensors"):
        check_saves(backends=["dcp-sync"], size=100, workdir=tmp_path)
    with pytest.raises(UsageError, match=r"^setup .*<lambda> cannot be sent to the processes of the crash test"):
        check_saves(setup=lambda: None, crash_test=1, workdir=tmp_path)
    assert list(tmp_path.iterdir()) == []
