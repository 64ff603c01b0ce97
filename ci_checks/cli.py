"""The `ci-checks` command line.

Exit codes (decided in `exit_code` and `main` only):
0 no finding at error or warning level; 1 findings; 2 usage, configuration or internal error (also when standard
output cannot be written); 130 interrupted (SIGINT); 143 terminated (SIGTERM). An interrupted run ends the
linters it started at once and removes its temporary folders; it prints no traceback.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import io
import json
import math
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, NoReturn, TextIO, cast

from ci_checks import __version__, config_files, config_source, output_files
from ci_checks.backends import tools
from ci_checks.backends.cache import ResultCache, binary_identity, default_folder
from ci_checks.backends.names import BACKENDS, DEFAULT_PROFILE, PROFILES, BackendSettings, backend_names
from ci_checks.diagnostics import Severity, sorted_diagnostics
from ci_checks.outcome import Outcome, Request, UsageError
from ci_checks.reporters import escaping, text
from ci_checks.reporters.escaping import escaped, one_line
from ci_checks.reporters.formats import FORMATS
from ci_checks.reporters.text import statistics
from ci_checks.repository import Journal, Repository, find_root
from ci_checks.source import DEFAULT_MAX_BYTES, SourceFile, parse_size

if TYPE_CHECKING:
    # What checking needs (the rules, the model, the configuration's parser) is imported only once a run is not
    # reused from the cache; what one command or option needs, only there.
    from ci_checks import baseline, config, fixes
    from ci_checks.check import Plan

CONFIG_FILE = config_files.CONFIG_FILES[0]
EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2
EXIT_INTERRUPTED = 128 + signal.SIGINT
EXIT_TERMINATED = 128 + signal.SIGTERM
MAX_TIMEOUT_S = 24 * 3600.0


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _codes(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def _output(value: str) -> tuple[str, Path]:
    name, separator, path = value.partition("=")
    if not separator or not path:
        raise argparse.ArgumentTypeError(f"{value!r} is not FORMAT=FILE, e.g. sarif=results.sarif")
    if name not in FORMATS:
        raise argparse.ArgumentTypeError(f"unknown format {name!r}; formats: {', '.join(FORMATS)}")
    return name, Path(path)


def _backends(value: str) -> list[str]:
    """`all`, `none` or linter names, comma-separated: what the configuration's `backends:` takes too."""
    names = _codes(value)
    unknown = [name for name in names if name not in (*BACKENDS, "all", "none")]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown backend {unknown[0]!r}; use all, none or {', '.join(BACKENDS)}")
    return backend_names(names)


def _binary_variable(name: str) -> str:
    return f"CI_CHECKS_{name.upper()}"


def _positive(value: str) -> int:
    if not value.isdecimal() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a positive whole number")
    return int(value)


def _seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not (seconds > 0 and math.isfinite(seconds)):
        raise argparse.ArgumentTypeError(f"{value!r} is not a positive number of seconds")
    if seconds > MAX_TIMEOUT_S:
        raise argparse.ArgumentTypeError(
            f"{value!r} is more than a day ({MAX_TIMEOUT_S:g} seconds), the most it can be"
        )
    return seconds


def _size(value: str) -> int:
    try:
        return parse_size(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ci-checks", description="Structural checks for GitHub Actions workflows.")
    parser.add_argument("--version", action="version", version=f"ci-checks {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    check = commands.add_parser("check", help="check workflows and composite actions")
    check.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="a repository root, a folder or a file (default: the repository containing the working directory)",
    )
    check.add_argument("--output-format", choices=tuple(FORMATS), default="text", help="what goes to standard output")
    check.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour in text and concise output (default: auto, on a terminal unless NO_COLOR is set)",
    )
    check.add_argument(
        "--output",
        type=_output,
        action="append",
        default=[],
        metavar="FORMAT=FILE",
        help="also write FORMAT to FILE, e.g. sarif=results.sarif (repeatable)",
    )
    check.add_argument("--select", type=_codes, metavar="CODES", help="only these rules (codes, prefixes or names)")
    check.add_argument("--ignore", type=_codes, default=[], metavar="CODES", help="skip these rules")
    check.add_argument(
        "--profile",
        choices=PROFILES,
        help="which linter findings to keep: correctness (what breaks or exposes), security (and the hardening "
        "advice), all (and the linters' info-level notes); default: the configuration's profile, else correctness",
    )
    configuration = check.add_mutually_exclusive_group()
    configuration.add_argument(
        "--config", type=Path, metavar="FILE", help="configuration file to use instead of the repo's"
    )
    configuration.add_argument(
        "--config-ref",
        metavar="REF",
        help="read ci-checks' and the linters' configuration from this git revision (e.g. origin/main, HEAD^1) "
        "instead of the work tree: a pull request is then judged by the rules of its base branch",
    )
    check.add_argument(
        "--max-file-size", type=_size, metavar="SIZE", help=f"largest file read (default {DEFAULT_MAX_BYTES >> 20}MiB)"
    )
    check.add_argument(
        "--backends",
        type=_backends,
        metavar="NAMES",
        help="external linters to run: all, none or some of "
        + ", ".join(BACKENDS)
        + " (default: $CI_CHECKS_BACKENDS, else the configuration's backends, else all)",
    )
    for name in BACKENDS:
        check.add_argument(
            f"--{name}", metavar="PATH", help=f"the {name} binary (default: ${_binary_variable(name)}, then PATH)"
        )
    check.add_argument(
        "--backend-timeout", type=_seconds, default=120.0, metavar="SECONDS", help="time limit of each linter"
    )
    check.add_argument(
        "--jobs",
        type=_positive,
        metavar="N",
        help="check up to N repositories at once, each in a process of its own (default: the CPUs available)",
    )
    caching = check.add_mutually_exclusive_group()
    caching.add_argument(
        "--cache-dir",
        type=Path,
        metavar="DIR",
        help="where findings are kept between runs, to be reused while nothing that decides them changes "
        "(default: $CI_CHECKS_CACHE_DIR, else $XDG_CACHE_HOME/ci-checks or ~/.cache/ci-checks)",
    )
    caching.add_argument("--no-cache", action="store_true", help="check everything again; keep nothing")
    check.add_argument(
        "--fail-on",
        choices=[severity.value for severity in Severity],
        default=Severity.WARNING.value,
        help="the lowest severity that makes the run fail with exit code 1 (default: warning)",
    )
    check.add_argument(
        "--exit-zero", action="store_true", help="exit 0 even with findings (2 still means ci-checks failed)"
    )
    check.add_argument(
        "--statistics", action="store_true", help="print how many findings each rule has instead of the findings"
    )
    check.add_argument("--list-files", action="store_true", help="print the files that were checked, one per line")
    fixing = check.add_mutually_exclusive_group()
    fixing.add_argument("--fix", action="store_true", help="apply the safe fixes findings offer, then check again")
    fixing.add_argument("--diff", action="store_true", help="print the fixes --fix would make as a diff; write nothing")
    check.add_argument("--unsafe-fixes", action="store_true", help="with --fix or --diff, apply unsafe fixes too")
    check.add_argument(
        "--new-since",
        metavar="REF",
        help="report only findings on lines changed since the git commit REF (e.g. origin/main, for a pull request)",
    )
    check.add_argument(
        "--baseline",
        type=Path,
        metavar="FILE",
        help="report only the findings FILE (from `ci-checks baseline write FILE`) does not accept",
    )
    check.add_argument(
        "--skip-unread-files",
        action="store_true",
        help="named files that no rule reads are not an error (the pre-commit hook passes every changed file)",
    )
    check.add_argument(
        "--report-unused-ignores",
        action="store_true",
        help="report `# ci-checks: ignore[...]` comments that suppress nothing (CC105)",
    )

    commands.add_parser(
        "checkpoint",
        add_help=False,
        help="real checkpoint saves (PyTorch DCP, Megatron-Core), verified bit for bit; see `checkpoint --help`",
    )
    commands.add_parser(
        "baseline",
        add_help=False,
        help="`baseline write FILE [check options and paths]`: record today's findings, for `check --baseline FILE`",
    )
    starting = commands.add_parser("init", help=f"write a starter {CONFIG_FILE} that passes `ci-checks check`")
    starting.add_argument("path", nargs="?", type=Path, metavar="PATH", help="the repository (default: here)")
    starting.add_argument("--force", action="store_true", help="replace an existing configuration")
    commands.add_parser("rules", help="list the rules")
    rule = commands.add_parser("rule", help="show the documentation of one rule")
    rule.add_argument(
        "code",
        metavar="CODE",
        help="a rule code or name (CC011, duplicate-key), or a linter's code (SC2086, ZZ-artipacked, AL-expression)",
    )
    return parser


_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2}


def exit_code(outcome: Outcome, fail_on: Severity = Severity.WARNING, exit_zero: bool = False) -> int:
    """2 for an internal error; 1 for a finding at `fail_on` or above (unless `exit_zero`); else 0."""
    if outcome.internal_errors:
        return EXIT_ERROR
    if not exit_zero and any(_RANK[d.severity] >= _RANK[fail_on] for d in outcome.diagnostics):
        return EXIT_FINDINGS
    return EXIT_OK


@contextmanager
def _few_collections() -> Iterator[None]:
    """Collect garbage less often while checking.

    A run builds millions of small objects (YAML nodes, models, command trees)
    that live until it ends; the default threshold of 700 allocations spent a
    quarter of the CPU time of the 262-file corpus in collections that freed
    nothing.
    """
    before = gc.get_threshold()
    gc.set_threshold(50_000, 20, 100)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def _check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    with _few_collections():
        return _checked(args, out, err)


def _checked(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    paths: list[Path] = args.paths or [find_root(Path.cwd())]
    isatty = getattr(err, "isatty", None)
    args.progress_stream = err if isatty is not None and isatty() and not os.environ.get("CI") else None
    if args.config is not None and not args.config.is_file():
        raise UsageError(f"{args.config}: configuration file not found")
    groups: dict[Path, tuple[Repository, Request]] = {}
    for path in paths:
        if not path.exists() and not path.is_symlink():
            raise UsageError(f"{path}: no such file or folder")
        root = find_root(path)
        repository, request = groups.setdefault(root, (Repository(root), Request()))
        request.add(repository, path)
    if args.new_since is not None and len(groups) != 1:
        raise UsageError("--new-since compares one repository with a commit; name paths of one repository")
    protected = output_files.protected_folders(groups, Path.cwd())
    for _, path in args.output:
        _writable(path, protected)
    if args.fix or args.diff:
        changes = _fixed(args, groups, err)
        if args.diff:
            out.write(escaping.commands_stopped("".join(change.diff() for change in changes)))
            return EXIT_FINDINGS if changes else EXIT_OK
    outcome = Outcome()
    failed: list[str] = []
    checked_apart, tried = _in_workers(args, list(groups.values()))
    for index, (repository, request) in enumerate(groups.values()):
        part = checked_apart.get(index)
        if part is None:
            part = Outcome()
            try:
                _run_one(args, repository, request, part, reuse=index not in tried)
            except (config_files.ConfigError, config_source.ConfigSourceError, UsageError) as error:
                if len(groups) == 1:
                    raise
                failed.append(_failure(error, _shown_root(repository)))
                continue
        _merge(outcome, part if len(groups) == 1 else part.under(_shown_root(repository)))
    if failed and args.write_baseline is not None:
        raise UsageError("a repository could not be checked; no baseline written:\n" + "".join(failed).rstrip())
    if args.write_baseline is not None:
        return _write_baseline(args.write_baseline, outcome, out, protected)
    if args.baseline is not None:
        _apply_baseline(args, outcome, [request for _, request in groups.values()], protected, err)
    if args.new_since is not None:
        [(repository, request)] = groups.values()
        _keep_new(args, repository, request, outcome)
    if args.list_files:
        out.write("".join(f"{escaping.path(path)}\n" for path in outcome.checked))
    else:
        out.write(statistics(escaped(outcome)) if args.statistics else _report(args, outcome, out))
    for name, path in args.output:
        _write(path, FORMATS[name](outcome), protected, append=False)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        _summarise(Path(summary), outcome, protected)
    for message in outcome.internal_errors:
        err.write(f"ci-checks: internal error: {one_line(message)}\n")
    err.write("".join(failed))
    unchecked = [shown for shown, folder in outcome.nothing_to_check if folder or not args.skip_unread_files]
    for shown in unchecked:
        err.write(
            f"ci-checks: warning: {escaping.path(shown)}: nothing to check (no workflow or composite action, "
            "and no policy rule reads a file there); see --list-files\n"
        )
    if unchecked or failed:
        return EXIT_ERROR
    if args.list_files:
        return EXIT_OK
    return exit_code(outcome, Severity(args.fail_on), args.exit_zero)


@dataclasses.dataclass
class _Attempt:
    """One repository's run as it starts: its configuration found and read, and where a kept run would be."""

    files: config_source.ConfigSource
    config_file: SourceFile | None
    cache_folder: Path | None
    results: ResultCache | None
    key: str


@contextmanager
def _attempt(args: argparse.Namespace, repository: Repository, request: Request) -> Iterator[_Attempt]:
    files = config_source.open_source(repository, args.config_ref)
    # A run is reused only from the work tree as it is: not with a base branch's configuration, nor while fixing.
    repository.journal = Journal() if args.config_ref is None and not (args.fix or args.diff) else None
    results: ResultCache | None = None
    try:
        config_file = _config_file(repository, args.config, files)
        cache_folder = _cache_folder(args, repository)
        key = ""
        if repository.journal is not None and cache_folder is not None:
            from ci_checks import run_cache

            results = ResultCache(cache_folder)
            key = run_cache.run_key(_asked(args, repository, request, config_file), _linters(args))
        yield _Attempt(files, config_file, cache_folder, results, key)
    finally:
        files.close()
        repository.journal = None
        if results is not None:
            results.close()


def _kept(attempt: _Attempt, repository: Repository) -> Outcome | None:
    if attempt.results is None:
        return None
    from ci_checks import run_cache

    return run_cache.fetch(attempt.results, attempt.key, repository, attempt.config_file)


def _run_one(
    args: argparse.Namespace, repository: Repository, request: Request, outcome: Outcome, reuse: bool = True
) -> Plan | None:
    """Check one repository into `outcome`; the plan it ran, or None when a kept run was reused (`run_cache`).

    `reuse` is False where the caller has already found no kept run to reuse.
    """
    with _attempt(args, repository, request) as attempt:
        kept = _kept(attempt, repository) if reuse else None
        if kept is not None:
            _merge(outcome, kept)
            return None
        plan, part = _checked_now(args, repository, request, attempt.config_file, attempt.cache_folder, attempt.files)
        if attempt.results is not None:
            from ci_checks import run_cache

            run_cache.store(attempt.results, attempt.key, repository, part, attempt.config_file)
    _merge(outcome, part)
    return plan


def _reused(args: argparse.Namespace, repository: Repository, request: Request) -> Outcome | None:
    """A kept run of the repository that can be reused, checking nothing."""
    with _attempt(args, repository, request) as attempt:
        return _kept(attempt, repository)


def _checked_now(
    args: argparse.Namespace,
    repository: Repository,
    request: Request,
    config_file: SourceFile | None,
    cache_folder: Path | None,
    files: config_source.ConfigSource,
) -> tuple[Plan, Outcome]:
    from ci_checks import config
    from ci_checks.check import run

    settings = config.parse(config_file, repository) if config_file is not None else config.Config()
    if settings.path in request.files and "" not in request.folders:
        request.folders.append("")  # a changed policy may change findings anywhere: check everything
    repository.exclude = settings.exclude
    plan = _plan(args, settings, cache_folder)
    plan.backend_settings = dataclasses.replace(plan.backend_settings, config_source=files)
    with _Progress(args.progress_stream) as progress:
        return plan, run(repository, request, plan, settings, progress.say)


def _keep_new(args: argparse.Namespace, repository: Repository, request: Request, outcome: Outcome) -> None:
    """`--new-since`: keep the findings that are new since the commit (see `changes`), the base checked with the
    work tree's options and configuration (from the work tree, `--config` or `--config-ref`, as the work tree was)."""
    from ci_checks.changes import BaseUnavailable, new_since

    def check_base(base: Repository, base_request: Request) -> Outcome:
        files = config_source.open_source(repository, args.config_ref)
        try:
            config_file = _config_file(repository, args.config, files)
            cache_folder = _cache_folder(args, base)
            return _checked_now(args, base, base_request, config_file, cache_folder, files)[1]
        except (config_files.ConfigError, config_source.ConfigSourceError, UsageError) as error:
            # A policy value read from a file the base lacks, say: the base is not compared, nothing is dropped.
            raise BaseUnavailable(f"its files could not be checked ({one_line(str(error))})") from None
        finally:
            files.close()

    max_bytes = args.max_file_size or DEFAULT_MAX_BYTES
    outcome.diagnostics, note = new_since(repository, args.new_since, outcome, request, check_base, max_bytes)
    if note is not None:
        _NOTES.append(note)


def _shown_root(repository: Repository) -> str:
    """How paths name a repository when several are checked: relative to the working directory when it lies
    under it (`a`, `.`), else in full."""
    here = Path.cwd()
    if repository.root == here or here in repository.root.parents:
        return repository.root.relative_to(here).as_posix()
    return repository.root.as_posix()


def _failure(error: Exception, root: str) -> str:
    """What stopped one repository of several from being checked, said for that repository."""
    if isinstance(error, config_files.ConfigError):
        return _config_error(error, "" if root == "." else f"{root}/")
    return f"ci-checks: error: {escaping.path(root)}: {one_line(str(error))}\n"


def _merge(outcome: Outcome, part: Outcome) -> None:
    outcome.diagnostics = sorted_diagnostics([*outcome.diagnostics, *part.diagnostics])
    outcome.sources.update(part.sources)
    outcome.files += part.files
    outcome.checked.extend(part.checked)
    outcome.nothing_to_check.extend(part.nothing_to_check)
    outcome.internal_errors.extend(part.internal_errors)


def _in_workers(
    args: argparse.Namespace, groups: list[tuple[Repository, Request]]
) -> tuple[dict[int, Outcome], set[int]]:
    """The outcomes of several repositories, by their index: kept runs reused here, the others checked side by
    side, one worker process each at a time; and the indexes of those found to have no kept run.

    Each worker runs exactly what the serial run does and hands back its
    outcome and notes. A repository whose check raised is missing from the
    answer: the caller checks it again itself, where the error is reported as
    a serial run reports it. Fixing is never done in workers (its passes
    rewrite files). An interrupt or SIGTERM ends the workers, whose own
    handlers end their linters.
    """
    if min(len(groups), args.jobs or usable_cpus()) < 2 or args.fix or args.diff or not hasattr(os, "fork"):
        return {}, set()
    checked: dict[int, Outcome] = {}
    if not args.no_cache and args.config_ref is None:  # else no run is kept: nothing to look for
        for index, (repository, request) in enumerate(groups):
            kept = _reused(args, repository, request)
            if kept is not None:
                checked[index] = kept
    left = [index for index in range(len(groups)) if index not in checked]
    workers = min(len(left), args.jobs or usable_cpus())
    if workers < 2:
        return checked, set(left)
    import multiprocessing

    # What every check imports, imported once here and shared, rather than once in each worker.
    from ci_checks import check, config  # noqa: F401

    sent = argparse.Namespace(**{**vars(args), "progress_stream": None})
    pool = multiprocessing.get_context("fork").Pool(workers, initializer=_quiet_worker)
    # The largest first, so that no worker is left with a large one while the others have finished.
    order = sorted(left, key=lambda index: -_workflow_bytes(groups[index][0].root))
    try:
        pending = {
            index: pool.apply_async(_check_in_worker, (sent, groups[index][0].root, groups[index][1]))
            for index in order
        }
        answers = {index: pending[index].get() for index in left}
        pool.close()
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()
    for index, answer in answers.items():
        if answer is not None:
            checked[index], notes = answer
            _NOTES.extend(notes)
    return checked, set(left)


def _workflow_bytes(root: Path) -> int:
    """How large a repository's workflows are (links not followed), as a guess at how long checking it takes."""
    total = 0
    for relative in Repository(root).workflows:
        with suppress(OSError):
            total += os.lstat(root / relative).st_size
    return total


_WORKER = {"checking": False}
"""Whether this worker is checking a repository (SIGTERM then unwinds the check) or waiting for one."""

_STARTED_AT: dict[str, int | None] = {"resident": None}
"""A worker's resident size when it started."""


def _quiet_worker() -> None:
    """A worker leaves interrupts to the parent, which ends it with SIGTERM: a check under way unwinds (its
    linters ended, its copies removed), then the worker exits without a word, as it does when idle."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _worker_terminate)
    gc.freeze()  # what the parent built is never garbage here: collections look only at what each check builds
    _STARTED_AT["resident"] = _resident_bytes()


def _worker_terminate(signum: int, frame: FrameType | None) -> None:
    if _WORKER["checking"]:
        raise _Terminated
    os._exit(EXIT_TERMINATED)


def _check_in_worker(args: argparse.Namespace, root: Path, request: Request) -> tuple[Outcome, list[str]] | None:
    _NOTES.clear()
    _WORKER["checking"] = True
    try:
        part = Outcome()
        _run_one(args, Repository(root), request, part, reuse=False)  # the parent found no kept run
    except _Terminated:
        os._exit(EXIT_TERMINATED)
    except Exception:  # checked again by the parent, which reports it
        return None
    finally:
        _WORKER["checking"] = False
        _collect_when_grown()
    return part, list(_NOTES)


GARBAGE_BYTES = 64 << 20
"""How much a worker may grow before the repositories it checked are collected.

A checked repository's models, YAML nodes and command trees hold cycles that
only a full collection frees, and one takes tens of milliseconds: a worker
collects when it has grown by this much since it started (or after every
repository where its size cannot be read), not after each repository.
"""


def _collect_when_grown() -> None:
    resident = _resident_bytes()
    if resident is None or resident - (_STARTED_AT["resident"] or 0) > GARBAGE_BYTES:
        gc.collect()


def _resident_bytes() -> int | None:
    """This process's resident size now (Linux), or None."""
    try:
        return int(Path("/proc/self/statm").read_bytes().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity, which a container or `taskset` may narrow)."""
    sched_getaffinity = getattr(os, "sched_getaffinity", None)
    return len(sched_getaffinity(0)) if sched_getaffinity is not None else os.cpu_count() or 1


_NOT_ASKED = frozenset(
    {
        "command",
        "paths",
        "output_format",
        "color",
        "output",
        "cache_dir",
        "no_cache",
        "fail_on",
        "exit_zero",
        "statistics",
        "list_files",
        "new_since",
        "baseline",
        "write_baseline",
        "skip_unread_files",
        "progress_stream",
        "jobs",
        "backend_timeout",
    }
)
"""Options that change only what is done with the findings (reported, filtered, counted), not the findings.

The linters' time limit is one: a run in which a linter did not finish is never kept (`run_cache.TRANSIENT`).
"""


def _asked(
    args: argparse.Namespace, repository: Repository, request: Request, config_file: SourceFile | None
) -> dict[str, object]:
    """What decides a run's findings besides the code and the disk: the request, the options, the configuration.

    The configuration counts by its text, which decides everything read from it
    (the rules, the exclusions, the linters): a run is reused without parsing it.
    """
    return {
        "root": str(repository.root),
        "request": [request.folders, request.files, request.named],
        "options": json.dumps({k: v for k, v in vars(args).items() if k not in _NOT_ASKED}, default=str),
        "config": None if config_file is None else [config_file.path, config_file.text],
    }


def _linters(args: argparse.Namespace) -> dict[str, list[str | int]]:
    """Which build of each linter would run, whether or not this run runs it (which the configuration decides)."""
    return {name: _identity(name, getattr(args, name)) for name in BACKENDS}


def _identity(name: str, named: str | None) -> list[str | int]:
    """Which build of a linter would run: its binary's path, size and modification time."""
    try:
        return binary_identity(tools.find_binary(name, named))
    except (tools.Unavailable, tools.NamedBinaryError, OSError) as error:
        return [f"not run: {error}"]


class _Progress:
    """One self-erasing status line on a terminal's standard error while a run lasts more than a moment."""

    DELAY_S = 0.5
    EVERY_S = 0.1

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream
        self.started = time.monotonic()
        self.shown = 0.0

    def __enter__(self) -> _Progress:
        return self

    def say(self, doing: str) -> None:
        now = time.monotonic()
        if self.stream is None or now - self.started < self.DELAY_S or now - self.shown < self.EVERY_S:
            return
        self.shown = now
        self.stream.write(f"\r\x1b[2Kci-checks: {one_line(doing[:100])}")
        self.stream.flush()

    def __exit__(self, *exception: object) -> None:
        if self.stream is not None and self.shown:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()


MAX_FIX_PASSES = 5
"""A fix can make another finding fixable, and overlapping fixes wait for a fresh check: a few passes at most."""


def _fixed(args: argparse.Namespace, groups: dict[Path, tuple[Repository, Request]], err: TextIO) -> list[fixes.Change]:
    """Apply the fixes pass after pass until none is left (`--fix`), or return the first pass's changes (`--diff`)."""
    from ci_checks import fixes

    shown: list[fixes.Change] = []
    fixed, files = 0, 0
    for repository, request in groups.values():
        for _ in range(MAX_FIX_PASSES):
            part = Outcome()
            plan = _run_one(args, repository, request, part)  # never a kept run: fixing keeps none
            zizmor = _binary("zizmor", plan) if plan is not None and "zizmor" in plan.backends else None
            changes = fixes.plan(repository, part.diagnostics, args.unsafe_fixes, zizmor)
            if args.diff:
                shown.extend(changes)
                break
            written = [change for change in changes if fixes.write(repository, change)]
            if not written:
                break
            fixed += sum(len(change.fixed) for change in written)
            files += len(written)
    if args.fix:
        err.write(
            f"ci-checks: fixed {fixed} finding{'s' if fixed != 1 else ''} in {files} file{'s' if files != 1 else ''}\n"
        )
    return shown


def _binary(name: str, plan: Plan) -> str | None:
    try:
        return tools.find_binary(name, plan.backend_settings.binaries.get(name))
    except tools.Unavailable:
        return None


def _report(args: argparse.Namespace, outcome: Outcome, out: TextIO) -> str:
    if args.output_format in ("text", "concise") and _colour(args.color, out):
        shown = escaped(outcome)
        if args.output_format == "concise":
            return text.concise(shown.diagnostics, shown.files, colour=True)
        return text.render(shown.diagnostics, shown.sources, shown.files, colour=True)
    return FORMATS[args.output_format](outcome)


def _colour(choice: str, out: TextIO) -> bool:
    """`always`, `never`, or (`auto`) when writing to a terminal and `NO_COLOR` is not set (no-color.org)."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(out, "isatty", None)
    return bool(isatty is not None and isatty())


def _write_baseline(path: Path, outcome: Outcome, out: TextIO, protected: list[Path]) -> int:
    from ci_checks import baseline

    if outcome.internal_errors:
        raise UsageError("the check failed; no baseline written: " + "; ".join(outcome.internal_errors))
    try:
        baseline.write(path, baseline.entries(outcome.diagnostics, outcome.sources), protected)
    except baseline.BaselineError as error:
        raise UsageError(str(error)) from None
    count = len(outcome.diagnostics)
    out.write(f"Wrote {count} finding{'s' if count != 1 else ''} to {path}; `check --baseline {path}` accepts them.\n")
    return EXIT_OK


def _apply_baseline(
    args: argparse.Namespace, outcome: Outcome, requests: list[Request], protected: list[Path], err: TextIO
) -> None:
    """Keep the findings the baseline does not accept; say how many it accepted and which entries are stale."""
    from ci_checks import baseline

    path = args.baseline
    try:
        recorded = baseline.load(path, protected, args.config_ref)
    except baseline.BaselineError as error:
        raise UsageError(str(error)) from None
    covered = (
        (lambda relative: any(request.covers(relative) for request in requests))
        if len(requests) == 1
        else (lambda relative: False)
    )
    comparison = baseline.compare(outcome.diagnostics, outcome.sources, recorded, covered)
    outcome.diagnostics = comparison.new
    accepted = f"{comparison.accepted} finding{'s' if comparison.accepted != 1 else ''}"
    err.write(f"ci-checks: {escaping.path(str(path))} accepted {accepted}")
    if comparison.stale:
        err.write(f"; {len(comparison.stale)} of its entries match nothing any more (fixed?):\n")
        err.write("".join(f"  {_stale(entry)}\n" for entry in comparison.stale))
    else:
        err.write("\n")


def _summarise(path: Path, outcome: Outcome, protected: list[Path]) -> None:
    """Append the Markdown summary to the job summary, within what GitHub takes of one step's summary."""
    from ci_checks.reporters import markdown

    try:
        written = path.stat().st_size if path.is_file() else 0
    except OSError:
        written = 0
    shown = markdown.render(escaped(outcome), max(markdown.MAX_BYTES - written, 0))
    if shown:
        _write(path, shown, protected, append=True)
    else:
        _NOTES.append(f"the job summary holds {written} bytes already, as much as GitHub shows; nothing added")


def _stale(entry: baseline.Entry) -> str:
    """A baseline entry, every part of which the baseline's author chose: escaped like a finding."""
    return f"{escaping.path(entry.path)}: {one_line(entry.code)} {one_line(entry.message)} [{one_line(entry.rule)}]"


def _writable(path: Path, protected: list[Path]) -> None:
    try:
        output_files.check(path, protected)
    except output_files.OutputError as error:
        raise UsageError(str(error)) from None


def _write(path: Path, content: str, protected: list[Path], append: bool) -> None:
    try:
        output_files.write(path, content, protected, append)
    except output_files.OutputError as error:
        raise UsageError(str(error)) from None


def _config_file(repository: Repository, explicit: Path | None, files: config_source.ConfigSource) -> SourceFile | None:
    """The configuration for one repository: `--config FILE` (shown repo-relative when inside it), else its own
    (from the work tree, or from `--config-ref`), read but not parsed."""
    if explicit is None:
        return config_files.find(files)
    from ci_checks import source

    try:
        display = repository.relative(explicit)
    except ValueError:
        display = str(explicit)
    return config_files.readable(source.read(display, explicit))


def _plan(args: argparse.Namespace, settings: config.Config, cache_folder: Path | None) -> Plan:
    """What to run, from the options and the configuration (see `ci_checks.settings` for what selectors name)."""
    from ci_checks.check import Plan
    from ci_checks.settings import SelectionError, resolve

    selected: list[str] | None = args.select or settings.select
    ignored = [*settings.ignore, *args.ignore]
    try:
        profile = args.profile or settings.profile or DEFAULT_PROFILE
        selection = resolve(selected, ignored, (rule.id for rule in settings.rules), settings.severity, profile)
    except SelectionError as error:
        raise UsageError(str(error)) from None
    policy_rules = []
    if settings.rules:
        from ci_checks.policy import policy_codes

        policy_rules = [rule for rule in settings.rules if selection.runs_policy_rule(rule.id, policy_codes(rule))]
    backends = args.backends
    if backends is None:
        from_environment = os.environ.get("CI_CHECKS_BACKENDS")
        try:
            backends = _backends(from_environment) if from_environment is not None else settings.backends
        except argparse.ArgumentTypeError as error:
            raise UsageError(f"CI_CHECKS_BACKENDS: {error}") from None
    backends = [name for name in (list(BACKENDS) if backends is None else backends) if selection.runs_linter(name)]
    binaries = {name: getattr(args, name) for name in BACKENDS if getattr(args, name) is not None}
    return Plan(
        selection,
        policy_rules,
        backends,
        BackendSettings(binaries, args.backend_timeout, cache_folder),
        args.max_file_size or settings.max_file_size or DEFAULT_MAX_BYTES,
        args.report_unused_ignores,
    )


def _cache_folder(args: argparse.Namespace, repository: Repository) -> Path | None:
    """Where findings are kept between runs (`run_cache`, and shellcheck's per script): anywhere but inside the
    checked repository.

    A pull request could commit a cache file there with rows that clear its
    own scripts of every finding. A folder named by option or variable inside
    it is refused (exit 2); a default folder that is not usable (no home
    folder, a relative `$HOME`, one inside the repository) means no cache, and a
    note on standard error says so.
    """
    if args.no_cache:
        return None
    from_environment = os.environ.get("CI_CHECKS_CACHE_DIR")
    folder: Path | None
    if args.cache_dir is not None:
        folder, origin = Path(args.cache_dir), "--cache-dir"
    elif from_environment:
        folder, origin = Path(from_environment), "$CI_CHECKS_CACHE_DIR"
    else:
        folder, why_not = default_folder()
        if folder is not None and folder.resolve().is_relative_to(repository.real_root):
            folder, why_not = None, f"the default cache folder {str(folder)!r} is inside the checked repository"
        if folder is None:
            _NOTES.append(f"findings are not kept between runs: {why_not}; choose a folder with --cache-dir")
        return folder
    if folder.resolve().is_relative_to(repository.real_root):
        raise UsageError(
            f"{origin} {str(folder)!r} is inside the checked repository, where a pull request could plant "
            "findings; choose a folder outside it, or --no-cache"
        )
    return folder


def _init(args: argparse.Namespace, out: TextIO) -> int:
    from ci_checks import init

    repository = Repository(find_root(args.path or Path.cwd()))
    try:
        path = init.write(repository, args.force)
    except init.InitError as error:
        raise UsageError(str(error)) from None
    out.write(f"Wrote {path}; `ci-checks check` reads it.\n")
    return EXIT_OK


_NOTES: list[str] = []
"""Things the user should know that are not findings (said once, on standard error)."""


def _rules(out: TextIO) -> int:
    from ci_checks import registry

    width = max(len(rule.name) for rule in registry.RULES)
    for rule in registry.RULES:
        out.write(f"{rule.code}  {rule.name:<{width}}  {rule.severity.value:<7}  {rule.summary}\n")
    return EXIT_OK


def _rule(code: str, out: TextIO) -> int:
    """A built-in rule's documentation, or what a linter's code is and where the linter documents it."""
    from ci_checks import registry
    from ci_checks.reporters import docs
    from ci_checks.settings import SelectionError, resolve

    rule = registry.lookup(code)
    if rule is not None:
        link = docs.rule_url(rule)
        out.write(docs.rule_page(rule) + (f"\nOnline: {link}\n" if link else ""))
        return EXIT_OK
    check = docs.named_check(code)
    if check is not None:
        out.write(f"# {check.code} ({check.linter})\n\n{check.description}\n\nOnline: {check.url}\n")
        return EXIT_OK
    examples = "such as CC031, SC2086, ZZ-unpinned-uses or AL-expression"
    try:
        resolve([code], [], ())
    except SelectionError as error:
        raise UsageError(f"{error}, or give a linter's code {examples}") from None
    raise UsageError(f"{code!r} names more than one rule; give one, {examples}")


class _Terminated(BaseException):
    """SIGTERM, raised in the main thread like KeyboardInterrupt is for SIGINT."""


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise _Terminated


@contextmanager
def _termination_raises() -> Iterator[None]:
    """While checking, SIGTERM unwinds the run (ending the linters, removing temporary folders) instead of killing
    it on the spot; only the main thread can install a handler, and one installed by the caller is kept."""
    installed = False
    with suppress(ValueError):  # not the main thread
        installed = signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
        if installed:
            signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    finally:
        if installed:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


class _OutputFailed(Exception):
    """Standard output could not take the report (closed, full, a broken pipe): exit code 2."""


class _Stream(io.TextIOBase):
    """Standard output or error, where a character the encoding lacks is written as a `\\xe9`-style escape.

    Standard output that cannot be written (closed, full, a broken pipe) is `_OutputFailed`, not a traceback;
    standard error that cannot be written is passed over: the exit code still says what happened.
    """

    def __init__(self, stream: TextIO | None, report: bool) -> None:
        super().__init__()
        self._stream = stream
        self._report = report

    def write(self, text: str) -> int:
        self._guarded(lambda stream: stream.write(_encodable(stream, text)))
        return len(text)

    def flush(self) -> None:
        self._guarded(lambda stream: stream.flush())

    def isatty(self) -> bool:
        try:
            return self._stream is not None and self._stream.isatty()
        except (OSError, ValueError):
            return False

    def _guarded(self, action: Callable[[TextIO], object]) -> None:
        if self._stream is None:
            if self._report:
                raise _OutputFailed("standard output is closed; the report was not written")
            return
        try:
            action(self._stream)
        except (OSError, ValueError) as error:
            if not self._report:
                return
            _silence_stdout()
            if isinstance(error, BrokenPipeError):  # the reader stopped reading (`| head`): nothing to say
                raise _OutputFailed("") from None
            reason = getattr(error, "strerror", None) or str(error)
            raise _OutputFailed(f"cannot write standard output: {reason}") from None


def _encodable(stream: TextIO, text: str) -> str:
    encoding = getattr(stream, "encoding", None)
    if not encoding or text.isascii():
        return text
    return text.encode(encoding, errors="backslashreplace").decode(encoding, errors="replace")


def _silence_stdout() -> None:
    """Point file descriptor 1 at /dev/null so that the interpreter's last flush of stdout does not fail again."""
    with suppress(OSError, AttributeError, ValueError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)


def main(argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out if out is not None else cast(TextIO, _Stream(sys.stdout, report=True))
    err = err if err is not None else cast(TextIO, _Stream(sys.stderr, report=False))
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["checkpoint"]:  # its own options and exit codes; torch is imported only there
        from ci_checks.checkpoint import main as checkpoint_main

        return checkpoint_main(arguments[1:], out=out, err=err)
    _NOTES.clear()
    try:
        with _termination_raises():
            code = _main(arguments, out, err)
        out.flush()
        return code
    except _OutputFailed as error:
        _say(err, f"ci-checks: error: {error}\n" if str(error) else "")
        return EXIT_ERROR
    except KeyboardInterrupt:
        tools.stop_all()
        _say(err, "ci-checks: interrupted\n")
        return EXIT_INTERRUPTED
    except _Terminated:
        tools.stop_all()
        _say(err, "ci-checks: terminated\n")
        return EXIT_TERMINATED
    finally:
        for note in dict.fromkeys(_NOTES):
            _say(err, f"ci-checks: note: {one_line(note)}\n")


def _say(err: TextIO, text: str) -> None:
    """Write to standard error (one given by a caller may fail: the exit code says the rest)."""
    with suppress(OSError, ValueError):
        err.write(text)
        err.flush()


def _main(arguments: list[str], out: TextIO, err: TextIO) -> int:
    try:
        write_baseline = None
        if arguments[:1] == ["baseline"]:
            if len(arguments) < 3 or arguments[1] != "write":
                raise UsageError("usage: ci-checks baseline write FILE [check options and paths]")
            write_baseline, arguments = Path(arguments[2]), ["check", *arguments[3:]]
        args = build_parser().parse_args(arguments)
        if args.command == "check":
            args.write_baseline = write_baseline
            return _check(args, out, err)
        if args.command == "rules":
            return _rules(out)
        if args.command == "init":
            return _init(args, out)
        return _rule(args.code, out)
    except (UsageError, config_source.ConfigSourceError, tools.NamedBinaryError) as error:
        err.write(f"ci-checks: error: {one_line(str(error))}\n")
        return EXIT_ERROR
    except config_files.ConfigError as error:
        err.write(_config_error(error))
        return EXIT_ERROR
    except _OutputFailed:
        raise
    except SystemExit as exit_request:  # argparse's --help and --version
        return int(exit_request.code or 0)
    except Exception as error:  # never a traceback for the user; the message says where to look
        err.write(f"ci-checks: internal error: {one_line(repr(error))}\n")
        return EXIT_ERROR


def _config_error(error: config_files.ConfigError, prefix: str = "") -> str:
    """A configuration's mistake, positioned: `path:line:col: error: message`, then its notes."""
    span = error.span
    lines = [f"{escaping.path(prefix + span.path)}:{span.line}:{span.column}: error: {one_line(error.message)}\n"]
    for related in error.related:
        where = related.span
        place = f"{where.line}:{where.column}"
        if where.path != span.path:
            place = f"{escaping.path(prefix + where.path)}:{place}"
        lines.append(f"  = note: {one_line(related.message)} at {place}\n")
    return "".join(lines)


def entry() -> NoReturn:
    """The console script: `main`, then an exit that skips the interpreter's teardown.

    By the end of a run its objects (YAML nodes, models, command trees) are all
    garbage; freeing them one by one, and a last collection, took a quarter of
    a short run. The outputs are flushed first, so nothing written is lost.
    """
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:  # None when the stream was closed before Python started
                stream.flush()
        except (OSError, ValueError):
            code = code or EXIT_ERROR
    os._exit(code)


if __name__ == "__main__":
    entry()
