"""Small positioned values shared by the workflow and action models."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ci_checks.core.diagnostics import Occurrence, Span
from ci_checks.core.source import SourceFile
from ci_checks.syntax.yamlpos import Mapping, Node, Scalar, Sequence


@dataclass(frozen=True, eq=False)
class Entry:
    """One `key: value` pair of a mapping, with both nodes."""

    key: Scalar
    value: Node

    @property
    def name(self) -> str:
        return self.key.value

    @property
    def text(self) -> str | None:
        """The value's text when it is a scalar (`true`, `3.10` and `on` included, as written)."""
        return self.value.value if isinstance(self.value, Scalar) else None

    @property
    def resolved(self) -> object:
        return self.value.resolved if isinstance(self.value, Scalar) else None

    @property
    def span(self) -> Span:
        return self.value.span


def mapping(node: Node | None) -> Mapping | None:
    return node if isinstance(node, Mapping) else None


def scalar(node: Node | None) -> Scalar | None:
    return node if isinstance(node, Scalar) else None


def text(node: Node | None) -> str | None:
    """A scalar's text; None for a missing node, a null or a collection."""
    if isinstance(node, Scalar) and node.resolved is not None:
        return node.value
    return None


def entries(node: Node | None) -> dict[str, Entry]:
    """The string-keyed pairs of a mapping (first occurrence of each key); {} for anything else."""
    if not isinstance(node, Mapping):
        return {}
    return {key.value: Entry(key, value) for key, value in node.items()}


def pairs(node: Node | None) -> Iterator[tuple[Scalar, Node]]:
    """The string-keyed pairs of a mapping; nothing for anything else."""
    if isinstance(node, Mapping):
        yield from node.items()


def entry(parent: Mapping, key: str) -> Entry | None:
    pair = parent.index.get(key)
    return Entry(*pair) if pair else None


def string_list(node: Node | None) -> list[Scalar]:
    """A scalar or a sequence of scalars, as scalars; other shapes give []."""
    if isinstance(node, Scalar):
        return [node] if node.resolved is not None else []
    if isinstance(node, Sequence):
        return [item for item in node.items if isinstance(item, Scalar)]
    return []


def occurrences(source: SourceFile, span: Span | None, text: str) -> list[Occurrence]:
    """Where `text` occurs in the file within `span` (the whole file for None), comments included."""
    start = 0 if span is None else source.offset(span.line, span.column)
    end = len(source.text) if span is None else source.offset(span.end_line, span.end_column)
    found = []
    position = source.text.find(text, start, end) if text else -1
    while position >= 0:
        found.append(Occurrence(source.span(position, position + len(text)), text))
        position = source.text.find(text, position + 1, end)
    return found
