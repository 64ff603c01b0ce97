"""Word decoding: a tree-sitter word node's value once its quoting is removed.

A word's value has its quotes and backslashes removed; `$VAR`, `$(...)` and
`${{ }}` stay as written. Word text and values are always taken from the
unmasked script.
"""

from __future__ import annotations

import bisect
import re
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

from ci_checks.core.diagnostics import Span
from ci_checks.syntax.shell.tree import Block, Locator, Word

WORD_TYPES = {
    "word",
    "string",
    "raw_string",
    "ansi_c_string",
    "translated_string",
    "concatenation",
    "simple_expansion",
    "expansion",
    "arithmetic_expansion",
    "command_substitution",
    "process_substitution",
    "number",
    "brace_expression",
    "extglob_pattern",
    "test_operator",
    "regex",
    "array",
    "variable_name",
    "special_variable_name",
}

if TYPE_CHECKING:
    import tree_sitter


_NON_ASCII_BYTE = re.compile(rb"[\x80-\xff]")


class WordDecoder(ABC):
    """Reads tree-sitter word nodes of one script into `Word`s; subclasses build the blocks inside words."""

    def __init__(self, text: str, masked: str, ranges: list[tuple[int, int]], locator: Locator) -> None:
        self.text = text
        self.ranges = ranges
        self.range_starts = [start for start, _ in ranges]
        self.locator = locator
        self.errors: list[Span] = []
        data = masked.encode("utf-8", errors="surrogatepass")
        # tree-sitter sees every byte of a non-ASCII character as `x`: tree-sitter-bash 0.25 crashes (reads memory it
        # does not own) on `{` before some characters above U+3FFFF, and bash gives no character outside ASCII a
        # meaning. Offsets stay byte offsets into the text, and words are read from the text itself.
        self.data = data if data.isascii() else _NON_ASCII_BYTE.sub(b"x", data)
        if len(data) == len(masked):
            self.char_at: list[int] | None = None
        else:
            char_at = [0] * (len(data) + 1)
            position = 0
            for index, char in enumerate(masked):
                width = len(char.encode("utf-8", errors="surrogatepass"))
                for k in range(width):
                    char_at[position + k] = index
                position += width
            char_at[len(data)] = len(masked)
            self.char_at = char_at

    def bounds(self, node: tree_sitter.Node) -> tuple[int, int]:
        if self.char_at is None:
            return node.start_byte, node.end_byte
        return self.char_at[node.start_byte], self.char_at[node.end_byte]

    def span(self, start: int, end: int) -> Span:
        return self.locator.span(start, end)

    def source(self, node: tree_sitter.Node) -> str:
        start, end = self.bounds(node)
        return self.text[start:end]

    def masked_at(self, offset: int) -> tuple[int, int] | None:
        index = bisect.bisect_right(self.range_starts, offset) - 1
        if index >= 0 and self.ranges[index][0] <= offset < self.ranges[index][1]:
            return self.ranges[index]
        return None

    def unescape(self, start: int, end: int, quoted: bool) -> str:
        """Remove backslash quoting from text[start:end]; expressions are copied untouched."""
        text = self.text
        if "\\" not in text[start:end]:
            return text[start:end]
        out = []
        i = start
        while i < end:
            masked = self.masked_at(i)
            if masked is not None:
                out.append(text[i : min(masked[1], end)])
                i = min(masked[1], end)
                continue
            char = text[i]
            if char == "\\" and i + 1 < end:
                following = text[i + 1]
                if following == "\n":
                    i += 2
                    continue
                if not quoted or following in '$`"\\':
                    out.append(following)
                    i += 2
                    continue
            out.append(char)
            i += 1
        return "".join(out)

    def word(self, node: tree_sitter.Node) -> Word:
        start, end = self.bounds(node)
        value, static, subs = self.word_value(node)
        static = static and not self.overlaps_expression(start, end)
        return Word(self.locator, start, end, self.text[start:end], value, static, tuple(subs))

    def word_value(self, node: tree_sitter.Node) -> tuple[str, bool, list[Block]]:
        kind = node.type
        start, end = self.bounds(node)
        if kind in ("string", "translated_string"):
            parts: list[str] = []
            static = True
            subs: list[Block] = []
            inner_start = start + (2 if kind == "translated_string" else 1)
            inner_end = max(end - 1, inner_start)
            cursor = inner_start
            for child in node.named_children:
                child_start, child_end = self.bounds(child)
                if child_start > cursor:
                    parts.append(self.unescape(cursor, child_start, quoted=True))
                if child.type == "string_content":
                    parts.append(self.unescape(child_start, child_end, quoted=True))
                else:
                    value, child_static, child_subs = self.word_value(child)
                    parts.append(value)
                    static = static and child_static
                    subs.extend(child_subs)
                cursor = max(cursor, child_end)
            if cursor < inner_end:
                parts.append(self.unescape(cursor, inner_end, quoted=True))
            return "".join(parts), static, subs
        if kind == "raw_string":
            return self.text[start + 1 : end - 1], True, []
        if kind == "ansi_c_string":
            return self.text[start + 2 : end - 1], True, []
        if kind == "concatenation":
            parts = []
            static = True
            subs = []
            for child in node.children:
                value, child_static, child_subs = self.word_value(child)
                parts.append(value)
                static = static and child_static
                subs.extend(child_subs)
            return "".join(parts), static, subs
        if kind in ("command_substitution", "process_substitution"):
            return self.text[start:end], False, [self.block(node, list(node.named_children))]
        if kind in ("simple_expansion", "expansion", "arithmetic_expansion"):
            return self.text[start:end], False, self.nested_substitutions(node)
        if node.child_count == 0 or kind in ("word", "number", "extglob_pattern", "regex"):
            return self.unescape(start, end, quoted=False), True, []
        return self.text[start:end], False, self.nested_substitutions(node)

    def overlaps_expression(self, start: int, end: int) -> bool:
        index = bisect.bisect_left(self.range_starts, end) - 1
        return index >= 0 and self.ranges[index][1] > start

    def nested_substitutions(self, node: tree_sitter.Node) -> list[Block]:
        found: list[Block] = []
        stack = list(reversed(node.named_children))
        while stack:
            child = stack.pop()
            if child.type in ("command_substitution", "process_substitution"):
                found.append(self.block(child, list(child.named_children)))
            else:
                stack.extend(reversed(child.named_children))
        return found

    def test_words(self, node: tree_sitter.Node) -> list[Word]:
        """The tokens of `[ ... ]`, `[[ ... ]]` or `(( ... ))` as words, in order."""
        words: list[Word] = []
        stack = [node]
        while stack:
            current = stack.pop()
            if current is not node and (current.type in WORD_TYPES or current.child_count == 0):
                if current.type != "comment":
                    words.append(self.word(current))
                continue
            stack.extend(reversed(current.children))
        return words

    def assignment_word(self, node: tree_sitter.Node) -> Word:
        start, end = self.bounds(node)
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        name = self.source(name_node) if name_node is not None else ""
        operator = "+=" if "+=" in self.text[start:end].split("=", 1)[0] + "=" else "="
        value, static, subs = self.word_value(value_node) if value_node is not None else ("", True, [])
        return Word(self.locator, start, end, self.text[start:end], f"{name}{operator}{value}", static, tuple(subs))

    @abstractmethod
    def block(self, owner: tree_sitter.Node, nodes: list[tree_sitter.Node]) -> Block:
        """The statements of a command or process substitution inside a word."""
