#!/usr/bin/env bash
# Every check of the checkpoint harness that needs an accelerator, on every GPU of a CUDA or ROCm runner.
#
#   scripts/gpu-checkpoint-checks.sh --quick [RESULTS_DIR] [-- HARNESS_OPTIONS...]
#     at most 6 minutes with the installs: the seed's workaround brought back through --setup must fail
#     and be named; every backend bit-exact on every GPU (torchrun, NCCL/RCCL), loaded again on one rank
#     where there are several; one SIGKILL per backend; throughput per rank.
#   scripts/gpu-checkpoint-checks.sh [RESULTS_DIR] [-- HARNESS_OPTIONS...]
#     the full form: the gpu tests, the throughput at the default size, 20 SIGKILLs per backend, the seed.
#
# RESULTS_DIR (default gpu-checkpoint-results, in the working directory) gets summary.json
# (schemas/gpu-checkpoint-results.schema.json) and each step's report, JUnit and output; everything after `--`
# goes to the harness. Only what is missing
# is installed (numpy, psutil, megatron-core; pytest for the full form), with torch, its accelerator libraries,
# numpy and what requires torch pinned as they are: the image's CUDA or ROCm torch is never replaced. The
# harness runs from this checkout, with PYTHON (default python3). The steps, their limits and the results are
# ci_checks_checkpoint/gpu_checks.py's; docs/checkpoint.md explains them.
set -euo pipefail
checkout="$(cd "$(dirname "$0")/.." && pwd)"
# It runs where it is called, not in the checkout: `python -m` puts the working directory first on the path, and
# there the project's own modules are found, its `tests` among them. For the same reason only the package goes on
# the path, not the checkout, whose `tests` would shadow a project's `tests` on its PYTHONPATH.
package_path="$(mktemp -d "${TMPDIR:-/tmp}/ci-checks-path.XXXXXX")"
trap 'rm -rf -- "$package_path"' EXIT
ln -s "$checkout/ci_checks_checkpoint" "$package_path/ci_checks_checkpoint"
ln -s "$checkout/ci_checks" "$package_path/ci_checks"  # the harness reads sizes with the linter's core
export PYTHONPATH="$package_path${PYTHONPATH:+:$PYTHONPATH}"
"${PYTHON:-python3}" -m ci_checks_checkpoint.gpu_checks "$@"
