"""The command tree: the nodes a parsed script is made of, each with its span, and the questions a `Block` answers.

Offsets are characters into the script's own text; a `Locator` turns them into
spans in the file the script came from. Every answer that can fail an
assertion names the positions involved.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

from ci_checks.core.diagnostics import Answer, Occurrence, Span
from ci_checks.syntax.shell.patterns import CommandPattern, basename, unwrap
from ci_checks.syntax.shell.quoting import canonical_word, split_words


class Locator(Protocol):
    """Turns script character offsets (end exclusive) into a span in the file the script came from."""

    def span(self, start: int, end: int) -> Span: ...


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

    @cached_property
    def programs(self) -> frozenset[str]:
        """The basenames of what the command runs: its program, and what each wrapper it starts with runs (`sudo`,
        `env`, `python -m`; see `ci_checks.syntax.shell.patterns`)."""
        return frozenset(basename(argv[0]) for argv in unwrap(self.argv) if argv)

    def matches(self, pattern: str | CommandPattern, *, without: Sequence[str] = (), exact: bool = False) -> bool:
        """Whether the pattern names this command (see `CommandPattern`); answered from the programs it runs alone
        for the many commands it cannot match."""
        wanted = compiled(pattern, without, exact)
        return wanted.words[0] in self.programs and wanted.matches(self.argv)

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
        return iter(self._all_commands)

    @cached_property
    def _all_commands(self) -> tuple[Command, ...]:
        # A block is walked once: every command pattern of a policy asks each script for all its commands.
        return tuple(command for statement in self.statements for command in statement.commands())

    def find(self, pattern: str | CommandPattern, *, without: Sequence[str] = (), exact: bool = False) -> list[Command]:
        """Every command in this block (nested ones included) that matches the pattern (see `CommandPattern`)."""
        wanted = compiled(pattern, without, exact)
        return [command for command in self.commands() if command.matches(wanted)]

    def first(self, pattern: str | CommandPattern) -> Command | None:
        found = self.find(pattern)
        return found[0] if found else None

    def count(self, pattern: str | CommandPattern, *, without: Sequence[str] = (), exact: bool = False) -> int:
        """How many commands in this block match the pattern."""
        return len(self.find(pattern, without=without, exact=exact))

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
        for node in walk(self):
            if isinstance(node, IfStatement):
                yield node

    def cases(self) -> Iterator[Case]:
        for node in walk(self):
            if isinstance(node, Case):
                yield node

    def clauses(self, condition: str) -> list[Clause]:
        """The `if`/`elif` clauses, at any depth, whose condition is `condition`.

        Conditions compare by their words (so `[ -n "$X" ]` equals `[ -n $X ]`)
        or by their text with runs of whitespace collapsed.
        """
        wanted_text = condition_key(condition)
        wanted_words = _words_key(_PARSER["fragment"](condition))
        return [
            clause
            for statement in self.if_statements()
            for clause in statement.clauses
            if clause.condition is not None
            and (condition_key(clause.condition.text) == wanted_text or _words_key(clause.condition) == wanted_words)
        ]

    def case_arms(self, subject: str, arm: str) -> list[CaseItem]:
        """The arms of `case SUBJECT in` (compared by value), at any depth, one of whose patterns is written `arm`."""
        wanted_subject, wanted_arm = canonical_word(_value(subject)), canonical_word(_value(arm))
        return [
            item
            for statement in self.cases()
            if statement.subject is not None and canonical_word(statement.subject.value) == wanted_subject
            for item in statement.items
            if any(canonical_word(pattern.value) == wanted_arm for pattern in item.patterns)
        ]

    def branch(
        self,
        condition: str | None = None,
        *,
        else_: bool = False,
        case: str | None = None,
        arm: str | None = None,
    ) -> Block:
        """A branch of this block, at any depth: the body of the first `if`/`elif` whose condition is `condition`;
        with `else_=True` the `else` of that `if`; with `case` and `arm`, the arm of `case WORD in` one of whose
        patterns is written `arm` (`branch(case="$GPU_ARCH", arm="gfx94*")`).

        Raises LookupError listing what exists when nothing matches.
        """
        if case is not None or arm is not None:
            if case is None or arm is None or condition is not None or else_:
                raise ValueError("a case arm is selected by both `case` and `arm`, and nothing else")
            return self._case_arm(case, arm)
        if condition is None:
            raise ValueError("name the condition of the if/elif branch")
        found = self.clauses(condition)
        if found and not else_:
            return found[0].body
        if found:
            for statement in self.if_statements():
                if found[0] in statement.clauses:
                    last = statement.clauses[-1]
                    if last.keyword == "else":
                        return last.body
                    raise LookupError(f"the if statement with the condition {condition!r} has no else branch")
        seen = [
            clause.condition.text
            for statement in self.if_statements()
            for clause in statement.clauses
            if clause.condition is not None
        ]
        raise LookupError(f"no if/elif branch has the condition {condition!r}; conditions here: {seen}")

    def _case_arm(self, subject: str, arm: str) -> Block:
        found = self.case_arms(subject, arm)
        if found:
            return found[0].body
        seen = [
            f"case {statement.subject.text if statement.subject else '?'}: "
            + " | ".join(pattern.text for item in statement.items for pattern in item.patterns)
            for statement in self.cases()
        ]
        raise LookupError(f"no arm {arm!r} of a `case {subject} in`; case statements here: {seen}")


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
    """A whole parsed script. `errors` are spans tree-sitter could not parse.

    `problem` says why a script was not read at all (its first error is where): statements nested deeper than
    `parse.MAX_NESTING` are refused rather than walked into Python's recursion limit.
    """

    errors: list[Span] = field(default_factory=list)
    problem: str | None = None


def walk(node: ShellNode) -> Iterator[ShellNode]:
    """The node and every node inside it, depth first, in the order they are written."""
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
        yield from walk(child)


def compiled(pattern: str | CommandPattern, without: Sequence[str] = (), exact: bool = False) -> CommandPattern:
    if isinstance(pattern, CommandPattern):
        if without or exact:
            return CommandPattern(pattern.words, pattern.without | {canonical_word(w) for w in without}, exact)
        return pattern
    return CommandPattern.parse(pattern, without, exact)


_PARSER: dict[str, Callable[[str], Block]] = {}
"""What reads a condition a block is asked about (`Block.clauses`) into a block: the parser's `parse_fragment`.

The parser builds this tree, so this module cannot import it without a
circle; `ci_checks.syntax.shell.parse` hands it over when it is loaded
(`read_conditions_with`). Every block is built by that parser, so it is here
before any block can be asked.
"""


def read_conditions_with(parse_fragment: Callable[[str], Block]) -> None:
    _PARSER["fragment"] = parse_fragment


def condition_key(text: str) -> str:
    return " ".join(text.replace(";", " ").split())


def _words_key(block: Block) -> list[list[str]]:
    return [[canonical_word(value) for value in command.argv] for command in block.commands()]


def _value(word: str) -> str:
    """A word as written in a policy or a test (`"$GPU_ARCH"`, `gfx94*`), without its quoting."""
    words = split_words(word)
    return words[0] if len(words) == 1 else word


def _where(span: Span) -> str:
    return f"{span.path}:{span.line}:{span.column}"
