"""The harness on a CUDA or ROCm accelerator: no stand-ins, pinned non-blocking staging observed in the
saves themselves, NCCL/RCCL, crash-test writers forked from a fork server that has not touched the
driver.

Skipped without an accelerator. `scripts/gpu-checkpoint-checks.sh` (its full form) runs these, then the
throughput table, the 20-kill crash test and the seed's writer swap, on every GPU of the runner.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="needs the checkpoint extra: pip install -e '.[checkpoint]'")

from ci_checks_checkpoint.options import installed  # noqa: E402
from tests.ci.checkpoint.run import command  # noqa: E402
from tests.ci.conftest import PROJECT  # noqa: E402

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA or ROCm accelerator"),
]

BACKENDS = ["dcp-sync", "dcp-async-thread", "dcp-async-process"]
if installed("megatron.core"):
    BACKENDS.append("megatron-async")
# One run below took 92.2 s on the CPU (2 shared cores; docs/checkpoint.md), times a margin of 3.
RUN_TIMEOUT_S = 3 * 92.2


def run(tmp_path: Path, *args: str, ranks: int = 1) -> dict[str, object]:
    report = tmp_path / "report.json"
    arguments = [*args, "--require", ",".join(BACKENDS), "--report-json", str(report)]
    result = subprocess.run(
        command(*arguments, ranks=ranks),
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    document: dict[str, object] = json.loads(report.read_text(encoding="utf-8"))
    return document


def test_every_backend_verifies_on_the_accelerator_with_pinned_staging(tmp_path: Path) -> None:
    report = run(tmp_path, "--size", "256MiB", "--crash-test", "1")
    platform = report["platform"]
    assert isinstance(platform, dict)
    assert platform["device_kind"] == ("rocm" if torch.version.hip else "cuda")
    assert platform["emulation"] is None
    assert platform["process_group"] == "cpu:gloo,cuda:nccl"
    assert platform["gpu_count"] >= 1
    assert platform["architecture"] and platform["collectives"]
    for backend in BACKENDS[1:]:
        # the seed's path: non-blocking device-to-host copies into pinned memory (then a fork, for Megatron)
        staging = platform["staging"][backend]
        assert (staging["pinned_memory"], staging["non_blocking"]) == (True, True)
    assert platform["staging"]["dcp-async-process"]["shared_memory"] is True
    results = report["results"]
    assert isinstance(results, list)
    for result in results:
        if result["check"] in ("save", "staging", "verify", "crash"):
            assert result["passed"] is True, result
    if "megatron-async" in BACKENDS:
        [staging] = [r for r in results if (r["backend"], r["check"]) == ("megatron-async", "staging")]
        assert "staged tensors are pinned" in staging["detail"]


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two accelerators")
def test_two_ranks_verify_their_shards_over_nccl_and_crash_as_a_group(tmp_path: Path) -> None:
    report = run(tmp_path, "--size", "256MiB", "--crash-test", "1", ranks=2)
    results = report["results"]
    assert isinstance(results, list)
    verified = [r for r in results if r["check"] == "verify"]
    assert [r["backend"] for r in verified] == BACKENDS
    assert all(r["passed"] and r["detail"].startswith("bit-exact on 2 rank(s)") for r in verified)
    crashed = [r for r in results if r["check"] == "crash" and r["backend"] in BACKENDS]
    assert all(r["passed"] and r["detail"].startswith("1 SIGKILLs of 2-rank writers") for r in crashed)
