"""Positioned YAML: a node tree where every node knows its exact span.

The tree is built from libyaml's event stream (PyYAML's `CParser`, with the
pure-Python parser as fallback) rather than from `yaml.compose`: building from
events skips PyYAML's YAML 1.1 tag resolver, keeps the position of every alias,
and lets duplicate keys, alias bombs and runaway nesting be caught while the
document streams in, so a hostile document costs bounded time and memory.

Scalars keep their text; `Scalar.resolved` applies the YAML 1.2 core schema that
GitHub Actions uses, so `on`, `yes`, `no`, `y`, `n` and `off` stay strings.
"""

from __future__ import annotations

import enum
import math
import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NoReturn, TypeAlias

import yaml
from yaml import events as ev

from ci_checks.core.diagnostics import Span
from ci_checks.core.source import SourceFile

_Loader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MAX_DEPTH = 256
"""Deepest nesting of collections accepted; real workflows stay below 20."""

MAX_ALIAS_NODES = 100_000
"""How many nodes aliases may add to a document when expanded."""

_CORE_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:seq",
    "tag:yaml.org,2002:map",
}
_NULL = {"", "~", "null", "Null", "NULL"}
_TRUE = {"true", "True", "TRUE"}
_FALSE = {"false", "False", "FALSE"}
_INT = re.compile(r"[-+]?[0-9]+\Z")
_OCT = re.compile(r"0o[0-7]+\Z")
_HEX = re.compile(r"0x[0-9a-fA-F]+\Z")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
_INF = re.compile(r"[-+]?\.(inf|Inf|INF)\Z")
_NAN = re.compile(r"\.(nan|NaN|NAN)\Z")

Plain: TypeAlias = str | int | float | bool | list["Plain"] | dict[str, "Plain"] | None


class Node:
    __slots__ = ("span",)

    def __init__(self, span: Span) -> None:
        self.span = span


class Scalar(Node):
    """A scalar: `value` is its text after YAML unquoting and folding."""

    __slots__ = ("value", "style", "tag")

    def __init__(self, span: Span, value: str, style: str | None, tag: str | None) -> None:
        super().__init__(span)
        self.value = value
        self.style = style
        self.tag = tag

    @property
    def resolved(self) -> str | int | float | bool | None:
        """The value under the YAML 1.2 core schema (quoted scalars, and `!`-tagged ones, are always strings)."""
        if self.style is not None or self.tag in ("tag:yaml.org,2002:str", "!"):
            return self.value
        return resolve_plain(self.value)

    def __repr__(self) -> str:
        return f"Scalar({self.value!r} at {self.span.line}:{self.span.column})"


class Mapping(Node):
    __slots__ = ("pairs", "index")

    def __init__(self, span: Span) -> None:
        super().__init__(span)
        self.pairs: list[tuple[Node, Node]] = []
        self.index: dict[str, tuple[Scalar, Node]] = {}

    def get(self, key: str) -> Node | None:
        pair = self.index.get(key)
        return pair[1] if pair else None

    def key_node(self, key: str) -> Scalar | None:
        pair = self.index.get(key)
        return pair[0] if pair else None

    def items(self) -> Iterator[tuple[Scalar, Node]]:
        """Pairs with scalar keys, in document order, first occurrence of each key."""
        return iter(self.index.values())

    def __contains__(self, key: str) -> bool:
        return key in self.index

    def __repr__(self) -> str:
        return f"Mapping({list(self.index)} at {self.span.line}:{self.span.column})"


class Sequence(Node):
    __slots__ = ("items",)

    def __init__(self, span: Span) -> None:
        super().__init__(span)
        self.items: list[Node] = []

    def __repr__(self) -> str:
        return f"Sequence({len(self.items)} items at {self.span.line}:{self.span.column})"


@lru_cache(maxsize=8192)  # the same few plain scalars (`true`, `ubuntu-latest`, `3.11`) are read over and over
def resolve_plain(text: str) -> str | int | float | bool | None:
    if text in _NULL:
        return None
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    if _INT.match(text):
        return int(text)
    if _OCT.match(text):
        return int(text[2:], 8)
    if _HEX.match(text):
        return int(text[2:], 16)
    if _FLOAT.match(text):
        return float(text)
    if _INF.match(text):
        return -math.inf if text.startswith("-") else math.inf
    if _NAN.match(text):
        return math.nan
    return text


class IssueKind(enum.Enum):
    SYNTAX = "syntax"
    EMPTY = "empty"
    DUPLICATE_KEY = "duplicate-key"
    UNSUPPORTED = "unsupported"
    LIMIT = "limit"


@dataclass(frozen=True, slots=True)
class YamlIssue:
    kind: IssueKind
    message: str
    span: Span
    related: Span | None = None
    related_message: str = ""


@dataclass(eq=False)
class Document:
    """One parsed YAML file. `root` is None when the file is empty, unreadable or broken."""

    source: SourceFile
    root: Node | None = None
    issues: list[YamlIssue] = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.source.path

    @property
    def usable(self) -> bool:
        """Whether the tree is complete: no syntax error, no limit hit, not empty."""
        return self.root is not None and not any(
            i.kind in (IssueKind.SYNTAX, IssueKind.LIMIT, IssueKind.EMPTY) for i in self.issues
        )


class _Stop(Exception):
    """Raised inside the builder once an issue makes the rest of the stream pointless."""


class _Frame:
    __slots__ = ("node", "key", "size", "anchor", "flow", "last_end")

    def __init__(self, node: Mapping | Sequence, anchor: str | None, flow: bool) -> None:
        self.node = node
        self.key: Node | None = None
        self.size = 1
        self.anchor = anchor
        self.flow = flow
        self.last_end: tuple[int, int] | None = None


class _Builder:
    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.path = doc.source.path
        self.stack: list[_Frame] = []
        self.anchors: dict[str, tuple[Node, int | None]] = {}
        self.alias_nodes = 0
        self.documents = 0
        self.line_starts = doc.source.line_starts

    def span(self, event: ev.Event) -> Span:
        start, end = event.start_mark, event.end_mark
        if start is None or end is None:
            return Span.point(self.path)
        # From the character index, not libyaml's line and column: it also breaks lines at U+2028 and the like.
        # This is `SourceFile.span`, written out: it runs for every node of every file.
        starts, first, last = self.line_starts, start.index, max(end.index, start.index)
        line = bisect_right(starts, first)
        end_line = bisect_right(starts, last, line - 1)
        return Span(self.path, line, first - starts[line - 1] + 1, end_line, last - starts[end_line - 1] + 1)

    def issue(self, kind: IssueKind, message: str, span: Span, related: Span | None = None, note: str = "") -> None:
        self.doc.issues.append(YamlIssue(kind, message, span, related, note))

    def stop(self, kind: IssueKind, message: str, span: Span) -> NoReturn:
        self.issue(kind, message, span)
        raise _Stop

    def check_tag(self, tag: str | None, span: Span) -> None:
        if tag is not None and tag != "!" and tag not in _CORE_TAGS:
            self.issue(IssueKind.UNSUPPORTED, f"YAML tag {tag!r} is not supported by GitHub Actions", span)

    def feed(self, event: ev.Event) -> None:
        if isinstance(event, ev.ScalarEvent):
            span = self.span(event)
            self.check_tag(event.tag, span)
            scalar = Scalar(span, event.value, event.style or None, event.tag)
            if event.anchor is not None:
                self.anchors[event.anchor] = (scalar, 1)
            self.add(scalar, 1)
        elif isinstance(event, ev.CollectionStartEvent):
            span = self.span(event)
            if len(self.stack) >= MAX_DEPTH:
                self.stop(IssueKind.LIMIT, f"collections are nested more than {MAX_DEPTH} levels deep", span)
            self.check_tag(event.tag, span)
            collection = Mapping(span) if isinstance(event, ev.MappingStartEvent) else Sequence(span)
            if event.anchor is not None:
                self.anchors[event.anchor] = (collection, None)
            self.stack.append(_Frame(collection, event.anchor, bool(event.flow_style)))
        elif isinstance(event, ev.CollectionEndEvent):
            self.close(event)
        elif isinstance(event, ev.AliasEvent):
            self.alias(event)
        elif isinstance(event, ev.DocumentStartEvent):
            self.documents += 1
            if self.documents > 1:
                message = "a second YAML document starts here; a workflow file holds one"
                self.stop(IssueKind.SYNTAX, message, self.span(event))

    def close(self, event: ev.CollectionEndEvent) -> None:
        frame = self.stack.pop()
        node = frame.node
        start = node.span
        if frame.flow:
            closing = self.span(event)
            end = (closing.end_line, closing.end_column)
        else:
            end = frame.last_end or (start.line, start.column)
        node.span = Span(self.path, start.line, start.column, end[0], end[1])
        if frame.anchor is not None:
            self.anchors[frame.anchor] = (node, frame.size)
        self.add(node, frame.size)

    def alias(self, event: ev.AliasEvent) -> None:
        span = self.span(event)
        target = self.anchors.get(event.anchor or "")
        if target is None:
            self.stop(IssueKind.SYNTAX, f"alias *{event.anchor} refers to no anchor defined before it", span)
            return
        node, size = target
        if size is None:
            self.stop(IssueKind.LIMIT, f"alias *{event.anchor} refers to a collection that contains it", span)
            return
        self.alias_nodes += size
        if self.alias_nodes > MAX_ALIAS_NODES:
            message = f"aliases expand this document by more than {MAX_ALIAS_NODES:,} nodes (an alias bomb?)"
            self.stop(IssueKind.LIMIT, message, span)
        self.add(node, size, span)

    def add(self, node: Node, size: int, alias_span: Span | None = None) -> None:
        where = alias_span or node.span
        if not self.stack:
            self.doc.root = node
            return
        frame = self.stack[-1]
        frame.size += size
        frame.last_end = (where.end_line, where.end_column)
        parent = frame.node
        if isinstance(parent, Sequence):
            parent.items.append(node)
            return
        if frame.key is None:
            frame.key = node
            return
        key, frame.key = frame.key, None
        parent.pairs.append((key, node))
        if not isinstance(key, Scalar):
            self.issue(IssueKind.UNSUPPORTED, "mapping keys must be scalars", key.span)
            return
        if key.style is None and key.value == "<<":
            self.issue(IssueKind.UNSUPPORTED, "YAML merge keys (<<) are not supported by GitHub Actions", key.span)
            return
        first = parent.index.get(key.value)
        if first is not None:
            self.issue(
                IssueKind.DUPLICATE_KEY,
                f"duplicate key {key.value!r}",
                key.span,
                first[0].span,
                "first defined here",
            )
            return
        parent.index[key.value] = (key, node)


def parse(source: SourceFile) -> Document:
    """Parse a source file into a positioned tree; problems become `Document.issues`."""
    doc = Document(source)
    if source.problem is not None:
        return doc
    builder = _Builder(doc)
    try:
        loader = _Loader(source.text)
        try:
            while loader.check_event():
                builder.feed(loader.get_event())
        finally:
            loader.dispose()
    except _Stop:
        return doc
    except yaml.MarkedYAMLError as error:
        doc.issues.append(_syntax_issue(source, error))
        return doc
    except yaml.reader.ReaderError as error:
        offset = source.text.find(chr(error.character)) if isinstance(error.character, int) else -1
        line, column = source.position(max(offset, 0))
        message = f"character U+{error.character:04X} is not allowed in YAML ({error.reason})"
        doc.issues.append(YamlIssue(IssueKind.SYNTAX, message, Span.point(source.path, line, column)))
        return doc
    except yaml.YAMLError as error:
        doc.issues.append(YamlIssue(IssueKind.SYNTAX, str(error), Span.point(source.path)))
        return doc
    if doc.root is None or (isinstance(doc.root, Scalar) and doc.root.style is None and doc.root.value == ""):
        doc.root = None
        doc.issues.append(YamlIssue(IssueKind.EMPTY, "file holds no YAML content", Span.point(source.path)))
    return doc


def _syntax_issue(source: SourceFile, error: yaml.MarkedYAMLError) -> YamlIssue:
    problem = error.problem or "invalid YAML"
    mark = error.problem_mark or error.context_mark
    related: Span | None = None
    related_message = ""
    context = error.context or ""
    if "end of stream" in problem and error.context_mark is not None:
        # The parser notices at the end of the file; the mistake is where the construct began.
        mark = error.context_mark
        construct = context.removeprefix("while scanning ").removeprefix("while parsing ")
        message = f"{construct} starting here is not closed before the end of the file"
    elif mark is not None and source.text[mark.index : mark.index + 1] == "\t":
        message = "tab character used for indentation; YAML allows only spaces"
    else:
        message = f"{problem} ({context})" if context else problem
        start = error.context_mark
        if context and start is not None and mark is not None and start.index != mark.index:
            construct = context.removeprefix("while scanning ").removeprefix("while parsing ")
            related = source.clamp(Span.point(source.path, *source.position(start.index)))
            related_message = f"{construct} starts here"
    at = source.clamp(Span.point(source.path, *source.position(mark.index))) if mark is not None else None
    kind = IssueKind.SYNTAX
    if "maximum nesting depth" in problem:  # libyaml's own guard, hit before ours on very deep flow collections
        kind = IssueKind.LIMIT
        message = f"collections are nested more than {MAX_DEPTH} levels deep"
    return YamlIssue(kind, message, at or Span.point(source.path), related, related_message)


def to_plain(node: Node) -> Plain:
    """Plain Python data (YAML 1.2 core values); aliases share one converted object."""
    memo: dict[int, Plain] = {}

    def convert(item: Node) -> Plain:
        cached = memo.get(id(item))
        if cached is not None:
            return cached
        result: Plain
        if isinstance(item, Scalar):
            return item.resolved
        if isinstance(item, Mapping):
            result = {key: convert(value) for key, (_, value) in item.index.items()}
        elif isinstance(item, Sequence):
            result = [convert(value) for value in item.items]
        else:
            raise TypeError(item)
        memo[id(item)] = result
        return result

    return convert(node)


def scalars(root: Node, keys: bool = True) -> Iterator[Scalar]:
    """Each scalar under `root` once, however many aliases reach it; mapping keys too, unless `keys` is False."""
    stack = [root]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, Scalar):
            yield node
        elif isinstance(node, Mapping):
            stack.extend(item for key, value in node.pairs for item in ((key, value) if keys else (value,)))
        elif isinstance(node, Sequence):
            stack.extend(node.items)


def node_at(root: Node, path: Iterator[str | int] | list[str | int]) -> tuple[Node, Scalar | None]:
    """The node at a JSON path, and the key node that leads to it (None for the root or an item)."""
    node, key_node = root, None
    for part in path:
        if isinstance(node, Mapping) and isinstance(part, str) and part in node.index:
            key_node, node = node.index[part]
        elif isinstance(node, Sequence) and isinstance(part, int) and 0 <= part < len(node.items):
            key_node, node = None, node.items[part]
        else:
            break
    return node, key_node


_BREAKS = "\n\x85\u2028\u2029"
_BREAK_PATTERN = re.compile("[\n\x85\u2028\u2029]")
_ESCAPES = {
    "0": "\0",
    "a": "\x07",
    "b": "\x08",
    "t": "\t",
    "\t": "\t",
    "n": "\n",
    "v": "\x0b",
    "f": "\x0c",
    "r": "\r",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "/": "/",
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}


class ScalarMap:
    """Where each character of a scalar's value lies in its source file.

    YAML unquotes, unescapes, folds and strips indentation, so value offsets and
    file offsets differ; this re-scans the scalar's source text with the rules
    of its style and checks that the result equals the parser's value.
    """

    __slots__ = ("offsets", "exact")

    def __init__(self, source: SourceFile, scalar: Scalar) -> None:
        text = source.text
        start = source.offset(scalar.span.line, scalar.span.column)
        end = source.offset(scalar.span.end_line, scalar.span.end_column)
        style = scalar.style
        builder = _Chars()
        try:
            if style in ("|", ">"):
                _block(text, start, scalar.value, style == ">", builder)
            elif style in ("'", '"'):
                _quoted(text, start + 1, end - 1, style == '"', builder)
            else:
                _plain(text, start, end, builder)
        except (IndexError, ValueError):
            builder.chars.clear()
        self.exact = "".join(builder.chars) == scalar.value
        self.offsets = builder.offsets if self.exact else _greedy(text, start, end, scalar.value)


class _Chars:
    __slots__ = ("chars", "offsets")

    def __init__(self) -> None:
        self.chars: list[str] = []
        self.offsets: list[int] = []

    def add(self, char: str, offset: int) -> None:
        self.chars.append(char)
        self.offsets.append(offset)

    def extend(self, text: str, start: int, end: int) -> None:
        self.chars.extend(text[start:end])
        self.offsets.extend(range(start, end))


def _fold_breaks(text: str, j: int, end: int) -> tuple[list[int], int]:
    """Blank lines after a line break: their break offsets and where content resumes."""
    breaks: list[int] = []
    while True:
        while j < end and text[j] in " \t":
            j += 1
        if j < end and text[j] in _BREAKS:
            breaks.append(j)
            j += 1
            continue
        return breaks, j


def _fold(text: str, first_break: int, end: int, out: _Chars) -> int:
    breaks, resume = _fold_breaks(text, first_break + 1, end)
    if breaks:
        for offset in breaks:
            out.add("\n", offset)
    else:
        out.add(" ", first_break)
    return resume


def _plain(text: str, i: int, end: int, out: _Chars) -> None:
    while i < end:
        j = i
        while j < end and text[j] not in _BREAKS:
            j += 1
        if j >= end:
            out.extend(text, i, end)
            return
        k = j
        while k > i and text[k - 1] in " \t":
            k -= 1
        out.extend(text, i, k)
        i = _fold(text, j, end, out)


def _quoted(text: str, i: int, end: int, double: bool, out: _Chars) -> None:
    while i < end:
        char = text[i]
        if not double and char == "'":
            out.add("'", i)
            i += 2
        elif double and char == "\\":
            escape = text[i + 1]
            if escape in _BREAKS:
                breaks, i = _fold_breaks(text, i + 2, end)
                for offset in breaks:
                    out.add("\n", offset)
            elif escape in _HEX_ESCAPES:
                width = _HEX_ESCAPES[escape]
                out.add(chr(int(text[i + 2 : i + 2 + width], 16)), i)
                i += 2 + width
            else:
                out.add(_ESCAPES[escape], i)
                i += 2
        elif char in " \t" or char in _BREAKS:
            j = i
            while j < end and text[j] in " \t":
                j += 1
            if j < end and text[j] in _BREAKS:
                i = _fold(text, j, end, out)
            else:
                out.extend(text, i, j)
                i = j
        else:
            out.add(char, i)
            i += 1


def _block_lines(text: str, start: int, explicit: bool) -> tuple[list[tuple[int, int]], int]:
    """Lines that may belong to a block scalar whose body starts at `start`, and the detected indent.

    Each line is (start, end) with end at its line break. Collection stops at
    the first non-blank line indented less than any indentation still possible.
    """
    lines: list[tuple[int, int]] = []
    detected = -1
    while start <= len(text):
        match = _BREAK_PATTERN.search(text, start)
        end = match.start() if match else len(text)
        line = text[start:end]
        if line.strip(" "):
            spaces = len(line) - len(line.lstrip(" "))
            if detected < 0:
                detected = spaces
            elif spaces < (1 if explicit else max(detected, 1)):
                break
        lines.append((start, end))
        if not match:
            break
        start = end + 1
    return lines, max(detected, 0)


def _block(text: str, start: int, value: str, folded: bool, out: _Chars) -> None:
    i = start + 1
    chomp = ""
    explicit = 0
    while i < len(text) and text[i] in "+-123456789":
        if text[i] in "+-":
            chomp = text[i]
        else:
            explicit = int(text[i])
        i += 1
    header_end = i
    while header_end < len(text) and text[header_end] not in _BREAKS:
        header_end += 1
    if header_end >= len(text):
        return
    lines, detected = _block_lines(text, header_end + 1, bool(explicit))
    candidates = [detected] if not explicit else list(range(max(detected, explicit), 0, -1))
    for indent in candidates:
        attempt = _Chars()
        _block_body(text, lines, max(indent, 1), folded, chomp, attempt)
        if "".join(attempt.chars) == value:
            out.chars, out.offsets = attempt.chars, attempt.offsets
            return


def _block_body(text: str, lines: list[tuple[int, int]], indent: int, folded: bool, chomp: str, out: _Chars) -> None:
    breaks: list[int] = []
    previous: tuple[bool, int | None] | None = None
    for line_start, line_end in lines:
        line = text[line_start:line_end]
        has_break = line_end < len(text)
        if len(line) <= indent and not line.strip(" "):
            if has_break:
                breaks.append(line_end)
            continue
        if len(line) - len(line.lstrip(" ")) < indent:
            break
        content_start = line_start + indent
        leading_blank = text[content_start] in " \t"
        if previous is not None:
            previous_plain, previous_break = previous
            if previous_break is not None:
                if folded and previous_plain and not leading_blank:
                    if not breaks:
                        out.add(" ", previous_break)
                else:
                    out.add("\n", previous_break)
        for offset in breaks:
            out.add("\n", offset)
        breaks = []
        out.extend(text, content_start, line_end)
        previous = (not leading_blank, line_end if has_break else None)
        if not has_break:
            break
    if previous is None:
        if chomp == "+":
            for offset in breaks:
                out.add("\n", offset)
        return
    if chomp != "-" and previous[1] is not None:
        out.add("\n", previous[1])
    if chomp == "+":
        for offset in breaks:
            out.add("\n", offset)


def _greedy(text: str, start: int, end: int, value: str) -> list[int]:
    offsets = []
    j = start
    for char in value:
        found = text.find(char, j, max(end, j))
        if found >= 0:
            offsets.append(found)
            j = found + 1
        else:
            offsets.append(min(j, max(end - 1, start)))
    return offsets
