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
`||`, parentheses and the functions whose result follows from their
arguments (`format`, `contains`, `startsWith`, `endsWith`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from functools import lru_cache
from itertools import count

from ci_checks.model.expressions import EXPRESSION, condition
from ci_checks.model.workflow import Job, Workflow
from ci_checks.yamlpos import Node, Scalar


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


Part = str | Symbol


@dataclass(frozen=True)
class Text:
    """A string made of literal pieces and symbols, at least one of them a symbol."""

    parts: tuple[Part, ...]

    def normalized(self) -> tuple[Part, ...]:
        return _joined(tuple(part.lower() if isinstance(part, str) else part for part in self.parts))


Value = str | bool | float | None | Text | _Unknown

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
    inputs: Mapping[str, Value] | None = field(default_factory=dict)
    """`inputs.*`: what a caller passes (or the defaults); None where the event decides them (a dispatch)."""
    job: str | None = None
    """`github.job`, in a job's `concurrency`."""
    instance: str = ""
    """Which call of the workflow within the run (its calling jobs), for `needs.*`: default, the run's own."""


def evaluate(text: str, scope: Scope) -> Value:
    """A value written in YAML: a `${{ }}` expression, a template with some, or plain text."""
    found = list(EXPRESSION.finditer(text.strip()))
    if len(found) == 1 and found[0].group(0) == text.strip():  # one expression alone keeps its type
        return expression(found[0].group("body"), scope)
    parts: list[Part] = []
    cursor = 0
    for match in EXPRESSION.finditer(text):
        parts.append(text[cursor : match.start()])
        value = as_text(expression(match.group("body"), scope))
        if value is UNKNOWN:
            return UNKNOWN
        parts.extend(value.parts if isinstance(value, Text) else (str(value),))
        cursor = match.end()
    parts.append(text[cursor:])
    return _text(tuple(parts))


def expression(body: str, scope: Scope) -> Value:
    """The value of an expression body (the text between `${{` and `}}`); UNKNOWN for what does not parse."""
    try:
        parser = _Parser(_tokens(body), scope)
        value = parser.disjunction()
        return value if parser.done() else UNKNOWN
    except _NoParse:
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


def context(path: list[str], scope: Scope) -> Value:
    """The value of a context path (`github.ref`, `inputs.ref`, `github.event.pull_request.number`)."""
    head, rest = path[0].lower(), [name.lower() for name in path[1:]]
    dotted = ".".join([head, *rest])
    if head == "inputs" and len(rest) == 1:
        if scope.inputs is None:  # the same within the run that the dispatch started, whatever it is
            return Text((Symbol(f"{scope.run}#{dotted}", None, dotted),))
        return scope.inputs.get(rest[0])
    if head == "vars" and len(rest) == 1:
        return Text((Symbol(dotted, None, dotted),))
    if head == "needs" and rest:  # a job's outputs: the same within one call of the workflow in one run
        return Text((Symbol(f"{scope.run}/{scope.instance}#{dotted}", None, dotted),))
    if head != "github" or not rest:
        return UNKNOWN
    return _github(rest, scope)


def _github(rest: list[str], scope: Scope) -> Value:
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
        return context(["inputs", *payload[1:]], scope) if len(payload) == 2 else UNKNOWN
    written = "event." + ".".join(payload)
    if payload[:2] == ["pull_request", "number"]:
        payload = ["number"]  # one number, however it is written
    return Text((_github_symbol("event." + ".".join(payload), True if events is not None else None, written),))


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


class _Parser:
    def __init__(self, tokens: tuple[tuple[str, str], ...], scope: Scope) -> None:
        self.tokens = tokens
        self.index = 0
        self.scope = scope

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

    def disjunction(self) -> Value:
        value = self.conjunction()
        while self.peek() == "||":
            self.take()
            right = self.conjunction()
            value = _or(value, right)
        return value

    def conjunction(self) -> Value:
        value = self.comparison()
        while self.peek() == "&&":
            self.take()
            right = self.comparison()
            value = _and(value, right)
        return value

    def comparison(self) -> Value:
        value = self.unary()
        while self.peek() in ("==", "!=", "<", "<=", ">", ">="):
            operator = self.take()[1]
            value = _compare(operator, value, self.unary())
        return value

    def unary(self) -> Value:
        if self.peek() == "!":
            self.take()
            operand = self.unary()
            value = truthy(operand)
            return _undecided("!", operand) if value is None else not value
        return self.primary()

    def primary(self) -> Value:
        kind, text = self.take()
        if text == "(":
            value = self.disjunction()
            self.take(")")
            return value
        if kind == "string":
            return text[1:-1].replace("''", "'")
        if kind == "number":
            return float(int(text, 16)) if text.lower().startswith("0x") else float(text)
        if kind != "name":
            raise _NoParse(text)
        lowered = text.lower()
        if lowered in ("true", "false"):
            return lowered == "true"
        if lowered == "null":
            return None
        if self.peek() == "(":
            return self.call(lowered)
        return self.path(text)

    def path(self, head: str) -> Value:
        names, known = [head], True
        while self.peek() in (".", "["):
            if self.take()[1] == ".":
                kind, text = self.take()
                known = known and kind == "name"
                names.append(text)
            else:
                index = self.disjunction()
                self.take("]")
                known = known and isinstance(index, str)
                names.append(index if isinstance(index, str) else "*")
        if not known or names[0].lower() in _NOT_STATIC:
            return UNKNOWN
        return context(names, self.scope)

    def call(self, function: str) -> Value:
        self.take("(")
        arguments: list[Value] = []
        while self.peek() != ")":
            arguments.append(self.disjunction())
            if self.peek() == ",":
                self.take()
        self.take(")")
        handler = _FUNCTIONS.get(function)
        return handler(arguments) if handler is not None else UNKNOWN


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
    """GitHub's `==`: strings without case; a text whose literal start differs from a string's is not it."""
    if left is UNKNOWN or right is UNKNOWN:
        return None
    if isinstance(left, Text) or isinstance(right, Text):
        if same_text(left, right):
            return True
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


_FUNCTIONS: dict[str, Callable[[list[Value]], Value]] = {
    "format": _format,
    "contains": _string_test(lambda haystack, needle: needle in haystack),
    "startswith": _starts_with,
    "endswith": _string_test(str.endswith),
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
