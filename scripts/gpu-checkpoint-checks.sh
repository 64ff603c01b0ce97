#!/usr/bin/env bash
# Every check of the checkpoint harness that needs an accelerator, on one CUDA or ROCm GPU,
# in under five minutes:
#   1. the gpu-marked tests (no CPU stand-ins, pinned non-blocking staging, NCCL/RCCL group);
#   2. the throughput table on a 1 GiB state dict;
#   3. the crash test with 20 SIGKILLs per backend and the in-place hazard (64 MiB).
# Needs `pip install -e '.[dev,checkpoint,megatron]'` with a CUDA or ROCm build of torch.
# Usage: scripts/gpu-checkpoint-checks.sh [RESULTS_DIR]   (default: gpu-checkpoint-results)
set -euo pipefail
cd "$(dirname "$0")/.."
results="${1:-gpu-checkpoint-results}"
mkdir -p "$results"
export CUDA_VISIBLE_DEVICES="${CUDA_VISIBLE_DEVICES:-0}"

python - <<'PY' | tee "$results/platform.txt"
import datetime, sys, torch
if not torch.cuda.is_available():
    sys.exit("no CUDA or ROCm accelerator is visible to torch")
runtime = f"HIP {torch.version.hip}" if torch.version.hip else f"CUDA {torch.version.cuda}"
print(datetime.date.today(), torch.cuda.get_device_name(0), f"torch {torch.__version__}", runtime)
PY

status=0
timeout 90 python -m pytest -q -m gpu tests/ci/test_checkpoint_gpu.py || status=1
timeout 60 python -m ci_checks.checkpoint --size 1GiB \
  --report-json "$results/throughput.json" --junit "$results/throughput.xml" | tee "$results/throughput.txt" || status=1
timeout 150 python -m ci_checks.checkpoint --size 64MiB --crash-test 20 \
  --report-json "$results/crash.json" --junit "$results/crash.xml" | tee "$results/crash.txt" || status=1
echo "results in $results; record date, device, versions and the tables in docs/checkpoint.md"
exit "$status"
