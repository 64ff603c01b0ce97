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

from collections.abc import Mapping
from typing import Any

from ci_checks.diagnostics import Span
from ci_checks.model import reading
from ci_checks.policy.compiling import ItemContext
from ci_checks.policy.model import Hit, Item, ItemKind
from ci_checks.policy.scopes import Scope

_PAIRS = {"type": "object", "minProperties": 1, "additionalProperties": {"type": ["string", "number", "boolean"]}}


class PairsItem(Item):
    def __init__(self, section: str, pairs: dict[str, Any], context: ItemContext) -> None:
        shown = ", ".join(f"{name}: {reading.shown(value).strip(chr(39))}" for name, value in pairs.items())
        super().__init__(section, f"`{section}: {{{shown}}}`", context.place.span(section))
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

    def wanted(self) -> list[tuple[str, Any]]:
        # A step's `with` and any `env` are strings to GitHub: read both sides as such.
        return [(name, reading.written(value, ("env", name))) for name, value in self.pairs.items()]


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
