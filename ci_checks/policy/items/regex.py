r"""`regex: PATTERN`: a regular expression (multi-line mode) over the scope's text.

The expression comes from the checked repository, so it is bounded: at most
4,096 characters, repetitions that would expand to more than 50,000 pieces
when compiled (`a{99999999}`, `(?:a{1000}){1000}`) are refused where they are
written, and each search of one file stops after two seconds (CC106).

```yaml
- regex: '^\s*git apply'
```
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import regex

from ci_checks.policy.model import Hit, Item, ItemContext, ItemKind, Scope, SearchTimedOut

TIMEOUT_S = 2.0
"""How long one regular expression may search one file: a policy comes from the checked repository."""
MAX_LENGTH = 4096
MAX_EXPANSION = 50_000

PROPERTIES = {
    "regex": {
        "description": "A regular expression searched in the scope's text (multi-line mode).",
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_LENGTH,
    }
}


class RegexItem(Item):
    def __init__(self, source: str, pattern: regex.Pattern[str], context: ItemContext) -> None:
        super().__init__("regex", f"/{source}/")
        self.pattern = pattern
        self.span = context.place.span("regex")

    def find(self, scope: Scope) -> list[Hit]:
        try:
            return [Hit(found.span, found.text) for found in scope.search(self._matches)]
        except TimeoutError:
            raise SearchTimedOut(self, self.span, scope.path or "", TIMEOUT_S) from None

    def _matches(self, text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
        for match in self.pattern.finditer(text, start, end, timeout=TIMEOUT_S):
            if match.end() > match.start():
                yield match.start(), match.end()


def expansion(pattern: str) -> int:
    """About how many pieces compiling `pattern` makes: fixed repetitions are copied that many times.

    A rough reading of the syntax is enough: it only has to see `{n}` and
    `{n,m}` (their minimum is what gets copied) and the groups they repeat.
    """
    stack: list[int] = [0]
    last = 0  # size of the atom a quantifier would repeat
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            last, i = 1, i + 2
            stack[-1] += 1
            continue
        if char == "[":
            end = i + 1
            if end < len(pattern) and pattern[end] == "^":
                end += 1
            if end < len(pattern) and pattern[end] == "]":
                end += 1
            while end < len(pattern) and pattern[end] != "]":
                end += 2 if pattern[end] == "\\" else 1
            last, i = 1, end + 1
            stack[-1] += 1
            continue
        if char == "(":
            stack.append(0)
            i += 1
            continue
        if char == ")" and len(stack) > 1:
            last = stack.pop()
            stack[-1] += last
            i += 1
            continue
        if char == "{":
            close = pattern.find("}", i)
            body = pattern[i + 1 : close] if close > i else ""
            low = body.split(",", 1)[0].strip()
            if low.isdigit():
                times = int(low)
                stack[-1] += last * (max(times, 1) - 1)
                last *= max(times, 1)
                i = close + 1
                continue
        last = 1
        stack[-1] += 1
        i += 1
    return sum(stack)


def _compile(raw: Mapping[str, Any], context: ItemContext) -> Item:
    source = raw["regex"]
    pieces = expansion(source)
    if pieces > MAX_EXPANSION:
        raise context.place.error(
            f"regular expression {source[:60]!r}{'...' if len(source) > 60 else ''} repeats too much "
            f"(about {pieces:,} pieces when compiled; at most {MAX_EXPANSION:,}): use `+`, `*` or a smaller count",
            "regex",
        )
    try:
        compiled = regex.compile(source, regex.MULTILINE | regex.VERSION0)
    except (regex.error, OverflowError, MemoryError, RecursionError) as error:
        raise context.place.error(f"invalid regular expression {source!r}: {error}", "regex") from None
    return RegexItem(source, compiled, context)


ITEM = ItemKind("regex", "a regular expression over the scope's text", PROPERTIES, _compile, __doc__ or "")
