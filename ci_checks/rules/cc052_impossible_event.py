"""An `if:` compares `github.event_name` with an event the workflow never receives.

## What it does
Reads every job and step `if:` of a workflow with the expression tokenizer
and finds the tests of `github.event_name`: `github.event_name == 'push'`,
`'push' != github.event_name`, and each entry of
`contains(fromJSON('["push", "schedule"]'), github.event_name)`, wherever
they stand in the condition (`a == 'x' || a == 'y'`). It reports the event
name when the workflow cannot receive it:

- a name that is no GitHub event at all (`pull-request`, `schedules`,
  `pull_request_trget`), with the event meant when it is one edit or one
  spelling away (hyphens, no underscores, a plural);
- `workflow_call`, which `github.event_name` never is: a called workflow sees
  the event of its caller's run;
- an event that is not among the workflow's `on:` triggers. A reusable
  workflow (`on: workflow_call`) receives its callers' events: those of the
  workflows here that call it, followed up through callers that are reusable
  themselves. One that no workflow here calls may be called from elsewhere
  with any event: only the first two are reported there.

GitHub compares the strings without case, and so does this rule. An `==`
test is an error: it is always false, so what it guards never runs for the
event meant. A `!=` test is always true, so it excludes nothing: a warning.
An entry of a `contains` list that never matches is an error, as an `==` is.
Composite actions are not read: an action does not know the events of the
workflows that use it.

## Why it matters
`if: github.event_name == 'pull-request'` is valid syntax and always false:
the nightly GPU job it guards is skipped on every pull request, quietly, and
the checks page shows it as skipped, not as broken. A test for an event the
workflow lost from `on:` in a refactor is the same dead branch.

## Example
```yaml
on: [push, pull_request]
jobs:
  gpu-tests:
    if: github.event_name == 'pull-request' || github.event_name == 'schedule'
    runs-on: [self-hosted, nvidia]
```

## Fix
Spell the event as GitHub names it (`pull_request`), add the trigger the
test expects to `on:`, or drop the test. In a reusable workflow, pass what
the caller knows as an input (`caller_event: ${{ github.event_name }}`)
instead of testing for `workflow_call`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

from ci_checks.core.diagnostics import Diagnostic, Related, Severity, Span
from ci_checks.core.repository import FileKind
from ci_checks.model import Job, Workflow
from ci_checks.model.evaluation import tokens as expression_tokens
from ci_checks.model.expressions import EXPRESSION
from ci_checks.model.steps import ScalarLocator
from ci_checks.rules.context import RepositoryContext
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus
from ci_checks.syntax.yamlpos import Scalar

EVENTS = (
    "branch_protection_rule",
    "check_run",
    "check_suite",
    "create",
    "delete",
    "deployment",
    "deployment_status",
    "discussion",
    "discussion_comment",
    "fork",
    "gollum",
    "image_version",
    "issue_comment",
    "issues",
    "label",
    "merge_group",
    "milestone",
    "page_build",
    "project",
    "project_card",
    "project_column",
    "public",
    "pull_request",
    "pull_request_review",
    "pull_request_review_comment",
    "pull_request_target",
    "push",
    "registry_package",
    "release",
    "repository_dispatch",
    "schedule",
    "status",
    "watch",
    "workflow_call",
    "workflow_dispatch",
    "workflow_run",
)
"""The events that can trigger a workflow, as GitHub names them in `on:` and in `github.event_name`."""
_CALL = "workflow_call"


@dataclass(frozen=True)
class _Test:
    """One comparison of `github.event_name` with a literal event name."""

    name: str
    """The event name, lower case."""
    written: str
    """The literal as written (without its quotes)."""
    start: int
    end: int
    """Where the literal (the string, or the JSON entry) is in the condition's text."""
    operator: str
    """`==`, `!=`, or `in` for an entry of a `contains(fromJSON(...), github.event_name)` list."""
    literal_first: bool = False
    """Written `'push' == github.event_name`."""


@dataclass(frozen=True)
class _Received:
    """The events a workflow receives; None when it cannot be told, with the callers they come through."""

    events: frozenset[str] | None
    callers: tuple[Job, ...] = ()


def check_repository(context: RepositoryContext) -> Iterator[Diagnostic]:
    events = _Events(context)
    for workflow in context.workflows:
        if not context.covers(workflow.path) or not workflow.triggers:
            continue
        for scalar in _conditions(workflow):
            for test in _tests(scalar.value):
                received = events.received(workflow)
                reason = _reason(test.name, workflow, received)
                if reason is not None:
                    yield _diagnostic(workflow, scalar, test, reason, received)


def _conditions(workflow: Workflow) -> Iterator[Scalar]:
    """The `if:` values of the workflow's jobs and steps that mention `event_name`."""
    entries = [job.if_ for job in workflow.jobs.values()] + [step.if_ for step in workflow.steps()]
    for entry in entries:
        if entry is not None and isinstance(entry.value, Scalar) and "event_name" in entry.value.value.lower():
            yield entry.value


class _Events:
    """The events `github.event_name` can be in a run of each workflow of a repository."""

    def __init__(self, context: RepositoryContext) -> None:
        self.context = context
        self._known: dict[str, _Received] = {}

    def received(self, workflow: Workflow) -> _Received:
        """Its triggers, and for a reusable workflow those of every workflow up its chains of callers (None where a
        reusable workflow up a chain has no caller here: it may be called from elsewhere with any event)."""
        if workflow.path not in self._known:
            self._known[workflow.path] = self._received(workflow)
        return self._known[workflow.path]

    def _received(self, workflow: Workflow) -> _Received:
        events: set[str] = set()
        pending, seen = [workflow], {workflow.path}
        while pending:  # each workflow up the chains once, so that callers in a circle end
            current = pending.pop()
            events.update(set(current.triggers) - {_CALL})
            if _CALL not in current.triggers:
                continue
            callers = self._callers(current)
            if not callers:
                return _Received(None)
            for caller in callers:
                if caller.workflow.path not in seen:
                    seen.add(caller.workflow.path)
                    pending.append(caller.workflow)
        return _Received(frozenset(events), tuple(self._callers(workflow)) if _CALL in workflow.triggers else ())

    def _callers(self, workflow: Workflow) -> list[Job]:
        """The jobs here that call the workflow, in workflows that run at all."""
        return [job for job in self.context.resolver.callers.get(workflow.path, []) if job.workflow.triggers]


def _tests(text: str) -> Iterator[_Test]:
    """The comparisons of `github.event_name` with a literal in an `if:` value (a bare expression, or one `${{ }}`
    holding all of it); offsets are into `text`."""
    stripped = text.strip()
    lead = len(text) - len(text.lstrip())
    whole = EXPRESSION.fullmatch(stripped)
    if whole is not None:
        body, offset = whole.group("body"), lead + whole.start("body")
    elif "${{" in stripped:
        return  # text around an expression makes a string, which is always true: nothing here compares
    else:
        body, offset = stripped, lead
    tokens = _positioned(body)
    for index in range(len(tokens)):
        found = _comparison(tokens, index) or _listed(tokens, index)
        for test in found:
            yield _Test(
                test.name, test.written, offset + test.start, offset + test.end, test.operator, test.literal_first
            )


_Token = tuple[str, str, int, int]
"""A token's kind, text, and where it starts and ends in the expression body."""


def _positioned(body: str) -> list[_Token]:
    """The tokens of an expression body with their places; [] for a body the tokenizer cannot read."""
    tokens = expression_tokens(body)
    if tokens is None:
        return []
    placed: list[_Token] = []
    cursor = 0
    for kind, text in tokens:
        while cursor < len(body) and body[cursor].isspace():
            cursor += 1
        if not body.startswith(text, cursor):
            return []
        placed.append((kind, text, cursor, cursor + len(text)))
        cursor += len(text)
    return placed


def _event_name_at(tokens: list[_Token], index: int) -> bool:
    """Whether `github.event_name` (no more of a path, and not negated) starts at `index`."""
    if index + 2 >= len(tokens) or (index > 0 and tokens[index - 1][1] in (".", "!")):
        return False
    head, dot, name = tokens[index : index + 3]
    following = tokens[index + 3][1] if index + 3 < len(tokens) else ""
    return (
        head[1].lower() == "github"
        and dot[1] == "."
        and name[1].lower() == "event_name"
        and following not in (".", "[")
    )


def _comparison(tokens: list[_Token], index: int) -> list[_Test]:
    """`github.event_name == 'x'` or `'x' == github.event_name` (also `!=`) starting at `index`."""
    literal_first = not _event_name_at(tokens, index)
    if not literal_first and index + 4 < len(tokens):
        operator, literal = tokens[index + 3], tokens[index + 4]
    elif (
        tokens[index][0] == "string"
        and index + 1 < len(tokens)
        and _event_name_at(tokens, index + 2)
        and (index == 0 or tokens[index - 1][1] not in ("==", "!=", "!"))
    ):
        operator, literal = tokens[index + 1], tokens[index]
    else:
        return []
    if operator[1] not in ("==", "!=") or literal[0] != "string":
        return []
    written = literal[1][1:-1].replace("''", "'")
    return [_Test(written.lower(), written, literal[2], literal[3], operator[1], literal_first)]


def _listed(tokens: list[_Token], index: int) -> list[_Test]:
    """The entries of `contains(fromJSON('[...]'), github.event_name)` starting at `index`, each at its JSON string
    in the literal (the whole literal where the literal escapes a quote)."""
    words = [token[1].lower() for token in tokens[index : index + 7]]
    if words[:4] != ["contains", "(", "fromjson", "("] or len(words) < 7 or words[5:7] != [")", ","]:
        return []
    if tokens[index + 4][0] != "string" or not _event_name_at(tokens, index + 7):
        return []
    if index + 10 >= len(tokens) or tokens[index + 10][1] != ")":
        return []
    _, literal, start, end = tokens[index + 4]
    text = literal[1:-1]
    try:
        entries = json.loads(text.replace("''", "'"))
    except ValueError:
        return []
    if not isinstance(entries, list):
        return []
    found = []
    cursor = 0
    for entry in entries:
        if not isinstance(entry, str):
            continue
        encoded = json.dumps(entry)
        at = text.find(encoded, cursor) if "''" not in text else -1
        if at >= 0:
            cursor = at + len(encoded)
            found.append(_Test(entry.lower(), entry, start + 1 + at, start + 1 + cursor, "in"))
        else:
            found.append(_Test(entry.lower(), entry, start, end, "in"))
    return found


def _reason(name: str, workflow: Workflow, received: _Received) -> str | None:
    """Why `github.event_name` is never `name` in this workflow; None when it may be."""
    if name not in EVENTS:
        meant = _meant(name, [*sorted(received.events or ()), *EVENTS])
        return f"`{name}` is not a GitHub event" + (f" (did you mean `{meant}`?)" if meant else "")
    if name == _CALL:
        return "a called workflow sees the event of its caller's run, never `workflow_call`"
    if received.events is None or name in received.events:
        return None
    meant = _meant(name, sorted(received.events))
    guess = f" (did you mean `{meant}`?)" if meant else ""
    if _CALL not in workflow.triggers:
        return f"this workflow has no `{name}` trigger{guess}"
    events = ", ".join(f"`{event}`" for event in sorted(received.events)) or "no event"
    return (
        f"the workflows here that call this one run on {events}, never on `{name}` (in a called workflow "
        f"`github.event_name` is the caller's event){guess}"
    )


def _meant(name: str, candidates: list[str]) -> str | None:
    """The first candidate spelt the same but for hyphens, underscores or a final `s`, or one edit away."""
    key = _spelling(name)
    for candidate in candidates:
        if candidate != name and (_spelling(candidate) == key or _one_edit(name, candidate)):
            return candidate
    return None


def _spelling(name: str) -> str:
    return name.replace("-", "").replace("_", "").replace(" ", "").removesuffix("s")


def _one_edit(first: str, second: str) -> bool:
    """Whether one insertion, deletion, substitution or swap of neighbours turns one word into the other."""
    if first == second or abs(len(first) - len(second)) > 1:
        return False
    prefix = 0
    while prefix < min(len(first), len(second)) and first[prefix] == second[prefix]:
        prefix += 1
    a, b = first[prefix:], second[prefix:]
    if len(a) == len(b):
        return a[1:] == b[1:] or (len(a) >= 2 and a[0] == b[1] and a[1] == b[0] and a[2:] == b[2:])
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    return longer[1:] == shorter


def _diagnostic(workflow: Workflow, scalar: Scalar, test: _Test, reason: str, received: _Received) -> Diagnostic:
    span = ScalarLocator(workflow.source, scalar).span(test.start, test.end)
    if test.operator in ("==", "!="):
        literal = f"'{test.written}'"
        left, right = (literal, "github.event_name") if test.literal_first else ("github.event_name", literal)
        always = "false" if test.operator == "==" else "true"
        message = f"`{left} {test.operator} {right}` is always {always}: {reason}"
    else:
        message = f"`github.event_name` never matches this entry '{test.written}': {reason}"
    severity = Severity.WARNING if test.operator == "!=" else Severity.ERROR
    return RULE.diagnostic(span, message, _notes(workflow, test.name, received), severity=severity)


def _notes(workflow: Workflow, name: str, received: _Received) -> list[Related]:
    if name not in EVENTS or name == _CALL:
        return []
    if received.callers:
        return [
            Related(_call_span(caller), f"job '{caller.id}' of `{caller.workflow.path}` calls this workflow")
            for caller in received.callers
        ]
    on = workflow.node.key_node("on")
    triggers = ", ".join(f"`{event}`" for event in workflow.triggers)
    return [Related(on.span, f"the workflow's triggers: {triggers}")] if on is not None else []


def _call_span(caller: Job) -> Span:
    return caller.uses_node.span if caller.uses_node is not None else caller.key.span


RULE = Rule(
    "CC052",
    "impossible-event",
    "An `if:` compares `github.event_name` with an event the workflow never receives",
    Severity.ERROR,
    __doc__,
    frozenset({FileKind.WORKFLOW}),
    None,
    check_repository,
    group=RuleGroup.WORKFLOW,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
