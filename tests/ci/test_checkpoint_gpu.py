"""The harness on a CUDA or ROCm accelerator: no stand-ins, pinned non-blocking staging, NCCL/RCCL.

Skipped without an accelerator. `scripts/gpu-checkpoint-checks.sh` runs these on one GPU, then
the 1 GiB throughput table and the 20-kill crash test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="needs the checkpoint extra: pip install -e '.[checkpoint]'")

from ci_checks.checkpoint.options import installed  # noqa: E402
from tests.ci.conftest import PROJECT  # noqa: E402

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA or ROCm accelerator"),
]

BACKENDS = ["dcp-sync", "dcp-async-thread", "dcp-async-process"]
if installed("megatron.core"):
    BACKENDS.append("megatron-async")


def run(tmp_path: Path, *args: str, ranks: int = 1) -> dict[str, object]:
    report = tmp_path / "report.json"
    launcher = ["-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={ranks}"]
    command = [sys.executable, *launcher, "-m", "ci_checks.checkpoint", *args, "--report-json", str(report)]
    result = subprocess.run(command, cwd=PROJECT, capture_output=True, text=True, timeout=80, check=False)
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
    for backend in BACKENDS[1:]:
        # the seed's path: non-blocking device-to-host copies into pinned memory (then a fork, for Megatron)
        staging = platform["staging"][backend]
        assert (staging["pinned_memory"], staging["non_blocking"]) == (True, True)
    assert platform["staging"]["dcp-async-process"]["shared_memory"] is True
    results = report["results"]
    assert isinstance(results, list)
    for result in results:
        if result["check"] in ("save", "verify", "crash"):
            assert result["passed"] is True, result


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two accelerators")
def test_two_ranks_verify_their_shards_over_nccl(tmp_path: Path) -> None:
    report = run(tmp_path, "--size", "256MiB", ranks=2)
    results = report["results"]
    assert isinstance(results, list)
    verified = [r for r in results if r["check"] == "verify"]
    assert [r["backend"] for r in verified] == BACKENDS
    assert all(r["passed"] and r["detail"].startswith("bit-exact on 2 rank(s)") for r in verified)
