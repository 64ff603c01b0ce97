"""`text: TEXT`: a substring anywhere in the scope's text, comments included.

For what really is text (a marker in a comment, a word in a Dockerfile):
structure is better said with `command`, `step` and `key`, which survive
reformatting.

```yaml
- text: amd_patch
```
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ci_checks.policy.model import Hit, Item, ItemContext, ItemKind, Scope

PROPERTIES = {"text": {"description": "A substring of the scope's text.", "type": "string", "minLength": 1}}


class TextItem(Item):
    def __init__(self, needle: str, context: ItemContext) -> None:
        super().__init__("text", repr(needle))
        self.needle = needle

    def find(self, scope: Scope) -> list[Hit]:
        return [Hit(found.span, found.text) for found in scope.search(self._substrings)]

    def _substrings(self, text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
        position = text.find(self.needle, start, end)
        while position >= 0:
            yield position, position + len(self.needle)
            position = text.find(self.needle, position + 1, end)


def _compile(raw: Mapping[str, Any], context: ItemContext) -> Item:
    return TextItem(raw["text"], context)


ITEM = ItemKind("text", "a substring of the scope's text", PROPERTIES, _compile, __doc__ or "")
