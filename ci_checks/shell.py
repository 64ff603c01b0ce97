"""`run:` scripts as command trees, parsed with tree-sitter-bash.

A script becomes a `Script` (a `Block` of statements): simple commands with
their argv, pipelines, `&&`/`||` lists, if/elif/else with their conditions,
loops, case, functions, subshells and groups. Every node carries the exact
span of its text in the file the script came from.

`${{ ... }}` expressions are masked with underscores of the same length before
parsing, so that they read as plain words and offsets stay the same; word text
and values are always taken from the unmasked script.

Command patterns (`CommandPattern`): a pattern such as `pip install -e .` is
split like a shell line. Its first word is the program, compared with the
basename of the command's program; its other words must appear, in order, among
the command's arguments (other arguments may come between them). Words compare
by value, so quoting does not matter, and `${NAME}` equals `$NAME`. Before
comparing, these wrappers are looked through: `sudo`, `env` (and its
`NAME=value` words), `time`, `nohup`, `exec`, `command`, and
`python`/`python3`/`python3.N -m MODULE`, which makes MODULE the program. So
`pip install -e .` matches `pip install -e . --no-deps` and
`python -m pip install -e .`, but not `pip install -e ./python`.
"""

from __future__ import annotations

import bisect
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import Protocol

import tree_sitter
import tree_sitter_bash

from ci_checks.diagnostics import Answer, Occurrence, Span


class Locator(Protocol):
    """Turns script character offsets (end exclusive) into a span in the file the script came from."""

    def span(self, start: int, end: int) -> Span: ...


@cache
def _parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


_EXPRESSION_START = "${{"


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
# The command tree


@dataclass(eq=False)
class ShellNode:
    """A node of the command tree; `start`/`end` are character offsets into the script."""

    locator: Locator = field(repr=False)
    start: int
    end: int

    @cached_property
    def span(self) -> Span:
        """Where the node is in the file the script came from (computed when first asked)."""
        return self.locator.span(self.start, self.end)

    def commands(self) -> Iterator[Command]:
        """Every simple command inside this node, in the order they are written."""
        return iter(())


@dataclass(eq=False)
class Word(ShellNode):
    """One shell word. `value` has quotes removed; `$VAR`, `$(...)` and `${{ }}` stay as written."""

    text: str
    value: str
    static: bool
    substitutions: tuple[Block, ...] = ()

    def commands(self) -> Iterator[Command]:
        for block in self.substitutions:
            yield from block.commands()


@dataclass(eq=False)
class Redirect(ShellNode):
    operator: str
    target: Word | None
    heredoc: str | None = None

    def commands(self) -> Iterator[Command]:
        if self.target is not None:
            yield from self.target.commands()


@dataclass(eq=False)
class Command(ShellNode):
    """A simple command: `assignments` are its `NAME=value` prefixes, `words` its argv."""

    words: list[Word]
    assignments: list[Word] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    text: str = ""

    @property
    def argv(self) -> list[str]:
        return [word.value for word in self.words]

    @property
    def name(self) -> str | None:
        return self.words[0].value if self.words else None

    def matches(self, pattern: str | CommandPattern) -> bool:
        compiled = pattern if isinstance(pattern, CommandPattern) else CommandPattern.parse(pattern)
        return compiled.matches(self.argv)

    def commands(self) -> Iterator[Command]:
        yield self
        for part in sorted([*self.assignments, *self.words, *self.redirects], key=lambda node: node.start):
            yield from part.commands()

    def __repr__(self) -> str:
        return f"Command({' '.join(self.argv)!r} at {self.span.line}:{self.span.column})"


@dataclass(eq=False)
class Assignment(ShellNode):
    """A statement that only assigns variables: `NAME=value ...`."""

    assignments: list[Word]

    def commands(self) -> Iterator[Command]:
        for word in self.assignments:
            yield from word.commands()


@dataclass(eq=False)
class Block(ShellNode):
    """A sequence of statements: a script, a branch body, a loop body, a condition."""

    statements: list[ShellNode]
    text: str = ""

    def __repr__(self) -> str:
        span = self.span
        return f"{type(self).__name__}({span.path}:{span.line}:{span.column}-{span.end_line}:{span.end_column})"

    def commands(self) -> Iterator[Command]:
        for statement in self.statements:
            yield from statement.commands()

    def find(self, pattern: str | CommandPattern) -> list[Command]:
        """Every command in this block (nested ones included) that matches the pattern."""
        compiled = pattern if isinstance(pattern, CommandPattern) else CommandPattern.parse(pattern)
        return [command for command in self.commands() if compiled.matches(command.argv)]

    def first(self, pattern: str | CommandPattern) -> Command | None:
        found = self.find(pattern)
        return found[0] if found else None

    def comes_before(self, first: str | CommandPattern, then: str | CommandPattern) -> Answer:
        """Whether the first command matching `first` is written before the first matching `then`.

        The answer is truthy or falsy and its repr names both positions. Raises
        LookupError when either is missing, naming which.
        """
        a, b = self.first(first), self.first(then)
        for pattern, found in ((first, a), (then, b)):
            if found is None:
                raise LookupError(f"no command matches {str(pattern)!r} in this block")
        assert a is not None and b is not None
        before = a.start < b.start
        relation = "is written before" if before else "is not written before"
        return Answer(before, f"`{a.text}` ({_where(a.span)}) {relation} `{b.text}` ({_where(b.span)})")

    def occurrences(self, text: str) -> list[Occurrence]:
        """Where `text` occurs in this block's script text (comments included), in order."""
        found = []
        start = self.text.find(text) if text else -1
        while start >= 0:
            span = self.locator.span(self.start + start, self.start + start + len(text))
            found.append(Occurrence(span, text))
            start = self.text.find(text, start + 1)
        return found

    def if_statements(self) -> Iterator[IfStatement]:
        for node in _walk(self):
            if isinstance(node, IfStatement):
                yield node

    def clauses(self, condition: str) -> list[Clause]:
        """The `if`/`elif` clauses, at any depth, whose condition is `condition`.

        Conditions compare by their words (so `[ -n "$X" ]` equals `[ -n $X ]`)
        or by their text with runs of whitespace collapsed.
        """
        wanted_text = _condition_key(condition)
        wanted_words = _words_key(parse_fragment(condition))
        return [
            clause
            for statement in self.if_statements()
            for clause in statement.clauses
            if clause.condition is not None
            and (_condition_key(clause.condition.text) == wanted_text or _words_key(clause.condition) == wanted_words)
        ]

    def branch(self, condition: str) -> Block:
        """The body of the first `if`/`elif` branch whose condition is `condition` (see `clauses`).

        Raises LookupError listing the conditions that exist when none matches.
        """
        found = self.clauses(condition)
        if found:
            return found[0].body
        seen = [
            clause.condition.text
            for statement in self.if_statements()
            for clause in statement.clauses
            if clause.condition is not None
        ]
        raise LookupError(f"no if/elif branch has the condition {condition!r}; conditions here: {seen}")


@dataclass(eq=False)
class Clause:
    keyword: str  # "if", "elif" or "else"
    condition: Block | None
    body: Block


@dataclass(eq=False)
class IfStatement(ShellNode):
    clauses: list[Clause]

    def commands(self) -> Iterator[Command]:
        for clause in self.clauses:
            if clause.condition is not None:
                yield from clause.condition.commands()
            yield from clause.body.commands()


@dataclass(eq=False)
class Pipeline(ShellNode):
    stages: list[ShellNode]

    def commands(self) -> Iterator[Command]:
        for stage in self.stages:
            yield from stage.commands()


@dataclass(eq=False)
class AndOr(ShellNode):
    """`a && b || c`: `operators[i]` joins `items[i]` and `items[i + 1]`."""

    items: list[ShellNode]
    operators: list[str]

    def commands(self) -> Iterator[Command]:
        for item in self.items:
            yield from item.commands()


@dataclass(eq=False)
class Negated(ShellNode):
    statement: ShellNode

    def commands(self) -> Iterator[Command]:
        return self.statement.commands()


@dataclass(eq=False)
class Loop(ShellNode):
    """`for`/`select` (with `words`), `while`/`until` (with `condition`) or a C-style `for ((...))`."""

    keyword: str
    body: Block
    variable: str | None = None
    words: list[Word] = field(default_factory=list)
    condition: Block | None = None

    def commands(self) -> Iterator[Command]:
        for word in self.words:
            yield from word.commands()
        if self.condition is not None:
            yield from self.condition.commands()
        yield from self.body.commands()


@dataclass(eq=False)
class CaseItem:
    patterns: list[Word]
    body: Block


@dataclass(eq=False)
class Case(ShellNode):
    subject: Word | None
    items: list[CaseItem]

    def commands(self) -> Iterator[Command]:
        if self.subject is not None:
            yield from self.subject.commands()
        for item in self.items:
            yield from item.body.commands()


@dataclass(eq=False)
class Function(ShellNode):
    name: str
    body: Block

    def commands(self) -> Iterator[Command]:
        return self.body.commands()


@dataclass(eq=False)
class Group(ShellNode):
    """`( ... )` when `subshell`, else `{ ...; }`."""

    body: Block
    subshell: bool

    def commands(self) -> Iterator[Command]:
        return self.body.commands()


@dataclass(eq=False)
class Redirected(ShellNode):
    """A compound statement with redirections: `while read l; do ...; done < <(find .)`."""

    statement: ShellNode
    redirects: list[Redirect]

    def commands(self) -> Iterator[Command]:
        yield from self.statement.commands()
        for redirect in self.redirects:
            yield from redirect.commands()


@dataclass(eq=False, repr=False)
class Script(Block):
    """A whole parsed script. `errors` are spans tree-sitter could not parse."""

    errors: list[Span] = field(default_factory=list)


def _walk(node: ShellNode) -> Iterator[ShellNode]:
    yield node
    children: list[ShellNode] = []
    if isinstance(node, Block):
        children = node.statements
    elif isinstance(node, IfStatement):
        for clause in node.clauses:
            if clause.condition is not None:
                children.append(clause.condition)
            children.append(clause.body)
    elif isinstance(node, Pipeline):
        children = node.stages
    elif isinstance(node, AndOr):
        children = node.items
    elif isinstance(node, Negated):
        children = [node.statement]
    elif isinstance(node, Loop):
        children = [*node.words, *([node.condition] if node.condition else []), node.body]
    elif isinstance(node, Case):
        children = [item.body for item in node.items]
    elif isinstance(node, Function | Group):
        children = [node.body]
    elif isinstance(node, Redirected):
        children = [node.statement, *node.redirects]
    elif isinstance(node, Command):
        children = [*node.assignments, *node.words, *node.redirects]
    elif isinstance(node, Assignment):
        children = list(node.assignments)
    elif isinstance(node, Word):
        children = list(node.substitutions)
    elif isinstance(node, Redirect) and node.target is not None:
        children = [node.target]
    for child in children:
        yield from _walk(child)


# ---------------------------------------------------------------------------
# Command patterns

_NAME_BRACES = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}(?![A-Za-z0-9_])")
_PYTHON = re.compile(r"python(3(\.\d+)?)?\Z")
_PLAIN_WRAPPERS = {"time", "nohup", "exec", "command"}


def canonical_word(value: str) -> str:
    return _NAME_BRACES.sub(r"$\1", value) if "${" in value else value


def _basename(program: str) -> str:
    return program.rsplit("/", 1)[-1]


def _unwrap(argv: list[str]) -> Iterator[list[str]]:
    """The argv itself, then what it runs once each known wrapper is looked through."""
    yield argv
    while argv:
        program = _basename(argv[0])
        if program in _PLAIN_WRAPPERS:
            argv = argv[1:]
        elif program == "sudo":
            rest = argv[1:]
            while rest and rest[0].startswith("-"):
                takes_value = rest[0] in ("-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U")
                rest = rest[2:] if takes_value else rest[1:]
            argv = rest
        elif program == "env":
            rest = argv[1:]
            while rest and (rest[0].startswith("-") or "=" in rest[0]):
                rest = rest[1:]
            argv = rest
        elif _PYTHON.match(program) and len(argv) >= 3 and argv[1] == "-m":
            argv = argv[2:]
        else:
            return
        yield argv


@dataclass(frozen=True)
class CommandPattern:
    words: tuple[str, ...]

    @classmethod
    def parse(cls, pattern: str) -> CommandPattern:
        try:
            words = shlex.split(pattern, comments=False, posix=True)
        except ValueError as error:
            raise ValueError(f"invalid command pattern {pattern!r}: {error}") from None
        if not words:
            raise ValueError("a command pattern needs at least a program name")
        return cls(tuple(canonical_word(word) for word in words))

    def __str__(self) -> str:
        return shlex.join(self.words)

    def matches(self, argv: list[str]) -> bool:
        program, *wanted = self.words
        for candidate in _unwrap(argv):
            if not candidate or _basename(candidate[0]) != program:
                continue
            remaining = iter(canonical_word(arg) for arg in candidate[1:])
            if all(any(arg == word for arg in remaining) for word in wanted):
                return True
        return False


def _where(span: Span) -> str:
    return f"{span.path}:{span.line}:{span.column}"


def _condition_key(text: str) -> str:
    return " ".join(text.replace(";", " ").split())


def _words_key(block: Block) -> list[list[str]]:
    return [[canonical_word(value) for value in command.argv] for command in block.commands()]


# ---------------------------------------------------------------------------
# Building the tree from tree-sitter nodes

_WORD_TYPES = {
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
_REDIRECT_TYPES = {"file_redirect", "heredoc_redirect", "herestring_redirect"}
_SEPARATORS = {";", ";;", "&", "\n", ";&", ";;&"}
_CLAUSE_SKIPPED = {"elif_clause", "else_clause", "fi", "if", "elif", "comment"}


class _OffsetLocator:
    """Spans relative to the script itself: for patterns and conditions given as text."""

    def span(self, start: int, end: int) -> Span:
        return Span("<pattern>", 1, start + 1, 1, end + 1)


class _Converter:
    def __init__(self, text: str, masked: str, ranges: list[tuple[int, int]], locator: Locator) -> None:
        self.text = text
        self.ranges = ranges
        self.range_starts = [start for start, _ in ranges]
        self.locator = locator
        self.errors: list[Span] = []
        data = masked.encode("utf-8")
        self.data = data
        if len(data) == len(masked):
            self.char_at: list[int] | None = None
        else:
            char_at = [0] * (len(data) + 1)
            position = 0
            for index, char in enumerate(masked):
                width = len(char.encode("utf-8"))
                for k in range(width):
                    char_at[position + k] = index
                position += width
            char_at[len(data)] = len(masked)
            self.char_at = char_at

    # positions ---------------------------------------------------------
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

    # words -------------------------------------------------------------
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
            if current is not node and (current.type in _WORD_TYPES or current.child_count == 0):
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

    def redirects(self, node: tree_sitter.Node) -> list[Redirect]:
        """A redirect node as `Redirect`s; a here-document may carry a nested file redirect."""
        start, end = self.bounds(node)
        operator = ""
        target: Word | None = None
        heredoc: str | None = None
        nested: list[Redirect] = []
        for child in node.children:
            kind = child.type
            if kind == "heredoc_body":
                heredoc = self.source(child)
            elif kind == "heredoc_start":
                target = self.word(child)
            elif kind in _REDIRECT_TYPES:
                nested.extend(self.redirects(child))
            elif kind in ("heredoc_end", "file_descriptor", "comment"):
                continue
            elif child.is_named:
                if target is None:
                    target = self.word(child)
            elif not operator:
                operator = self.source(child)
        return [Redirect(self.locator, start, end, operator, target, heredoc), *nested]

    # statements --------------------------------------------------------
    def block(self, owner: tree_sitter.Node, nodes: list[tree_sitter.Node]) -> Block:
        statements: list[ShellNode] = []
        for child in nodes:
            statements.extend(self.statement(child))
        if nodes:
            start, _ = self.bounds(nodes[0])
            _, end = self.bounds(nodes[-1])
        else:
            start, end = self.bounds(owner)
        return Block(self.locator, start, end, statements, self.text[start:end])

    def statement(self, node: tree_sitter.Node) -> list[ShellNode]:
        kind = node.type
        if node.is_missing:
            start, end = self.bounds(node)
            self.errors.append(self.span(start, end))
            return []
        if kind in ("comment", "heredoc_body") or kind in _SEPARATORS or not node.is_named:
            return []
        start, end = self.bounds(node)
        if kind == "ERROR":
            self.errors.append(self.span(start, end))
            found: list[ShellNode] = []
            for child in node.named_children:
                found.extend(self.statement(child))
            return found
        if kind == "command":
            return [self.command(node)]
        if kind in ("declaration_command", "unset_command"):
            words = []
            for child in node.children:
                if child.type == "variable_assignment":
                    words.append(self.assignment_word(child))
                elif child.type != "comment":
                    words.append(self.word(child))
            return [Command(self.locator, start, end, words, text=self.text[start:end])]
        if kind in ("test_command",):
            return [Command(self.locator, start, end, self.test_words(node), text=self.text[start:end])]
        if kind in ("variable_assignment",):
            return [Assignment(self.locator, start, end, [self.assignment_word(node)])]
        if kind == "variable_assignments":
            words = [self.assignment_word(c) for c in node.named_children if c.type == "variable_assignment"]
            return [Assignment(self.locator, start, end, words)]
        if kind == "redirected_statement":
            return self.redirected(node)
        if kind == "pipeline":
            stages = [s for child in node.named_children for s in self.statement(child)]
            return [Pipeline(self.locator, start, end, stages)]
        if kind == "list":
            items: list[ShellNode] = []
            operators: list[str] = []
            for child in node.children:
                if child.type in ("&&", "||"):
                    operators.append(child.type)
                elif child.is_named:
                    converted = self.statement(child)
                    if len(converted) == 1 and isinstance(converted[0], AndOr):
                        items.extend(converted[0].items)
                        operators.extend(converted[0].operators)
                    else:
                        items.extend(converted)
            return [AndOr(self.locator, start, end, items, operators)]
        if kind == "negated_command":
            inner = [s for child in node.named_children for s in self.statement(child)]
            return [Negated(self.locator, start, end, inner[0])] if len(inner) == 1 else inner
        if kind == "if_statement":
            return [self.if_statement(node)]
        if kind in ("while_statement", "for_statement", "c_style_for_statement"):
            return [self.loop(node)]
        if kind == "case_statement":
            return [self.case(node)]
        if kind == "function_definition":
            name_node = node.child_by_field_name("name")
            body_node = node.child_by_field_name("body")
            body = self.body_of(body_node) if body_node is not None else self.block(node, [])
            return [Function(self.locator, start, end, self.source(name_node) if name_node else "", body)]
        if kind in ("subshell", "compound_statement"):
            return [Group(self.locator, start, end, self.body_of(node), kind == "subshell")]
        if kind in ("do_group",):
            return list(self.body_of(node).statements)
        if kind in _WORD_TYPES:
            return [Command(self.locator, start, end, [self.word(node)], text=self.text[start:end])]
        return []

    def body_of(self, node: tree_sitter.Node) -> Block:
        """The statements of a `{ }`, `( )` or `do ... done`, without the delimiters."""
        inner = [c for c in node.named_children if c.type != "comment"]
        return self.block(node, inner)

    def command(self, node: tree_sitter.Node) -> Command:
        start, end = self.bounds(node)
        words: list[Word] = []
        assignments: list[Word] = []
        redirects: list[Redirect] = []
        for child in node.children:
            kind = child.type
            if kind == "variable_assignment":
                assignments.append(self.assignment_word(child))
            elif kind == "command_name":
                words.extend(self.word(grandchild) for grandchild in child.named_children)
            elif kind in _REDIRECT_TYPES:
                redirects.extend(self.redirects(child))
            elif kind == "comment":
                continue
            elif child.is_named:
                words.append(self.word(child))
        return Command(self.locator, start, end, words, assignments, redirects, self.text[start:end])

    def redirected(self, node: tree_sitter.Node) -> list[ShellNode]:
        body_node = node.child_by_field_name("body")
        redirects = [r for c in node.children if c.type in _REDIRECT_TYPES for r in self.redirects(c)]
        if body_node is None:
            return []
        converted = self.statement(body_node)
        if len(converted) != 1 or not redirects:
            return converted
        target = converted[0]
        if isinstance(target, Command):
            target.redirects.extend(redirects)
            return [target]
        start, end = self.bounds(node)
        return [Redirected(self.locator, start, end, target, redirects)]

    def if_statement(self, node: tree_sitter.Node) -> IfStatement:
        start, end = self.bounds(node)
        clauses: list[Clause] = []
        clauses.append(self.clause(node, "if"))
        for child in node.named_children:
            if child.type == "elif_clause":
                clauses.append(self.clause(child, "elif"))
            elif child.type == "else_clause":
                body = [c for c in child.named_children if c.type != "comment"]
                clauses.append(Clause("else", None, self.block(child, body)))
        return IfStatement(self.locator, start, end, clauses)

    def clause(self, node: tree_sitter.Node, keyword: str) -> Clause:
        condition: list[tree_sitter.Node] = []
        body: list[tree_sitter.Node] = []
        seen_then = False
        for child in node.children:
            if child.type == "then":
                seen_then = True
            elif child.type in _CLAUSE_SKIPPED or not child.is_named:
                continue
            elif seen_then:
                body.append(child)
            else:
                condition.append(child)
        return Clause(keyword, self.block(node, condition), self.block(node, body))

    def loop(self, node: tree_sitter.Node) -> Loop:
        start, end = self.bounds(node)
        keyword = node.children[0].type if node.children else "for"
        body_node = node.child_by_field_name("body")
        body = self.body_of(body_node) if body_node is not None else self.block(node, [])
        if node.type == "while_statement":
            condition = [c for c in node.children_by_field_name("condition") if c.is_named]
            return Loop(self.locator, start, end, keyword, body, condition=self.block(node, condition))
        if node.type == "c_style_for_statement":
            return Loop(self.locator, start, end, "for ((", body)
        variable_node = node.child_by_field_name("variable")
        words = [self.word(c) for c in node.children_by_field_name("value")]
        variable = self.source(variable_node) if variable_node is not None else None
        return Loop(self.locator, start, end, keyword, body, variable, words)

    def case(self, node: tree_sitter.Node) -> Case:
        start, end = self.bounds(node)
        subject_node = node.child_by_field_name("value")
        items = []
        for item in node.named_children:
            if item.type != "case_item":
                continue
            pattern_nodes = item.children_by_field_name("value")
            patterns = [self.word(c) for c in pattern_nodes]
            body = [c for c in item.named_children if c.type != "comment" and c not in pattern_nodes]
            items.append(CaseItem(patterns, self.block(item, body)))
        subject = self.word(subject_node) if subject_node is not None else None
        return Case(self.locator, start, end, subject, items)


def parse(text: str, locator: Locator) -> Script:
    """Parse a bash/sh script; positions come from `locator`."""
    ranges = expression_ranges(text)
    masked = mask_expressions(text, ranges)
    converter = _Converter(text, masked, ranges, locator)
    tree = _parser().parse(converter.data)
    root = tree.root_node
    statements: list[ShellNode] = []
    for child in root.children:
        statements.extend(converter.statement(child))
    if root.has_error and not converter.errors:
        _collect_errors(converter, root)
    return Script(locator, 0, len(text), statements, text, converter.errors)


def parse_fragment(text: str) -> Script:
    """Parse a piece of shell given as text (a pattern, a condition); its spans count from 1:1 of the text."""
    return parse(text, _OffsetLocator())


def _collect_errors(converter: _Converter, root: tree_sitter.Node) -> None:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            start, end = converter.bounds(node)
            converter.errors.append(converter.span(start, end))
        elif node.has_error:
            stack.extend(node.children)
