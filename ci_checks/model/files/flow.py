"""A flow: what the commands of one job, composite action or Dockerfile stage read and write, in order.

`Walker` follows a shell script statement by statement, the way bash runs
it: `cd`, `pushd` and `popd` move the working directory (`cd x && make`
included), a subshell `( ... )` and each stage of a pipeline keep their `cd`s
to themselves, branches and loops that may or may not move it leave it
unknown after them, a function's commands run where it is called, and
variables assigned in the script are substituted. A script a command runs
from its arguments (`bash -lc '...'`, `sh -c`, `sudo bash -c`, `su -c`) is
walked too, in a process of its own, and so is the command `docker exec NAME
...` runs, in the container's file system (`places.CONTAINER`). Each
command's reads (`ci_checks.model.references`) and writes (`effects`) are
noted with a sequence number, so that a flow answers "what put this place here
before this command?" (`Flow.origin`), and with the arms of the branches it
lies in (`Arm`), so that a rule can follow each path through the script.
"""

from __future__ import annotations

import bisect
import functools
import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from ci_checks.core import globs
from ci_checks.core.diagnostics import Span
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
from ci_checks.model.files.places import CONTAINER, CONTEXT, HOME, ROOT, STAGE, Place, Scope
from ci_checks.model.references import (
    SHELL_VALUE_OPTIONS,
    SHELLS,
    Reference,
    command_references,
    suffix_word,
    unwrapped,
)
from ci_checks.model.steps import Step
from ci_checks.syntax import shell
from ci_checks.syntax.shell import (
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
_MAX_NESTED = 4
"""How deep scripts run from a command's arguments are followed (`docker exec c bash -c "su -c '...'"` is three
deep): past that, a script's arguments are not read as a script."""
_DOCKER_EXEC_VALUE_OPTIONS = {"-e", "--env", "--env-file", "-u", "--user", "-w", "--workdir", "--detach-keys"}
_UNKNOWN_NAME = re.compile(r"\$(?!\{\{)|`")
"""What makes a container's name unknown: a variable left in it or a command's output (an expression such as
`${{ job.container.id }}` is one value in a job)."""

Arm = tuple[int, int]
"""An arm of a branching construct that a path through a script may or may not take: the construct's id in its
flow (`Flow.ways`) and the arm's index in it."""
_MAX_ARMS = 64
"""How many arms deep a read or write is placed: deeper (a chain of thousands of `&&`), a construct's arms are
those of the statement it is in, so that each read or write holds a bounded path context."""


@dataclass(frozen=True, eq=False)
class Read:
    """A place read at `seq`: by a command's `reference`, in `step` (None in a Dockerfile), in the branch `arms`
    that enclose it (outermost first)."""

    seq: int
    reference: Reference
    step: Step | None
    arms: tuple[Arm, ...] = ()


@dataclass(frozen=True, eq=False)
class Event:
    """A write, git operation or output at `seq`, by `command` (None for a step's `uses:` or a Dockerfile
    instruction that is not `RUN`), in `step`, at `where` (a span, or the node of a script whose span is found
    when asked: most are never shown), in the branch `arms` that enclose it (outermost first)."""

    seq: int
    effect: Write | GitOperation | Output
    where: Span | ShellNode
    command: Command | None = None
    step: Step | None = None
    arms: tuple[Arm, ...] = ()

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
    ways: dict[int, int] = field(default_factory=dict)
    """For each branching construct (by id), how many ways through it there are: one per arm, and one more when a
    path may take none of them. Each `if`/`elif` condition has two arms, its body and the clauses after it (the
    `else`); a `case`, one per pattern list (and none when one is `*`); a loop's body, one (it may not run); a
    command before `&&`, one holding it and what runs only when it succeeds (the other way: it failed); a command
    after `||`, one (it may not run). Two reads or events lie on one path unless they are in different arms of one
    construct; the arms of a read or event are those of the commands that run it (a function's, where it is
    called)."""
    _seq: int = 0
    _containers: int = 0
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

    def branching(self, ways: int) -> int:
        """A new branching construct with this many ways through it (see `ways`): its id."""
        construct = len(self.ways)
        self.ways[construct] = ways
        return construct

    def unnamed_container(self) -> str:
        """The base of a container whose name cannot be known: one of its own."""
        self._containers += 1
        return f"{CONTAINER}?{self._containers}"

    def read(self, reference: Reference, step: Step | None, arms: tuple[Arm, ...] = ()) -> None:
        self.reads.append(Read(self.next_seq(), reference, step, arms))

    def note(
        self,
        effect: Write | GitOperation | Output,
        where: Span | ShellNode,
        command: Command | None,
        step: Step | None,
        arms: tuple[Arm, ...] = (),
    ) -> None:
        event = Event(self.next_seq(), effect, where, command, step, arms)
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


@functools.lru_cache(maxsize=4096)
def _folders(path: str) -> tuple[str, ...]:
    """The folders a path is inside, innermost first (`a/b/c`: `a/b`, `a`, and "" the base; a path above the base
    is inside no folder of it). Remembered: every read and write of a folder's files asks for the same chain."""
    if not path:
        return ()
    parts = path.split("/")
    inside = tuple("/".join(parts[:index]) for index in range(len(parts) - 1, 0, -1))
    return inside if parts[0] == ".." else (*inside, "")


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


_MAX_VALUE = 4096
"""The longest value a variable is followed with: `a=$a$a` repeated would otherwise double past any memory."""


def _expanded(scope: Scope, value: str) -> str | None:
    """A value assigned in a script, as the shell expands it there; None when a command's output is in it, or it is
    longer than any path."""
    expanded = scope.expand(value)
    if expanded is None or "$(" in expanded or "`" in expanded or len(expanded) > _MAX_VALUE:
        return None
    return expanded


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
    return _State(Scope(cwd, variables, first.scope.root), list(stack))


class Walker:
    """Walks the statements of shell scripts into a flow (one walker per script: functions are the script's).

    A script run from a command's arguments is walked by a walker of its own, `nested` one deeper, in the `arms`
    of that command."""

    def __init__(self, flow: Flow, step: Step | None, arms: tuple[Arm, ...] = (), nested: int = 0) -> None:
        self.flow = flow
        self.step = step
        self.arms = arms
        """The arms of the branches the statement walked lies in."""
        self.nested = nested
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
        outer = self.arms
        for name, body in self.functions.items():
            if name not in self.called:  # a function called where the walk cannot see (a trap, a variable): maybe
                self.arms = _inside(outer, (self.flow.branching(2), 0))
                self._block(body, _State(Scope(None, dict(state.scope.variables), scope.root)))
        self.arms = outer
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
            self._and_or(node, state)
        elif isinstance(node, Pipeline):
            for output in pipeline_outputs(node):
                self.flow.note(output, node, None, self.step, self.arms)
            for stage in node.stages:  # each in a process of its own
                self._node(stage, state.copy())
        elif isinstance(node, Negated):
            self._node(node.statement, state)
        elif isinstance(node, Group):
            self._block(node.body, state.copy() if node.subshell else state)
        elif isinstance(node, Redirected):
            for redirect in node.redirects:  # opened before the statement runs, where it starts
                for write in redirect_writes(redirect, state.scope):
                    self.flow.note(write, redirect, None, self.step, self.arms)
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
            outer = self.arms
            self.arms = _inside(outer, (self.flow.branching(2), 0))  # the body may run no time
            self._block(node.body, body)
            self.arms = outer
            self._become(state, _merged([state, body]))
        elif isinstance(node, Case):
            if node.subject is not None:
                self._substitutions([node.subject], state)
            arms = [state.copy() for _ in node.items]
            matches_all = any(pattern.text == "*" for arm_item in node.items for pattern in arm_item.patterns)
            construct = self.flow.branching(len(node.items) + (0 if matches_all else 1))
            outer = self.arms
            for index, (arm_item, arm) in enumerate(zip(node.items, arms, strict=True)):
                self.arms = _inside(outer, (construct, index))
                self._block(arm_item.body, arm)
            self.arms = outer
            self._become(state, _merged([*arms, *([] if matches_all else [state])]))
        elif isinstance(node, Function):
            self.functions[node.name] = node.body

    def _branches(self, node: IfStatement, state: _State) -> None:
        """`if a; then x; elif b; then y; else z; fi` runs as `if a; then x; else if b; then y; else z; fi; fi`:
        each condition branches into its body and the clauses after it."""
        ends: list[_State] = []
        outer = self.arms
        for clause in node.clauses:
            rest = self.arms
            if clause.condition is not None:
                self._block(clause.condition, state)
            branch = state.copy()
            if clause.keyword != "else":
                construct = self.flow.branching(2)
                self.arms, rest = _inside(rest, (construct, 0)), _inside(rest, (construct, 1))
            self._block(clause.body, branch)
            self.arms = rest
            ends.append(branch)
        self.arms = outer
        has_else = node.clauses[-1].keyword == "else"  # else it may be that no branch ran
        self._become(state, _merged([*ends, *([] if has_else else [state])]))

    def _and_or(self, node: AndOr, state: _State) -> None:
        """`a && b || c`: a command before `&&` and those that run after it only when it succeeds are one arm, the
        other being that it failed (a fetch that failed fetched nothing); a command after `||`, or after `&&` once
        a `||` came before, may run or not."""
        outer = self.arms
        context = outer
        alternatives = False
        for index, item in enumerate(node.items):
            before = node.operators[index - 1] if index else None
            after = node.operators[index] if index < len(node.operators) else None
            if before == "||" or (before == "&&" and alternatives):
                context = _inside(outer, (self.flow.branching(2), 0))
            alternatives = alternatives or before == "||"
            if after == "&&":
                context = _inside(context, (self.flow.branching(2), 0))
            self.arms = context
            self._node(item, state)
        self.arms = outer

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
            self.flow.read(reference, self.step, self.arms)
        for effect in command_effects(command, scope):
            self.flow.note(effect, command, command, self.step, self.arms)
        for output in command_outputs(command):
            self.flow.note(output, command, command, self.step, self.arms)
        self._fed(command, state)
        if self.nested < _MAX_NESTED:
            self._runs(command, state)
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

    def _runs(self, command: Command, state: _State) -> None:
        """`bash -lc '...'`, `su -c '...'`: the script a command runs from its arguments; `docker exec NAME CMD`: the
        command it runs in the container. Each runs in a process of its own, walked by a walker of its own (it
        knows none of this script's functions)."""
        words = unwrapped(command.words)
        executed = container_command(words)
        if executed is not None:
            name, workdir, run = executed
            known = state.scope.expand(name.value)
            base = CONTAINER + known if known and not _UNKNOWN_NAME.search(known) else self.flow.unnamed_container()
            scope = Scope(None, dict(state.scope.variables), base)  # its words are expanded by this shell
            scope.cwd = scope.place(workdir.value) if workdir is not None else None  # else the image's WORKDIR
            text = " ".join(word.text for word in run)
            run = [replace(word, substitutions=()) for word in run]  # this shell ran them, walked above
            inner = Walker(self.flow, self.step, self.arms, self.nested + 1)
            inner.command(Command(command.locator, run[0].start, run[-1].end, run, text=text), scope)
            return
        found = inline_script(words)
        if found is None or found[0].substitutions:
            return  # the script holds what this shell's `$( )` printed: unknown
        unquoted = unquoted_value(found[0])
        if unquoted is None:
            return
        word, login = found
        value, offsets = unquoted
        scope = state.scope.copy()
        if login:
            scope.cwd = None  # `su -`: the user's home
        if scope.root != ROOT and word.text.startswith("'"):
            scope.variables = {}  # expanded by the container's shell, with variables of its own
        script = shell.parse(value, _Unquoted(word.locator, offsets))
        Walker(self.flow, self.step, self.arms, self.nested + 1).script(script, scope)

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
                self.flow.read(Reference("cd", target, command, arguments[0]), self.step, self.arms)
        if command.name == "pushd":
            state.stack.append(scope.cwd)
        scope.cwd = target if target is None or not target.glob else None


def _inside(arms: tuple[Arm, ...], arm: Arm) -> tuple[Arm, ...]:
    """The path context of an arm inside `arms` (the same context past `_MAX_ARMS`)."""
    return arms if len(arms) >= _MAX_ARMS else (*arms, arm)


def container_command(words: list[Word]) -> tuple[Word, Word | None, list[Word]] | None:
    """`docker exec [-w DIR] NAME CMD...` (or `podman`, `docker container exec`): the container's name, the
    working directory given, and the command run there; None for another command."""
    if not words or words[0].value.rsplit("/", 1)[-1] not in ("docker", "podman"):
        return None
    values = [word.value for word in words[1:3]]
    if values[:1] == ["exec"]:
        rest = words[2:]
    elif values == ["container", "exec"]:
        rest = words[3:]
    else:
        return None
    workdir: Word | None = None
    index = 0
    while index < len(rest) and rest[index].value.startswith("-"):
        value = rest[index].value
        if value in ("-w", "--workdir") and index + 1 < len(rest):
            workdir = rest[index + 1]
        elif value.startswith("--workdir="):
            workdir = suffix_word(rest[index], len("--workdir="))
        index += 2 if value in _DOCKER_EXEC_VALUE_OPTIONS else 1
    if index + 1 >= len(rest):
        return None  # no container, or nothing to run in it
    return rest[index], workdir, rest[index + 1 :]


def inline_script(words: list[Word]) -> tuple[Word, bool] | None:
    """The word whose value is the script a command runs: the first operand of a shell given `-c` (`bash -lc
    '...'`, `sh -ec "..."`), the value of `su -c` or `su --command=`; with whether the script starts in another
    folder (`su -` and `su -l` start the user's login shell, in the user's home). None for another command."""
    if not words:
        return None
    program = words[0].value.rsplit("/", 1)[-1]
    if program == "su":
        login = any(word.value in ("-", "-l", "--login") for word in words[1:])
        for index, word in enumerate(words[1:], start=1):
            if word.value in ("-c", "--command") and index + 1 < len(words):
                return words[index + 1], login
            if word.value.startswith("--command="):
                found = suffix_word(word, len("--command="))
                return (found, login) if found is not None else None
        return None
    if program not in SHELLS:
        return None
    given = False
    value_follows = False
    for index, word in enumerate(words[1:], start=1):
        value = word.value
        if value_follows:
            value_follows = False
        elif value == "--":  # the options end: the next word is the first operand
            return (words[index + 1], False) if given and index + 1 < len(words) else None
        elif value.startswith(("-", "+")) and value not in ("-", "+"):
            short = not value.startswith("--")
            given = given or (short and value[0] == "-" and "c" in value[1:])
            value_follows = value in SHELL_VALUE_OPTIONS or (short and value[-1] in "oO")
        else:
            return (word, False) if given else None
    return None


def unquoted_value(word: Word) -> tuple[str, list[int]] | None:
    """A word's value as the shell passes it to the program (its quotes and backslashes removed), with the offset
    in the word's script of each of its characters and one past its end; None where that value is not the word's
    (`$'...'`, quotes inside `$( )`: quoting read here only as far as it can be mapped back)."""
    text = word.text
    characters: list[str] = []
    offsets: list[int] = []
    quote = ""
    index = 0
    while index < len(text):
        char = text[index]
        if quote == "'":
            if char == "'":
                quote = ""
            else:
                characters.append(char)
                offsets.append(index)
            index += 1
            continue
        following = text[index + 1] if index + 1 < len(text) else ""
        if char == "\\" and following == "\n":  # a line continued
            index += 2
            continue
        if char == "\\" and following and (not quote or following in '$`"\\'):
            characters.append(following)
            offsets.append(index + 1)
            index += 2
            continue
        if (not quote and char in "'\"") or (quote == '"' and char == '"'):
            quote = "" if quote else char
            index += 1
            continue
        characters.append(char)
        offsets.append(index)
        index += 1
    value = "".join(characters)
    if quote or value != word.value:
        return None
    return value, [word.start + offset for offset in offsets] + [word.start + len(text)]


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


class _Unquoted:
    """The spans of a script that is the value of a word, through the offsets its characters are written at in the
    word's script (`offsets`: one per character, and one past the end)."""

    def __init__(self, locator: Locator, offsets: list[int]) -> None:
        self.locator = locator
        self.offsets = offsets

    def span(self, start: int, end: int) -> Span:
        last = len(self.offsets) - 1
        first = self.offsets[min(start, last)]
        return self.locator.span(first, self.offsets[min(end - 1, last)] + 1 if end > start else first)


class _Shifted:
    """The spans of a script found at `start` of another script's text, through that script's locator."""

    def __init__(self, locator: Locator, start: int) -> None:
        self.locator = locator
        self.start = start

    def span(self, start: int, end: int) -> Span:
        return self.locator.span(self.start + start, self.start + end)
