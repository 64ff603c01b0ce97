"""PATHs: addressing any part of a workflow, job, step, trigger or composite action.

A PATH is relative to its scope (a workflow's or action's root, a job, a step,
a trigger's value). Its segments are separated by dots:

- a key, which is a glob of the one dialect over the keys there (`needs`,
  `stage-*-gpu-*`, `*` for any key);
- `**`, which descends any depth, none included: `**.uses` is every `uses`
  below the scope, `**` every node of it;
- `[*]` every element of a list, `[N]` the Nth (from 0; `[-1]` is the last);
- `["a.b"]` (or `['a.b']`) a key taken literally: dots, spaces, glob characters.

So `jobs.stage-*-gpu-*.needs`, `on.schedule[*].cron`, `steps[0].uses` and
`env["PYTHON.VERSION"]`. PATHs walk the document as GitHub reads it: `on:`
written as a string or a list has the events as keys (`on.push` exists in
`on: [push]`), and a single value reads as a one-element list under `[*]` and
`[0]` (`needs[*]` selects `a` in `needs: a`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from ci_checks.core.diagnostics import Answer, Span
from ci_checks.core.globs import Glob, GlobError, compile_name_glob, literal
from ci_checks.model import reading
from ci_checks.model.reading import Path
from ci_checks.syntax.yamlpos import Mapping, Node, Plain, Scalar
from ci_checks.syntax.yamlpos import Sequence as YamlSequence

_BRACKET = re.compile(r"\[(?:(?P<each>\*)|(?P<index>-?[0-9]+)|\"(?P<dq>[^\"]*)\"|'(?P<sq>[^']*)')\]")


class PathError(ValueError):
    def __init__(self, message: str, offset: int = 0) -> None:
        super().__init__(message)
        self.offset = offset


@dataclass(frozen=True)
class Segment:
    kind: Literal["key", "each", "index", "deep"]
    text: str
    offset: int
    glob: Glob | None = None
    index: int = 0


@dataclass(frozen=True)
class KeyPath:
    text: str
    segments: tuple[Segment, ...]

    def __str__(self) -> str:
        return self.text


def parse_path(text: str) -> KeyPath:
    """The PATH, or PathError saying what is wrong and where."""
    if not text.strip():
        raise PathError("a PATH cannot be empty")
    segments: list[Segment] = []
    i = 0
    expect_key = True
    while i < len(text):
        bracket = _BRACKET.match(text, i)
        if bracket is not None:
            if bracket.group("each") is not None:
                segments.append(Segment("each", bracket.group(), i))
            elif bracket.group("index") is not None:
                segments.append(Segment("index", bracket.group(), i, index=int(bracket.group("index"))))
            else:
                name = bracket.group("dq") if bracket.group("dq") is not None else bracket.group("sq")
                segments.append(Segment("key", bracket.group(), i, literal(name or "")))
            i = bracket.end()
            expect_key = False
        elif text[i] == ".":
            if expect_key:
                raise PathError("a PATH segment is missing (two dots, or a leading dot)", i)
            i += 1
            expect_key = True
            if i == len(text):
                raise PathError("a PATH cannot end with a dot", i - 1)
        else:
            if not expect_key:
                raise PathError("a key follows a dot: write `a.b` or `a[0]`", i)
            end = _key_end(text, i)
            word = text[i:end]
            if word == "**":
                segments.append(Segment("deep", word, i))
                i = end
                expect_key = False
                continue
            try:
                glob = compile_name_glob(word)
            except GlobError as error:
                raise PathError(f"invalid key glob {word!r}: {error}", i + error.offset) from None
            segments.append(Segment("key", word, i, glob))
            i = end
            expect_key = False
    return KeyPath(text, tuple(segments))


def _key_end(text: str, start: int) -> int:
    """Where a key segment ends: at an unescaped dot, or at a `[` that opens an index or a quoted key."""
    i = start
    while i < len(text):
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char == ".":
            break
        if char == "[":
            if _BRACKET.match(text, i):
                break
            close = text.find("]", i + 1)
            i = close + 1 if close > i else len(text)
            continue
        i += 1
    return min(i, len(text))


@dataclass(frozen=True, eq=False)
class Selected:
    """A node a PATH selects: `path` is its place from the file's root, `shown` the PATH that leads to it."""

    path: Path
    shown: str
    key: Scalar | None
    node: Node | None
    """None for a key that has no node of its own: `push` in `on: [push]`."""
    span: Span

    @property
    def key_span(self) -> Span:
        return self.key.span if self.key is not None else self.span

    @property
    def value(self) -> Plain:
        """The value as GitHub reads it."""
        return reading.read(self.node, self.path)

    @property
    def where(self) -> str:
        return f"{self.span.path}:{self.span.line}:{self.span.column}"

    def __repr__(self) -> str:
        return f"{self.where}: `{self.shown}` = {reading.shown(self.value)}"

    def mapping_keys(self) -> list[str]:
        """The keys of a mapping value (the events of `on:`, whatever its shape); [] for anything else."""
        value = self.value
        return list(value) if isinstance(value, dict) else []

    def _answer(self, holds: bool, relation: str) -> Answer:
        verb = "" if holds else "not "
        return Answer(holds, f"{self.where}: `{self.shown}` is {reading.shown(self.value)}, {verb}{relation}")

    def equals(self, wanted: Plain) -> Answer:
        """Whether the value equals `wanted` as GitHub reads both (`needs: a` equals `["a"]`)."""
        target = reading.written(wanted, self.path)
        return self._answer(reading.equal(self.value, target), f"equal to {reading.shown(target)}")

    def one_of(self, choices: list[Plain]) -> Answer:
        targets = [reading.written(choice, self.path) for choice in choices]
        shown = ", ".join(reading.shown(target) for target in targets)
        return self._answer(reading.one_of(self.value, targets), f"one of {shown}")

    def has(self, *members: Plain) -> Answer:
        """Whether the value (a list, or one value read as a list) holds every one of `members`."""
        targets = [reading.written(member, (*self.path, 0)) for member in members]
        shown = ", ".join(reading.shown(target) for target in targets)
        return self._answer(reading.contains_all(self.value, targets), f"holding {shown}")

    def contains(self, text: str) -> Answer:
        """Whether the value's text (decoded, as GitHub reads it) contains `text`."""
        value = self.value
        holds = not isinstance(value, dict | list) and text in reading.github_string(value)
        return self._answer(holds, f"containing {text!r}")


def select_text(root: Node | None, base: Path, key_path: str) -> list[Selected]:
    """What a PATH written as text selects (PathError when it is not one)."""
    return select(root, base, parse_path(key_path))


def get_text(root: Node | None, base: Path, key_path: str, owner: str) -> Selected:
    """The first node a PATH selects; LookupError naming the keys that exist where it stops matching."""
    found = select_text(root, base, key_path)
    if found:
        return found[0]
    parsed = parse_path(key_path)
    for length in range(len(parsed.segments) - 1, -1, -1):
        prefix = select(root, base, KeyPath(key_path, parsed.segments[:length]))
        if prefix:
            keys = sorted({key for place in prefix for key in place.mapping_keys()})
            walked = key_path[: parsed.segments[length].offset].rstrip(".") or "its top"
            raise LookupError(
                f"{owner} has nothing at `{key_path}`: nothing matches {parsed.segments[length].text!r} under "
                f"`{walked}` (keys there: {', '.join(keys) or 'none'})"
            )
    raise LookupError(f"{owner} has nothing at `{key_path}`")


def select(root: Node | None, base: Path, key_path: KeyPath) -> list[Selected]:
    """Every node `key_path` selects below `root` (which sits at `base` in its file), in document order."""
    if root is None:
        return []
    current = [Selected(base, "", None, root, root.span)]
    for segment in key_path.segments:
        if segment.kind == "deep":
            below = [found for place in current for found in _descendants(place)]
            current = list({found.path: found for found in below}.values())  # `**.**` reaches a node once
        else:
            current = [found for place in current for found in _step(place, segment)]
    return current


_ANY_KEY = Segment("key", "*", 0, compile_name_glob("*"))
_EACH = Segment("each", "[*]", 0)


def _descendants(place: Selected) -> Iterator[Selected]:
    """The node and every node below it, in document order; a single value is not read as a list here."""
    yield place
    if reading.is_events(place.path) or isinstance(place.node, Mapping):
        children = _step(place, _ANY_KEY)  # `on: [push]` has the key `push`, whatever shape `on:` has
    elif isinstance(place.node, YamlSequence):
        children = _step(place, _EACH)
    else:
        return
    for child in children:
        yield from _descendants(child)


def _shown(prefix: str, segment: str, bracket: bool) -> str:
    if bracket:
        return prefix + segment
    return f"{prefix}.{segment}" if prefix else segment


def _key_text(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else f"[{name!r}]"


def _step(place: Selected, segment: Segment) -> list[Selected]:
    node, path = place.node, place.path
    if node is None:
        return []
    if segment.kind == "key":
        assert segment.glob is not None
        if reading.is_events(path):
            pairs: list[tuple[str, Scalar, Node | None]] = reading.events(node)
        elif isinstance(node, Mapping):
            pairs = [(key.value, key, value) for key, value in node.items()]
        else:
            return []
        found = []
        for name, key, value in pairs:
            if segment.glob.matches(name):
                shown_key = _key_text(name)
                shown = _shown(place.shown, shown_key, shown_key.startswith("["))
                found.append(Selected((*path, name), shown, key, value, value.span if value is not None else key.span))
        return found
    items: list[Node]
    if isinstance(node, YamlSequence):
        items = node.items
    elif isinstance(node, Scalar) and node.resolved is not None:
        items = [node]  # a single value reads as a one-element list
    else:
        return []
    indexes = range(len(items))
    if segment.kind == "index":
        index = segment.index + len(items) if segment.index < 0 else segment.index
        indexes = range(index, index + 1) if 0 <= index < len(items) else range(0)
    selected = []
    for index in indexes:
        item = items[index]
        shown = _shown(place.shown, f"[{index}]", True)
        selected.append(Selected((*path, index), shown, None, item, item.span))
    return selected
