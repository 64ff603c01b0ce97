"""Shell text without a parser: splitting a line into words, canonical words, and `${{ }}` masking.

`${{ ... }}` expressions are masked with underscores of the same length before
parsing, so that they read as plain words and offsets stay the same.
`canonical_word` reads `${NAME}` as `$NAME`, so that either spelling matches.
"""

from __future__ import annotations

import re
import shlex

_EXPRESSION_START = "${{"
_NAME_BRACES = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}(?![A-Za-z0-9_])")
_BLANKS = " \t\n"
_QUOTE_OR_BACKSLASH = re.compile(r'["\\]')


_EXPRESSION = re.compile(r"\$\{\{.*?\}\}", re.DOTALL)


def is_expression(text: str) -> bool:
    """Whether the text holds a `${{ }}` expression."""
    return bool(_EXPRESSION.search(text))


def expression_ranges(text: str) -> list[tuple[int, int]]:
    """Character ranges of `${{ ... }}` expressions; `}}` inside a '...' literal does not close one."""
    ranges = []
    i = text.find(_EXPRESSION_START)
    while i >= 0:
        j = i + 3
        in_literal = False
        end = -1
        while j < len(text):
            char = text[j]
            if char == "'":
                in_literal = not in_literal
            elif not in_literal and text.startswith("}}", j):
                end = j + 2
                break
            j += 1
        if end < 0:
            break
        ranges.append((i, end))
        i = text.find(_EXPRESSION_START, end)
    return ranges


def mask_expressions(text: str, ranges: list[tuple[int, int]]) -> str:
    if not ranges:
        return text
    parts = []
    last = 0
    for start, end in ranges:
        parts.append(text[last:start])
        parts.append("_" * (end - start))
        last = end
    parts.append(text[last:])
    return "".join(parts)


# ---------------------------------------------------------------------------


def canonical_word(value: str) -> str:
    return _NAME_BRACES.sub(r"$\1", value) if "${" in value else value


def split_words(text: str) -> list[str]:
    """Split a line into words as a POSIX shell does (quotes and backslashes removed), in linear time.

    `shlex.split` builds each word a character at a time and takes quadratic
    time on a long word; a pattern comes from the checked repository.
    """
    words: list[str] = []
    current: list[str] = []
    in_word = False
    i = 0
    length = len(text)
    while i < length:
        char = text[i]
        if char in _BLANKS:
            if in_word:
                words.append("".join(current))
                current, in_word = [], False
            i += 1
        elif char == "'":
            end = text.find("'", i + 1)
            if end < 0:
                raise ValueError("No closing quotation")
            current.append(text[i + 1 : end])
            in_word, i = True, end + 1
        elif char == '"':
            i = _double_quoted(text, i + 1, current)
            in_word = True
        elif char == "\\":
            if i + 1 >= length:
                raise ValueError("No escaped character")
            if text[i + 1] != "\n":
                current.append(text[i + 1])
                in_word = True
            i += 2
        else:
            end = i
            while end < length and text[end] not in _BLANKS and text[end] not in "'\"\\":
                end += 1
            current.append(text[i:end])
            in_word, i = True, end
    if in_word:
        words.append("".join(current))
    return words


def _double_quoted(text: str, i: int, out: list[str]) -> int:
    """Append the value of a double-quoted part starting after its quote; the offset after the closing quote."""
    while True:
        found = _QUOTE_OR_BACKSLASH.search(text, i)
        if found is None:
            raise ValueError("No closing quotation")
        at = found.start()
        out.append(text[i:at])
        if text[at] == '"':
            return at + 1
        following = text[at + 1 : at + 2]
        if not following:
            raise ValueError("No closing quotation")
        if following != "\n":
            out.append(following if following in '$`"\\' else "\\" + following)
        i = at + 2


def quote_word(word: str) -> str:
    """A word as it would be written in a shell line (quoted only when it needs to be)."""
    return shlex.quote(word)
