#!/usr/bin/env bash
# Every check of the checkpoint harness that needs an accelerator, on one CUDA or ROCm GPU:
#   1. the gpu-marked tests (no CPU stand-ins, pinned staging observed in the saves, NCCL/RCCL,
#      crash-test writers forked from a fork server using the device);
#   2. the throughput table at the default size (8 GiB where memory allows), every backend required;
#   3. the crash test: 20 SIGKILLs per backend of 256 MiB saves, every backend required;
#   4. the seed's writer swap brought back with --import: the run must fail (exit 1) naming it.
# Needs `pip install -e '.[dev,checkpoint,megatron]'` with a CUDA or ROCm build of torch.
# Usage: scripts/gpu-checkpoint-checks.sh [RESULTS_DIR]   (default: gpu-checkpoint-results)
#
# Timeouts: each step's duration measured on the CPU (2 shared cores, torch 2.13.0+cpu,
# megatron-core 0.16.1; docs/checkpoint.md has the table), times a margin of 3.
#   step 1: measured 92.2 s on the CPU, x 3 = 277 s (its one-GPU test: torchrun, 256 MiB, a one-kill crash test)
#   step 2: measured 874.1 s on the CPU, x 3 = 2623 s (8 GiB: 1 GiB took 63.6 s and 2 GiB 179.4 s, so
#           63.6 s + 7 x 115.8 s; 8 GiB did not fit beside the other work on the 23 GiB CPU machine)
#   step 3: measured 473.4 s on the CPU, x 3 = 1421 s
#   step 4: measured 26.9 s on the CPU, x 3 = 81 s
set -euo pipefail
cd "$(dirname "$0")/.."
results="${1:-gpu-checkpoint-results}"
mkdir -p "$results"
export CUDA_VISIBLE_DEVICES="${CUDA_VISIBLE_DEVICES:-0}"
all=dcp-sync,dcp-async-thread,dcp-async-process,megatron-async

if ! python -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)'; then
  echo "no CUDA or ROCm accelerator is visible to torch" >&2
  exit 2
fi

status=0
# step NAME SECONDS EXPECTED_EXIT COMMAND...: the command's output in RESULTS_DIR/NAME.txt.
step() {
  local name=$1 limit=$2 expected=$3 code=0
  shift 3
  echo "== $name (timeout ${limit} s)"
  timeout --kill-after=30 "$limit" "$@" > "$results/$name.txt" 2>&1 || code=$?
  grep -E '^(Verdict|ci-checks checkpoint|[0-9]+ (passed|failed))' "$results/$name.txt" || true
  if [ "$code" -eq 124 ] || [ "$code" -eq 137 ]; then
    echo "$name: timed out after $limit s" >&2
    status=1
  elif [ "$code" -ne "$expected" ]; then
    echo "$name: exit $code, expected $expected; see $results/$name.txt" >&2
    status=1
  fi
}

step gpu-tests 277 0 python -m pytest -q -m gpu tests/ci/test_checkpoint_gpu.py
step throughput 2623 0 python -m ci_checks.checkpoint --require "$all" \
  --report-json "$results/throughput.json" --junit "$results/throughput.xml"
step crash 1421 0 python -m ci_checks.checkpoint --require "$all" --size 256MiB --crash-test 20 \
  --report-json "$results/crash.json" --junit "$results/crash.xml"
step seed-swap 81 1 python -m ci_checks.checkpoint --backend megatron-async --size 256MiB \
  --import tests.ci.checkpoint_patches.rocm_writer --report-json "$results/seed-swap.json"
if ! grep -q "ROCmFileSystemWriterAsync" "$results/seed-swap.txt"; then
  echo "seed-swap: the failure does not name ROCmFileSystemWriterAsync" >&2
  status=1
fi
echo "results in $results; record the date, device, versions and tables in docs/checkpoint.md"
exit "$status"
