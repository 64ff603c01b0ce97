#!/usr/bin/env bash
# Every check of the checkpoint harness that needs an accelerator, on every GPU of a CUDA or ROCm runner.
#
#   scripts/gpu-checkpoint-checks.sh --quick RESULTS_DIR [-- HARNESS_OPTIONS...]
#     at most 6 minutes with the installs: the seed's workaround brought back through --setup must fail
#     and be named; every backend bit-exact on every GPU (torchrun, NCCL/RCCL), loaded again on one rank
#     where there are several; one SIGKILL per backend; throughput per rank.
#   scripts/gpu-checkpoint-checks.sh RESULTS_DIR [-- HARNESS_OPTIONS...]
#     the full form: the gpu tests, the throughput at the default size, 20 SIGKILLs per backend, the seed.
#
# RESULTS_DIR (default gpu-checkpoint-results) gets summary.json (schemas/gpu-checkpoint-results.schema.json)
# and each step's report, JUnit and output. Only what is missing is installed (numpy, psutil, megatron-core;
# pytest for the full form), with every installed distribution pinned as it is: the image's CUDA or ROCm
# torch is never replaced. The harness runs from this checkout. The steps, their limits and the results
# are ci_checks/checkpoint/gpu_checks.py's; docs/checkpoint.md explains them.
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
exec "${PYTHON:-python3}" -m ci_checks.checkpoint.gpu_checks "$@"
