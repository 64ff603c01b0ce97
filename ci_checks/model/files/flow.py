"""A flow: what the commands of one job, composite action or Dockerfile stage read and write, in order.

`Walker` follows a shell script statement by statement, the way bash runs
it: `cd`, `pushd` and `popd` move the working directory (`cd x && make`
included), a subshell `( ... )` and each stage of a pipeline keep their `cd`s
to themselves, branches and loops that may or may not move it leave it
unknown after them, a function's commands run where it is called, and
variables assigned in the script are substituted. Each command's reads
(`ci_checks.model.references`) and writes (`effects`) are noted with a
sequence number, so that a flow answers "what put this place here before
this command?" (`Flow.origin`).
"""

from __future__ import annotations

import bisect
import functools
import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ci_checks import globs, shell
from ci_checks.diagnostics import Span
from ci_checks.model.files.effects import (
    SILENT,
    GitOperation,
    Output,
    Write,
    command_effects,
    command_outputs,
    pipeline_outputs,
    redirect_writes,
)
from ci_checks.model.files.places import CONTEXT, HOME, STAGE, Place, Scope
from ci_checks.model.references import SHELL_VALUE_OPTIONS, SHELLS, Reference, command_references, unwrapped
from ci_checks.model.steps import Step
from ci_checks.shell import (
    AndOr,
    Assignment,
    Block,
    Case,
    Command,
    Function,
    Group,
    IfStatement,
    Locator,
    Loop,
    Negated,
    Pipeline,
    Redirected,
    ShellNode,
    Word,
)

_DECLARATIONS = {"export", "declare", "local", "readonly", "typeset"}
_MAX_CALLS = 16
"""How many times one function's body is walked where it is called: past that (a function called in a loop of
calls), later calls are not followed, so that a script cannot make the walk grow without bound."""


@dataclass(frozen=True, eq=False)
class Read:
    """A place read at `seq`: by a command's `reference`, in `step` (None in a Dockerfile)."""

    seq: int
    reference: Reference
    step: Step | None


@dataclass(frozen=True, eq=False)
class Event:
    """A write, git operation or output at `seq`, by `command` (None for a step's `uses:` or a Dockerfile
    instruction that is not `RUN`), in `step`, at `where` (a span, or the node of a script whose span is found
    when asked: most are never shown)."""

    seq: int
    effect: Write | GitOperation | Output
    where: Span | ShellNode
    command: Command | None = None
    step: Step | None = None

    @property
    def span(self) -> Span:
        return self.where.span if isinstance(self.where, ShellNode) else self.where


@dataclass(frozen=True)
class Origin:
    """What put a place where it is when it is read: the write (None: nothing did) and, when the content is this
    repository's, its path in the repository (a glob for a glob place)."""

    write: Event | None
    repository_path: str | None = None

    @property
    def kind(self) -> str | None:
        return self.write.effect.kind if self.write is not None and isinstance(self.write.effect, Write) else None


Lookup = Callable[[Place, frozenset[str]], Origin]
"""How a flow reads a place of a base it does not hold (another Dockerfile stage)."""


@dataclass(eq=False)
class Flow:
    """The reads and effects of one job, composite action or Dockerfile stage, in the order they happen."""

    reads: list[Read] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    lookups: dict[str, Lookup] = field(default_factory=dict)
    outputs: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    """The values each step (by id) writes to `$GITHUB_OUTPUT`, by name."""
    _seq: int = 0
    _at: dict[tuple[str, str], list[Event]] = field(default_factory=dict)
    """Writes by their place: a read looks at the places that hold it, not at every write."""
    _below: dict[tuple[str, str], list[Event]] = field(default_factory=dict)
    """Writes by each folder their place is inside."""
    _globs: dict[tuple[str, str], list[Event]] = field(default_factory=dict)
    """Writes to a glob (a cache restored to `./*`) by the folder their first wildcard is in: a read looks only at
    those of its own folders."""
    _unplaced: list[Event] = field(default_factory=list)

    def next_seq(self) -> int:
        self._seq += 1
        return self._seq

    @property
    def end(self) -> int:
        return self._seq + 1

    def read(self, reference: Reference, step: Step | None) -> None:
        self.reads.append(Read(self.next_seq(), reference, step))

    def note(
        self, effect: Write | GitOperation | Output, where: Span | ShellNode, command: Command | None, step: Step | None
    ) -> None:
        event = Event(self.next_seq(), effect, where, command, step)
        self.events.append(event)
        if isinstance(effect, Write):
            place = effect.place
            if place is None:
                self._unplaced.append(event)
            elif place.glob:
                literal = place.literal_folder().path
                self._globs.setdefault((place.base, literal), []).append(event)
                for folder in [literal, *_folders(literal)]:
                    self._below.setdefault((place.base, folder), []).append(event)
            else:
                self._at.setdefault((place.base, place.path), []).append(event)
                for folder in _folders(place.path):
                    self._below.setdefault((place.base, folder), []).append(event)
        if isinstance(effect, Output) and not effect.to_env and step is not None and step.id is not None:
            self.outputs.setdefault(step.id, {}).setdefault(effect.name, []).append(effect.value)

    @property
    def writes(self) -> list[Event]:
        return [event for event in self.events if isinstance(event.effect, Write)]

    @property
    def git_operations(self) -> list[Event]:
        return [event for event in self.events if isinstance(event.effect, GitOperation)]

    def origin(self, place: Place, before: int, ignore: frozenset[str] = frozenset(), folder: bool = False) -> Origin:
        """What put `place` there before `before`, the latest write first; writes of the kinds in `ignore` (and
        "unplaced" for writes to unknown places) do not count.

        A write covers the places inside it, a write to a glob every place its pattern may match and the places
        inside those; with `folder`, a place is also there when something was written inside it (`cd x` after
        `mkdir -p x/y`, or a cache restored to `*/build`).
        """
        chain = [place.path, *_folders(place.path)]
        holding = [_latest(self._at.get((place.base, path)), before, ignore) for path in chain]
        found = max((event for event in holding if event is not None), key=lambda event: event.seq, default=None)
        writable = place.base != CONTEXT and not place.base.startswith(STAGE)  # a build's inputs are only read
        maybe = [_latest(self._unplaced, before, ignore) if "unplaced" not in ignore and writable else None]
        if self._globs:
            maybe.extend(self._glob_write(place, path, before, ignore, folder) for path in chain)
        if folder:
            maybe.append(_latest(self._below.get((place.base, place.literal_folder().path)), before, ignore))
        elsewhere = max((event for event in maybe if event is not None), key=lambda event: event.seq, default=None)
        if elsewhere is not None and (found is None or elsewhere.seq > found.seq):
            return Origin(elsewhere)
        if found is not None and isinstance(found.effect, Write) and found.effect.place is not None:
            relative = place.within(found.effect.place)
            return Origin(found, self._content(found.effect, relative or "", found.seq, ignore))
        lookup = self.lookups.get(STAGE if place.base.startswith(STAGE) else place.base)
        return lookup(place, ignore) if lookup is not None else Origin(None)

    def _glob_write(
        self, place: Place, literal: str, before: int, ignore: frozenset[str], folder: bool
    ) -> Event | None:
        """The latest write before `before` to a glob whose wildcards start in folder `literal` that covers
        `place`; its content is not followed (which file of a restored cache is which cannot be known)."""
        events = self._globs.get((place.base, literal))
        if not events:
            return None
        for index in range(bisect.bisect_left(events, before, key=lambda event: event.seq) - 1, -1, -1):
            event = events[index]
            effect = event.effect
            if not isinstance(effect, Write) or effect.kind in ignore or effect.place is None:
                continue
            # a glob read may overlap the pattern in ways that cannot be told; the glob's own folder holds what
            # it matched
            if place.glob or literal == place.path or _covers(effect.place.path, place.path, folder):
                return event
        return None

    def _content(self, write: Write, relative: str, seq: int, ignore: frozenset[str]) -> str | None:
        """The repository path of what `write` put at `relative` inside its place, when it is this repository's."""
        if write.kind == "checkout":
            if not write.this_repository:
                return None
            return posixpath.join(write.root, relative) if write.root and relative else write.root or relative
        if write.source is None:  # only a copy has one
            return None
        source = write.source.joined(relative) if relative else write.source
        if relative.split("/", 1)[0] == posixpath.basename(write.source.path) and relative:
            source = write.source.joined("..").joined(relative)  # `cp -r src dir` into a folder that was there
        return self.origin(source, seq, ignore).repository_path


def _folders(path: str) -> list[str]:
    """The folders a path is inside, innermost first (`a/b/c`: `a/b`, `a`, and "" the base; a path above the base
    is inside no folder of it)."""
    if not path:
        return []
    parts = path.split("/")
    inside = ["/".join(parts[:index]) for index in range(len(parts) - 1, 0, -1)]
    return inside if parts[0] == ".." else [*inside, ""]


def _covers(pattern: str, path: str, folder: bool) -> bool:
    """Whether a write to glob `pattern` may have put `path` there: the pattern matches it or a folder it is in
    (`*` restores `scripts`, and so `scripts/x.sh`); with `folder`, also when it may match something inside it
    (`*/build` may make `a`). A pattern the glob dialect refuses (`../*`) may be anything."""
    compiled = _compiled(pattern)
    if compiled is None:
        return True
    parts = path.split("/") if path else []
    if any(compiled.matches("/".join(parts[:count])) for count in range(1, len(parts) + 1)):
        return True
    segments = pattern.split("/")
    for count in range(1, len(segments)) if folder else ():
        head = _compiled("/".join(segments[:count]))
        if head is None or head.matches(path):
            return True
    return False


@functools.lru_cache(maxsize=1024)
def _compiled(pattern: str) -> globs.Glob | None:
    try:
        return globs.compile_glob(pattern)
    except globs.GlobError:
        return None


def _latest(events: list[Event] | None, before: int, ignore: frozenset[str]) -> Event | None:
    """The latest of these writes (in sequence order) before `before` of a kind not ignored."""
    if not events:
        return None
    index = bisect.bisect_left(events, before, key=lambda event: event.seq)
    while index > 0:
        index -= 1
        effect = events[index].effect
        if isinstance(effect, Write) and effect.kind not in ignore:
            return events[index]
    return None


def _expanded(scope: Scope, value: str) -> str | None:
    """A value assigned in a script, as the shell expands it there; None when a command's output is in it."""
    expanded = scope.expand(value)
    return None if expanded is None or "$(" in expanded or "`" in expanded else expanded


@dataclass
class _State:
    scope: Scope
    stack: list[Place | None] = field(default_factory=list)

    def copy(self) -> _State:
        return _State(self.scope.copy(), list(self.stack))


def _merged(states: list[_State]) -> _State:
    """The state after one of several paths ran: what all of them agree on."""
    first = states[0]
    cwd = first.scope.cwd if all(state.scope.cwd == first.scope.cwd for state in states) else None
    names = {name for state in states for name in state.scope.variables}
    variables: dict[str, str | None] = {}
    for name in names:
        values = {state.scope.variables.get(name) for state in states}
        variables[name] = values.pop() if len(values) == 1 else None
    stack = first.stack if all(state.stack == first.stack for state in states) else []
    return _State(Scope(cwd, variables), list(stack))


class Walker:
    """Walks the statements of shell scripts into a flow (one walker per script: functions are the script's)."""

    def __init__(self, flow: Flow, step: Step | None) -> None:
        self.flow = flow
        self.step = step
        self.functions: dict[str, Block] = {}
        self.called: dict[str, int] = {}
        self.active: set[str] = set()
        self.root: Block | None = None
        """The script walked, whose text here-documents are found in."""

    def script(self, block: Block, scope: Scope) -> Scope:
        """Walks a whole script from `scope`; the scope it ends in."""
        self.root = block
        state = _State(scope)
        self._block(block, state)
        for name, body in self.functions.items():
            if name not in self.called:  # a function called where the walk cannot see (a trap, a variable)
                self._block(body, _State(Scope(None, dict(state.scope.variables))))
        return state.scope

    def command(self, command: Command, scope: Scope) -> None:
        """Walks one command standing alone (a Dockerfile's exec-form `RUN ["bash", "x.sh"]`)."""
        self._command(command, _State(scope))

    def _block(self, block: Block, state: _State) -> None:
        for statement in block.statements:
            self._node(statement, state)

    def _node(self, node: ShellNode, state: _State) -> None:
        if isinstance(node, Command):
            self._command(node, state)
        elif isinstance(node, Assignment):
            self._substitutions(node.assignments, state)
            for word in node.assignments:
                self._assign(word, state)
        elif isinstance(node, AndOr):
            for item in node.items:
                self._node(item, state)
        elif isinstance(node, Pipeline):
            for output in pipeline_outputs(node):
                self.flow.note(output, node, None, self.step)
            for stage in node.stages:  # each in a process of its own
                self._node(stage, state.copy())
        elif isinstance(node, Negated):
            self._node(node.statement, state)
        elif isinstance(node, Group):
            self._block(node.body, state.copy() if node.subshell else state)
        elif isinstance(node, Redirected):
            for redirect in node.redirects:  # opened before the statement runs, where it starts
                for write in redirect_writes(redirect, state.scope):
                    self.flow.note(write, redirect, None, self.step)
            self._node(node.statement, state)
        elif isinstance(node, IfStatement):
            self._branches(node, state)
        elif isinstance(node, Loop):
            self._substitutions(node.words, state)
            body = state.copy()
            if node.variable is not None:
                body.scope.variables[node.variable] = None
            if node.condition is not None:
                self._block(node.condition, body)
            self._block(node.body, body)
            self._become(state, _merged([state, body]))
        elif isinstance(node, Case):
            if node.subject is not None:
                self._substitutions([node.subject], state)
            arms = [state.copy() for _ in node.items]
            for arm_item, arm in zip(node.items, arms, strict=True):
                self._block(arm_item.body, arm)
            matches_all = any(pattern.text == "*" for arm_item in node.items for pattern in arm_item.patterns)
            self._become(state, _merged([*arms, *([] if matches_all else [state])]))
        elif isinstance(node, Function):
            self.functions[node.name] = node.body

    def _branches(self, node: IfStatement, state: _State) -> None:
        ends: list[_State] = []
        for clause in node.clauses:
            if clause.condition is not None:
                self._block(clause.condition, state)
            branch = state.copy()
            self._block(clause.body, branch)
            ends.append(branch)
        has_else = node.clauses[-1].keyword == "else"  # else it may be that no branch ran
        self._become(state, _merged([*ends, *([] if has_else else [state])]))

    @staticmethod
    def _become(state: _State, other: _State) -> None:
        state.scope, state.stack = other.scope, other.stack

    def _substitutions(self, words: Iterable[Word], state: _State) -> None:
        for word in words:
            for block in word.substitutions:
                self._block(block, state.copy())

    def _assign(self, word: Word, state: _State) -> None:
        name, _, value = word.value.partition("=")
        if name.isidentifier():
            state.scope.variables[name] = _expanded(state.scope, value)

    def _command(self, command: Command, state: _State) -> None:
        self._substitutions([*command.assignments, *command.words], state)
        name = command.name
        if name in ("cd", "pushd", "popd"):
            self._cd(command, state)
            return
        if name in _DECLARATIONS:
            for word in command.words[1:]:
                if "=" in word.value:  # an option (`-r`) is no name: `_assign` passes over it
                    self._assign(word, state)
            return
        if not command.redirects and name in SILENT and name not in self.functions:
            return  # `echo`, `grep`, `test`: nothing to note
        scope = state.scope  # `D=x cmd $D`: the shell expands the words before it assigns D for cmd
        for reference in command_references(command, scope):
            self.flow.read(reference, self.step)
        for effect in command_effects(command, scope):
            self.flow.note(effect, command, command, self.step)
        for output in command_outputs(command):
            self.flow.note(output, command, command, self.step)
        self._fed(command, state)
        if name in self.functions and name not in self.active and self.called.get(name, 0) < _MAX_CALLS:
            self.called[name] = self.called.get(name, 0) + 1
            self.active.add(name)
            self._block(self.functions[name], state)
            self.active.discard(name)

    def _fed(self, command: Command, state: _State) -> None:
        """`bash -ex <<EOF ... EOF`: a shell that reads its script from a here-document runs that script, in a
        process of its own."""
        if self.root is None or not runs_standard_input(command):
            return
        for redirect in command.redirects:
            body = redirect.heredoc
            start = self.root.text.find(body, redirect.start) if body else -1
            if body and start >= 0:
                self._block(shell.parse(body, _Shifted(self.root.locator, start)), state.copy())

    def _cd(self, command: Command, state: _State) -> None:
        arguments = [word for word in command.words[1:] if not (word.value.startswith("-") and word.value != "-")]
        scope = state.scope
        if command.name == "popd":
            scope.cwd = state.stack.pop() if state.stack else None
            return
        if not arguments:
            target = Place(HOME) if command.name == "cd" else None
        elif arguments[0].value == "-" or len(arguments) > 1:
            target = None
        else:
            target = scope.place(arguments[0].value)
            if target is not None and target.path and not target.glob:
                self.flow.read(Reference("cd", target, command, arguments[0]), self.step)
        if command.name == "pushd":
            state.stack.append(scope.cwd)
        scope.cwd = target if target is None or not target.glob else None


def runs_standard_input(command: Command) -> bool:
    """Whether a command is a shell that runs the script it reads on standard input (`bash -ex`, not `bash x.sh`
    nor `bash -c '...'`)."""
    words = unwrapped(command.words)
    if not words or words[0].value.rsplit("/", 1)[-1] not in SHELLS:
        return False
    value_follows = False
    for word in words[1:]:
        value = word.value
        if value_follows:
            value_follows = False
        elif not value.startswith(("-", "+")):
            return False  # a script file, or the text of `-c`
        else:  # `-o pipefail`, `-eo pipefail`, `--rcfile x`
            value_follows = value in SHELL_VALUE_OPTIONS or (not value.startswith("--") and value[-1] in "oO")
    return True


class _Shifted:
    """The spans of a script found at `start` of another script's text, through that script's locator."""

    def __init__(self, locator: Locator, start: int) -> None:
        self.locator = locator
        self.start = start

    def span(self, start: int, end: int) -> Span:
        return self.locator.span(self.start + start, self.start + end)
