"""The `ci-checks` command line: it reads the options, hands them to the engine (`ci_checks.engine.Session`, which
decides everything about the run), writes the formats the options ask for, and says how the run ended.

Exit codes (decided in `exit_code` and `main` only):
0 no finding at error or warning level; 1 findings; 2 usage, configuration or internal error (also when standard
output cannot be written); 130 interrupted (SIGINT); 143 terminated (SIGTERM). An interrupted run ends the
linters it started at once and removes its temporary folders; it prints no traceback.
"""

from __future__ import annotations

import argparse
import io
import math
import os
import signal
import sys
from collections.abc import Callable, Sequence
from contextlib import suppress
from pathlib import Path
from typing import BinaryIO, NoReturn, TextIO, cast

from ci_checks import __version__
from ci_checks.backends import tools
from ci_checks.core import config_files, config_source, escaping, output_files
from ci_checks.core.diagnostics import Severity
from ci_checks.core.escaping import one_line
from ci_checks.core.linters import BACKENDS, PROFILES
from ci_checks.core.repository import Repository, find_root
from ci_checks.core.source import DEFAULT_MAX_BYTES, parse_size
from ci_checks.engine import Options, Outcome, Session, Terminated, UsageError, errors, parse_backends, unwinding
from ci_checks.reporters import text
from ci_checks.reporters.formats import FORMATS, escaped
from ci_checks.reporters.text import statistics

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
    try:
        return parse_backends(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


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
        help="a repository root, a folder or a file (default: the repository containing the working directory); "
        "`-` reads standard input as the file --stdin-filename names",
    )
    check.add_argument(
        "--stdin-filename",
        type=Path,
        metavar="PATH",
        help="the file of the repository that standard input holds (read instead of the disk's): "
        "`ci-checks check --stdin-filename .github/workflows/ci.yml -`",
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

    check.set_defaults(write_baseline=None)  # `baseline write FILE` sets it

    commands.add_parser(
        "checkpoint",
        add_help=False,
        help="real checkpoint saves (PyTorch DCP, Megatron-Core), verified bit for bit; see `checkpoint --help`",
    )
    commands.add_parser(
        "server",
        add_help=False,
        help="a Language Server over standard input and output (the `server` extra); see README",
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


def options(args: argparse.Namespace) -> Options:
    """What the command line asks a check to do (`ci_checks.engine.Options`)."""
    return Options(
        select=args.select,
        ignore=args.ignore,
        profile=args.profile,
        config=args.config,
        config_ref=args.config_ref,
        max_file_size=args.max_file_size,
        backends=args.backends,
        binaries={name: getattr(args, name) for name in BACKENDS if getattr(args, name) is not None},
        backend_timeout=args.backend_timeout,
        jobs=args.jobs,
        cache_dir=args.cache_dir,
        no_cache=args.no_cache,
        fix=args.fix,
        diff=args.diff,
        unsafe_fixes=args.unsafe_fixes,
        new_since=args.new_since,
        baseline=args.baseline,
        write_baseline=args.write_baseline,
        reports=[path for _, path in args.output],
        report_unused_ignores=args.report_unused_ignores,
    )


def _check(args: argparse.Namespace, out: TextIO, err: TextIO, stdin: BinaryIO | None) -> int:
    isatty = getattr(err, "isatty", None)
    progress = err if isatty is not None and isatty() and not os.environ.get("CI") else None
    paths, documents = _documents(args, stdin)
    session = Session(options(args), paths, documents, progress=progress, say=err.write)
    try:
        for _, path in args.output:
            _writable(path, session.protected)
        if args.fix or args.diff:
            changes = session.fix()
            if args.diff:
                out.write(escaping.commands_stopped("".join(change.diff() for change in changes)))
                return EXIT_FINDINGS if changes else EXIT_OK
        outcome = session.check()
    finally:
        _NOTES.extend(session.notes)
    if args.write_baseline is not None:
        count, path = len(outcome.diagnostics), args.write_baseline
        found = f"{count} finding{'s' if count != 1 else ''}"
        out.write(f"Wrote {found} to {path}; `check --baseline {path}` accepts them.\n")
        return EXIT_OK
    if args.list_files:
        out.write("".join(f"{escaping.path(path)}\n" for path in outcome.checked))
    else:
        out.write(statistics(escaped(outcome)) if args.statistics else _report(args, outcome, out))
    for name, path in args.output:
        _write(path, FORMATS[name](outcome), session.protected, append=False)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        _summarise(Path(summary), outcome, session.protected)
    for message in outcome.internal_errors:
        err.write(f"ci-checks: internal error: {one_line(message)}\n")
    err.write("".join(errors.failure(failure.root, failure.error) for failure in outcome.failures))
    unchecked = [shown for shown, folder in outcome.nothing_to_check if folder or not args.skip_unread_files]
    for shown in unchecked:
        err.write(
            f"ci-checks: warning: {escaping.path(shown)}: nothing to check (no workflow or composite action, "
            "and no policy rule reads a file there); see --list-files\n"
        )
    if unchecked or outcome.failures:
        return EXIT_ERROR
    if args.list_files:
        return EXIT_OK
    return exit_code(outcome, Severity(args.fail_on), args.exit_zero)


STDIN = Path("-")
STDIN_MAX_BYTES = 256 << 20
"""The most standard input is read: a document larger than this is refused (a larger `--max-file-size` is
meant for files on disk)."""


def _documents(args: argparse.Namespace, stdin: BinaryIO | None) -> tuple[list[Path], dict[Path, bytes]]:
    """The paths to check, and the document standard input gives (`-`, or `--stdin-filename` with no path) as the
    file `--stdin-filename` names."""
    paths = [path for path in args.paths if path != STDIN]
    if args.stdin_filename is None:
        if len(paths) < len(args.paths):
            raise UsageError("`-` reads standard input as the file --stdin-filename names; give --stdin-filename")
        return paths, {}
    if paths and len(paths) == len(args.paths):
        raise UsageError("--stdin-filename names what standard input holds; give `-` among the paths to read it")
    if stdin is None:
        raise UsageError("standard input is closed; nothing to read as " + str(args.stdin_filename))
    try:
        data = stdin.read(STDIN_MAX_BYTES + 1)
    except (OSError, ValueError) as error:
        raise UsageError(f"cannot read standard input: {error}") from None
    if len(data) > STDIN_MAX_BYTES:
        raise UsageError(f"standard input holds more than {STDIN_MAX_BYTES >> 20} MiB; check the file on disk")
    return paths, {args.stdin_filename: data}


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


def _init(args: argparse.Namespace, out: TextIO) -> int:
    from ci_checks.config import starter as init

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
    from ci_checks.config import registry

    width = max(len(rule.name) for rule in registry.RULES)
    for rule in registry.RULES:
        out.write(f"{rule.code}  {rule.name:<{width}}  {rule.severity.value:<7}  {rule.summary}\n")
    return EXIT_OK


def _rule(code: str, out: TextIO) -> int:
    """A built-in rule's documentation, or what a linter's code is and where the linter documents it."""
    from ci_checks.config import registry
    from ci_checks.config.selection import SelectionError, resolve
    from ci_checks.reporters import docs

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


def main(
    argv: Sequence[str] | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
    stdin: BinaryIO | None = None,
) -> int:
    """Run the command line; `stdin` is what `-` reads (default: standard input)."""
    out = out if out is not None else cast(TextIO, _Stream(sys.stdout, report=True))
    err = err if err is not None else cast(TextIO, _Stream(sys.stderr, report=False))
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["checkpoint"]:  # its own options and exit codes; torch is imported only there
        from ci_checks_checkpoint import main as checkpoint_main

        return checkpoint_main(arguments[1:], out=out, err=err)
    if arguments[:1] == ["server"]:  # the protocol on the standard streams; pygls is imported only there
        from ci_checks.server import main as server_main

        return server_main(arguments[1:], err)
    if stdin is None:
        stdin = getattr(sys.stdin, "buffer", None)  # None when standard input was closed before Python started
    _NOTES.clear()
    try:
        with unwinding():
            code = _main(arguments, out, err, stdin)
        out.flush()
        return code
    except _OutputFailed as error:
        _say(err, f"ci-checks: error: {error}\n" if str(error) else "")
        return EXIT_ERROR
    except KeyboardInterrupt:
        _say(err, "ci-checks: interrupted\n")
        return EXIT_INTERRUPTED
    except Terminated:
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


def _main(arguments: list[str], out: TextIO, err: TextIO, stdin: BinaryIO | None) -> int:
    try:
        write_baseline = None
        if arguments[:1] == ["baseline"]:
            if len(arguments) < 3 or arguments[1] != "write":
                raise UsageError("usage: ci-checks baseline write FILE [check options and paths]")
            write_baseline, arguments = Path(arguments[2]), ["check", *arguments[3:]]
        args = build_parser().parse_args(arguments)
        if args.command == "check":
            args.write_baseline = write_baseline
            return _check(args, out, err, stdin)
        if args.command == "rules":
            return _rules(out)
        if args.command == "init":
            return _init(args, out)
        return _rule(args.code, out)
    except (UsageError, config_source.ConfigSourceError, tools.NamedBinaryError) as error:
        err.write(f"ci-checks: error: {one_line(str(error))}\n")
        return EXIT_ERROR
    except config_files.ConfigError as error:
        err.write(errors.config_error(error))
        return EXIT_ERROR
    except _OutputFailed:
        raise
    except SystemExit as exit_request:  # argparse's --help and --version
        return int(exit_request.code or 0)
    except Exception as error:  # never a traceback for the user; the message says where to look
        err.write(f"ci-checks: internal error: {one_line(repr(error))}\n")
        return EXIT_ERROR


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
