"""What `scripts/gpu-checkpoint-checks.sh` runs on a GPU runner, and the results folder it writes. No torch here:
every check is a run of the harness in a process of its own.

--quick, one call of at most QUICK_BUDGET_S (6 minutes) with the installs, on every visible GPU:
  seed   the seed's workaround brought back through --setup, in the shape its conversion tool had it
         (ci_checks_checkpoint/examples/rocm_workaround.py:main, under `if torch.version.hip:`; with
         --as-platform rocm where the build has no HIP): the run must fail (exit 1) and name
         ROCmFileSystemWriterAsync;
  quick  every backend required, on every visible GPU through torchrun (NCCL, RCCL on ROCm), 512 MiB
         per GPU, each checkpoint verified on every rank and loaded again on one rank when there
         are several, one SIGKILL per backend, throughput per rank against its references.
The full form (nightly): the gpu tests, the throughput at the default size, 20 SIGKILLs per backend, the
seed's swap; each step under the limit docs/checkpoint.md derives.

Installs: only what is missing (numpy, psutil, megatron-core; pytest for the full form), with torch, its
accelerator libraries, numpy and whatever requires torch pinned as they are (`pip install --constraint`):
the image's CUDA or ROCm build of torch, and what was built against it, are never replaced; anything else
(`packaging`, say) may be upgraded where a new install needs it. The harness runs from this checkout;
ci-checks itself is not installed.

RESULTS/summary.json (schemas/gpu-checkpoint-results.schema.json) says what ran, how long it took, what
each step was expected to do and did, and the verdict; beside it each step's report (STEP.json,
JUnit STEP.xml) and output (STEP.txt), and constraints.txt. It is written again after each step, so a
script that is killed leaves what it had.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ci_checks.core.source import parse_size
from ci_checks_checkpoint.options import BACKENDS, MEGATRON_ASYNC
from ci_checks_checkpoint.supervisor import visible_gpus

QUICK_BUDGET_S = 360.0
INSTALL_LIMIT_S = 120.0  # the installs' part of the budget; what they leave goes to the checks
SEED_LIMIT_S = 90.0
# What the summary needs at the end, and the shell's own start: kept out of the checks' time.
END_MARGIN_S = 15.0
# Past a step's own --timeout the harness still writes its reports and ends its processes; after this
# much more the step is killed.
BACKSTOP_S = 30.0
QUICK_SIZE_PER_GPU = "512MiB"
QUICK_CRASH_SIZE = "64MiB"
SEED_SETUP = "ci_checks_checkpoint.examples.rocm_workaround:main"
SEED_CLASS = "ROCmFileSystemWriterAsync"
REQUIRE_ALL = ",".join(BACKENDS)
# The full form's steps and limits: docs/checkpoint.md has how each follows from its measured duration.
FULL_LIMITS_S = {"gpu-tests": 277.0, "throughput": 2623.0, "crash": 1421.0, "seed": 81.0}
_GPU_TESTS = str(Path(__file__).resolve().parents[1] / "tests" / "ci" / "checkpoint" / "test_gpu.py")  # in the checkout
_PACKAGES = {"numpy": "numpy", "psutil": "psutil", "megatron.core": "megatron-core>=0.16,<0.17"}
# What an install must never change (PEP 503 names): torch, the accelerator libraries its build runs on (CUDA's
# nvidia-* and cuda-* wheels, Triton, ROCm's SMI), and numpy, whose binary interface torch and the image's compiled
# extensions were built against. Whatever requires torch is pinned too (torchvision, Transformer Engine, the
# image's Megatron-LM): it was built or tested against this torch. Nothing else is: megatron-core needs
# packaging>=24.2, and an image with an older packaging must still get it.
_NEVER_CHANGED = re.compile(r"torch|numpy|triton|pytorch-triton-rocm|amdsmi|nvidia-.+|cuda-.+")
_REQUIREMENT_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")


@dataclass
class Step:
    name: str
    command: list[str]
    expected_exit_code: int
    limit_s: float
    exit_code: int | None = None  # None: killed at the backstop
    wall_s: float = 0.0
    report: str | None = None  # the harness's JSON report, in the results folder
    passed: bool = False
    detail: str = ""


@dataclass
class Summary:
    mode: str
    results: Path
    gpus: int
    ranks: int
    budget_s: float | None
    started: float = field(default_factory=time.time)
    steps: list[Step] = field(default_factory=list)
    installs: dict[str, Any] = field(default_factory=dict)
    checks: dict[str, bool | None] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return all(step.passed for step in self.steps) and all(found is not False for found in self.checks.values())

    def write(self) -> None:
        document = {
            "version": 1,
            "mode": self.mode,
            "passed": self.passed,
            "gpus": self.gpus,
            "ranks": self.ranks,
            "budget_s": self.budget_s,
            "wall_s": round(time.time() - self.started, 1),
            "installs": self.installs,
            "steps": [asdict(step) for step in self.steps],
            "checks": self.checks,
        }
        partial = self.results / ".summary.json"
        partial.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        partial.rename(self.results / "summary.json")


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requires_torch(distribution: importlib.metadata.Distribution) -> bool:
    for requirement in distribution.requires or []:
        named = _REQUIREMENT_NAME.match(requirement.strip())
        if named and _normalized(named.group()) == "torch":
            return True
    return False


def _pinned_as_they_are() -> list[str]:
    """A constraint for each installed distribution that must not change (the first on `sys.path` where a name is
    installed twice): `pip install --constraint` then changes none of them."""
    pinned: dict[str, str] = {}
    for distribution in importlib.metadata.distributions():
        name = distribution.metadata["Name"]
        if not name or not distribution.version:
            continue
        if _NEVER_CHANGED.fullmatch(_normalized(name)) or _requires_torch(distribution):
            pinned.setdefault(_normalized(name), f"{name}=={distribution.version}")
    return sorted(pinned.values())


def _missing(quick: bool) -> list[str]:
    modules = dict(_PACKAGES) if quick else {**_PACKAGES, "pytest": "pytest"}
    found = []
    for module, requirement in modules.items():
        try:
            present = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            present = False
        if not present:
            found.append(requirement)
    return found


def install(summary: Summary, skip: bool, quick: bool) -> bool:
    """Install what is missing, never replacing torch or what depends on its build; False when that failed."""
    constraints = summary.results / "constraints.txt"
    constraints.write_text("\n".join(_pinned_as_they_are()) + "\n", encoding="utf-8")
    missing = _missing(quick)
    command = [sys.executable, "-m", "pip", "install", "--constraint", str(constraints), *missing]
    summary.installs = {
        "missing": missing,
        "command": command if missing else None,
        "torch": next(
            (line for line in constraints.read_text().splitlines() if line.lower().startswith("torch==")), None
        ),
        "skipped": skip,
        "wall_s": 0.0,
        "passed": True,
    }
    if skip or not missing:
        return True
    began = time.monotonic()
    try:
        code = subprocess.run(command, timeout=INSTALL_LIMIT_S, check=False).returncode
    except subprocess.TimeoutExpired:
        code = None
    summary.installs.update(wall_s=round(time.monotonic() - began, 1), passed=code == 0, exit_code=code)
    return code == 0


def _run(step: Step, results: Path) -> None:
    """Run the step's command, its output into STEP.txt, killed with its whole session at the backstop."""
    began = time.monotonic()
    with (results / f"{step.name}.txt").open("wb") as output:
        process = subprocess.Popen(
            step.command, stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
        )
        try:
            step.exit_code = process.wait(timeout=step.limit_s + BACKSTOP_S)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            step.exit_code = None
    step.wall_s = round(time.monotonic() - began, 1)


def _report(results: Path, step: Step) -> dict[str, Any]:
    if step.report is None:
        return {}
    try:
        found: dict[str, Any] = json.loads((results / step.report).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found


def _rows(report: dict[str, Any], check: str) -> dict[str, dict[str, Any]]:
    return {row["backend"]: row for row in report.get("results", []) if row["check"] == check}


def _judge_step(step: Step, results: Path) -> None:
    report = _report(results, step)
    verdict = report.get("verdict", f"no report; see {step.name}.txt")
    if step.exit_code is None:
        step.passed, step.detail = False, f"killed after {step.limit_s + BACKSTOP_S:.0f} s; {verdict}"
        return
    step.passed = step.exit_code == step.expected_exit_code
    step.detail = f"exit {step.exit_code}, expected {step.expected_exit_code}: {verdict}"
    if step.name == "seed" and step.passed:
        staging = _rows(report, "staging").get(MEGATRON_ASYNC, {})
        step.passed = staging.get("passed") is False and SEED_CLASS in staging.get("detail", "")
        step.detail += "" if step.passed else f"; the megatron-async staging row does not name {SEED_CLASS}"


def quick_checks(quick: dict[str, Any], seed: dict[str, Any], gpus: int, ranks: int) -> dict[str, bool | None]:
    """What the quick form promises, from the two reports: each True, False, or None where it does not apply."""
    verified, resharded = _rows(quick, "verify"), _rows(quick, "reshard")
    crashed, measured = _rows(quick, "crash"), _rows(quick, "throughput")
    world_size = quick.get("platform", {}).get("world_size")
    staging = _rows(seed, "staging").get(MEGATRON_ASYNC, {})
    return {
        "seed_regression_caught": staging.get("passed") is False and SEED_CLASS in staging.get("detail", ""),
        "every_backend_bit_exact": all(verified.get(b, {}).get("passed") is True for b in BACKENDS),
        "one_kill_per_backend": all(
            crashed.get(b, {}).get("passed") is True and crashed[b]["detail"].startswith("1 SIGKILLs") for b in BACKENDS
        ),
        "every_gpu_used": world_size == (gpus or ranks),
        "multi_rank": (
            None
            if (gpus or ranks) < 2
            else world_size == (gpus or ranks) and all(resharded.get(b, {}).get("passed") is True for b in BACKENDS)
        ),
        "throughput": all(len(measured.get(b, {}).get("ranks", [])) == world_size for b in BACKENDS),
    }


def _harness(*args: str) -> list[str]:
    return [sys.executable, "-m", "ci_checks_checkpoint", *args]


def _quick_steps(summary: Summary, per_gpu: str, extra: Sequence[str], remaining_s: float) -> list[Step]:
    results = summary.results
    total = parse_size(per_gpu) * max(summary.ranks, 1)
    size, crash_size = f"{total >> 20}MiB", f"{min(total, parse_size(QUICK_CRASH_SIZE)) >> 20}MiB"
    seed_limit = round(min(SEED_LIMIT_S, remaining_s / 4), 1)
    seed = Step(
        "seed",
        _harness(
            "--backend", MEGATRON_ASYNC, "--size", "64MiB", "--nproc-per-node", "1", "--setup", SEED_SETUP,
            "--as-platform", "rocm", "--timeout", f"{seed_limit:.0f}", "--report-json", str(results / "seed.json"),
        ),
        expected_exit_code=1,
        limit_s=seed_limit,
        report="seed.json",
    )  # fmt: skip
    quick_limit = round(remaining_s - seed_limit - BACKSTOP_S, 1)
    quick = Step(
        "quick",
        _harness(
            "--require", REQUIRE_ALL, "--nproc-per-node", str(summary.ranks), "--size", size, "--crash-test", "1",
            "--crash-size", crash_size, "--timeout", f"{quick_limit:.0f}",
            "--report-json", str(results / "quick.json"), "--junit", str(results / "quick.xml"), *extra,
        ),
        expected_exit_code=0,
        limit_s=quick_limit,
        report="quick.json",
    )  # fmt: skip
    return [seed, quick]


def _full_steps(summary: Summary, extra: Sequence[str]) -> list[Step]:
    results = summary.results

    def harness(name: str, *args: str) -> list[str]:
        timeout = f"{FULL_LIMITS_S[name]:.0f}"
        return _harness(*args, "--timeout", timeout, "--report-json", str(results / f"{name}.json"))

    ranks = ("--nproc-per-node", str(summary.ranks))
    return [
        Step(
            "gpu-tests",
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "gpu", _GPU_TESTS],
            0,
            FULL_LIMITS_S["gpu-tests"],
        ),
        Step(
            "throughput",
            harness("throughput", "--require", REQUIRE_ALL, *ranks, "--junit", str(results / "throughput.xml"), *extra),
            0,
            FULL_LIMITS_S["throughput"],
            report="throughput.json",
        ),
        Step(
            "crash",
            harness(
                "crash", "--require", REQUIRE_ALL, *ranks, "--size", "256MiB", "--crash-test", "20",
                "--junit", str(results / "crash.xml"), *extra,
            ),
            0,
            FULL_LIMITS_S["crash"],
            report="crash.json",
        ),
        Step(
            "seed",
            harness("seed", "--backend", MEGATRON_ASYNC, "--size", "256MiB", "--nproc-per-node", "1", "--setup",
                    SEED_SETUP, "--as-platform", "rocm"),
            1,
            FULL_LIMITS_S["seed"],
            report="seed.json",
        ),
    ]  # fmt: skip


_AS_FOLDER = "; a results folder whose name starts with '-' is given as ./NAME"


def arguments(argv: Sequence[str]) -> argparse.Namespace:
    """The script's own options and results folder, before the first `--`; everything after it goes to the
    harness as it is, so an option there is never taken for the results folder."""
    own, harness = (argv[: argv.index("--")], argv[argv.index("--") + 1 :]) if "--" in argv else (argv, [])
    parser = argparse.ArgumentParser(
        prog="scripts/gpu-checkpoint-checks.sh",
        usage="%(prog)s [--quick] [options] [RESULTS_DIR] [-- HARNESS_OPTIONS...]",
        description=__doc__.split("\n\n")[0],
        allow_abbrev=False,  # `--size 1GiB` meant for the harness is not `--size-per-gpu`
    )
    parser.add_argument("--quick", action="store_true", help="the 6-minute form (see above)")
    parser.add_argument("--skip-install", action="store_true", help="install nothing (say what would be)")
    parser.add_argument("--allow-cpu", action="store_true", help="run without an accelerator (tests the results)")
    parser.add_argument("--ranks", type=int, help="ranks instead of every visible GPU (the CPU has none)")
    parser.add_argument("--size-per-gpu", default=QUICK_SIZE_PER_GPU, help="--quick's state dict per GPU")
    parser.add_argument("results", nargs="?", default="gpu-checkpoint-results", metavar="RESULTS_DIR")
    args, unknown = parser.parse_known_args(own)
    if unknown:
        parser.error(f"{unknown[0]}: not an option of this script; the harness's options go after --{_AS_FOLDER}")
    if args.results.startswith("-"):  # a negative number, which argparse takes for a value
        parser.error(f"RESULTS_DIR {args.results}: starts with '-'{_AS_FOLDER}")
    args.results, args.harness = Path(args.results), harness
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """0 when every step did what it was expected to and every check held; 1 otherwise; 2 without a GPU or on a
    usage error."""
    args = arguments(list(sys.argv[1:] if argv is None else argv))
    gpus = visible_gpus()
    if not gpus and not args.allow_cpu:
        print("no CUDA or ROCm accelerator is visible to torch", file=sys.stderr)
        return 2
    args.results.mkdir(parents=True, exist_ok=True)
    ranks = args.ranks or max(gpus, 1)
    budget = QUICK_BUDGET_S if args.quick else None
    summary = Summary("quick" if args.quick else "full", args.results, gpus, ranks, budget)
    summary.write()
    if not install(summary, args.skip_install, args.quick):
        summary.write()
        print(f"installing {' '.join(summary.installs['missing'])} failed", file=sys.stderr)
        return 1
    remaining = QUICK_BUDGET_S - (time.time() - summary.started) - END_MARGIN_S
    steps = (
        _quick_steps(summary, args.size_per_gpu, args.harness, remaining)
        if args.quick
        else _full_steps(summary, args.harness)
    )
    for step in steps:
        print(f"== {step.name} (limit {step.limit_s:.0f} s)", flush=True)
        summary.steps.append(step)
        _run(step, args.results)
        _judge_step(step, args.results)
        print(f"{step.name}: {'passed' if step.passed else 'FAILED'}: {step.detail}", flush=True)
        summary.write()
    if args.quick:
        quick, seed = (_report(args.results, step) for step in (steps[1], steps[0]))
        summary.checks = quick_checks(quick, seed, gpus, ranks)
    summary.write()
    state = "passed" if summary.passed else "FAILED"
    print(f"gpu checkpoint checks {state} in {time.time() - summary.started:.0f} s: {args.results}/summary.json")
    return 0 if summary.passed else 1


if __name__ == "__main__":
    sys.exit(main())
