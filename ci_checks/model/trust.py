"""Who chooses the text an expression expands to: anyone (an outsider), or only people with write access.

`${{ github.event.pull_request.title }}` is whatever the author of a pull
request from a fork typed; `${{ github.ref_name }}`, `${{ inputs.version }}`
of a `workflow_dispatch`, or `${{ matrix.arch }}` written in the workflow are
chosen by people who can already change the workflow itself. `Trust.of`
reads an expression's context paths with the expression tokenizer and says,
for the whole expression:

- `OUTSIDER`: some path is text an outsider writes (`OUTSIDER_TEXT`: a fork
  pull request's title, body, branch and repository names, an issue's or a
  comment's text, a commit message or author, a wiki page's name), or an
  object holding such text (`toJSON(github.event.pull_request)`), or an input
  that a caller in this repository fills with one of those, followed from
  caller to caller (`inputs.title` of a reusable workflow whose calling job
  passes `title: ${{ github.event.pull_request.title }}`);
- `MAINTAINER`: every path is chosen by people with write access, or cannot
  hold free text: the rest of `github` (refs and branch names of this
  repository, SHAs, logins, numbers), `vars`, `secrets`, a matrix written out
  in the job, `github.event.inputs` (a dispatch, which takes write access),
  `github.event.client_payload` (a `repository_dispatch`, which takes a
  token with write access) unless its tail names outsider text it relays
  (`client_payload.github.payload.comment.body`), an input declared
  `boolean` or `number`, and an input that only such values reach;
- `UNKNOWN`: it depends on what is not read here: a step's or a job's output,
  `env`, a matrix computed at run time, a cycle of calls.

A reusable workflow or composite action that no workflow of the repository
calls is called from other repositories, or not at all. Its callers there are
written by people with write access to them, who choose what they pass, and
nothing here says that they pass outsider text: its inputs count as
`MAINTAINER`, as does an input left to a default written as a constant.
"""

from __future__ import annotations

import enum
import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from ci_checks.core.diagnostics import Related
from ci_checks.model.action import Action
from ci_checks.model.evaluation import tokens as expression_tokens
from ci_checks.model.expressions import EXPRESSION
from ci_checks.model.steps import Step
from ci_checks.model.values import Entry
from ci_checks.model.workflow import Input, Job, Workflow
from ci_checks.syntax.yamlpos import Mapping, Node, Scalar, Sequence


class Author(enum.IntEnum):
    """Who chooses an expression's text; a mix of them counts as the highest."""

    MAINTAINER = 0
    UNKNOWN = 1
    OUTSIDER = 2


def _expanded(templates: Iterable[str]) -> frozenset[str]:
    """`a.{b,c}.d` as `a.b.d` and `a.c.d` (one set of braces per template at most)."""
    found: set[str] = set()
    for template in templates:
        if "{" in template:
            before, rest = template.split("{", 1)
            choices, after = rest.split("}", 1)
            found.update(f"{before}{choice}{after}" for choice in choices.split(","))
        else:
            found.add(template)
    return frozenset(found)


OUTSIDER_TEXT = _expanded(
    [
        "github.head_ref",
        "github.event.pull_request.{title,body}",
        "github.event.pull_request.head.{ref,label}",
        "github.event.pull_request.head.repo.{name,full_name,description,homepage,default_branch}",
        "github.event.issue.{title,body}",
        "github.event.comment.body",
        "github.event.review.body",
        "github.event.discussion.{title,body}",
        "github.event.changes.{title,body}.from",
        "github.event.commits.*.{message,author.name,author.email,committer.name,committer.email}",
        "github.event.head_commit.{message,author.name,author.email,committer.name,committer.email}",
        "github.event.merge_group.head_commit.{message,author.name,author.email,committer.name,committer.email}",
        "github.event.workflow_run.{head_branch,display_title}",
        "github.event.workflow_run.pull_requests.*.head.ref",
        "github.event.workflow_run.head_commit.{message,author.name,author.email,committer.name,committer.email}",
        "github.event.workflow_run.head_repository.{name,full_name,description}",
        "github.event.pages.*.{page_name,title}",
    ]
)
"""The context paths (lower case, `*` for any index) whose text someone without write access chooses: the author
of a fork's pull request, an issue, a comment, a review or a wiki page, or of a commit that came in with a merged
pull request. These are GitHub's examples of untrusted input (contexts ending in `body`, `title`, `message`,
`head_ref`, `label`, `name`, `email`, `page_name`) where the event lets an outsider set them; a branch or
repository name of this repository, a label (created by triagers), a release, a `workflow_dispatch` input or a
login (letters, digits and hyphens) is not among them."""
_HOLDING_OUTSIDER_TEXT = frozenset(
    ".".join(path.split(".")[:cut]) for path in OUTSIDER_TEXT for cut in range(1, path.count(".") + 1)
)
"""The objects an outsider path runs through (`github.event.pull_request`, `github.event`, `github`): their JSON
(`toJSON(github.event)`) holds the outsider's text."""
_RELAY = "github.event.client_payload."
_MAINTAINER_CONTEXTS = frozenset({"github", "vars", "secrets", "runner", "strategy", "job"})
"""Contexts whose values, past the paths `OUTSIDER_TEXT` names, people with write access choose or that hold no free
text: refs, SHAs, logins, numbers, the runner's paths, the job's status."""
_TYPED = frozenset({"boolean", "number"})
"""`workflow_call` input types GitHub checks before the run: such an input holds no free text, whoever passes it."""
_MAX_HOPS = 8
"""How many inputs (a caller's, its caller's, ...) deep one expression is followed."""
_MAX_FOLLOWED = 10_000
"""How many times inputs are followed for one repository: callers in a circle may be followed again for each way
into the circle."""


@dataclass(frozen=True)
class Control:
    """Who chooses an expression's text; for an outsider's, the path that says so and how it reached here."""

    author: Author
    shown: str = ""
    """The outsider's context path (`github.event.pull_request.title`)."""
    via: tuple[Related, ...] = ()
    """The callers' `with:` values it was passed through, nearest first."""


_MAINTAINER = Control(Author.MAINTAINER)
_UNKNOWN = Control(Author.UNKNOWN)


@dataclass(frozen=True)
class Place:
    """Where an expression is written: a job of a workflow (or the workflow outside its jobs), or an action."""

    workflow: Workflow | None = None
    job: Job | None = None
    action: Action | None = None


def context_paths(body: str) -> list[str] | None:
    """The context paths an expression body reads, lower case, `*` for an index (`github.event.commits.*.message`);
    a property of a function's result (`fromJSON(inputs.config).ref`) counts as the function's arguments. None for a
    body that does not tokenize."""
    tokens = expression_tokens(body)
    if tokens is None:
        return None
    paths: list[str] = []
    index = 0
    while index < len(tokens):
        kind, text = tokens[index]
        before = tokens[index - 1][1] if index else ""
        after = tokens[index + 1][1] if index + 1 < len(tokens) else ""
        index += 1
        if kind != "name" or before == "." or after == "(" or text.lower() in ("true", "false", "null"):
            continue
        names = [text.lower()]
        while True:
            index, name = _segment(tokens, index)
            if name is None:
                break
            names.append(name)
        paths.append(".".join(names))
    return paths


def _segment(tokens: tuple[tuple[str, str], ...], index: int) -> tuple[int, str | None]:
    """The path segment at `index` (`.name`, `.*`, `['name']`, `[0]`, `[*]`: an index is `*`) and the index past
    it; None where the path ends (a computed index `[matrix.i]` ends it, and its own paths are read from there)."""
    if index + 1 >= len(tokens):
        return index, None
    opening, (kind, text) = tokens[index][1], tokens[index + 1]
    if opening == "." and (kind == "name" or text == "*"):
        return index + 2, text.lower()
    closed = index + 2 < len(tokens) and tokens[index + 2][1] == "]"
    if opening == "[" and closed and kind in ("string", "number", "operator"):
        if kind == "string":
            return index + 3, text[1:-1].replace("''", "'").lower()
        if kind == "number" or text == "*":
            return index + 3, "*"
    return index, None


def outsider_text(path: str) -> bool:
    """Whether a context path is text an outsider writes, or an object that holds some (`github.event.issue`),
    also where a `repository_dispatch` payload relays such an event (`client_payload.github.payload.issue.title`)."""
    if _holds_outsider_text(path):
        return True
    if not path.startswith(_RELAY):
        return False
    tail = path[len(_RELAY) :].split(".")
    return any(_holds_outsider_text("github.event." + ".".join(tail[start:])) for start in range(len(tail)))


def _holds_outsider_text(path: str) -> bool:
    return path in OUTSIDER_TEXT or path in _HOLDING_OUTSIDER_TEXT


class Trust:
    """Who chooses the text of expressions written in one repository's workflows and composite actions, following
    inputs to their callers among `workflows` and the composite actions `actions` gives (read only when asked)."""

    def __init__(self, workflows: Iterable[Workflow], actions: Callable[[], Iterable[Action]]) -> None:
        self.workflows = list(workflows)
        self._actions = actions
        self._workflow_callers: dict[str, list[Job]] | None = None
        self._action_callers: dict[str, list[Step]] | None = None
        self._inputs: dict[tuple[str, str], Control] = {}
        """Each input followed to the end, by its workflow's or action's path and its name: followed once."""
        self._following: list[tuple[str, str]] = []
        """The inputs being followed, outermost first: one met again is a cycle of calls."""
        self._cut = 0
        """How many times following stopped short (a cycle, a chain too deep, the budget spent): an answer found
        while one did is not the input's whole answer, and is not kept for other questions."""
        self._budget = _MAX_FOLLOWED

    def of(self, body: str, place: Place) -> Control:
        """Who chooses the text of an expression body written at `place`."""
        paths = context_paths(body)
        if paths is None:
            return _UNKNOWN
        return _highest(self._path(path, place) for path in paths)

    def _path(self, path: str, place: Place) -> Control:
        if outsider_text(path):
            return Control(Author.OUTSIDER, path)
        names = path.split(".")
        if names[0] == "inputs":
            return self._input(names[1], place) if len(names) > 1 else _UNKNOWN
        if names[0] == "matrix":
            return _MAINTAINER if _written_matrix(place.job) else _UNKNOWN
        return _MAINTAINER if names[0] in _MAINTAINER_CONTEXTS else _UNKNOWN

    def _input(self, name: str, place: Place) -> Control:
        """Who chooses `inputs.<name>` at `place` (see `_passed_in`), each input followed once."""
        owner = place.workflow.path if place.workflow is not None else place.action.path if place.action else None
        if owner is None:
            return _UNKNOWN
        key = (owner, name.lower())
        known = self._inputs.get(key)
        if known is not None:
            return known
        if key in self._following or len(self._following) >= _MAX_HOPS or self._budget <= 0:
            self._cut += 1
            return _UNKNOWN  # a cycle of calls, or one too long to follow: what reaches it is not told
        self._budget -= 1
        cut = self._cut
        self._following.append(key)
        try:
            found = self._passed_in(name, place)
        finally:
            self._following.pop()
        if self._cut == cut:
            self._inputs[key] = found
        return found

    def _passed_in(self, name: str, place: Place) -> Control:
        """Who chooses `inputs.<name>` at `place`: its default where a call leaves it out, and what each caller in
        this repository passes."""
        callers: list[Job] | list[Step]
        if place.workflow is not None:
            call = place.workflow.workflow_call
            declared = _named(call.inputs, name) if call is not None else None
            if declared is None or declared.type in _TYPED:
                return _MAINTAINER  # a dispatch's input, one no call can pass, or one that holds no free text
            callers = self.workflow_callers(place.workflow.path)
        else:
            assert place.action is not None
            declared = _named(place.action.inputs, name)
            if declared is None:
                return _MAINTAINER  # no caller can pass it: always empty
            callers = self.action_callers(posixpath.dirname(place.action.path))
        found: list[Control] = []
        for caller in callers:
            given = _named(caller.with_, declared.name)
            if given is None:
                continue
            control = self._value(given, _place_of(caller))
            if control.author is Author.OUTSIDER:
                note = Related(given.value.span, _passed(caller, declared.name, control.shown))
                control = Control(control.author, control.shown, (note, *control.via))
            found.append(control)
        if len(found) < len(callers) or not callers:  # a call that leaves it out gets the default
            found.append(self._value(declared.default, place) if declared.default is not None else _MAINTAINER)
        return _highest(found)

    def _value(self, given: Entry, place: Place) -> Control:
        """Who chooses a value written in YAML: a constant is the maintainers'; an expression, as its paths say."""
        if not isinstance(given.value, Scalar):
            return _UNKNOWN
        bodies = [match.group("body") for match in EXPRESSION.finditer(given.value.value)]
        return _highest(self.of(body, place) for body in bodies)

    def workflow_callers(self, path: str) -> list[Job]:
        """The jobs of this repository's workflows that call the reusable workflow at `path`."""
        if self._workflow_callers is None:
            self._workflow_callers = {}
            for workflow in self.workflows:
                for job in workflow.jobs.values():
                    if job.uses is not None and job.uses.kind in ("local", "self"):
                        self._workflow_callers.setdefault(job.uses.path, []).append(job)
        return self._workflow_callers.get(path, [])

    def action_callers(self, folder: str) -> list[Step]:
        """The steps of this repository's workflows and composite actions that use the action in `folder`."""
        if self._action_callers is None:
            self._action_callers = {}
            steps = [
                *(step for workflow in self.workflows for step in workflow.steps()),
                *(step for action in self._actions() for step in action.steps),
            ]
            for step in steps:
                if step.uses is not None and step.uses.kind in ("local", "self"):
                    self._action_callers.setdefault(_folder(step.uses.path), []).append(step)
        return self._action_callers.get(_folder(folder), [])


def _highest(controls: Iterable[Control]) -> Control:
    """Who chooses a text made of parts: the outsider if any part is theirs, unknown if any part is, else the
    maintainers (nothing at all is theirs too: a constant)."""
    return max(controls, key=lambda control: control.author, default=_MAINTAINER)


_Named = TypeVar("_Named", Input, Entry)


def _named(entries: dict[str, _Named], name: str) -> _Named | None:
    """The entry called `name`, compared without case, as GitHub compares input names."""
    wanted = name.lower()
    return next((value for key, value in entries.items() if key.lower() == wanted), None)


def _folder(path: str) -> str:
    """A folder's path as `uses: ./path` and an action file's folder both give it (the root is `.`)."""
    return posixpath.normpath(path) if path else "."


def _place_of(caller: Job | Step) -> Place:
    owner = caller if isinstance(caller, Job) else caller.owner
    if isinstance(owner, Job):
        return Place(owner.workflow, owner)
    return Place(action=owner) if isinstance(owner, Action) else Place()


def _passed(caller: Job | Step, name: str, shown: str) -> str:
    who = f"job '{caller.id}'" if isinstance(caller, Job) else f"step '{caller.label}'"
    return f"{who} passes `{shown}`, which an outsider writes, as input `{name}`"


def _written_matrix(job: Job | None) -> bool:
    """Whether the job's matrix is written out (no expression anywhere in it), so that maintainers chose its values."""
    matrix = job.strategy.matrix if job is not None and job.strategy is not None else None
    if not isinstance(matrix, Mapping):
        return False
    pending: list[Node] = [matrix]
    seen: set[int] = set()
    while pending:
        node = pending.pop()
        if id(node) in seen:  # a YAML alias is one node met twice
            continue
        seen.add(id(node))
        if isinstance(node, Scalar) and "${{" in node.value:
            return False
        if isinstance(node, Mapping):
            pending.extend(value for _, value in node.items())
        elif isinstance(node, Sequence):
            pending.extend(node.items)
    return True
