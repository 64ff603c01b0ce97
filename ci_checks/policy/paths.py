"""PATHs: addressing any part of a workflow, job, step, trigger or composite action.

A PATH is relative to its scope (a workflow's or action's root, a job, a step,
a trigger's value). Its segments are separated by dots:

- a key, which is a glob of the one dialect over the keys there (`needs`,
  `stage-*-gpu-*`, `*` for any key);
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
from dataclasses import dataclass
from typing import Literal

from ci_checks.diagnostics import Span
from ci_checks.globs import Glob, GlobError, compile_name_glob, literal
from ci_checks.policy import reading
from ci_checks.policy.reading import Path
from ci_checks.yamlpos import Mapping, Node, Plain, Scalar
from ci_checks.yamlpos import Sequence as YamlSequence

_BRACKET = re.compile(r"\[(?:(?P<each>\*)|(?P<index>-?[0-9]+)|\"(?P<dq>[^\"]*)\"|'(?P<sq>[^']*)')\]")


class PathError(ValueError):
    def __init__(self, message: str, offset: int = 0) -> None:
        super().__init__(message)
        self.offset = offset


@dataclass(frozen=True)
class Segment:
    kind: Literal["key", "each", "index"]
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


def select(root: Node | None, base: Path, key_path: KeyPath, root_span: Span | None = None) -> list[Selected]:
    """Every node `key_path` selects below `root` (which sits at `base` in its file), in document order."""
    if root is None:
        return []
    current = [Selected(base, "", None, root, root_span or root.span)]
    for segment in key_path.segments:
        current = [found for place in current for found in _step(place, segment)]
    return current


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
