"""`key: PATH`: any part of a workflow, job, step, trigger or composite action, with an optional comparator.

PATH is relative to the scope (see `ci_checks.model.paths`): a workflow's
root, a job, a step, a trigger's value (`where.trigger`). Without a comparator
the item means "the key exists". With one (one per item), each node PATH
selects is judged by its value as GitHub reads it (`ci_checks.model.reading`):

- `equals: V`: the value equals V (`on: push` equals `[push]`; lists in order);
- `in: [V, ...]`: the value is one of these;
- `has: [V, ...]`: the value (a list, or a single value read as one) holds all of these;
- `set: [V, ...]` (in `require`, without `count`): the values PATH selects, together (a
  list counting as its elements), are exactly these in any order; a value missing is a
  finding at the scope, one too many a finding at its node;
- `keys: [K, ...]`: a mapping with exactly these keys; `keys_include: [K, ...]`: at least these;
- `matches: REGEX`, `contains: TEXT`: the value's text (after YAML unquoting, folding
  and block-scalar decoding, never the source text) matches or contains it; a single
  value GitHub reads as a list (`runs-on: x`) is that value.

Wherever a list of values is written, `{from: {python: FILE, name: CONSTANT}}`
reads a module-level constant of a Python file of the repository as Python
iterates it (`list(CONSTANT)`: a dict's keys, a set's elements), from its
syntax tree (`ci_checks.syntax.pysource.constant`), never importing or running it.
A constant only running the module would give is a finding of the rule (CC106).

In `require`, the item holds when PATH selects at least one node and every
selected node satisfies the comparator; each one that does not is a finding
at its value. With `count`, the nodes that satisfy the comparator are counted
and the others are no findings. In `forbid`, each selected node that satisfies
it is a finding at its value (at its key for `keys` and bare existence). In
`order`, the item is where its first satisfying node is written.

```yaml
- key: jobs.stage-*-gpu-*.needs
  has: [build-image]
- key: on.schedule[*].cron
  in: ["0 1 * * *", "0 13 * * *"]
  count: 2
- key: "**.docker-decide"          # in a forbid rule: no key of that name anywhere
- key: "[*].cron"                  # in a trigger scope: exactly the crons of a constant
  set: {from: {python: tools/ci_config.py, name: SCHEDULE_POLICIES}}
```
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import regex

from ci_checks.model import reading
from ci_checks.model.paths import KeyPath, PathError, Selected, parse_path, select
from ci_checks.policy import shapes
from ci_checks.policy.compiling import values
from ci_checks.policy.items.regex import MAX_EXPANSION, TIMEOUT_S, expansion
from ci_checks.policy.model import Hit, Item, ItemContext, ItemKind, Scope, SearchTimedOut
from ci_checks.syntax.yamlpos import Mapping as YamlMapping
from ci_checks.syntax.yamlpos import Plain
from ci_checks.syntax.yamlpos import Sequence as YamlSequence

_FROM = {
    "type": "object",
    "additionalProperties": False,
    "required": ["from"],
    "properties": {
        "from": {
            "description": "A module-level constant of a Python file of the repository, read as Python iterates it "
            "(a dict's keys), never run.",
            "type": "object",
            "additionalProperties": False,
            "required": ["python", "name"],
            "properties": {
                "python": {"type": "string", "minLength": 1},
                "name": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
            },
        }
    },
}
_LIST = {"oneOf": [{"type": "array", "minItems": 1}, _FROM]}
_NAMES = {"oneOf": [{"type": "array", "minItems": 1, "items": {"type": "string"}}, _FROM]}
COMPARATORS = ("equals", "in", "has", "set", "keys", "keys_include", "matches", "contains")
PROPERTIES = {
    "key": {
        "description": "A PATH relative to the scope: `jobs.*.needs`, `on.schedule[*].cron`; `**` descends any depth "
        "(`**.uses`).",
        "type": "string",
    },
    "equals": {"description": "The value equals this, as GitHub reads both."},
    "in": {**_LIST, "description": "The value is one of these."},
    "has": {**_LIST, "description": "The value (a list, or one value read as a list) holds all of these."},
    "set": {
        **_LIST,
        "description": "In `require`: the values PATH selects, taken together (a list counting as its elements), "
        "are exactly these, in any order.",
    },
    "keys": {**_NAMES, "description": "A mapping with exactly these keys."},
    "keys_include": {**_NAMES, "description": "A mapping with at least these keys."},
    "matches": {"description": "A regular expression the value's text matches.", "type": "string", "minLength": 1},
    "contains": {"description": "A substring of the value's text.", "type": "string", "minLength": 1},
}


@dataclass(frozen=True)
class Comparator:
    description: str
    judge: Callable[[Selected], str | None]
    """None when the node satisfies the comparator, else why not."""
    at_key: bool = False
    lacking: Callable[[list[Selected]], list[str]] | None = None
    """For a comparator of the selected nodes together (`set`): the wanted values none of them has, as shown."""


def _existence() -> Comparator:
    return Comparator("", lambda selected: None, at_key=True)


def _shown(value: Plain) -> str:
    """A value as a message shows it; a text's final line break is not shown (`|` and `|-` scripts read alike)."""
    text = reading.shown(value.removesuffix("\n") if isinstance(value, str) else value)
    return text if len(text) <= 80 else text[:77] + "..."


def _list(value: Plain, name: str, context: ItemContext) -> list[Plain]:
    if not isinstance(value, list):
        raise context.place.error(f"`{name}` takes a list of values", name)
    return value


def _comparator(name: str, raw: Any, context: ItemContext) -> Comparator:
    value = values(raw, context.place.at(name))
    if name == "equals":

        def equals(selected: Selected) -> str | None:
            actual, wanted = selected.value, reading.written(value, selected.path)
            return None if reading.equal(actual, wanted) else f"is {_shown(actual)}, not {_shown(wanted)}"

        return Comparator(f"equals {_shown(value)}", equals)
    if name == "in":
        choices = _list(value, name, context)
        readings = _Readings(choices)

        def one_of(selected: Selected) -> str | None:
            actual = selected.value
            wanted, keys = readings.at(selected.path)
            if _key(actual) in keys:
                return None
            return f"is {_shown(actual)}, not one of {_listed(wanted)}"

        return Comparator(f"in {_shown(choices)}", one_of)
    if name == "has":
        members: list[Plain] = value if isinstance(value, list) else [value]
        member_readings = _Readings(members)

        def has(selected: Selected) -> str | None:
            actual = selected.value
            present = {_key(item) for item in (actual if isinstance(actual, list) else [actual])}
            wanted, _ = member_readings.at((*selected.path, 0))
            missing = [want for want in wanted if _key(want) not in present]
            return None if not missing else f"is {_shown(actual)}, without {_listed(missing)}"

        return Comparator(f"has {_shown(members)}", has)
    if name == "set":
        return _set(_list(value, name, context))
    if name in ("keys", "keys_include"):
        names = [str(item) for item in _list(value, name, context)]
        exact = name == "keys"

        def keys(selected: Selected) -> str | None:
            actual = selected.value
            if not isinstance(actual, dict):
                return f"is {_shown(actual)}, not a mapping"
            missing = [key for key in names if key not in actual]
            extra = [key for key in actual if key not in names] if exact else []
            if not missing and not extra:
                return None
            parts = ([f"lacks {', '.join(missing)}"] if missing else []) + (
                [f"also has {', '.join(extra)}"] if extra else []
            )
            return f"has the keys {', '.join(sorted(actual)) or 'none'}: it {' and '.join(parts)}"

        verb = "has exactly the keys" if exact else "has the keys"
        return Comparator(f"{verb} {', '.join(names)}", keys, at_key=True)
    text = str(value)
    if name == "matches":
        if expansion(text) > MAX_EXPANSION:
            raise context.place.error(f"regular expression {text[:60]!r} repeats too much", name)
        try:
            pattern = regex.compile(text, regex.VERSION0)
        except (regex.error, OverflowError, MemoryError, RecursionError) as error:
            raise context.place.error(f"invalid regular expression {text!r}: {error}", name) from None

        def matches(selected: Selected) -> str | None:
            actual = _single(selected)
            if isinstance(actual, dict | list):
                return f"is {_shown(actual)}, not a single value"
            try:
                found = pattern.search(reading.github_string(actual), timeout=TIMEOUT_S)
            except TimeoutError:
                raise _Timeout from None
            return None if found else f"is {_shown(actual)}, which does not match /{text}/"

        return Comparator(f"matches /{text}/", matches)

    def contains(selected: Selected) -> str | None:
        actual = _single(selected)
        if isinstance(actual, dict | list):
            return f"is {_shown(actual)}, not a single value"
        return None if text in reading.github_string(actual) else f"is {_shown(actual)}, without {text!r}"

    return Comparator(f"contains {text!r}", contains)


def _single(selected: Selected) -> Plain:
    """The value, or its one element when GitHub reads a single value as a list (`runs-on: x` is `[x]`)."""
    value = selected.value
    node = selected.node
    if isinstance(value, list) and len(value) == 1 and node is not None and not isinstance(node, YamlSequence):
        return value[0]
    return value


def _elements(selected: Selected) -> list[tuple[Plain, reading.Path]]:
    """The values a selected node adds to a set, each with the place it is read at: a list's elements, or itself."""
    value = selected.value
    if isinstance(value, list):
        return [(item, (*selected.path, index)) for index, item in enumerate(value)]
    return [(value, selected.path)]


def _set(members: list[Plain]) -> Comparator:
    shown = _shown(members)
    readings = _Readings(members)

    def within(selected: Selected) -> str | None:
        extra = [item for item, path in _elements(selected) if _key(item) not in readings.at(path)[1]]
        return None if not extra else f"holds {_listed(extra)}, which the set {shown} does not"

    def lacking(selected: list[Selected]) -> list[str]:
        found: dict[reading.Path, set[object]] = {}
        for node in selected:
            for item, path in _elements(node):
                found.setdefault(_kind_of_place(path), set()).add(_key(item))
        present = [False] * len(members)
        for place, keys in found.items():
            wanted, _ = readings.at(place)
            present = [seen or _key(want) in keys for seen, want in zip(present, wanted, strict=True)]
        return [_shown(member) for member, seen in zip(members, present, strict=True) if not seen]

    return Comparator(f"is the set {shown}", within, lacking=lacking)


def _kind_of_place(path: reading.Path) -> reading.Path:
    """A place with its list indexes made 0: how GitHub reads a value there depends on its keys alone."""
    return tuple(0 if isinstance(part, int) else part for part in path)


class _Readings:
    """Values of the policy as GitHub reads them at each kind of place, with their keys: found once per kind of
    place, so that a constant of many values is compared in time linear in what is selected."""

    def __init__(self, values: list[Plain]) -> None:
        self.values = values
        self.read: dict[reading.Path, tuple[list[Plain], set[object]]] = {}

    def at(self, path: reading.Path) -> tuple[list[Plain], set[object]]:
        place = _kind_of_place(path)
        found = self.read.get(place)
        if found is None:
            wanted = [reading.written(value, place) for value in self.values]
            found = self.read[place] = (wanted, {_key(value) for value in wanted})
        return found


def _key(value: Plain) -> object:
    """A value as a hashable key, equal for two values exactly when `reading.equal` says they are."""
    if value is None or (isinstance(value, str) and not value):
        return ("empty",)
    if isinstance(value, bool):
        return ("boolean", value)
    if isinstance(value, int | float):
        return ("number", value)
    if isinstance(value, list):
        return ("list", tuple(_key(item) for item in value))
    if isinstance(value, dict):
        return ("mapping", tuple(sorted((key, _key(item)) for key, item in value.items())))
    return ("text", value)


_LISTED = 10
"""How many values a message lists before saying how many more there are."""


def _listed(values: list[Plain]) -> str:
    shown = ", ".join(_shown(value) for value in values[:_LISTED])
    return shown + (f" and {len(values) - _LISTED} more" if len(values) > _LISTED else "")


class _Timeout(Exception):
    pass


class KeyItem(Item):
    def __init__(
        self, key_path: KeyPath, comparator: Comparator, roots: tuple[shapes.Shape, ...], context: ItemContext
    ) -> None:
        description = f"`{key_path}`" + (f" {comparator.description}" if comparator.description else "")
        super().__init__("key", description)
        self.span = context.place.span("key")
        self.key_path = key_path
        self.comparator = comparator
        self.roots = roots

    def selected(self, scope: Scope) -> list[Selected]:
        return select(scope.node, scope.node_path, self.key_path)

    def find(self, scope: Scope) -> list[Hit]:
        hits = []
        where = "" if scope.whole_file else f" in {scope.label}"
        selected_nodes = self.selected(scope)
        for selected in selected_nodes:
            try:
                failure = self.comparator.judge(selected)
            except _Timeout:
                raise SearchTimedOut(self, self.span, scope.path or "", TIMEOUT_S) from None
            span = selected.key_span if self.comparator.at_key else selected.span
            value = _shown(selected.value) if self.comparator.description else ""
            shown = f"`{selected.shown}`" if selected.shown else "the scope's own value"
            hits.append(Hit(span, shown, failure is None, failure or "", value, where))
        if self.comparator.lacking is not None:
            lacking = self.comparator.lacking(selected_nodes)
            if lacking:
                more = f" and {len(lacking) - _LISTED} more" if len(lacking) > _LISTED else ""
                of_the_set = self.comparator.description.removeprefix("is the set ")
                failure = f"lacks {', '.join(lacking[:_LISTED])}{more} of the set {of_the_set}"
                hits.append(Hit(scope.anchor, f"`{self.key_path}`", False, failure, context=where))
        return hits

    def absent_because(self, scope: Scope) -> str:
        if scope.node is None:
            return ""  # a trigger with no settings (`push:`) lacks every key
        stop, where = _keys_there(self.key_path, scope)
        if shapes.names_a_setting(self.key_path, stop, self.roots):
            return ""  # an absent setting GitHub defines is a state, not a drifted name
        return where


def _keys_there(key_path: KeyPath, scope: Scope) -> tuple[int, str]:
    """The segment where the PATH stops selecting in a scope, and which keys there are there instead.

    Asked where the whole PATH selects nothing in a scope that has a node: its empty prefix selects that node, so
    a shorter prefix selects something.
    """
    shorter = (key_path.segments[:length] for length in range(len(key_path.segments) - 1, -1, -1))
    deepest, found = next(
        (len(prefix), nodes)
        for prefix in shorter
        if (nodes := select(scope.node, scope.node_path, KeyPath(key_path.text, prefix)))
    )
    keys = set[str]()
    for selected in found:
        if reading.is_events(selected.path) and selected.node is not None:
            keys.update(name for name, _, _ in reading.events(selected.node))
        elif isinstance(selected.node, YamlMapping):
            keys.update(key.value for key, _ in selected.node.items())
    segment = key_path.segments[deepest]
    walked = key_path.text[: segment.offset].rstrip(".")
    listed = ", ".join(sorted(keys)) or "none"
    under = f"under `{walked}`" if walked else "at the top of the scope"
    return deepest, f"nothing matches {segment.text!r} {under} (keys there: {listed})"


def _compile(raw: Mapping[str, Any], context: ItemContext) -> Item:
    place = context.place
    if context.where is not None and not context.where.has_nodes:
        raise place.error("a branch of a script has no keys: `key:` looks into workflows, jobs, steps or triggers")
    roots = context.shapes
    try:
        key_path = parse_path(raw["key"])
        shapes.check(key_path, roots)
    except PathError as error:
        raise place.error(f"invalid PATH {raw['key']!r}: {error}", "key") from None
    named = [name for name in COMPARATORS if name in raw]
    if len(named) > 1:
        raise place.error(f"a `key` item takes one comparator; found {', '.join(named)}", named[1], key=True)
    if named == ["set"] and (context.kind.name != "require" or "count" in raw):
        wrong = "with `count`" if "count" in raw else f"in a `{context.kind.name}` rule"
        message = f"`set` judges the values a PATH selects together, in a `require` rule without `count`; not {wrong}"
        raise place.error(message, "set", key=True)
    comparator = _comparator(named[0], raw[named[0]], context) if named else _existence()
    return KeyItem(key_path, comparator, roots, context)


ITEM = ItemKind(
    "key", "any part of a workflow addressed by a PATH, with a comparator", PROPERTIES, _compile, __doc__ or ""
)
