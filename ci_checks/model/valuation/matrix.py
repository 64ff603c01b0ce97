"""A job's matrix as GitHub expands it: the product of its axes, less `exclude`, with `include` merged or added.

GitHub's rules (Workflow syntax, `jobs.<job_id>.strategy.matrix.include`):
each `include` entry is added to every combination none of whose original
values it would change (values that an earlier `include` added may be
changed), and becomes a combination of its own when it fits none; `exclude`
entries remove the combinations whose values they all match, before
`include` is applied. An axis or a whole matrix may be an expression
(`${{ fromJSON(inputs.gpus) }}`): it is evaluated, and where its value cannot
be known the axis is one UNKNOWN value, so that what does not depend on it is
still told.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import product

from ci_checks.core.diagnostics import Span
from ci_checks.model.evaluation import UNKNOWN, Data, Value, from_plain
from ci_checks.syntax.yamlpos import Mapping, Node, Scalar, Sequence

MAX_COMBINATIONS = 64
"""How many combinations of one matrix are told apart: past that, the expansion is incomplete."""

Evaluate = Callable[[str], Value]


@dataclass(frozen=True)
class Cell:
    """One matrix value of a combination, and where it is written (None: it came out of an expression)."""

    value: Value
    span: Span | None
    node: Node | None = None
    """The YAML the value is written as (None: it came out of an expression)."""


@dataclass
class Expansion:
    combinations: list[dict[str, Cell]] = field(default_factory=list)
    """Each combination's values by name (lower case, as `matrix.*` reads them)."""
    complete: bool = True
    """False where a combination was left out (past the cap) or a part could not be read."""


def expand(matrix: Node | None, evaluate: Evaluate) -> Expansion:
    """The combinations of a `strategy.matrix` (none: one combination with no values)."""
    result = Expansion()
    if matrix is None:
        result.combinations.append({})
        return result
    if isinstance(matrix, Scalar):
        value = evaluate(matrix.value) if "${{" in matrix.value else UNKNOWN
        if not isinstance(value, Data) or value.fields is None:
            result.complete = False
            result.combinations.append({})  # a combination whose every `matrix.*` is not known
            return result
        return _expand_data(value, matrix.span, result)
    if not isinstance(matrix, Mapping):
        result.complete = False
        result.combinations.append({})
        return result
    axes: dict[str, list[Cell]] = {}
    include: list[dict[str, Cell]] = []
    exclude: list[dict[str, Cell]] = []
    for key, node in matrix.items():
        name = key.value.lower()
        if name in ("include", "exclude"):
            entries = _entries(node, evaluate, result)
            (include if name == "include" else exclude).extend(entries)
        else:
            axes[name] = _axis(node, evaluate, result)
    return _combine(axes, include, exclude, result)


def _expand_data(data: Data, span: Span, result: Expansion) -> Expansion:
    """A whole matrix given as one value (`matrix: ${{ fromJSON(needs.plan.outputs.matrix) }}`)."""
    axes: dict[str, list[Cell]] = {}
    include: list[dict[str, Cell]] = []
    exclude: list[dict[str, Cell]] = []
    for name, value in data.fields or ():
        if name in ("include", "exclude"):
            items = value.items if isinstance(value, Data) and value.items is not None else None
            if items is None:
                result.complete = False
                continue
            entries = [_data_entry(item, span) for item in items]
            (include if name == "include" else exclude).extend(entry for entry in entries if entry is not None)
        elif isinstance(value, Data) and value.items is not None:
            axes[name] = [Cell(item, span) for item in value.items]
        else:
            result.complete = False
            axes[name] = [Cell(UNKNOWN, span)]
    return _combine(axes, include, exclude, result)


def _data_entry(value: Value, span: Span) -> dict[str, Cell] | None:
    if isinstance(value, Data) and value.fields is not None:
        return {name: Cell(item, span) for name, item in value.fields}
    return None


def _axis(node: Node, evaluate: Evaluate, result: Expansion) -> list[Cell]:
    if isinstance(node, Sequence):
        return [Cell(node_value(item, evaluate), item.span, item) for item in node.items]
    if isinstance(node, Scalar) and "${{" in node.value:
        value = evaluate(node.value)
        if isinstance(value, Data) and value.items is not None:
            return [Cell(item, node.span) for item in value.items]
    result.complete = False
    return [Cell(UNKNOWN, node.span)]


def _entries(node: Node, evaluate: Evaluate, result: Expansion) -> list[dict[str, Cell]]:
    """The objects of an `include` or `exclude` list."""
    if isinstance(node, Scalar) and "${{" in node.value:
        value = evaluate(node.value)
        if isinstance(value, Data) and value.items is not None:
            found = [_data_entry(item, node.span) for item in value.items]
            return [entry for entry in found if entry is not None]
    if not isinstance(node, Sequence):
        result.complete = False
        return []
    entries: list[dict[str, Cell]] = []
    for item in node.items:
        if isinstance(item, Mapping):
            entries.append(
                {key.value.lower(): Cell(node_value(value, evaluate), value.span, value) for key, value in item.items()}
            )
        else:
            result.complete = False
    return entries


def node_value(node: Node, evaluate: Evaluate, depth: int = 0) -> Value:
    """A matrix value as GitHub keeps it: YAML's own type, lists and mappings as `Data`, expressions evaluated."""
    if depth > 16:
        return UNKNOWN
    if isinstance(node, Scalar):
        if "${{" in node.value:
            return evaluate(node.value)
        return from_plain(node.resolved)
    if isinstance(node, Sequence):
        return Data(items=tuple(node_value(item, evaluate, depth + 1) for item in node.items))
    if isinstance(node, Mapping):
        return Data(
            fields=tuple((key.value.lower(), node_value(value, evaluate, depth + 1)) for key, value in node.items())
        )
    return UNKNOWN


def _combine(
    axes: dict[str, list[Cell]], include: list[dict[str, Cell]], exclude: list[dict[str, Cell]], result: Expansion
) -> Expansion:
    names = list(axes)
    if len(include) > MAX_COMBINATIONS or len(exclude) > MAX_COMBINATIONS * 4:
        result.complete = False  # more entries than combinations are told apart: the first ones are read
        include, exclude = include[:MAX_COMBINATIONS], exclude[: MAX_COMBINATIONS * 4]
    combinations: list[dict[str, Cell]] = []
    if names:
        for count, values in enumerate(product(*(axes[name] for name in names))):
            if count >= MAX_COMBINATIONS * 4:
                result.complete = False
                break
            combination = dict(zip(names, values, strict=True))
            if not any(_matches(entry, combination) for entry in exclude):
                combinations.append(combination)
    originals = len(combinations)
    for entry in include:
        fitted = False
        for combination in combinations[:originals]:
            if all(name not in axes or _same(combination[name], cell) for name, cell in entry.items()):
                combination.update(entry)
                fitted = True
        if not fitted:
            combinations.append(dict(entry))
    if len(combinations) > MAX_COMBINATIONS:
        result.complete = False
        combinations = combinations[:MAX_COMBINATIONS]
    result.combinations = combinations or ([] if names else [{}])
    return result


def _matches(entry: dict[str, Cell], combination: dict[str, Cell]) -> bool:
    """Whether an `exclude` entry removes the combination: each of its values matches (an object partly)."""
    return all(name in combination and _within(cell.value, combination[name].value) for name, cell in entry.items())


def _within(wanted: Value, value: Value) -> bool:
    if isinstance(wanted, Data) and wanted.fields is not None and isinstance(value, Data) and value.fields is not None:
        return all(_within(item, value.field(name)) for name, item in wanted.fields)
    return _equal(wanted, value)


def _same(first: Cell, second: Cell) -> bool:
    return _equal(first.value, second.value)


def _equal(first: Value, second: Value) -> bool:
    """Matrix values compare as GitHub compares them: strings without case, other values by type and value; an
    UNKNOWN is never known to be equal."""
    if first is UNKNOWN or second is UNKNOWN:
        return False
    if isinstance(first, str) and isinstance(second, str):
        return first.lower() == second.lower()
    return type(first) is type(second) and first == second
