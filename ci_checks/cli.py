"""The `ci-checks` command line.

Exit codes (decided in `exit_code` and `main` only):
0 no finding at error or warning level; 1 findings; 2 usage, configuration or internal error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn, TextIO

from ci_checks import __version__, config, registry
from ci_checks.check import Outcome, UsageError, run, targets
from ci_checks.reporters import json_output, text
from ci_checks.repository import Repository, find_root
from ci_checks.source import DEFAULT_MAX_BYTES

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _codes(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def _size(value: str) -> int:
    try:
        return config.parse_size(value)
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
    check.add_argument("--output-format", choices=("text", "json"), default="text")
    check.add_argument("--select", type=_codes, metavar="CODES", help="only these rules (codes, prefixes or names)")
    check.add_argument("--ignore", type=_codes, default=[], metavar="CODES", help="skip these rules")
    check.add_argument("--config", type=Path, metavar="FILE", help="configuration file to use instead of the repo's")
    check.add_argument(
        "--max-file-size", type=_size, metavar="SIZE", help=f"largest file read (default {DEFAULT_MAX_BYTES >> 20}MiB)"
    )

    commands.add_parser("rules", help="list the rules")
    rule = commands.add_parser("rule", help="show the documentation of one rule")
    rule.add_argument("code", metavar="CODE", help="a rule code or name, e.g. CC011 or duplicate-key")
    return parser


def exit_code(outcome: Outcome) -> int:
    if outcome.internal_errors:
        return EXIT_ERROR
    if any(diagnostic.severity.fails for diagnostic in outcome.diagnostics):
        return EXIT_FINDINGS
    return EXIT_OK


def _check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    paths: list[Path] = args.paths or [find_root(Path.cwd())]
    if args.config is not None and not args.config.is_file():
        raise UsageError(f"{args.config}: configuration file not found")
    explicit = config.load(str(args.config), args.config) if args.config is not None else None
    groups: dict[Path, tuple[Repository, list[Path]]] = {}
    for path in paths:
        if not path.exists() and not path.is_symlink():
            raise UsageError(f"{path}: no such file or folder")
        root = find_root(path)
        groups.setdefault(root, (Repository(root), []))[1].append(path)
    outcome = Outcome()
    for repository, group in groups.values():
        settings = explicit
        if settings is None:
            found = config.find(repository)
            settings = config.load(*found) if found is not None else config.Config()
        repository.exclude = settings.exclude
        rules, unknown = registry.select(args.select or settings.select, [*settings.ignore, *args.ignore])
        if unknown:
            raise UsageError(f"unknown rule {unknown[0]!r}{registry.suggestion(unknown[0])}; see `ci-checks rules`")
        files = sorted({item for path in group for item in targets(repository, path)})
        max_bytes = args.max_file_size or settings.max_file_size or DEFAULT_MAX_BYTES
        run(repository, files, rules, max_bytes, outcome)
    if args.output_format == "json":
        out.write(json_output.render(outcome.diagnostics))
    else:
        out.write(text.render(outcome.diagnostics, outcome.sources, outcome.files))
    for message in outcome.internal_errors:
        err.write(f"ci-checks: internal error: {message}\n")
    return exit_code(outcome)


def _rules(out: TextIO) -> int:
    width = max(len(rule.name) for rule in registry.RULES)
    for rule in registry.RULES:
        out.write(f"{rule.code}  {rule.name:<{width}}  {rule.severity.value:<7}  {rule.summary}\n")
    return EXIT_OK


def _rule(code: str, out: TextIO) -> int:
    rule = registry.lookup(code)
    if rule is None:
        raise UsageError(f"no rule {code!r}{registry.suggestion(code)}; see `ci-checks rules`")
    out.write(f"# {rule.code} {rule.name}\n\nDefault severity: {rule.severity.value}\n\n{rule.docs.strip()}\n")
    return EXIT_OK


def main(argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        args = build_parser().parse_args(argv)
        if args.command == "check":
            return _check(args, out, err)
        if args.command == "rules":
            return _rules(out)
        return _rule(args.code, out)
    except UsageError as error:
        err.write(f"ci-checks: error: {error}\n")
        return EXIT_ERROR
    except config.ConfigError as error:
        span = error.span
        err.write(f"{span.path}:{span.line}:{span.column}: error: {error.message}\n")
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_ERROR
    except SystemExit as exit_request:  # argparse's --help and --version
        return int(exit_request.code or 0)
    except Exception as error:  # never a traceback for the user; the message says where to look
        err.write(f"ci-checks: internal error: {error!r}\n")
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
