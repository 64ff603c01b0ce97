"""The configuration file: `.github/ci-checks.yml` (or `.yaml`), else `[tool.ci-checks]` in `pyproject.toml`.

It is data read from the checked repository, validated against
`schemas/ci-checks.schema.json`; a bad file is a positioned `ConfigError`.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import jsonschema

from ci_checks import own_schemas, registry, source, yamlpos
from ci_checks.diagnostics import Span
from ci_checks.policy import PolicyError, PolicyRule, compile_rules
from ci_checks.policy.model import Locate
from ci_checks.repository import Repository
from ci_checks.source import SourceFile

CONFIG_FILES = (".github/ci-checks.yml", ".github/ci-checks.yaml")
PYPROJECT = "pyproject.toml"
_SIZE = re.compile(r"(?P<number>[0-9]+) ?(?P<unit>[KMG]i?B|B)?\Z", re.IGNORECASE)
_UNITS = {"": 1, "B": 1, "KB": 1000, "MB": 1000**2, "GB": 1000**3, "KIB": 1 << 10, "MIB": 1 << 20, "GIB": 1 << 30}


_ITEM_LISTS = ("order", "forbid", "require")


class ConfigError(Exception):
    def __init__(self, message: str, span: Span) -> None:
        super().__init__(message)
        self.message = message
        self.span = span


@dataclass
class Config:
    path: str | None = None
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    max_file_size: int | None = None
    rules: list[PolicyRule] = field(default_factory=list)
    backends: list[str] | None = None
    source: SourceFile | None = None
    """The file's text, for excerpts and ignore comments in it."""


def parse_size(text: str) -> int:
    """Bytes in `4MiB`, `512KiB`, `2MB` or `1000`; ValueError otherwise."""
    match = _SIZE.match(text.strip())
    if match is None or int(match.group("number")) <= 0:
        raise ValueError(f"{text!r} is not a size such as 4MiB, 512KiB or 1000000")
    return int(match.group("number")) * _UNITS[(match.group("unit") or "").upper()]


def find(repository: Repository) -> tuple[str, Path] | None:
    """The repo-relative path and location of the repository's configuration, if it has one."""
    for relative in CONFIG_FILES:
        path = repository.root / relative
        if path.is_file():
            return relative, path
    pyproject = repository.root / PYPROJECT
    if pyproject.is_file() and "ci-checks" in _read(PYPROJECT, pyproject).text:
        return PYPROJECT, pyproject
    return None


def load(display: str, path: Path) -> Config:
    """Read and validate a configuration file; `display` is the path shown in errors."""
    text = _read(display, path)
    if path.name == PYPROJECT or path.suffix == ".toml":
        data, locate = _from_toml(text)
    else:
        data, locate = _from_yaml(text)
    if data is None or locate is None:
        return Config(display, source=text)
    validator = jsonschema.Draft202012Validator(own_schemas.load(own_schemas.CONFIG))
    errors = sorted(validator.iter_errors(data), key=_error_order)
    if errors:
        error = errors[0]
        where = list(error.absolute_path)
        if error.validator == "additionalProperties":
            raise ConfigError(_message(error), locate([*where, _unknown_keys(error)[0]], True))
        raise ConfigError(_message(error), locate(where, error.validator == "required"))
    config = Config(display, source=text)
    reserved = {*registry.BY_CODE, *registry.BY_NAME}
    try:
        config.rules = compile_rules(data.get("rules", []), locate, reserved)
    except PolicyError as error:
        raise ConfigError(error.message, error.span) from None
    config.select = data.get("select")
    config.backends = data.get("backends")
    config.ignore = data.get("ignore", [])
    config.exclude = data.get("exclude", [])
    size = data.get("max-file-size")
    if size is not None:
        config.max_file_size = size if isinstance(size, int) else parse_size(size)
    return config


def _read(display: str, path: Path) -> SourceFile:
    file = source.read(display, path)
    if file.problem is not None:
        raise ConfigError(file.problem.message, Span.point(display, file.problem.line, file.problem.column))
    return file


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


def _error_order(error: jsonschema.ValidationError) -> tuple[list[str], int]:
    """First by place in the file; at one place, the error that says most (an unknown kind before its consequences)."""
    specific = {"enum": 0, "additionalProperties": 1, "required": 2}
    return list(map(str, error.absolute_path)), specific.get(str(error.validator), 3)


def _known_keys(error: jsonschema.ValidationError) -> list[str]:
    schema = cast(dict[str, Any], error.schema)
    return sorted(schema.get("properties", {}))


def _unknown_keys(error: jsonschema.ValidationError) -> list[str]:
    known = _known_keys(error)
    return [key for key in cast(dict[str, Any], error.instance) if key not in known]


def _message(error: jsonschema.ValidationError) -> str:
    if error.validator == "additionalProperties":
        known = _known_keys(error)
        hints = []
        for key in _unknown_keys(error):
            close = difflib.get_close_matches(key, known, n=1)
            hints.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        return f"unknown configuration key {', '.join(hints)}; known keys: {', '.join(known)}"
    where = ".".join(str(part) for part in error.absolute_path) or "the configuration"
    if error.validator == "enum":
        choices = [str(choice) for choice in cast(list[object], error.validator_value)]
        close = difflib.get_close_matches(str(error.instance), choices, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return f"{where}: unknown value {error.instance!r}{hint}; expected one of {', '.join(choices)}"
    if error.validator == "minItems":
        count = error.validator_value
        return f"{where} needs at least {count} item{'s' if count != 1 else ''}"
    if error.validator == "required":
        return f"{where or 'the rule'}: {error.message.replace(' is a required property', ' is required')}"
    path = list(error.absolute_path)
    if error.validator in ("minProperties", "maxProperties") and len(path) >= 2 and path[-2] in _ITEM_LISTS:
        keys = ", ".join(cast(dict[str, object], error.instance)) or "none"
        return f"{where} needs exactly one of command, step, text, regex, python, with or env; found: {keys}"
    if error.validator == "minProperties":
        return f"{where} cannot be empty"
    if error.validator == "maxProperties":
        return f"{where} takes exactly one key"
    if error.validator == "pattern":
        return f"{where}: {error.instance!r} must match {error.validator_value}"
    if error.validator == "const":
        return f"{where} must be {error.validator_value!r}"
    if error.validator == "type":
        return f"{where} must be of type {error.validator_value}"
    if error.validator == "oneOf" and where == "max-file-size":
        return "max-file-size must be a number of bytes or a size such as 4MiB"
    return f"{where}: {error.message}"
