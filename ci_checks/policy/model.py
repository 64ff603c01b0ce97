"""Policy rules as compiled from the configuration file, each part with its span there.

The file has already passed `schemas/ci-checks.schema.json`; compiling checks
what a schema cannot (regular expressions, globs, command patterns, ids) and
reports the first problem as a positioned `PolicyError`.
"""

from __future__ import annotations

import enum
import fnmatch
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import regex

from ci_checks import shell
from ci_checks.diagnostics import Severity, Span
from ci_checks.globs import GlobError, PathGlob, compile_glob
from ci_checks.model import Step
from ci_checks.pysource import FactKind
from ci_checks.shell import CommandPattern

Locate = Callable[[list[str | int], bool], Span]
"""From a JSON path in the configuration to the span of the key there (True) or of its value (False)."""


class PolicyError(Exception):
    def __init__(self, message: str, span: Span) -> None:
        super().__init__(message)
        self.message = message
        self.span = span


class Kind(enum.Enum):
    ORDER = "order"
    FORBID = "forbid"
    REQUIRE = "require"
    PARITY = "parity"


@dataclass(frozen=True)
class StepSelector:
    """Which steps: `either` globs the name or the id; `uses` globs `owner/repo[/path]`, or the whole value with `@`."""

    uses: str | None = None
    name: str | None = None
    id: str | None = None
    either: str | None = None

    def matches(self, step: Step) -> bool:
        if self.either is not None and not (_glob(step.name, self.either) or _glob(step.id, self.either)):
            return False
        if self.name is not None and not _glob(step.name, self.name):
            return False
        if self.id is not None and not _glob(step.id, self.id):
            return False
        if self.uses is not None:
            ref = step.uses
            if ref is None:
                return False
            return fnmatch.fnmatchcase(ref.raw if "@" in self.uses else ref.name, self.uses)
        return True

    def __str__(self) -> str:
        if self.either is not None:
            return repr(self.either)
        parts = [f"{key}: {value}" for key, value in (("uses", self.uses), ("name", self.name), ("id", self.id))]
        return "{" + ", ".join(part for part in parts if not part.endswith(": None")) + "}"


def _glob(value: str | None, pattern: str) -> bool:
    return value is not None and fnmatch.fnmatchcase(value, pattern)


@dataclass(frozen=True, eq=False)
class Matcher:
    """One item of a rule: `kind` is its key (command, step, text, regex, python, with, env)."""

    kind: str
    description: str
    span: Span
    command: CommandPattern | None = None
    step: StepSelector | None = None
    text: str | None = None
    pattern: regex.Pattern[str] | None = None
    fact: FactKind | None = None
    glob: str | None = None
    pairs: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, eq=False)
class Where:
    span: Span
    files: tuple[PathGlob, ...] = ()
    workflows: tuple[PathGlob, ...] = ()
    actions: tuple[PathGlob, ...] = ()
    job: str | None = None
    step: StepSelector | None = None
    branch: str | None = None


@dataclass(frozen=True, eq=False)
class Parity:
    workflows: tuple[tuple[str, Span], ...]
    compare: tuple[str, ...]
    allow: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class PolicyRule:
    id: str
    kind: Kind
    span: Span
    severity: Severity
    message: str | None = None
    where: Where | None = None
    items: tuple[Matcher, ...] = ()
    report_missing: bool = True
    parity: Parity | None = None


def compile_rules(data: Sequence[Mapping[str, Any]], locate: Locate, reserved: set[str]) -> list[PolicyRule]:
    """The rules of a validated configuration; `reserved` holds built-in codes and names an id may not take."""
    rules: list[PolicyRule] = []
    seen: dict[str, Span] = {}
    for index, raw in enumerate(data):
        path: list[str | int] = ["rules", index]
        rule_id = raw["id"]
        id_span = locate([*path, "id"], False)
        if rule_id in seen:
            first = seen[rule_id]
            raise PolicyError(f"duplicate rule id {rule_id!r}; first used at {first.line}:{first.column}", id_span)
        if rule_id.upper() in reserved or rule_id in reserved:
            raise PolicyError(f"rule id {rule_id!r} is taken by a built-in rule; choose another", id_span)
        seen[rule_id] = id_span
        rules.append(_rule(raw, path, locate, id_span))
    return rules


def _rule(raw: Mapping[str, Any], path: list[str | int], locate: Locate, id_span: Span) -> PolicyRule:
    kind = Kind(raw["kind"])
    severity = Severity(raw.get("severity", "error"))
    message = raw.get("message")
    if kind is Kind.PARITY:
        workflows = tuple(
            (_safe_path(value, [*path, "workflows", i], locate), locate([*path, "workflows", i], False))
            for i, value in enumerate(raw["workflows"])
        )
        allow = {key: tuple(values) for key, values in raw.get("allow", {}).items()}
        parity = Parity(workflows, tuple(raw["compare"]), allow)
        return PolicyRule(raw["id"], kind, id_span, severity, message, parity=parity)
    where = _where(raw["where"], [*path, "where"], locate)
    key = kind.value
    items = tuple(_matcher(item, [*path, key, i], locate) for i, item in enumerate(raw[key]))
    return PolicyRule(
        raw["id"], kind, id_span, severity, message, where, items, report_missing=raw.get("missing") != "ignore"
    )


def _as_list(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def _globs(value: str | list[str], path: list[str | int], locate: Locate) -> tuple[PathGlob, ...]:
    globs = []
    for index, text in enumerate(_as_list(value)):
        try:
            globs.append(compile_glob(text))
        except GlobError as error:
            where = path if isinstance(value, str) else [*path, index]
            raise PolicyError(f"invalid glob {text!r}: {error}", locate(where, False)) from None
    return tuple(globs)


def _safe_path(text: str, path: list[str | int], locate: Locate) -> str:
    """A repo-relative file path that stays inside the repository."""
    try:
        compile_glob(text)
    except GlobError as error:
        raise PolicyError(f"invalid path {text!r}: {error}", locate(path, False)) from None
    return text.removeprefix("./")


def _where(raw: Mapping[str, Any], path: list[str | int], locate: Locate) -> Where:
    span = locate(path, True)
    structural = [key for key in ("workflow", "action", "job", "step", "branch") if key in raw]
    if "files" in raw and structural:
        raise PolicyError(
            f"`where: files` selects whole files and cannot be combined with {', '.join(structural)}",
            locate([*path, structural[0]], True),
        )
    if "job" in raw and "action" in raw and "workflow" not in raw:
        raise PolicyError("composite actions have no jobs: `job` needs `workflow`", locate([*path, "job"], True))
    if "branch" in raw:
        _check_condition(raw["branch"], [*path, "branch"], locate)
    return Where(
        span,
        files=_globs(raw["files"], [*path, "files"], locate) if "files" in raw else (),
        workflows=_globs(raw["workflow"], [*path, "workflow"], locate) if "workflow" in raw else (),
        actions=_globs(raw["action"], [*path, "action"], locate) if "action" in raw else (),
        job=raw.get("job"),
        step=_step_selector(raw["step"]) if "step" in raw else None,
        branch=raw.get("branch"),
    )


def _step_selector(raw: str | Mapping[str, str]) -> StepSelector:
    if isinstance(raw, str):
        return StepSelector(either=raw)
    return StepSelector(uses=raw.get("uses"), name=raw.get("name"), id=raw.get("id"))


def _check_condition(condition: str, path: list[str | int], locate: Locate) -> None:
    script = shell.parse_fragment(condition)
    if script.errors or not list(script.commands()):
        raise PolicyError(f"branch condition {condition!r} is not a shell command", locate(path, False))


def _matcher(raw: Mapping[str, Any], path: list[str | int], locate: Locate) -> Matcher:
    [(key, value)] = raw.items()
    value_path = [*path, key]
    span = locate(value_path, False)
    if key == "command":
        try:
            pattern = CommandPattern.parse(value)
        except ValueError as error:
            raise PolicyError(str(error), span) from None
        return Matcher(key, f"`{pattern}`", span, command=pattern)
    if key == "step":
        selector = _step_selector(value)
        return Matcher(key, f"a step {selector}", span, step=selector)
    if key == "text":
        return Matcher(key, f"{value!r}", span, text=value)
    if key == "regex":
        try:
            compiled = regex.compile(value, regex.MULTILINE | regex.VERSION0)
        except regex.error as error:
            raise PolicyError(f"invalid regular expression {value!r}: {error}", span) from None
        return Matcher(key, f"/{value}/", span, pattern=compiled)
    if key == "python":
        [(fact, glob)] = value.items()
        return Matcher(key, f"Python {fact} {glob!r}", span, fact=FactKind(fact), glob=glob)
    pairs = tuple((name, pair_text(item)) for name, item in value.items())
    shown = ", ".join(f"{name}: {text}" for name, text in pairs)
    return Matcher(key, f"`{key}: {{{shown}}}`", span, pairs=pairs)


def pair_text(value: object) -> str:
    """How GitHub sees a `with`/`env` value: booleans as `true`/`false`, numbers as written by YAML."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
