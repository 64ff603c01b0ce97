"""Which runners a job may run on: its `runs-on` labels, followed through matrices and reusable-workflow inputs.

`runs-on` is often an expression: `${{ matrix.runner }}`, or in a reusable
workflow `${{ fromJSON(inputs.runs_on) }}` fed by a caller's
`runs_on: '["self-hosted", "amd", "mi300x"]'`. `RunnerResolver` turns such a
`runs-on` into the label sets it can take, each label with the place it is
written (the matrix value, the caller's `with:` value, the character inside a
JSON string), so that a finding can point there. Expressions it cannot follow
(a step output, `needs`, a matrix from `fromJSON`) make the answer incomplete
rather than guessed.

The runner inventory is the configuration's `runners:`: named kinds of
self-hosted machine, each with its labels and GPU vendor; with none (or for
the machines it does not name), the one the workflows imply (`inventory`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import product

from ci_checks.diagnostics import Related, Span
from ci_checks.model.expressions import EXPRESSION, LITERAL, alternatives
from ci_checks.model.steps import ScalarLocator
from ci_checks.model.values import Entry, mapping
from ci_checks.model.workflow import Job, Workflow
from ci_checks.yamlpos import Mapping, Node, Scalar, Sequence

VENDORS = ("amd", "nvidia")

GENERIC_LABELS = frozenset({"self-hosted", "linux", "windows", "macos", "x64", "x86", "arm", "arm64"})
"""Labels every self-hosted runner gets from its operating system and architecture."""

_GITHUB_HOSTED = re.compile(
    r"(ubuntu-(latest|slim|\d\d\.\d\d(-arm)?)|windows-(latest|\d{4}(-vs\d{4})?|11-arm)"
    r"|macos-(latest|\d+)(-(large|xlarge|intel|arm64))?)\Z",
    re.IGNORECASE,
)


def is_github_hosted(label: str) -> bool:
    """A label of GitHub's standard hosted runners (`ubuntu-latest`, `windows-2022`, `macos-14-xlarge`)."""
    return _GITHUB_HOSTED.match(label) is not None


@dataclass(frozen=True)
class Runner:
    """One kind of machine in the inventory; `labels` are lower-case, as GitHub compares them."""

    name: str
    labels: frozenset[str]
    vendor: str | None
    self_hosted: bool
    span: Span
    inferred: bool = False
    """Implied by the workflows (`inventory.infer`), not named in the configuration."""
    telling: str | None = None
    """The label whose name says what the machine is (`mi300x`), for an inferred runner."""


@dataclass(frozen=True)
class RunnerInventory:
    runners: tuple[Runner, ...] = ()
    declared: tuple[str, ...] = ()
    """Labels `.github/actionlint.yaml` declares that no runner here carries (actionlint knows them already)."""

    def __bool__(self) -> bool:
        return bool(self.runners)

    @property
    def labels(self) -> tuple[str, ...]:
        """Every label of every runner, in the order they are written."""
        return tuple(dict.fromkeys(label for runner in self.runners for label in sorted(runner.labels)))

    def knows(self, label: str) -> bool:
        lower = label.lower()
        return (
            lower in GENERIC_LABELS or lower in self.declared or any(lower in runner.labels for runner in self.runners)
        )

    def matching(self, labels: Iterable[str]) -> list[Runner]:
        """The runners that carry every label of a `runs-on` (the generic ones aside)."""
        wanted = {label.lower() for label in labels} - GENERIC_LABELS
        return [runner for runner in self.runners if wanted and wanted <= runner.labels]


@dataclass(frozen=True)
class Label:
    """A runner label and where it is written; `via` says how it reached the job (a caller, a matrix)."""

    value: str
    span: Span
    via: tuple[Related, ...] = ()


@dataclass(frozen=True)
class RunnerChoice:
    """One set of labels a job may ask for."""

    labels: tuple[Label, ...]

    @property
    def values(self) -> list[str]:
        return [label.value for label in self.labels]

    def self_hosted(self, inventory: RunnerInventory) -> bool:
        if any(label.value.lower() == "self-hosted" for label in self.labels):
            return True
        return any(runner.self_hosted for runner in inventory.matching(self.values))

    def evidence(self, inventory: RunnerInventory, machine: bool = False) -> Label:
        """The label that shows what the runner is: `self-hosted` (unless `machine`), else one the inventory lists."""
        for label in self.labels:
            if label.value.lower() == "self-hosted" and not machine:
                return label
        runners = inventory.matching(self.values)
        telling = {runner.telling for runner in runners}
        known = {label for runner in runners for label in runner.labels} - GENERIC_LABELS
        return next(
            (label for label in self.labels if label.value.lower() in telling),
            next((label for label in self.labels if label.value.lower() in known), self.labels[0]),
        )

    def related(self, inventory: RunnerInventory, machine: bool = False) -> list[Related]:
        """Where the runner's labels come from: the telling label, and how it reached the job."""
        label = self.evidence(inventory, machine)
        return [Related(label.span, f"runner label `{label.value}`"), *label.via]

    def vendor(self, inventory: RunnerInventory) -> str | None:
        """The GPU vendor of every inventory runner this choice can land on, when they all agree."""
        vendors = {runner.vendor for runner in inventory.matching(self.values)}
        return vendors.pop() if len(vendors) == 1 else None


@dataclass
class Runners:
    """What `runs-on` of a job can be: `choices`, and whether they are all of them (`complete`)."""

    choices: list[RunnerChoice] = field(default_factory=list)
    complete: bool = True

    def self_hosted(self, inventory: RunnerInventory) -> RunnerChoice | None:
        """The first choice that lands on a self-hosted runner, if any does."""
        return next((choice for choice in self.choices if choice.self_hosted(inventory)), None)


_MAX_CHOICES = 256
_MAX_DEPTH = 4
_FROM_JSON = re.compile(r"fromjson\((?P<inner>.*)\)\Z", re.IGNORECASE | re.DOTALL)
_CONTEXT = re.compile(
    r"(?P<context>matrix|inputs)\.(?P<name>[A-Za-z_][A-Za-z0-9_-]*)(?:\.(?P<field>[A-Za-z_][A-Za-z0-9_-]*))?\Z"
)


@dataclass(frozen=True)
class _Value:
    """A candidate value of an expression: a string, or a list of labels (from a sequence or JSON).

    `locator` maps a single value's characters to the file when it is a whole scalar's text.
    """

    labels: tuple[Label, ...]
    single: bool
    locator: ScalarLocator | None = None


class RunnerResolver:
    """Resolves `runs-on` across the workflows of one repository (for the callers of reusable workflows)."""

    def __init__(self, workflows: Iterable[Workflow]) -> None:
        self.callers: dict[str, list[Job]] = {}
        for workflow in workflows:
            for job in workflow.jobs.values():
                if job.uses is not None and job.uses.kind in ("local", "self"):
                    self.callers.setdefault(job.uses.path, []).append(job)

    def runners(self, job: Job) -> Runners:
        """The label sets `job` may ask for; a reusable-workflow call has none of its own."""
        result = Runners()
        if job.runs_on is None:
            return result
        node = job.runs_on.node
        body = mapping(node)
        labels = body.get("labels") if body is not None else node
        if labels is None:
            return result
        items = labels.items if isinstance(labels, Sequence) else [labels]
        alternatives: list[list[_Value]] = []
        for item in items:
            if not isinstance(item, Scalar):
                result.complete = False
                continue
            values = list(self._scalar(job, item, (), 0, result))
            if values:
                alternatives.append(values)
        for combination in product(*alternatives) if alternatives else ():
            if len(result.choices) >= _MAX_CHOICES:
                result.complete = False
                break
            result.choices.append(RunnerChoice(tuple(label for value in combination for label in value.labels)))
        return result

    def _scalar(
        self, job: Job, node: Scalar, via: tuple[Related, ...], depth: int, result: Runners
    ) -> Iterator[_Value]:
        """The values a scalar written in `job`'s workflow can take."""
        text = node.value
        if node.resolved is None or not text:
            return
        if "${{" not in text:
            yield _Value((Label(text, node.span, via),), True, ScalarLocator(job.workflow.source, node))
            return
        whole = EXPRESSION.fullmatch(text.strip())
        if whole is not None:
            yield from self._expression(job, whole.group("body").strip(), node, via, depth, result)
            return
        yield from self._template(job, node, via, depth, result)

    def _template(
        self, job: Job, node: Scalar, via: tuple[Related, ...], depth: int, result: Runners
    ) -> Iterator[_Value]:
        """`linux-${{ matrix.gpus }}gpu`: each expression replaced by each single value it can take."""
        pieces: list[list[str]] = []
        cursor = 0
        for match in EXPRESSION.finditer(node.value):
            pieces.append([node.value[cursor : match.start()]])
            values = list(self._expression(job, match.group("body").strip(), node, via, depth, result))
            if not values or any(not value.single for value in values):
                result.complete = False
                return
            pieces.append([value.labels[0].value for value in values])
            cursor = match.end()
        pieces.append([node.value[cursor:]])
        for count, parts in enumerate(product(*pieces)):
            if count >= _MAX_CHOICES:
                result.complete = False
                return
            yield _Value((Label("".join(parts), node.span, via),), True)

    def _expression(
        self, job: Job, body: str, node: Scalar, via: tuple[Related, ...], depth: int, result: Runners
    ) -> Iterator[_Value]:
        for alternative in alternatives(body):
            literal = LITERAL.match(alternative)
            if literal is not None:
                yield _Value((Label(literal.group("text").replace("''", "'"), node.span, via),), True)
                continue
            parse = _FROM_JSON.match(alternative)
            inner = parse.group("inner").strip() if parse is not None else alternative
            context = _CONTEXT.match(inner)
            if context is None or depth >= _MAX_DEPTH:
                result.complete = False
                continue
            found = (
                self._matrix(job, context.group("name"), context.group("field"), via, result)
                if context.group("context") == "matrix"
                else self._input(job, context.group("name"), via, depth, result)
            )
            for value in found:
                yield _json_value(value) if parse is not None else value

    def _matrix(
        self, job: Job, name: str, field_name: str | None, via: tuple[Related, ...], result: Runners
    ) -> Iterator[_Value]:
        matrix = job.strategy.matrix if job.strategy is not None else None
        if not isinstance(matrix, Mapping):
            result.complete = False
            return
        values: list[Node] = []
        declared = matrix.get(name)
        if isinstance(declared, Sequence):
            values.extend(declared.items)
        elif declared is not None:
            result.complete = False
        include = matrix.get("include")
        for entry in include.items if isinstance(include, Sequence) else ():
            if isinstance(entry, Mapping) and name in entry:
                values.append(entry.index[name][1])
        if not values and declared is None:
            result.complete = False
        for value in values:
            body = mapping(value)
            chosen = value if field_name is None else body.get(field_name) if body is not None else None
            if chosen is not None:
                yield from _node_value(chosen, via, result)

    def _input(self, job: Job, name: str, via: tuple[Related, ...], depth: int, result: Runners) -> Iterator[_Value]:
        workflow = job.workflow
        inputs = {
            **workflow.workflow_dispatch_inputs,
            **(workflow.workflow_call.inputs if workflow.workflow_call else {}),
        }
        declared = inputs.get(name)
        if declared is None:
            result.complete = False
            return
        if declared.default is not None and isinstance(declared.default.value, Scalar):
            yield from self._scalar(job, declared.default.value, via, depth + 1, result)
        for option in declared.options:
            yield _Value((Label(option, declared.key.span, via),), True)
        callers = self.callers.get(workflow.path, []) if workflow.workflow_call is not None else []
        for caller in callers:
            passed = caller.with_.get(name)
            if passed is None:
                continue
            hop = (*via, passed_input(caller, passed))
            if isinstance(passed.value, Scalar):
                yield from self._scalar(caller, passed.value, hop, depth + 1, result)
            else:
                result.complete = False


def passed_input(caller: Job, entry: Entry) -> Related:
    """The note that a value reached a reusable workflow as an input that `caller` passes in `with:`."""
    return Related(entry.value.span, f"passed as input `{entry.name}` by job '{caller.id}'")


def _node_value(node: Node, via: tuple[Related, ...], result: Runners) -> Iterator[_Value]:
    if isinstance(node, Scalar) and node.resolved is not None:
        if "${{" in node.value:
            result.complete = False
            return
        yield _Value((Label(node.value, node.span, via),), True)
    elif isinstance(node, Sequence):
        labels = tuple(Label(item.value, item.span, via) for item in node.items if isinstance(item, Scalar))
        yield _Value(labels, False)
    else:
        result.complete = False


def _json_value(value: _Value) -> _Value:
    """`fromJSON` of a string value: its list of labels (or one label), each at its place in the string."""
    if not value.single:
        return value
    label = value.labels[0]
    try:
        parsed = json.loads(label.value)
    except ValueError:
        return value
    labels = []
    cursor = 0
    for item in parsed if isinstance(parsed, list) else [parsed]:
        if not isinstance(item, str):
            continue
        written = json.dumps(item)
        start = label.value.find(written, cursor)
        span = label.span
        if start >= 0 and value.locator is not None:
            cursor = start + len(written)
            span = value.locator.span(start + 1, start + len(written) - 1)
        labels.append(Label(item, span, label.via))
    return _Value(tuple(labels), False)
