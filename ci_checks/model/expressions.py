"""Just enough of GitHub's expression language to see structure: `a && 'x' || b`, operands, literals.

Rules ask "which values can this expression give" (a `runs-on` choosing a
runner) and "which conditions must hold" (an `if:` that gates a job); both
need the top-level `&&`/`||` structure, not evaluation.
"""

from __future__ import annotations

import re

LITERAL = re.compile(r"'(?P<text>(?:[^']|'')*)'\Z")
EXPRESSION = re.compile(r"\$\{\{(?P<body>.*?)\}\}", re.DOTALL)


def condition(text: str) -> str:
    """An `if:` value as an expression body: `${{ x }}` unwrapped, otherwise the text itself."""
    whole = EXPRESSION.fullmatch(text.strip())
    return whole.group("body").strip() if whole is not None else text.strip()


def split_top_level(text: str, operator: str) -> list[str]:
    """`text` split at `operator` outside quotes, parentheses and brackets."""
    parts, depth, quoted, start, index = [], 0, False, 0, 0
    while index < len(text):
        char = text[index]
        if char == "'":
            quoted = not quoted
        elif not quoted and char in "([":
            depth += 1
        elif not quoted and char in ")]":
            depth -= 1
        elif not quoted and depth == 0 and text.startswith(operator, index):
            parts.append(text[start:index])
            start = index + len(operator)
            index = start
            continue
        index += 1
    parts.append(text[start:])
    return parts


def unwrapped(text: str) -> str:
    """`text` without parentheses that enclose all of it."""
    text = text.strip()
    while text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
        text = text[1:-1].strip()
    return text


def alternatives(body: str) -> list[str]:
    """The operands `a && 'x' || b` can evaluate to: the last operand of each `||` alternative."""
    found = []
    for alternative in split_top_level(body, "||"):
        last = unwrapped(split_top_level(alternative, "&&")[-1])
        nested = len(split_top_level(last, "||")) > 1 or len(split_top_level(last, "&&")) > 1
        found.extend(alternatives(last) if nested else [last])
    return found


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0
