"""The configuration file: `.github/ci-checks.yml` (or `.yaml`), else `[tool.ci-checks]` in `pyproject.toml`.

It is data read from the checked repository (or from a trusted git ref, see
`config_source`), validated against `schemas/ci-checks.schema.json`; a bad
file, or one that is not a regular file, is a positioned `ConfigError`.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ci_checks.config import registry
from ci_checks.config import selection as settings
from ci_checks.core import source
from ci_checks.core.config_files import ConfigError, find, readable
from ci_checks.core.config_source import open_source
from ci_checks.core.diagnostics import Severity, Span
from ci_checks.core.globs import Glob, GlobError, compile_glob
from ci_checks.core.linters import backend_names
from ci_checks.core.repository import Repository
from ci_checks.core.source import SourceFile, parse_size
from ci_checks.model.runners import Runner, RunnerInventory
from ci_checks.rules.context import GITHUB_TIMEOUT_MINUTES
from ci_checks.syntax import yamlpos

if sys.version_info >= (3, 11):
    import tomllib
else:  # the same parser, before it joined the standard library
    import tomli as tomllib

if TYPE_CHECKING:  # the policy engine and the configuration's schema are imported only when a configuration is read
    from ci_checks.policy import PolicyRule
    from ci_checks.policy.model import Locate

_NOT_A_LABEL = re.compile(r"[\s,]")


@dataclass
class Config:
    path: str | None = None
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    max_file_size: int | None = None
    rules: list[PolicyRule] = field(default_factory=list)
    backends: list[str] | None = None
    severity: dict[str, Severity] = field(default_factory=dict)
    profile: str | None = None
    """Which linter findings to keep (`correctness`, `security`, `all`); None: the default."""
    per_file_ignores: list[settings.PerFileIgnore] = field(default_factory=list)
    """`per-file-ignores`: what is ignored in the files each glob matches (`Selection.with_per_file_ignores`)."""
    runners: RunnerInventory = field(default_factory=RunnerInventory)
    fix_timeout_minutes: int = GITHUB_TIMEOUT_MINUTES
    """What `--fix` gives a self-hosted job without `timeout-minutes`."""
    source: SourceFile | None = None
    """The file's text, for excerpts and ignore comments in it."""


def of_repository(repository: Repository, ref: str | None = None) -> Config:
    """The configuration of a repository, from its work tree or from the commit `ref` names."""
    files = open_source(repository, ref)
    try:
        found = find(files)
        return parse(found, repository) if found is not None else Config()
    finally:
        files.close()


def load(display: str, path: Path, repository: Repository | None = None) -> Config:
    """Read and validate a configuration file named on the command line; `display` is the path shown in errors."""
    return parse(readable(source.read(display, path)), repository)


def parse(text: SourceFile, repository: Repository | None = None) -> Config:
    """Validate a configuration file's text (`text.path` says whether it is TOML).

    `repository` is where policy values written as `from: {python: FILE, ...}` are read.
    """
    display = text.path
    if display.endswith(".toml"):
        data, locate = _from_toml(text)
    else:
        data, locate = _from_yaml(text)
    if data is None or locate is None:
        return Config(display, source=text)
    from ci_checks.config import schema as config_schema
    from ci_checks.policy import compile_rules
    from ci_checks.policy.validation import first_error

    problem = first_error(data, config_schema.build(precise=False))
    if problem is not None:
        message, where, at_key = problem
        raise ConfigError(message, locate(where, at_key))
    config = Config(display, source=text)
    reserved = {*registry.NAMES_BY_CODE, *registry.CODES_BY_NAME}
    config.rules = compile_rules(data.get("rules", []), locate, reserved, repository)  # a PolicyError is a ConfigError
    ids = {rule.id for rule in config.rules}
    _check_selectors(data, locate, ids)
    config.runners = _runners(data.get("runners", {}), locate)
    config.fix_timeout_minutes = data.get("fixes", {}).get("timeout-minutes", GITHUB_TIMEOUT_MINUTES)
    config.select = data.get("select")
    config.profile = data.get("profile")
    config.backends = backend_names(data["backends"]) if "backends" in data else None
    config.severity = {selector: Severity(level) for selector, level in data.get("severity", {}).items()}
    config.ignore = data.get("ignore", [])
    config.exclude = data.get("exclude", [])
    for index, pattern in enumerate(config.exclude):
        _path_glob(pattern, locate(["exclude", index], False))
    config.per_file_ignores = [
        settings.per_file_ignore(_path_glob(pattern, locate(["per-file-ignores", pattern], True)), selectors, ids)
        for pattern, selectors in data.get("per-file-ignores", {}).items()
    ]
    size = data.get("max-file-size")
    if size is not None:
        config.max_file_size = size if isinstance(size, int) else parse_size(size)
    return config


def _path_glob(pattern: str, place: Span) -> Glob:
    try:
        return compile_glob(pattern)
    except GlobError as error:
        raise ConfigError(f"invalid glob {pattern!r}: {error}", place) from None


def _check_selectors(data: dict[str, Any], locate: Locate, policy_ids: set[str]) -> None:
    """A positioned error for a name in `select`, `ignore`, `severity` or `per-file-ignores` that names no rule or
    linter code."""
    places: list[tuple[list[str | int], str, bool]] = []
    for key in ("select", "ignore"):
        places.extend(([key, index], name, False) for index, name in enumerate(data.get(key, [])))
    places.extend((["severity", name], name, True) for name in data.get("severity", {}))
    for pattern, names in data.get("per-file-ignores", {}).items():
        places.extend((["per-file-ignores", pattern, index], name, False) for index, name in enumerate(names))
    for path, selector, at_key in places:
        try:
            settings.resolve([selector], [], policy_ids)
        except settings.SelectionError as error:
            raise ConfigError(str(error), locate(path, at_key)) from None


def _runners(data: dict[str, Any], locate: Locate) -> RunnerInventory:
    """The `runners:` inventory (already of the schema's shape); labels compare without case, as on GitHub."""
    runners = []
    for name, body in data.items():
        written = body.get("labels", [name])
        for index, label in enumerate(written):
            if _NOT_A_LABEL.search(label):
                path: list[str | int] = ["runners", name, "labels", index] if "labels" in body else ["runners", name]
                message = f"runner label {label!r} cannot contain spaces or commas"
                raise ConfigError(message, locate(path, "labels" not in body))
        labels = frozenset(label.lower() for label in written)
        place = locate(["runners", name], True)
        runners.append(Runner(name, labels, body.get("vendor"), body.get("self-hosted", True), place))
    return RunnerInventory(tuple(runners))


def _from_yaml(file: SourceFile) -> tuple[dict[str, Any] | None, Locate | None]:
    document = yamlpos.parse(file)
    for issue in document.issues:
        if issue.kind is not yamlpos.IssueKind.EMPTY:
            raise ConfigError(issue.message, issue.span)
    root = document.root
    if root is None:
        return None, None
    data = yamlpos.to_plain(root)
    if not isinstance(data, dict):
        raise ConfigError("the configuration must be a mapping", root.span)

    def locate(path: list[str | int], at_key: bool) -> Span:
        node, key = yamlpos.node_at(root, path)
        return key.span if at_key and key is not None else node.span

    return data, locate


def _from_toml(file: SourceFile) -> tuple[dict[str, Any] | None, Locate | None]:
    try:
        document = tomllib.loads(file.text)
    except tomllib.TOMLDecodeError as error:
        position = re.search(r"\(at line (\d+), column (\d+)\)", str(error))
        line, column = (int(position.group(1)), int(position.group(2))) if position else (1, 1)
        raise ConfigError(
            f"invalid TOML: {str(error).split(' (at ')[0]}", Span.point(file.path, line, column)
        ) from None
    section = document.get("tool", {}).get("ci-checks")
    if section is None:
        return None, None
    lines = range(1, len(file.line_starts) + 1)
    header = next((n for n in lines if file.line_text(n).strip() == "[tool.ci-checks]"), 1)
    rule_headers = [n for n in lines if file.line_text(n).strip() == "[[tool.ci-checks.rules]]"]

    def key_line(first: int, key: str, at_key: bool) -> Span | None:
        pattern = re.compile(rf"\s*(?P<key>\"?{re.escape(key)}\"?)\s*=\s*(?P<value>\S)")
        for line in range(first + 1, len(file.line_starts) + 1):
            text = file.line_text(line)
            match = pattern.match(text)
            if match:
                return Span.point(file.path, line, match.start("key" if at_key else "value") + 1)
            if text.lstrip().startswith("["):
                return None
        return None

    def locate(path: list[str | int], at_key: bool) -> Span:
        # The table of per-file ignores: `[tool.ci-checks.per-file-ignores]`, then a key for each glob.
        if len(path) >= 2 and path[0] == "per-file-ignores":
            start = next((n for n in lines if file.line_text(n).strip() == "[tool.ci-checks.per-file-ignores]"), None)
            if start is not None:
                return key_line(start, str(path[1]), at_key) or Span.point(file.path, start, 1)
        # Tables of runners: `[tool.ci-checks.runners.NAME]` headers, then the keys under each.
        if len(path) >= 2 and path[0] == "runners":
            headers = (f"[tool.ci-checks.runners.{path[1]}]", f'[tool.ci-checks.runners."{path[1]}"]')
            start = next((n for n in lines if file.line_text(n).strip() in headers), None)
            if start is not None:
                found = key_line(start, str(path[2]), at_key) if len(path) >= 3 else None
                return found or Span.point(file.path, start, 1)
        # Arrays of tables: `[[tool.ci-checks.rules]]` headers, then the keys under each.
        if len(path) >= 2 and path[0] == "rules" and isinstance(path[1], int) and path[1] < len(rule_headers):
            start = rule_headers[path[1]]
            if len(path) >= 3:
                found = key_line(start, str(path[2]), at_key)
                if found is not None:
                    return found
            return Span.point(file.path, start, 1)
        if path:
            found = key_line(header, str(path[0]), at_key)
            if found is not None:
                return found
        return Span.point(file.path, header, 1)

    return section, locate
