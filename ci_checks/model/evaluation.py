"""What a GitHub expression evaluates to when that can be told without running the workflow.

`concurrency.group: pr-${{ github.event.pull_request.number || github.ref }}`
is the same text for every run that the same event starts, whichever workflow
computes it; `${{ github.workflow }}` differs from one workflow to the next,
and `${{ github.run_id }}` from one run to the next. `evaluate` reads a
template or an expression in a `Scope` (the event, the workflow, the inputs a
caller passes) and gives:

- a literal (`str`, `bool`, `float`, `None`) where the value is known;
- a `Text`: literal pieces and `Symbol`s, values that are the same for every
  run of the same event (`github.ref`, the pull request's number) or of the
  same run (`github.run_id`, shared by a caller and its reusable workflows);
- `UNKNOWN` where it depends on what cannot be known here (a step output, a
  matrix value, a function of the files).

Two values are the same text exactly when their pieces are equal (compared
without case for literals, as GitHub compares concurrency groups); any
`UNKNOWN` makes a comparison undecided. The grammar is GitHub's: literals,
context paths (`a.b`, `a['b']`), `!`, `<`, `<=`, `>`, `>=`, `==`, `!=`, `&&`,
`||`, parentheses, property access on lists and objects (`fromJSON(x).a`,
`labels.*.name`) and the functions whose result follows from their arguments
(`format`, `contains`, `startsWith`, `endsWith`, `join`, `fromJSON`, `toJSON`,
and the status functions as far as a job that runs at all is concerned).

A `Scope` may also know a job's matrix values, its `env`, and the outputs of
steps and needed jobs (the value model of `ci_checks.model.valuation` fills
them in for one leg of a job). A context with several possible values (a step
that writes one of two values to `$GITHUB_OUTPUT`) is `Several`: `possible`
evaluates an expression once for each of them (up to a cap), `evaluate` calls
it `UNKNOWN`. For a pull request, `Scope.fork` says whether it comes from a
fork: a fork's head repository and author (and a comment's actor) are an
outsider's (`foreign` symbols, equal to no name the workflow writes and to none
of the base repository's), its labels are none until a maintainer adds one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from functools import lru_cache
from itertools import count

from ci_checks.model.expressions import EXPRESSION, condition
from ci_checks.model.workflow import Job, Workflow
from ci_checks.syntax.yamlpos import Node, Scalar


class _Unknown(Enum):
    UNKNOWN = "unknown"


UNKNOWN = _Unknown.UNKNOWN


@dataclass(frozen=True)
class Symbol:
    """A value not known here, but the same wherever `name` is: `github.ref` for one event, `github.run_id` for
    one run, `inputs.a || github.ref` of the same two values."""

    name: str
    truthy: bool | None = True
    """Whether it is set (True), or may be empty (None)."""
    shown: str = field(default="", compare=False)
    """The expression it stands for, for messages."""
    foreign: bool = field(default=False, compare=False)
    """An outsider's value (a fork's head repository, author, actor): equal to none of the base repository's own
    symbols and to no name a workflow writes, except those `admits` may equal."""
    admits: frozenset[str] | None = field(default=None, compare=False)
    """For a foreign symbol, the literals (lower case) it may equal; None: none."""


Part = str | Symbol


@dataclass(frozen=True)
class Text:
    """A string made of literal pieces and symbols, at least one of them a symbol."""

    parts: tuple[Part, ...]

    def normalized(self) -> tuple[Part, ...]:
        return _joined(tuple(part.lower() if isinstance(part, str) else part for part in self.parts))


@dataclass(frozen=True)
class Data:
    """A list (`items`) or an object (`fields`, keys in lower case as GitHub looks them up): `fromJSON`, a matrix's
    lists and mappings, `github.event.pull_request.labels`."""

    items: tuple[Value, ...] | None = None
    fields: tuple[tuple[str, Value], ...] | None = None

    def field(self, name: str) -> Value:
        for key, value in self.fields or ():
            if key == name.lower():
                return value
        return None

    @property
    def plain(self) -> object:
        """As Python lists and dicts (for JSON); UNKNOWN and symbols stay as they are."""
        if self.items is not None:
            return [item.plain if isinstance(item, Data) else item for item in self.items]
        return {key: value.plain if isinstance(value, Data) else value for key, value in self.fields or ()}


@dataclass(frozen=True)
class Several:
    """A context with more than one possible value (a step output written in two branches): `possible` tries each."""

    key: str
    values: tuple[Value, ...]


Value = str | bool | float | None | Text | Data | _Unknown
Lookup = Callable[[list[str]], "Value | Several"]
"""The value of a `steps.*` or `needs.*` context path, as a scope knows it."""

PULL_REQUEST_EVENTS = frozenset(
    {"pull_request", "pull_request_target", "pull_request_review", "pull_request_review_comment"}
)
_PAYLOAD: dict[str, frozenset[str]] = {
    "pull_request": PULL_REQUEST_EVENTS,
    "number": PULL_REQUEST_EVENTS,
    "schedule": frozenset({"schedule"}),
    "issue": frozenset({"issues", "issue_comment"}),
    "inputs": frozenset({"workflow_dispatch"}),
    "merge_group": frozenset({"merge_group"}),
    "release": frozenset({"release"}),
    "workflow_run": frozenset({"workflow_run"}),
    "head_commit": frozenset({"push"}),
    "after": frozenset({"push"}),
    "before": frozenset({"push"}),
}
"""Which events' payloads hold a field of `github.event`: elsewhere it is null."""
_RUN = ("run_id", "run_number", "run_attempt")
_FRESH = count()
_NOT_STATIC = ("matrix", "steps", "strategy", "env", "secrets", "runner", "job", "jobs")


@dataclass(frozen=True)
class Scope:
    """Where an expression is evaluated: the run that one event started, as far as it can be told."""

    event: str | None
    """The event that started the run; None where it may be any of several."""
    workflow: str
    """`github.workflow`: the name of the workflow the event started (a reusable workflow's is its caller's)."""
    run: str
    """What tells this run from every other: the path of the workflow the event started."""
    inputs: Mapping[str, Value | Several] | None = field(default_factory=dict)
    """`inputs.*`: what a caller passes (or the defaults); None where the event decides them (a dispatch)."""
    job: str | None = None
    """`github.job`, in a job's `concurrency`."""
    instance: str = ""
    """Which call of the workflow within the run (its calling jobs), for `needs.*`: default, the run's own."""
    matrix: Mapping[str, Value] | None = None
    """`matrix.*` of one combination (names in lower case); None where they are not known."""
    env: Mapping[str, Value] | None = None
    """`env.*` where the expression is read (names as written); None where they are not known."""
    outputs: Lookup | None = None
    """`steps.*` and `needs.*`; None: `needs.*` are symbols of the run (as concurrency compares them)."""
    fork: bool | None = None
    """For a pull request event: whether it comes from a fork (None: either)."""


def evaluate(text: str, scope: Scope) -> Value:
    """A value written in YAML: a `${{ }}` expression, a template with some, or plain text."""
    try:
        return _evaluate(text, scope, _FIRM)
    except _Split:
        return UNKNOWN


def expression(body: str, scope: Scope) -> Value:
    """The value of an expression body (the text between `${{` and `}}`); UNKNOWN for what does not parse, or
    reads a context with several possible values (see `possible`)."""
    try:
        return _body(body, scope, _FIRM)
    except _Split:
        return UNKNOWN


MAX_POSSIBLE = 32
"""How many evaluations `possible` makes of one text (each choice of its several-valued contexts): past that, the
rest of its values are UNKNOWN."""


@dataclass(frozen=True)
class _Choices:
    """What `possible` picked so far: a value for each `Several` context read, a truth for each `&&`/`||` operand
    whose truth cannot be told; `branching` says whether such operands are taken each way (in `possible`)."""

    chosen: Mapping[str, Value]
    branching: bool


_FIRM = _Choices({}, False)


def possible(text: str, scope: Scope, limit: int = MAX_POSSIBLE) -> tuple[Value, ...]:
    """Each value a template or expression may have, one per choice of the `Several` contexts it reads (UNKNOWN
    among them where there are more choices than `limit`), without repeats."""
    found: list[Value] = []
    pending: list[Mapping[str, Value]] = [{}]
    tries = 0
    while pending:
        chosen = pending.pop()
        tries += 1
        if tries > limit:
            found.append(UNKNOWN)
            break
        try:
            value = _evaluate(text, scope, _Choices(chosen, True))
        except _Split as split:
            pending.extend({**chosen, split.key: value} for value in reversed(split.values))
            continue
        if not any(type(each) is type(value) and each == value for each in found):
            found.append(value)
    return tuple(found)


def _evaluate(text: str, scope: Scope, choices: _Choices) -> Value:
    """`evaluate`, with a read of a several-valued context left to raise `_Split`."""
    found = list(EXPRESSION.finditer(text.strip()))
    if len(found) == 1 and found[0].group(0) == text.strip():  # one expression alone keeps its type
        return _body(found[0].group("body"), scope, choices)
    parts: list[Part] = []
    cursor = 0
    for match in EXPRESSION.finditer(text):
        parts.append(text[cursor : match.start()])
        value = as_text(_body(match.group("body"), scope, choices))
        if value is UNKNOWN:
            return UNKNOWN
        parts.extend(value.parts if isinstance(value, Text) else (str(value),))
        cursor = match.end()
    parts.append(text[cursor:])
    return _text(tuple(parts))


def _body(body: str, scope: Scope, choices: _Choices) -> Value:
    compiled = _compiled(body)
    if compiled is None:
        return UNKNOWN
    try:
        return compiled(scope, choices)
    except RecursionError:  # parentheses nested past Python's stack are not read
        return UNKNOWN


def truthy(value: Value) -> bool | None:
    """Whether the value counts as true (None: it cannot be told)."""
    if value is UNKNOWN:
        return None
    if isinstance(value, Text):
        if any(isinstance(part, str) and part for part in value.parts):
            return True
        symbols = [part.truthy for part in value.parts if isinstance(part, Symbol)]
        return True if any(symbols) else None
    return bool(value)


def as_text(value: Value) -> Text | str | _Unknown:
    """The value as a string is written into a template: null is empty, booleans `true`/`false`."""
    if value is UNKNOWN or isinstance(value, Text | str):
        return value
    if isinstance(value, Data):
        return "Array" if value.items is not None else "Object"  # as GitHub writes one into a string
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(int(value)) if value == int(value) else str(value)


def same_text(first: Value, second: Value) -> bool:
    """Whether two values are surely the same text, compared without case (as concurrency groups are)."""
    one, other = as_text(first), as_text(second)
    if one is UNKNOWN or other is UNKNOWN:
        return False
    return _pieces(one) == _pieces(other)


def _pieces(value: Text | str) -> tuple[Part, ...]:
    return value.normalized() if isinstance(value, Text) else (value.lower(),) if value else ()


def _joined(parts: tuple[Part, ...]) -> tuple[Part, ...]:
    joined: list[Part] = []
    for part in parts:
        if isinstance(part, str) and joined and isinstance(joined[-1], str):
            joined[-1] += part
        elif part != "":
            joined.append(part)
    return tuple(joined)


def _text(parts: tuple[Part, ...]) -> Value:
    joined = _joined(parts)
    if all(isinstance(part, str) for part in joined):
        return "".join(part for part in joined if isinstance(part, str))
    return Text(joined)


# ---------------------------------------------------------------------------
# Contexts


class _Star(Enum):
    STAR = "*"


_STAR = _Star.STAR
Accessor = str | Value | _Star
"""`.name`, `[index]` or `.*` after a context or a value."""


def lookup(head: str, accessors: list[Accessor], scope: Scope, choices: _Choices = _FIRM) -> Value:
    """The value of a context (`matrix`, `env`, `github`...) followed by its accessors; a `Several` context raises
    `_Split` unless `possible` chose one of its values."""
    names: list[str] = []
    for accessor in accessors:
        if not isinstance(accessor, str):
            break
        names.append(accessor)
    lowered = head.lower()
    rest = accessors[len(names) :]
    if lowered == "matrix" and scope.matrix is not None:
        value: Value = Data(fields=tuple(scope.matrix.items()))
        return access(value, accessors)
    if lowered == "env" and scope.env is not None:
        if not names:
            return UNKNOWN
        name = names[0] if names[0] in scope.env else next((k for k in scope.env if k.lower() == names[0].lower()), "")
        return access(scope.env.get(name), accessors[1:])
    if lowered in ("steps", "needs") and scope.outputs is not None:
        key = ".".join([lowered, *(name.lower() for name in names)])
        if key in choices.chosen:
            return access(choices.chosen[key], rest)
        several = scope.outputs([lowered, *(name.lower() for name in names)])
        if isinstance(several, Several):
            raise _Split(key, several.values)
        return access(several, rest)
    if lowered in _NOT_STATIC or (not names and lowered != "github"):
        return UNKNOWN
    return access(context([head, *names], scope, choices), rest)


def access(value: Value, accessors: list[Accessor]) -> Value:
    """A value's property, item or `.*` filter, as GitHub reads them: null where there is none."""
    mapped = False
    for accessor in accessors:
        if value is UNKNOWN or isinstance(value, Text):
            return UNKNOWN
        if accessor is _STAR:
            if not isinstance(value, Data):
                return None
            value = Data(items=value.items if value.items is not None else tuple(v for _, v in value.fields or ()))
            mapped = True
            continue
        if mapped and isinstance(value, Data) and value.items is not None:
            value = Data(items=tuple(_item(item, accessor) for item in value.items))
            continue
        value = _item(value, accessor)
    return value


def _item(value: Value, accessor: Accessor) -> Value:
    if not isinstance(value, Data) or accessor is _STAR or accessor is UNKNOWN or isinstance(accessor, Text):
        return UNKNOWN if value is UNKNOWN or isinstance(value, Text) or accessor is UNKNOWN else None
    if value.fields is not None and isinstance(accessor, str):
        return value.field(accessor)
    if value.items is not None and isinstance(accessor, float) and accessor == int(accessor):
        index = int(accessor)
        return value.items[index] if 0 <= index < len(value.items) else None
    return None


def context(path: list[str], scope: Scope, choices: _Choices = _FIRM) -> Value:
    """The value of a context path (`github.ref`, `inputs.ref`, `github.event.pull_request.number`)."""
    head, rest = path[0].lower(), [name.lower() for name in path[1:]]
    dotted = ".".join([head, *rest])
    if head == "inputs" and len(rest) == 1:
        if scope.inputs is None:  # the same within the run that the dispatch started, whatever it is
            return Text((Symbol(f"{scope.run}#{dotted}", None, dotted),))
        value = scope.inputs.get(rest[0])
        if isinstance(value, Several):  # a call that passes one of several values
            if dotted in choices.chosen:
                return choices.chosen[dotted]
            raise _Split(dotted, value.values)
        return value
    if head == "vars" and len(rest) == 1:
        return Text((Symbol(dotted, None, dotted),))
    if head == "needs" and rest:  # a job's outputs: the same within one call of the workflow in one run
        return Text((Symbol(f"{scope.run}/{scope.instance}#{dotted}", None, dotted),))
    if head != "github" or not rest:
        return UNKNOWN
    return _github(rest, scope, choices)


def _github(rest: list[str], scope: Scope, choices: _Choices) -> Value:
    name = rest[0]
    if len(rest) == 1:
        if name == "workflow":
            return scope.workflow
        if name == "event_name":
            return scope.event if scope.event is not None else Text((_github_symbol(name),))
        if name == "job":
            return scope.job if scope.job is not None else UNKNOWN
        if name in _RUN:
            return Text((Symbol(f"{scope.run}#{name}", True, f"github.{name}"),))
        if name == "workflow_ref":
            return Text((_github_symbol("repository"), f"/{scope.run}@", _github_symbol("ref")))
        if name in ("head_ref", "base_ref"):
            if scope.event is None:
                return Text((_github_symbol(name, None),))
            return Text((_github_symbol(name),)) if scope.event in PULL_REQUEST_EVENTS else ""
        if name == "ref" and scope.event in PULL_REQUEST_EVENTS:
            return Text(("refs/pull/", _github_symbol("event.number"), "/merge"))
        if name in ("action", "action_path", "action_ref", "action_repository", "token", "workspace"):
            return UNKNOWN
        if name in ("actor", "triggering_actor") and _outsider(scope) and scope.event == "issue_comment":
            # For a comment, the actor wrote it. For a pull request, the actor is whoever caused the event: a
            # maintainer pushing to the fork's branch or a bot updating it runs the fork's code under their name.
            return _foreign(f"github.{name}")
        return Text((_github_symbol(name),))
    if name != "event":
        return UNKNOWN
    payload = rest[1:]
    if not payload:
        return UNKNOWN
    events = _PAYLOAD.get(payload[0])
    if events is not None and scope.event is not None and scope.event not in events:
        return None
    if scope.event is None:
        events = None  # set for some of the events, perhaps
    if payload[0] == "inputs":
        return context(["inputs", *payload[1:]], scope, choices) if len(payload) == 2 else UNKNOWN
    seen = _outsider_view(payload, scope)
    if seen is not _UNDECIDED:
        return seen
    written = "event." + ".".join(payload)
    if payload[:2] == ["pull_request", "number"]:
        payload = ["number"]  # one number, however it is written
    return Text((_github_symbol("event." + ".".join(payload), True if events is not None else None, written),))


class _Undecided(Enum):
    UNDECIDED = "undecided"


_UNDECIDED = _Undecided.UNDECIDED
_OUTSIDER_EVENTS = PULL_REQUEST_EVENTS | {"issue_comment"}
_PEOPLE = (
    ("pull_request", "user", "login"),
    ("pull_request", "head", "user", "login"),
    ("pull_request", "head", "repo", "owner", "login"),
    ("pull_request", "head", "label"),
    ("sender", "login"),
    ("comment", "user", "login"),
    ("issue", "user", "login"),
    ("review", "user", "login"),
)
"""Who opened, pushed or commented: for an outsider's event, an outsider."""
_ASSOCIATIONS = frozenset({"contributor", "first_time_contributor", "first_timer", "none", "mannequin"})
"""The `author_association` an outsider can have: not OWNER, MEMBER nor COLLABORATOR."""


def _outsider(scope: Scope) -> bool:
    """Whether the scope is a pull request from a fork, or a comment by someone outside the repository."""
    return scope.fork is True and scope.event in _OUTSIDER_EVENTS


def _outsider_view(payload: list[str], scope: Scope) -> Value | _Undecided:
    """What a fork's pull request (or an outsider's comment) says of who sent it and from where; for a pull request
    from the repository itself, what is then the base repository's own; `_UNDECIDED` for everything else."""
    if scope.fork is None or scope.event not in _OUTSIDER_EVENTS:
        return _UNDECIDED
    path = tuple(payload)
    fork = scope.fork
    if path == ("pull_request", "head", "repo", "fork"):
        return scope.fork
    if path == ("pull_request", "head", "repo", "full_name"):
        return _foreign("github.event.pull_request.head.repo.full_name") if fork else _own("repository")
    if path == ("pull_request", "head", "repo", "owner", "login") and not fork:
        return _own("repository_owner")
    if not fork:
        return _UNDECIDED
    if path == ("sender", "login") and scope.event != "issue_comment":
        return _UNDECIDED  # the actor, who for a pull request may be anyone who pushes to its branch
    if path in _PEOPLE:
        return _foreign("github.event." + ".".join(path))
    if len(path) == 2 and path[1] == "author_association":
        return _foreign("github.event." + ".".join(path), _ASSOCIATIONS)
    if path == ("pull_request", "labels"):
        return Data(items=())  # none until a maintainer adds one
    if path[:1] == ("label",):
        return None  # no label was just added: adding one takes a maintainer
    return _UNDECIDED


def _foreign(name: str, admits: frozenset[str] | None = None) -> Text:
    return Text((Symbol(f"{name}@outsider", True, name, foreign=True, admits=admits),))


def _own(name: str) -> Text:
    return Text((_github_symbol(name),))


def _github_symbol(name: str, truthy: bool | None = True, written: str = "") -> Symbol:
    return Symbol(f"github.{name}", truthy, f"github.{written or name}")


# ---------------------------------------------------------------------------
# Parsing and evaluating

_TOKEN = re.compile(
    r"\s*(?:(?P<string>'(?:[^']|'')*')|(?P<number>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|0x[0-9a-fA-F]+)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_-]*)|(?P<operator>==|!=|<=|>=|&&|\|\||[<>!()\[\],.*]))"
)


class _NoParse(Exception):
    pass


class _Split(Exception):
    """A read of a context with several values: `possible` evaluates again with each."""

    def __init__(self, key: str, values: tuple[Value, ...]) -> None:
        super().__init__(key)
        self.key = key
        self.values = values


def tokens(body: str) -> tuple[tuple[str, str], ...] | None:
    """The tokens of an expression body, each its kind (`string`, `number`, `name`, `operator`) and text; None for a
    body that does not tokenize."""
    try:
        return _tokens(body)
    except _NoParse:
        return None


@lru_cache(maxsize=4096)
def _tokens(body: str) -> tuple[tuple[str, str], ...]:
    """The tokens of an expression body (the same `if:` is read once for every event)."""
    return tuple(_scan(body))


def _scan(body: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    index = 0
    while index < len(body):
        if body[index:].strip() == "":
            break
        match = _TOKEN.match(body, index)
        if match is None:
            raise _NoParse(body[index:])
        kind = match.lastgroup or ""
        found.append((kind, match.group(kind)))
        index = match.end()
    return found


_Compiled = Callable[[Scope, "_Choices"], Value]
"""An expression body compiled once: its value in a scope, with the choices `possible` made so far."""


@lru_cache(maxsize=4096)
def _compiled(body: str) -> _Compiled | None:
    """An expression body compiled to nested functions, once for every scope it is read in (the same `if:` is read
    for every event and leg); None for a body that does not parse (or nests past Python's stack)."""
    try:
        compiler = _Compiler(_tokens(body))
        evaluate = compiler.disjunction()
    except (_NoParse, RecursionError):
        return None
    return evaluate if compiler.done() else None


def _literal(value: Value) -> _Compiled:
    return lambda scope, choices: value


class _Compiler:
    def __init__(self, tokens: tuple[tuple[str, str], ...]) -> None:
        self.tokens = tokens
        self.index = 0

    def done(self) -> bool:
        return self.index == len(self.tokens)

    def peek(self) -> str | None:
        return self.tokens[self.index][1] if self.index < len(self.tokens) else None

    def take(self, wanted: str | None = None) -> tuple[str, str]:
        if self.index >= len(self.tokens) or (wanted is not None and self.tokens[self.index][1] != wanted):
            raise _NoParse(wanted or "end")
        token = self.tokens[self.index]
        self.index += 1
        return token

    def disjunction(self) -> _Compiled:
        return self.chain("||", self.conjunction, _or)

    def conjunction(self) -> _Compiled:
        return self.chain("&&", self.comparison, _and)

    def chain(
        self, operator: str, operand: Callable[[], _Compiled], combine: Callable[[Value, Value], Value]
    ) -> _Compiled:
        """`a && b && c` (or `||`): each left operand whose truth cannot be told is, in `possible`, taken as true and
        as false in turn (`cond && inputs.runner || 'ubuntu-24.04'` is either value)."""
        first = operand()
        rest: list[tuple[str, _Compiled]] = []
        while self.peek() == operator:
            key = f"?{id(self.tokens)}:{self.index}"  # one operand of one expression (its tokens are kept, by body)
            self.take()
            rest.append((key, operand()))
        if not rest:
            return first

        def evaluate(scope: Scope, choices: _Choices) -> Value:
            value = first(scope, choices)
            for key, right in rest:
                value = combine(_decided(value, key, choices), right(scope, choices))
            return value

        return evaluate

    def comparison(self) -> _Compiled:
        first = self.unary()
        rest: list[tuple[str, _Compiled]] = []
        while self.peek() in ("==", "!=", "<", "<=", ">", ">="):
            rest.append((self.take()[1], self.unary()))
        if not rest:
            return first

        def evaluate(scope: Scope, choices: _Choices) -> Value:
            value = first(scope, choices)
            for operator, right in rest:
                value = _compare(operator, value, right(scope, choices))
            return value

        return evaluate

    def unary(self) -> _Compiled:
        if self.peek() != "!":
            return self.primary()
        self.take()
        operand = self.unary()

        def negated(scope: Scope, choices: _Choices) -> Value:
            value = operand(scope, choices)
            truth = truthy(value)
            return _undecided("!", value) if truth is None else not truth

        return negated

    def primary(self) -> _Compiled:
        kind, text = self.take()
        if text == "(":
            inner = self.disjunction()
            self.take(")")
            return self.accessed(inner)
        if kind == "string":
            return _literal(text[1:-1].replace("''", "'"))
        if kind == "number":
            return _literal(float(int(text, 16)) if text.lower().startswith("0x") else float(text))
        if kind != "name":
            raise _NoParse(text)
        lowered = text.lower()
        if lowered in ("true", "false"):
            return _literal(lowered == "true")
        if lowered == "null":
            return _literal(None)
        if self.peek() == "(":
            return self.accessed(self.call(lowered))
        accessors = self.accessors()

        def context_path(scope: Scope, choices: _Choices) -> Value:
            return lookup(text, _accessed(accessors, scope, choices), scope, choices)

        return context_path

    def accessed(self, inner: _Compiled) -> _Compiled:
        accessors = self.accessors()
        if not accessors:
            return inner
        return lambda scope, choices: access(inner(scope, choices), _accessed(accessors, scope, choices))

    def accessors(self) -> list[Accessor | _Compiled]:
        """The `.name`, `.*` and `[index]` that follow a context or a value (an index is evaluated where read)."""
        found: list[Accessor | _Compiled] = []
        while self.peek() in (".", "["):
            if self.take()[1] == ".":
                kind, text = self.take()
                found.append(_STAR if text == "*" else text if kind == "name" else UNKNOWN)
            elif self.peek() == "*":
                self.take()
                self.take("]")
                found.append(_STAR)
            else:
                found.append(self.disjunction())
                self.take("]")
        return found

    def call(self, function: str) -> _Compiled:
        self.take("(")
        arguments: list[_Compiled] = []
        while self.peek() != ")":
            arguments.append(self.disjunction())
            if self.peek() == ",":
                self.take()
        self.take(")")
        handler = _FUNCTIONS.get(function)
        if handler is None:
            return _literal(UNKNOWN)
        return lambda scope, choices: handler([argument(scope, choices) for argument in arguments])


def _accessed(accessors: list[Accessor | _Compiled], scope: Scope, choices: _Choices) -> list[Accessor]:
    return [accessor(scope, choices) if callable(accessor) else accessor for accessor in accessors]


def _decided(value: Value, key: str, choices: _Choices) -> Value:
    """In `possible`, a left operand of `&&`/`||` whose truth cannot be told: true or false, as chosen (a choice not
    made yet is asked for with `_Split`)."""
    if not choices.branching or truthy(value) is not None:
        return value
    if key not in choices.chosen:
        raise _Split(key, (True, False))
    if not choices.chosen[key]:
        return False
    symbol = value.parts[0] if isinstance(value, Text) and len(value.parts) == 1 else None
    return Text((replace(symbol, truthy=True),)) if isinstance(symbol, Symbol) else value


def _or(left: Value, right: Value) -> Value:
    decided = truthy(left)
    if decided is None and truthy(right):
        return _undecided("||", left, right, truthy=True)
    return left if decided else right if decided is False else _undecided("||", left, right)


def _and(left: Value, right: Value) -> Value:
    decided = truthy(left)
    if decided is None and truthy(right) is False:
        return right  # false either way; which false value, `left`'s or `right`'s, does not matter here
    return right if decided else left if decided is False else _undecided("&&", left, right)


def _compare(operator: str, left: Value, right: Value) -> Value:
    if operator in ("==", "!="):
        equal = _equal(left, right)
        return _undecided(operator, left, right) if equal is None else equal == (operator == "==")
    if isinstance(left, float) and isinstance(right, float):
        return {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}[operator]
    return _undecided(operator, left, right)


def _undecided(operator: str, *operands: Value, truthy: bool | None = None) -> Value:
    """An operation on symbols that cannot be decided here: the same wherever its operands are the same."""
    if any(operand is UNKNOWN for operand in operands):
        # Nothing to compare it with, but its truth is known: a symbol no other value shares.
        return Text((Symbol(f"?{next(_FRESH)}", True, "…"),)) if truthy else UNKNOWN
    name = f" {operator} ".join(_key(operand) for operand in operands)
    shown = f" {operator} ".join(_shown(operand) for operand in operands)
    return Text((Symbol(f"({name})", truthy, f"({shown})" if len(operands) > 1 else f"{operator}{shown}"),))


def _key(value: Value) -> str:
    if isinstance(value, Text):
        return "[" + ",".join(repr(part) if isinstance(part, str) else part.name for part in value.parts) + "]"
    return repr(value)


def _shown(value: Value) -> str:
    if isinstance(value, Text):
        return " + ".join(repr(part) if isinstance(part, str) else part.shown for part in value.parts)
    return "null" if value is None else repr(value).lower() if isinstance(value, bool) else repr(value)


def _equal(left: Value, right: Value) -> bool | None:
    """GitHub's `==`: strings without case; a text whose literal start differs from a string's is not it; an
    outsider's value is none of the base repository's own, nor a name the workflow writes unless it admits it."""
    if left is UNKNOWN or right is UNKNOWN:
        return None
    if isinstance(left, Data) or isinstance(right, Data):
        return left == right if isinstance(left, Data) and isinstance(right, Data) else False
    if isinstance(left, Text) or isinstance(right, Text):
        if same_text(left, right):
            return True
        outsider = _foreign_symbol(left) or _foreign_symbol(right)
        other = right if outsider is _foreign_symbol(left) else left
        if outsider is not None:
            if isinstance(other, str):
                return None if outsider.admits is not None and other.lower() in outsider.admits else False
            if isinstance(other, Text) and _foreign_symbol(other) is None and len(other.parts) == 1:
                return False
        texts = [value for value in (left, right) if isinstance(value, Text)]
        other = right if texts[0] is left else left
        if len(texts) == 1 and isinstance(other, str):
            start = texts[0].parts[0]
            if isinstance(start, str) and not other.lower().startswith(start.lower()):
                return False
        return None
    if isinstance(left, str) and isinstance(right, str):
        return left.lower() == right.lower()
    return left == right


def _foreign_symbol(value: Value) -> Symbol | None:
    """The outsider's symbol a value is made of alone, if it is one."""
    if isinstance(value, Text) and len(value.parts) == 1:
        part = value.parts[0]
        if isinstance(part, Symbol) and part.foreign:
            return part
    return None


def _format(arguments: list[Value]) -> Value:
    if not arguments or not isinstance(arguments[0], str):
        return UNKNOWN
    pieces: list[Part] = []
    for piece in re.split(r"(\{\{|\}\}|\{\d+\})", arguments[0]):
        if piece in ("{{", "}}"):
            pieces.append(piece[0])
        elif re.fullmatch(r"\{\d+\}", piece):
            index = int(piece[1:-1]) + 1
            value = as_text(arguments[index]) if index < len(arguments) else UNKNOWN
            if value is UNKNOWN:
                return UNKNOWN
            pieces.extend(value.parts if isinstance(value, Text) else (value,))
        else:
            pieces.append(piece)
    return _text(tuple(pieces))


def _string_test(test: Callable[[str, str], bool]) -> Callable[[list[Value]], Value]:
    def run(arguments: list[Value]) -> Value:
        if len(arguments) != 2 or not all(isinstance(argument, str) for argument in arguments):
            return UNKNOWN
        haystack, needle = (str(argument).lower() for argument in arguments)
        return test(haystack, needle)

    return run


def _starts_with(arguments: list[Value]) -> Value:
    """`startsWith`, also of a text whose literal start decides it (`github.ref` of a pull request)."""
    if len(arguments) == 2 and isinstance(arguments[0], Text) and isinstance(arguments[1], str):
        start, needle = arguments[0].parts[0], arguments[1].lower()
        if isinstance(start, str) and not needle.startswith(start.lower()):
            return start.lower().startswith(needle)
        return _undecided("startsWith", *arguments)
    return _string_test(str.startswith)(arguments)


def _contains(arguments: list[Value]) -> Value:
    """`contains` of a string in a string, or of an item in a list (each compared as `==` does)."""
    if len(arguments) == 2 and isinstance(arguments[0], Data) and arguments[0].items is not None:
        found = [_equal(item, arguments[1]) for item in arguments[0].items]
        return True if True in found else False if all(item is False for item in found) else UNKNOWN
    return _string_test(lambda haystack, needle: needle in haystack)(arguments)


def _from_json(arguments: list[Value]) -> Value:
    if len(arguments) != 1 or not isinstance(arguments[0], str):
        return UNKNOWN
    try:
        parsed = json.loads(arguments[0])
    except (ValueError, RecursionError):
        return UNKNOWN
    return from_plain(parsed)


def from_plain(value: object, depth: int = 0) -> Value:
    """A value read from JSON (or YAML) as an expression value: numbers as floats, lists and objects as `Data`."""
    if depth > _MAX_DATA_DEPTH:
        return UNKNOWN
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, list):
        return Data(items=tuple(from_plain(item, depth + 1) for item in value))
    if isinstance(value, dict):
        return Data(fields=tuple((str(key).lower(), from_plain(item, depth + 1)) for key, item in value.items()))
    return UNKNOWN


_MAX_DATA_DEPTH = 32


def _to_json(arguments: list[Value]) -> Value:
    if len(arguments) != 1 or arguments[0] is UNKNOWN or isinstance(arguments[0], Text):
        return UNKNOWN
    value = arguments[0]
    plain = value.plain if isinstance(value, Data) else value
    try:
        return json.dumps(plain, indent=2, default=_no_json)
    except _NoJson:
        return UNKNOWN


class _NoJson(Exception):
    pass


def _no_json(value: object) -> object:
    raise _NoJson(repr(value))


def _join(arguments: list[Value]) -> Value:
    if not arguments or len(arguments) > 2:
        return UNKNOWN
    items = arguments[0].items if isinstance(arguments[0], Data) else (arguments[0],)
    separator = as_text(arguments[1]) if len(arguments) == 2 else ","
    texts = [as_text(item) for item in items or ()]
    if not isinstance(separator, str) or any(not isinstance(text, str) for text in texts):
        return UNKNOWN
    return separator.join(str(text) for text in texts)


_FUNCTIONS: dict[str, Callable[[list[Value]], Value]] = {
    "format": _format,
    "contains": _contains,
    "startswith": _starts_with,
    "endswith": _string_test(str.endswith),
    "fromjson": _from_json,
    "tojson": _to_json,
    "join": _join,
    # As far as a job or step that runs at all is concerned: it runs when what it needs succeeded, or always;
    # whether something failed or was cancelled cannot be told.
    "success": lambda arguments: True,
    "always": lambda arguments: True,
    "failure": lambda arguments: UNKNOWN,
    "cancelled": lambda arguments: UNKNOWN,
}


def written(value: Value) -> str:
    """A value as a reader would write it: symbols as the expressions they stand for."""
    text = as_text(value)
    if text is UNKNOWN:
        return "${{ … }}"
    if isinstance(text, str):
        return text
    return "".join(part if isinstance(part, str) else "${{ " + part.shown + " }}" for part in text.parts)


def called(job: Job, callee: Workflow, scope: Scope) -> Scope:
    """The scope of the reusable workflow `job` calls, in the caller's `scope`: its inputs what the call passes
    (evaluated there when read), else their defaults."""
    return replace(scope, inputs=_CallInputs(job, callee, scope), job=None, instance=f"{scope.instance}/{job.id}")


class _CallInputs(Mapping[str, Value]):
    """The inputs of one call, each evaluated the first time an expression reads it."""

    def __init__(self, job: Job, callee: Workflow, scope: Scope) -> None:
        declared = callee.workflow_call.inputs if callee.workflow_call is not None else {}
        self._given: dict[str, Node | None] = {}
        for name, item in declared.items():
            given = job.with_.get(name) or item.default
            self._given[name.lower()] = given.value if given is not None else None
        self._scope = scope
        self._values: dict[str, Value] = {}

    def __getitem__(self, name: str) -> Value:
        if name not in self._values:
            node = self._given[name]
            self._values[name] = _given(node, self._scope) if node is not None else None
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._given)

    def __len__(self) -> int:
        return len(self._given)


def _given(node: Node, scope: Scope) -> Value:
    """An input's value as written: YAML's own (`true`, `3`) unless it is an expression."""
    if not isinstance(node, Scalar):
        return UNKNOWN
    if "${{" in node.value:
        return evaluate(node.value, scope)
    resolved = node.resolved
    if isinstance(resolved, bool | str) or resolved is None:
        return resolved
    return float(resolved) if isinstance(resolved, int | float) else node.value


def holds(test: str, scope: Scope) -> bool | None:
    """Whether an `if:` holds in `scope` (None: it cannot be told)."""
    return truthy(expression(condition(test), scope))
