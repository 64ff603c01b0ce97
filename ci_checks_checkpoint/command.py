"""`ci-checks checkpoint` / `python -m ci_checks_checkpoint`: real checkpoint saves, verified and timed.

Exit codes (decided in `report.exit_code` and `main` only):
0 every save, staging, verification, resharding and crash check passed; 1 one of them failed, or
the run reached --timeout, or a rank died; 2 usage or environment error (torch missing, bad option,
no space left, unwritable folder); 130 / 143 interrupted by SIGINT / SIGTERM (every process of the
run ended, its folder removed).

This module imports no torch: it is loaded by the linter's command line, and torch is an
optional extra that is imported only once the options are known to be good.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn, TextIO

from ci_checks.core.source import parse_size
from ci_checks_checkpoint import report
from ci_checks_checkpoint.options import (
    BACKENDS,
    EXTRA_HINT,
    LONGEST_TIMEOUT_S,
    MEGATRON_ASYNC,
    MEGATRON_HINT,
    STAGING_EXPECTATIONS,
    Options,
    UsageError,
    check_torch_version,
    installed,
)
from ci_checks_checkpoint.project import parse_platform


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_MODULE = re.compile(rf"{_NAME}(\.{_NAME})*\Z")
_SETUP = re.compile(rf"{_NAME}(\.{_NAME})*:{_NAME}(\.{_NAME})*\Z")
RATIO_KINDS = ("durable", "blocking")
_TORCHRUN = "under torchrun: run ci-checks checkpoint --nproc-per-node N without torchrun; it starts torchrun itself, "
_TORCHRUN += "so that it can end every process of the run"


def _size(value: str) -> int:
    """Bytes in `64MiB`, `1GiB`, `500MB` or `1000000`, as `ci-checks check --max-file-size` reads them."""
    try:
        return parse_size(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a size such as 64MiB, 1GiB or 1000000") from None


def _count(minimum: int) -> Callable[[str], int]:
    def parse(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
        if number < minimum:
            raise argparse.ArgumentTypeError(f"{value!r} is less than {minimum}")
        return number

    return parse


def _seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of seconds") from None
    if not math.isfinite(seconds):
        raise argparse.ArgumentTypeError(f"{value!r} is not a finite number of seconds")
    if not seconds > 0:
        raise argparse.ArgumentTypeError(f"{value!r} is not a positive number of seconds")
    if seconds > LONGEST_TIMEOUT_S:
        raise argparse.ArgumentTypeError(f"{value!r} is more than a week ({LONGEST_TIMEOUT_S:.0f} s)")
    return seconds


def _backend_list(value: str) -> list[str]:
    names = [part.strip() for part in value.split(",") if part.strip()]
    unknown = [name for name in names if name not in BACKENDS]
    if not names or unknown:
        raise argparse.ArgumentTypeError(
            f"{', '.join(unknown) or repr(value)} is not a backend (choose from {', '.join(BACKENDS)})"
        )
    return names


def _module(value: str) -> str:
    if not _MODULE.match(value):
        raise argparse.ArgumentTypeError(f"{value!r} is not a dotted module name such as myproject.rocm_patches")
    return value


def _setup(value: str) -> str:
    if not _SETUP.match(value):
        raise argparse.ArgumentTypeError(
            f"{value!r} is not MODULE:FUNCTION such as myproject.model:initialize_model_and_optimizer"
        )
    return value


def _platform(value: str) -> str:
    try:
        parse_platform(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return value


def _ratio(value: str) -> list[tuple[str, float]]:
    kind, equals, number = value.rpartition("=")
    kinds = [kind] if equals else list(RATIO_KINDS)
    if equals and kind not in RATIO_KINDS:
        raise argparse.ArgumentTypeError(f"{kind!r} is not a ratio (choose from {', '.join(RATIO_KINDS)})")
    try:
        ratio = float(number)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{number!r} is not a ratio such as 0.5") from None
    if not (math.isfinite(ratio) and ratio > 0):
        raise argparse.ArgumentTypeError(f"{number!r} is not a positive ratio")
    return [(name, ratio) for name in kinds]


def build_parser(prog: str = "ci-checks checkpoint") -> argparse.ArgumentParser:
    parser = _Parser(
        prog=prog,
        description="Save a seeded state dict through PyTorch DCP and Megatron-Core, load it back bit for bit, "
        "check how Megatron-Core staged it, time it against a raw write and a device-to-host copy, and "
        "optionally SIGKILL the writers to test crash consistency, on every GPU (--nproc-per-node: the harness starts "
        "torchrun itself). Every process of the run ends with it; docs/checkpoint.md has the details.",
    )
    parser.add_argument(
        "--size",
        type=_size,
        metavar="SIZE",
        help="state dict size (default 64MiB on the CPU, 8GiB per rank on an accelerator where memory allows)",
    )
    parser.add_argument("--tensors", type=_count(1), default=16, metavar="N", help="number of tensors (default 16)")
    parser.add_argument(
        "--backend",
        dest="backends",
        action="extend",
        nargs="+",
        choices=BACKENDS,
        metavar="NAME",
        help=f"backends to run: {', '.join(BACKENDS)} (default: all that are installed)",
    )
    parser.add_argument(
        "--require",
        dest="required",
        action="extend",
        type=_backend_list,
        metavar="BACKEND,...",
        help="these backends must run: one that would be skipped (not installed, not importable, too old) fails",
    )
    parser.add_argument(
        "--import",
        dest="imports",
        action="append",
        type=_module,
        metavar="MODULE",
        help="import this module of the project under test in every process that saves, before Megatron-Core's "
        "strategies, as training does (repeatable)",
    )
    parser.add_argument(
        "--setup",
        dest="setups",
        action="append",
        type=_setup,
        metavar="MODULE:FUNCTION",
        help="call this function of the project under test, with no arguments, in every process that saves, after "
        "--import and before any save, as its training calls its setup (repeatable)",
    )
    parser.add_argument(
        "--stub-missing-imports",
        action="store_true",
        help="while --import and --setup run, give the project's code a stub of each module it imports that is not "
        "installed here (each one listed in the report), so that a setup module needing heavy optional packages "
        "still runs as far as its swap",
    )
    parser.add_argument(
        "--setup-may-raise",
        action="store_true",
        help="a --setup that raises having replaced nothing of Megatron-Core's is reported beside the verdict "
        "instead of being a usage error: for a project's entry point (a tool's main()) that goes on past the "
        "place its workaround was, to build a model or read files the runner lacks",
    )
    parser.add_argument(
        "--as-platform",
        type=_platform,
        metavar="rocm[:VERSION]",
        help="emulate ROCm for the project's code: torch.version.hip reads VERSION (default 6.4.0), ROCM_PATH and "
        "HIP_PLATFORM=amd are set, torch.cuda.is_available() is true when the project asks (the harness's copies "
        "stay on the real device), so that its code under such gates runs on a CUDA or CPU machine",
    )
    parser.add_argument(
        "--expect-staging",
        choices=STAGING_EXPECTATIONS,
        help="what Megatron-Core's own preload_tensors must do: pinned (non_blocking=True copies), synchronous "
        "(non_blocking=False), any (default: any on ROCm, where Megatron-Core may stage synchronously itself; "
        "pinned elsewhere); the project's replacement of the writer, its preload_tensors or the strategy fails always",
    )
    parser.add_argument(
        "--nproc-per-node",
        type=_count(1),
        metavar="N",
        help="ranks, started through torchrun with NCCL (RCCL on ROCm), or gloo on the CPU "
        "(default: every visible GPU, one on the CPU)",
    )
    parser.add_argument(
        "--reshard-ranks",
        type=_count(1),
        metavar="M",
        help="load every checkpoint again on M ranks and verify it (default: 1 when several ranks save)",
    )
    parser.add_argument(
        "--min-ratio",
        action="extend",
        type=_ratio,
        metavar="[durable=|blocking=]R",
        help="fail when a backend's durable rate falls below R x the raw write, or the device-to-host copy takes "
        "less than R x its blocking time, on any rank (repeatable; a bare R sets both)",
    )
    parser.add_argument("--threads", type=_count(1), default=2, metavar="N", help="writer threads per rank (default 2)")
    parser.add_argument(
        "--workdir", type=Path, metavar="DIR", help="existing folder to save in (default: a new temporary folder)"
    )
    parser.add_argument(
        "--crash-test",
        type=_count(0),
        default=0,
        metavar="N",
        help="SIGKILL the writers N times per backend (default 0)",
    )
    parser.add_argument(
        "--crash-size",
        type=_size,
        metavar="SIZE",
        help="state dict size of the crash test (default: --size, at most 256MiB)",
    )
    parser.add_argument("--report-json", type=Path, metavar="FILE", help="write the JSON report here")
    parser.add_argument("--junit", type=Path, metavar="FILE", help="write JUnit XML here")
    parser.add_argument("--seed", type=_count(0), default=0, metavar="S", help="seed of the state dict (default 0)")
    parser.add_argument(
        "--timeout",
        type=_seconds,
        metavar="SECONDS",
        help="end the whole run after this long, still reporting, naming the stage it was in (default: 60 s, 60 s "
        "per backend, 1 s per 50 MB each save and load writes or reads, more for the crash test)",
    )
    parser.add_argument(
        "--save-timeout",
        type=_seconds,
        metavar="SECONDS",
        help="a save not finished after this long has failed, and the run goes on (default: 60 s plus 1 s per 50 MB)",
    )
    return parser


def _writable_folder(path: Path, what: str) -> None:
    if not path.is_dir():
        raise UsageError(f"{what} {path}: no such folder")
    if not os.access(path, os.W_OK | os.X_OK):
        raise UsageError(f"{what} {path}: folder is not writable")


def _output_file(path: Path, flag: str) -> None:
    """Found before the run, not after it: a report that cannot be written loses the whole run."""
    if path.is_dir():
        raise UsageError(f"{flag} {path}: is a folder, not a file")
    if path.exists() and not os.access(path, os.W_OK):
        raise UsageError(f"{flag} {path}: file is not writable")
    _writable_folder(path.parent, f"{flag}: the folder of")


def _options(args: argparse.Namespace) -> Options:
    if args.workdir is not None and not args.workdir.is_dir():
        raise UsageError(f"--workdir {args.workdir}: no such folder")
    for flag, path in (("--report-json", args.report_json), ("--junit", args.junit)):
        if path is not None:
            _output_file(path, flag)
    backends = tuple(dict.fromkeys(args.backends or ()))
    required = tuple(dict.fromkeys(args.required or ()))
    unselected = [name for name in required if backends and name not in backends]
    if unselected:
        raise UsageError(f"--require {','.join(unselected)}: not among the backends chosen with --backend")
    return Options(
        size=args.size,
        tensors=args.tensors,
        backends=backends,
        required=required,
        imports=tuple(dict.fromkeys(args.imports or ())),
        threads=args.threads,
        workdir=args.workdir,
        crash_test=args.crash_test,
        crash_size=args.crash_size,
        report_json=args.report_json,
        junit=args.junit,
        seed=args.seed,
        timeout_s=args.timeout,
        setups=tuple(dict.fromkeys(args.setups or ())),
        stub_missing_imports=args.stub_missing_imports,
        setup_may_raise=args.setup_may_raise,
        as_platform=args.as_platform,
        nproc_per_node=args.nproc_per_node,
        reshard_ranks=args.reshard_ranks,
        min_ratio=tuple(dict(args.min_ratio or ()).items()),
        save_timeout_s=args.save_timeout,
        expect_staging=args.expect_staging,
    )


def _check_installed(options: Options) -> None:
    if not installed("torch"):
        raise UsageError(f"the checkpoint harness needs torch, which is not installed: {EXTRA_HINT}")
    check_torch_version()
    if MEGATRON_ASYNC in options.backends and not installed("megatron.core"):
        raise UsageError(f"--backend {MEGATRON_ASYNC} needs megatron-core, which is not installed: {MEGATRON_HINT}")


def _write_reports(outcome: report.Outcome, options: Options, out: TextIO) -> None:
    out.write(report.to_text(outcome))
    if options.report_json is not None:
        options.report_json.write_text(report.to_json(outcome), encoding="utf-8")
    if options.junit is not None:
        options.junit.write_text(report.to_junit(outcome), encoding="utf-8")
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with Path(summary).open("a", encoding="utf-8") as stream:
            stream.write(report.to_markdown(outcome))


_QUIET_RANK_EXIT_DELAY_S = 2.0


def _reporting_rank() -> bool:
    """Rank 0, or no torchrun: under torchrun every rank meets the same usage error, and one says it."""
    return os.environ.get("RANK", "0") == "0"


def _under_torchrun() -> bool:
    return "TORCHELASTIC_RUN_ID" in os.environ or {"RANK", "WORLD_SIZE", "MASTER_ADDR"} <= os.environ.keys()


def main(
    argv: Sequence[str] | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
    prog: str = "ci-checks checkpoint",
) -> int:
    out = out or sys.stdout
    err = err or sys.stderr

    def error(message: str) -> None:
        if _reporting_rank():
            err.write(f"{prog}: {message}\n")
        else:
            # torchrun ends every rank as soon as one exits: the others give rank 0 the time to say it.
            time.sleep(_QUIET_RANK_EXIT_DELAY_S)

    begun = time.time()
    try:
        options = _options(build_parser(prog).parse_args(argv))
        if _under_torchrun():
            raise UsageError(_TORCHRUN)
        _check_installed(options)
        from ci_checks_checkpoint import supervisor

        try:
            outcome = supervisor.run(options, err, err.isatty(), begun)
        except supervisor.Interrupted as interrupted:
            return 128 + interrupted.signum
        _write_reports(outcome, options, out)
        for message in outcome.environment_errors:
            err.write(f"{prog}: error: {message}\n")
        return report.exit_code(outcome)
    except UsageError as failure:
        error(f"error: {failure}")
        return report.EXIT_ENVIRONMENT
    except BrokenPipeError:
        return report.EXIT_ENVIRONMENT
    except OSError as failure:
        where = f": {failure.filename}" if failure.filename else ""
        error(f"error: {failure.strerror or failure}{where}")
        return report.EXIT_ENVIRONMENT
    except SystemExit as exit_request:  # argparse's --help
        return int(exit_request.code or 0)
    except Exception as failure:  # never a traceback for the user; the message says where to look
        err.write(f"{prog}: internal error: {failure!r}\n")
        return report.EXIT_ENVIRONMENT
