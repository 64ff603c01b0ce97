"""`python: {FACT: GLOB}`: facts of Python files, read from their syntax tree (never imported or run).

FACT is `name` (an identifier used or defined), `import` (`a.b` for `import
a.b`; `a.b.C` and its module for `from a.b import C`), `assign` (`mod.Cls` in
`mod.Cls = X` or `setattr(mod, "Cls", X)`) or `subclass` (a base class). A
glob without a dot also matches a dotted name's last part.

```yaml
- python: {assign: "*.FileSystemWriterAsync"}
```
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ci_checks.core.globs import Glob
from ci_checks.policy.compiling import name_glob
from ci_checks.policy.model import Hit, Item, ItemContext, ItemKind, Scope
from ci_checks.syntax.pysource import Fact, FactKind

PROPERTIES = {
    "python": {
        "description": "One fact kind and a glob of dotted names.",
        "type": "object",
        "minProperties": 1,
        "maxProperties": 1,
        "additionalProperties": False,
        "properties": {kind.value: {"type": "string", "minLength": 1} for kind in FactKind},
    }
}


class PythonItem(Item):
    def __init__(self, fact: FactKind, glob: Glob, context: ItemContext) -> None:
        super().__init__("python", f"Python {fact.value} {glob.text!r}")
        self.fact = fact
        self.glob = glob

    def find(self, scope: Scope) -> list[Hit]:
        facts = scope.file.python_facts if scope.file is not None else None
        if not isinstance(facts, list):
            return []
        return [Hit(fact.span, fact.value) for fact in facts if fact.kind is self.fact and self._matches(fact)]

    def _matches(self, fact: Fact) -> bool:
        candidates = [fact.value]
        if "." not in self.glob.text:
            candidates.append(fact.value.rsplit(".", 1)[-1])
        if fact.kind is FactKind.IMPORT and "." in fact.value:
            candidates.append(fact.value.rsplit(".", 1)[0])
        return any(self.glob.matches(candidate) for candidate in candidates)


def _compile(raw: Mapping[str, Any], context: ItemContext) -> Item:
    [(fact, glob)] = raw["python"].items()
    return PythonItem(FactKind(fact), name_glob(glob, context.place.at("python", fact)), context)


ITEM = ItemKind("python", "names, imports, assignments and base classes in Python", PROPERTIES, _compile, __doc__ or "")
