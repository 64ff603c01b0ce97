"""The values a script's variables can have at each command, as bounded sets of strings.

`ShellValues` walks a script the way bash runs it, keeping for every variable
the set of values it may hold: an assignment (`X=v`, `export`, `declare`,
`local`, `readonly`), `${X:-default}` and the other defaulting forms, a `for`
loop's words, and `source` of a repository file; branches (`if`, `case`, the
right side of `&&`/`||`) and loops join what each path leaves. A value that
comes from a command's output, `read`, positional parameters or the runner's
environment is unknown (None), never guessed.

Every set is bounded: at most `MAX_VALUES` values of at most `MAX_LENGTH`
characters each (`a=$a$a` repeated doubles nothing past that: it is unknown),
at most `MAX_VARIABLES` variables, and a function is followed at most
`MAX_CALLS` times, so the walk is linear in the script's size.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import product

from ci_checks.model.files.effects import command_outputs
from ci_checks.syntax.shell import (
    AndOr,
    Assignment,
    Block,
    Case,
    Command,
    Function,
    Group,
    IfStatement,
    Loop,
    Negated,
    Pipeline,
    Redirected,
    ShellNode,
    Word,
)

Possible = frozenset[str] | None
"""The values a variable or word may have; None: it cannot be known."""
Env = Mapping[str, Possible]

MAX_VALUES = 16
MAX_LENGTH = 4096
MAX_VARIABLES = 512
MAX_CALLS = 16
MAX_SOURCES = 4
"""How many repository scripts `source` reads into one walk (each at most once)."""

_DECLARATIONS = {"export", "declare", "local", "readonly", "typeset"}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_EXPANSION = re.compile(
    r"\$\{\{(?P<expression>.*?)\}\}"
    r"|\$\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<operator>:?[-=+?])(?P<word>[^}]*))?\}"
    r"|\$(?P<plain>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<other>\$[({#!?@*$0-9-]|`)",
    re.DOTALL,
)
Expression = Callable[[str], Possible]
"""The values a `${{ }}` expression's body may have where the script runs."""
ReadScript = Callable[[str], Block | None]
"""A repository script `source` names (a path relative to the repository root), parsed; None where there is none."""


def expand(text: str, env: Env, expression: Expression) -> Possible:
    """The values a word's text (its quotes removed) may have once its variables and expressions are substituted."""
    pieces: list[frozenset[str]] = []
    cursor = 0
    for match in _EXPANSION.finditer(text):
        if match.start() > cursor:
            pieces.append(frozenset({text[cursor : match.start()]}))
        cursor = match.end()
        if match.group("other") is not None:
            return None  # a command's output, a positional parameter, `$?`
        if match.group("expression") is not None:
            found = expression(match.group("expression"))
        else:
            found = _variable(match, env, expression)
        if found is None:
            return None
        pieces.append(found)
    if cursor < len(text):
        pieces.append(frozenset({text[cursor:]}))
    return _joined(pieces)


def _variable(match: re.Match[str], env: Env, expression: Expression) -> Possible:
    name = match.group("braced") or match.group("plain")
    value = env.get(name)
    operator = match.group("operator")
    if operator is None:
        return value
    alternative = expand(match.group("word") or "", env, expression)
    if operator in ("-", "="):  # used when unset: the value if set (an empty one included)
        return value if value is not None and "" not in value else None if value is None else _union(value, alternative)
    if operator in (":-", ":="):  # used when unset or empty
        if value is None:
            return None
        kept = frozenset(each for each in value if each)
        return _union(kept, alternative) if "" in value else kept
    if operator in ("+", ":+"):  # the alternative when set (and not empty)
        if value is None or alternative is None:
            return None
        result: set[str] = set()
        for each in value:
            result |= alternative if each or operator == "+" else {""}
        return _bounded(result)
    return value  # `:?` / `?`: the value, or the script stops


def _joined(pieces: list[frozenset[str]]) -> Possible:
    combinations = 1
    for piece in pieces:
        combinations *= len(piece)
        if combinations > MAX_VALUES:
            return None
    return _bounded({"".join(parts) for parts in product(*pieces)})


def _union(first: Possible, second: Possible) -> Possible:
    if first is None or second is None:
        return None
    return _bounded(first | second)


def _bounded(values: Iterable[str]) -> Possible:
    found = frozenset(values)
    if len(found) > MAX_VALUES or any(len(value) > MAX_LENGTH for value in found):
        return None
    return found


@dataclass
class _State:
    env: dict[str, Possible]
    moved: bool = False
    """Whether a `cd` ran: a relative `source` path is then not known."""

    def copy(self) -> _State:
        return _State(dict(self.env), self.moved)


def _merged(states: list[_State]) -> _State:
    """What the paths leave: each variable any of them set, with every value it may have (unset is empty)."""
    names = {name for state in states for name in state.env}
    env: dict[str, Possible] = {}
    for name in names:
        values = [state.env.get(name, frozenset({""})) for state in states]
        joined: Possible = frozenset()
        for value in values:
            joined = _union(joined, value)
        env[name] = joined
    return _State(env, any(state.moved for state in states))


@dataclass
class Written:
    """A value a script writes to `$GITHUB_OUTPUT` or `$GITHUB_ENV`."""

    name: str
    values: Possible
    to_env: bool


@dataclass
class ShellValues:
    """What a script's commands see: the variables at each command, and what it writes for later steps."""

    at: dict[int, Env] = field(default_factory=dict)
    """The variables where each command runs (by the command's id)."""
    written: list[Written] = field(default_factory=list)
    end: Env = field(default_factory=dict)
    """The variables when the script ends."""

    def before(self, command: Command) -> Env:
        return self.at.get(id(command), {})


def walk(block: Block, env: Env, expression: Expression, read_script: ReadScript | None = None) -> ShellValues:
    """The values of the variables at each command of a script that starts with `env`."""
    walker = _Walker(expression, read_script)
    state = _State(dict(env))
    walker.block(block, state)
    walker.result.end = state.env
    return walker.result


class _Walker:
    def __init__(self, expression: Expression, read_script: ReadScript | None) -> None:
        self.expression = expression
        self.read_script = read_script
        self.functions: dict[str, Block] = {}
        self.calls: dict[str, int] = {}
        self.active: set[str] = set()
        self.sourced: set[str] = set()
        self.result = ShellValues()

    def block(self, block: Block, state: _State) -> None:
        for statement in block.statements:
            self.node(statement, state)

    def node(self, node: ShellNode, state: _State) -> None:
        if isinstance(node, Command):
            self.command(node, state)
        elif isinstance(node, Assignment):
            self.substitutions(node.assignments, state)
            for word in node.assignments:
                self.assign(word, state)
        elif isinstance(node, AndOr):
            if node.items:
                self.node(node.items[0], state)
            for item in node.items[1:]:  # each may not run
                branch = state.copy()
                self.node(item, branch)
                self.become(state, _merged([state, branch]))
        elif isinstance(node, Pipeline):
            for stage in node.stages:  # each in a process of its own
                self.node(stage, state.copy())
        elif isinstance(node, Negated):
            self.node(node.statement, state)
        elif isinstance(node, Group):
            self.block(node.body, state.copy() if node.subshell else state)
        elif isinstance(node, Redirected):
            self.node(node.statement, state)
        elif isinstance(node, IfStatement):
            self.branches(node, state)
        elif isinstance(node, Loop):
            self.loop(node, state)
        elif isinstance(node, Case):
            self.case(node, state)
        elif isinstance(node, Function):
            self.functions[node.name] = node.body

    def branches(self, node: IfStatement, state: _State) -> None:
        ends: list[_State] = []
        for clause in node.clauses:
            if clause.condition is not None:
                self.block(clause.condition, state)
            branch = state.copy()
            self.block(clause.body, branch)
            ends.append(branch)
        otherwise = [] if node.clauses[-1].keyword == "else" else [state]
        self.become(state, _merged([*ends, *otherwise]))

    def loop(self, node: Loop, state: _State) -> None:
        self.substitutions(node.words, state)
        body = state.copy()
        if node.variable is not None:
            values: Possible = frozenset()
            for word in node.words:
                values = _union(values, self.fields(word, state.env))
            body.env[node.variable] = values if node.words else None
        if node.condition is not None:
            self.block(node.condition, body)
        self.block(node.body, body)
        self.become(state, _merged([state, body]))

    def case(self, node: Case, state: _State) -> None:
        if node.subject is not None:
            self.substitutions([node.subject], state)
        arms = [state.copy() for _ in node.items]
        for item, arm in zip(node.items, arms, strict=True):
            self.block(item.body, arm)
        every = any(pattern.value == "*" for item in node.items for pattern in item.patterns)
        self.become(state, _merged([*arms, *([] if every else [state])]))

    @staticmethod
    def become(state: _State, other: _State) -> None:
        state.env, state.moved = other.env, other.moved

    def substitutions(self, words: Iterable[Word], state: _State) -> None:
        for word in words:
            for block in word.substitutions:
                self.block(block, state.copy())

    def fields(self, word: Word, env: Env) -> Possible:
        """The words a `for` word gives: split at blanks when it is not quoted."""
        value = expand(word.value, env, self.expression)
        if value is None or _quoted(word):
            return value
        return _bounded(part for each in value for part in each.split())

    def assign(self, word: Word, state: _State) -> None:
        name, equals, value = word.value.partition("=")
        appended = name.endswith("+")
        name = name.removesuffix("+")
        if not equals or not _NAME.match(name):
            return
        found = expand(value, state.env, self.expression)
        if appended:
            found = _joined([state.env.get(name) or frozenset({""}), found]) if found is not None else None
        self.set(state, name, found)

    def set(self, state: _State, name: str, value: Possible) -> None:
        if name not in state.env and len(state.env) >= MAX_VARIABLES:
            return  # past the cap, a variable is not followed (it reads as the runner's: unknown)
        state.env = {**state.env, name: value}

    def command(self, command: Command, state: _State) -> None:
        self.substitutions([*command.assignments, *command.words], state)
        self.result.at[id(command)] = state.env
        for output in command_outputs(command):
            values = expand(output.value, state.env, self.expression)
            self.result.written.append(Written(output.name, values, output.to_env))
        name = command.name
        arguments = command.words[1:]
        if name in _DECLARATIONS:
            for word in arguments:
                if "=" in word.value and not word.value.startswith("-"):
                    self.assign(word, state)
        elif name == "read":
            for word in arguments:
                if _NAME.match(word.value):
                    self.set(state, word.value, None)
        elif name == "unset":
            for word in arguments:
                if _NAME.match(word.value):
                    self.set(state, word.value, frozenset({""}))
        elif name in ("cd", "pushd", "popd"):
            state.moved = True
        elif name in ("source", ".") and arguments:
            self.source(arguments[0], state)
        elif name in self.functions and name not in self.active and self.calls.get(name, 0) < MAX_CALLS:
            self.calls[name] = self.calls.get(name, 0) + 1
            self.active.add(name)
            self.block(self.functions[name], state)
            self.active.discard(name)

    def source(self, word: Word, state: _State) -> None:
        """`source env.sh`: a repository script's assignments, when its path is known (read once, a few at most)."""
        values = expand(word.value, state.env, self.expression)
        if self.read_script is None or values is None or len(values) != 1 or state.moved:
            return
        path = next(iter(values))
        if path in self.sourced or len(self.sourced) >= MAX_SOURCES:
            return
        self.sourced.add(path)
        block = self.read_script(path)
        if block is not None:
            self.block(block, state)


def _quoted(word: Word) -> bool:
    """Whether every expansion in a word is inside double quotes (or the word has none): it is one word then."""
    return not any(True for _ in _unquoted_expansions(word.text))


def _unquoted_expansions(text: str) -> Iterator[int]:
    """The offsets of `$` (and backquotes) outside quotes in a word as written."""
    quote = ""
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\" and quote != "'":
            index += 2
            continue
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in "$`":
            yield index
        index += 1


def word_values(word: Word, env: Env, expression: Expression) -> list[list[str]] | None:
    """Each list of argv words one shell word may become (split where an expansion is not quoted); None where its
    value is not known."""
    values = expand(word.value, env, expression)
    if values is None:
        return None
    if _quoted(word):
        return [[value] for value in sorted(values)]
    return [value.split() for value in sorted(values)]
