"""`with: {KEY: VALUE, ...}` and `env: {KEY: VALUE, ...}`: key-value pairs of steps, jobs and the workflow.

Found where every pair is set in one `with:` or `env:` mapping of the scope:
its steps', its jobs' and (for a whole workflow) the workflow's own `env`.
Values compare as GitHub reads them, so `false` equals `'false'` in a step's
`with:`, while `3.10` (read by GitHub as `3.1`) does not equal `'3.10'`.

```yaml
- with: {persist-credentials: false}
```
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ci_checks.core.diagnostics import Edit, Fix, Span
from ci_checks.core.source import SourceFile
from ci_checks.model import reading
from ci_checks.policy.model import Hit, Item, ItemContext, ItemKind, Scope
from ci_checks.syntax.yamlpos import Mapping as YamlMapping
from ci_checks.syntax.yamlpos import Node, Scalar, resolve_plain

_PAIRS = {"type": "object", "minProperties": 1, "additionalProperties": {"type": ["string", "number", "boolean"]}}


class PairsItem(Item):
    def __init__(self, section: str, pairs: dict[str, Any], context: ItemContext) -> None:
        shown = ", ".join(f"{name}: {reading.shown(value).strip(chr(39))}" for name, value in pairs.items())
        super().__init__(section, f"`{section}: {{{shown}}}`")
        self.section = section
        self.pairs = pairs

    def find(self, scope: Scope) -> list[Hit]:
        found = []
        for mapping in scope.mappings(self.section):
            entries = [mapping.get(name) for name in self.pairs]
            if any(entry is None for entry in entries):
                continue
            if all(
                entry is not None and reading.equal(reading.read(entry.value, ("env", name)), want)
                for entry, (name, want) in zip(entries, self.wanted(), strict=True)
            ):
                first, last = entries[0], entries[-1]
                assert first is not None and last is not None
                key = first.key.span
                span = Span(key.path, key.line, key.column, last.span.end_line, last.span.end_column)
                found.append(Hit(span, self.description))
        return sorted(found, key=lambda hit: hit.span)

    def fix(self, scope: Scope) -> Fix | None:
        """In a step or job that lacks the pairs: set them in its `with:`/`env:`, adding that mapping if need be."""
        if scope.file is None or scope.whole_file or not isinstance(scope.node, YamlMapping):
            return None
        source = scope.file.source
        owner = scope.node
        present = owner.index.get(self.section)
        edits: list[Edit] = []
        if present is None or (isinstance(present[1], Scalar) and present[1].resolved is None):
            after = present[0] if present is not None else _last_node(owner)
            column = (present[0].span.column if present is not None else owner.pairs[0][0].span.column) - 1
            head = "" if present is not None else f"\n{' ' * column}{self.section}:"
            body = "".join(f"\n{' ' * (column + 2)}{name}: {_scalar(value)}" for name, value in self.pairs.items())
            edits.append(Edit(_line_end(source, after.span.end_line), head + body))
        elif isinstance(present[1], YamlMapping):
            mapping = present[1]
            missing = []
            for name, value in self.pairs.items():
                pair = mapping.index.get(name)
                if pair is None:
                    missing.append((name, value))
                elif not reading.equal(reading.read(pair[1], ("env", name)), reading.written(value, ("env", name))):
                    edits.append(Edit(pair[1].span, _scalar(value)))
            if missing and _is_flow(source, mapping):
                end = mapping.span
                joined = ", ".join(f"{name}: {_scalar(value)}" for name, value in missing)
                at = Span(end.path, end.end_line, end.end_column - 1, end.end_line, end.end_column - 1)
                edits.append(Edit(at, (", " if mapping.pairs else "") + joined))
            elif missing:
                column = mapping.pairs[0][0].span.column - 1
                lines = "".join(f"\n{' ' * column}{name}: {_scalar(value)}" for name, value in missing)
                edits.append(Edit(_line_end(source, _last_node(mapping).span.end_line), lines))
        else:
            return None
        shown = ", ".join(f"{name}: {_scalar(value)}" for name, value in self.pairs.items())
        return Fix(f"set {self.section}: {{{shown}}}", tuple(edits)) if edits else None

    def wanted(self) -> list[tuple[str, Any]]:
        # A step's `with` and any `env` are strings to GitHub: read both sides as such.
        return [(name, reading.written(value, ("env", name))) for name, value in self.pairs.items()]


def _last_node(mapping: YamlMapping) -> Node:
    """The node that ends last in a mapping: where a new entry goes after."""
    return max(
        (node for pair in mapping.pairs for node in pair), key=lambda node: (node.span.end_line, node.span.end_column)
    )


def _line_end(source: SourceFile, line: int) -> Span:
    """An empty span at the end of a line, after any comment there."""
    column = len(source.line_text(line)) + 1
    return Span(source.path, line, column, line, column)


def _is_flow(source: SourceFile, mapping: YamlMapping) -> bool:
    span = mapping.span
    return source.line_text(span.line)[span.column - 1 : span.column] == "{"


def _scalar(value: Any) -> str:
    """A value as YAML text: plain where that reads back the same, quoted otherwise."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    text = str(value)
    plain = text and text == text.strip() and not any(char in text for char in ":#{}[],&*!|>'\"%@`\n")
    if plain and isinstance(resolve_plain(text), str) and not text.startswith(("-", "?")):
        return text
    return json.dumps(text)


def _compile_with(raw: Mapping[str, Any], context: ItemContext) -> Item:
    return PairsItem("with", dict(raw["with"]), context)


def _compile_env(raw: Mapping[str, Any], context: ItemContext) -> Item:
    return PairsItem("env", dict(raw["env"]), context)


WITH = ItemKind(
    "with",
    "`with:` key-value pairs of steps and jobs",
    {"with": {**_PAIRS, "description": "Inputs every one of which a step or job sets to this value."}},
    _compile_with,
    __doc__ or "",
)
ENV = ItemKind(
    "env",
    "`env:` key-value pairs of steps, jobs and the workflow",
    {"env": {**_PAIRS, "description": "Variables every one of which is set to this value."}},
    _compile_env,
    __doc__ or "",
)
