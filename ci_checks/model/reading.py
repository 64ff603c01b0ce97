"""Values as GitHub reads them, so that a policy compares meaning, never how a value is written.

- Scalars follow YAML 1.2 (`on`, `yes` and `no` are strings; `3.10` is the
  number 3.1, which GitHub passes on as `3.1`).
- Where GitHub wants a string (almost everywhere: names, `run`, `with` of a
  step, `env`, `if`, `permissions`), a boolean, number or null scalar is read
  as the string GitHub makes of it: `true`, `3.1`, `12`, ``. Where GitHub
  keeps the YAML type (`TYPED` below: `timeout-minutes`, `continue-on-error`,
  `fail-fast`, matrix values, inputs of a reusable-workflow call...), `true`
  and `'true'` differ.
- `on: push`, `on: [push]` and `on: {push: }` are the same mapping of events.
- A key that takes one value or a list of them (`needs: a`, `branches: main`,
  `runs-on: x`, `types: opened`) reads as a list, so `needs: a` equals
  `needs: [a]`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from ci_checks.core.globs import Glob, compile_glob
from ci_checks.syntax.yamlpos import Mapping, Node, Plain, Scalar
from ci_checks.syntax.yamlpos import Sequence as YamlSequence

Path = tuple[str | int, ...]
"""A place in a file, from its root: keys and list indexes."""


def _globs(*patterns: str) -> tuple[Glob, ...]:
    # Paths are matched as `/`-joined keys; the one glob dialect's `*` is one key.
    return tuple(compile_glob(pattern) for pattern in patterns)


TYPED = _globs(
    "jobs/*/continue-on-error",
    "jobs/*/timeout-minutes",
    "jobs/*/steps/*/continue-on-error",
    "jobs/*/steps/*/timeout-minutes",
    "jobs/*/strategy/fail-fast",
    "jobs/*/strategy/max-parallel",
    "jobs/*/strategy/matrix/**",
    "jobs/*/with/*",
    "jobs/*/services/*/ports/*",
    "jobs/*/container/ports/*",
    "concurrency/cancel-in-progress",
    "jobs/*/concurrency/cancel-in-progress",
    "on/*/inputs/*/required",
    "on/*/inputs/*/default",
    "on/workflow_call/secrets/*/required",
    "inputs/*/required",
    "runs/steps/*/continue-on-error",
)
"""Where GitHub keeps a scalar's YAML type instead of reading it as a string."""

ONE_OR_MANY = _globs(
    "jobs/*/needs",
    "jobs/*/runs-on",
    "on/*/branches",
    "on/*/branches-ignore",
    "on/*/tags",
    "on/*/tags-ignore",
    "on/*/paths",
    "on/*/paths-ignore",
    "on/*/types",
    "on/workflow_run/workflows",
)
"""Keys whose single value GitHub reads as a one-element list."""


def _joined(path: Path) -> str:
    return "/".join(str(part) for part in path)


def is_typed(path: Path) -> bool:
    joined = _joined(path)
    return any(glob.matches(joined) for glob in TYPED)


_CALL_INPUTS = _globs("jobs/*/with/*")


def is_call_input(path: Path) -> bool:
    """Whether the path is an input a job passes to the reusable workflow it calls (`jobs.<id>.with.<name>`)."""
    joined = _joined(path)
    return any(glob.matches(joined) for glob in _CALL_INPUTS)


def is_one_or_many(path: Path) -> bool:
    joined = _joined(path)
    return any(glob.matches(joined) for glob in ONE_OR_MANY)


def is_events(path: Path) -> bool:
    """Whether the path is a workflow's `on:`, which a string or a list also writes as a mapping."""
    return path == ("on",)


def github_string(value: Plain) -> str:
    """The string GitHub makes of a scalar: `true`, `3.1`, `12` (not `12.0`), `` for null."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    return str(value)


def scalar_value(node: Scalar, path: Path) -> Plain:
    resolved = node.resolved
    if resolved is None or isinstance(resolved, str) or is_typed(path):
        return resolved
    return github_string(resolved)


def read(node: Node | None, path: Path) -> Plain:
    """The node as GitHub reads it at `path`: plain data, strings where GitHub makes strings."""
    if node is None:
        return None
    if is_events(path):
        return {name: read(value, (*path, name)) for name, _, value in events(node)}
    if isinstance(node, Scalar):
        value = scalar_value(node, path)
        if is_one_or_many(path) and value not in (None, ""):
            return [value]
        return value
    if isinstance(node, Mapping):
        return {key.value: read(value, (*path, key.value)) for key, value in node.items()}
    assert isinstance(node, YamlSequence)
    return [read(item, (*path, index)) for index, item in enumerate(node.items)]


def events(node: Node) -> list[tuple[str, Scalar, Node | None]]:
    """The events of `on:`: (name, the scalar naming it, its configuration node or None)."""
    if isinstance(node, Scalar):
        return [(node.value, node, None)] if node.resolved is not None else []
    if isinstance(node, YamlSequence):
        return [(item.value, item, None) for item in node.items if isinstance(item, Scalar)]
    if isinstance(node, Mapping):
        return [(key.value, key, value) for key, value in node.items()]
    return []


def written(value: Plain, path: Path) -> Plain:
    """A value written in a policy, read as GitHub would read it at `path` in a workflow."""
    if is_events(path):
        if isinstance(value, str):
            return {value: None}
        if isinstance(value, list):
            return {str(item): None for item in value}
    if is_one_or_many(path) and not isinstance(value, list | dict) and value is not None:
        value = [value]
    if isinstance(value, dict):
        return {key: written(item, (*path, key)) for key, item in value.items()}
    if isinstance(value, list):
        return [written(item, (*path, index)) for index, item in enumerate(value)]
    if value is None or isinstance(value, str) or is_typed(path):
        return value
    return github_string(value)


def equal(actual: Plain, wanted: Plain) -> bool:
    """Whether two readings are the same value: numbers by value, lists in order, mappings by keys.

    A null and an empty string are the same: GitHub reads `X:` as `X: ''` where it wants a string.
    """
    if actual in (None, "") and wanted in (None, ""):
        return True
    if isinstance(actual, dict) and isinstance(wanted, dict):
        return actual.keys() == wanted.keys() and all(equal(actual[key], wanted[key]) for key in actual)
    if isinstance(actual, list) and isinstance(wanted, list):
        return len(actual) == len(wanted) and all(equal(a, w) for a, w in zip(actual, wanted, strict=True))
    if isinstance(actual, bool) or isinstance(wanted, bool):
        return actual is wanted
    if isinstance(actual, int | float) and isinstance(wanted, int | float):
        return actual == wanted
    return type(actual) is type(wanted) and actual == wanted


def contains_all(actual: Plain, wanted: Iterable[Plain]) -> bool:
    items = actual if isinstance(actual, list) else [actual]
    return all(any(equal(item, want) for item in items) for want in wanted)


def one_of(actual: Plain, choices: Sequence[Plain]) -> bool:
    return any(equal(actual, choice) for choice in choices)


def shown(value: Plain) -> str:
    """A reading as a person writes it in a message: `'main'`, `true`, `['a', 'b']`, `{push: null}`.

    Keys are sorted, so that reordering a mapping never changes a message.
    """
    if isinstance(value, str):
        return repr(value)
    if value is None:
        return "null"
    if isinstance(value, list):
        return "[" + ", ".join(shown(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {shown(value[key])}" for key in sorted(value)) + "}"
    return github_string(value)
