"""The runner one leg of a job asks for: its `runs-on` evaluated in the leg, each label placed where it is written.

`runs-on: ${{ matrix.runner }}` is the leg's matrix value, placed at that
value; `runs-on: ${{ fromJSON(inputs.runs_on) }}` is the list a caller passes,
each label placed inside the caller's JSON string, with a note naming the
call. Where a part cannot be known (a step output, `vars.*`), the leg has no
runner to judge, rather than a guessed one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from itertools import product

from ci_checks.core.diagnostics import Span
from ci_checks.model.evaluation import Data
from ci_checks.model.runners import Label, RunnerChoice, Runners
from ci_checks.model.valuation.legs import Binding, Leg, Valuation
from ci_checks.model.values import mapping
from ci_checks.model.workflow import Job, Workflow
from ci_checks.syntax.yamlpos import Scalar, Sequence

_MAX_CHOICES = 16
_MATRIX_OR_ENV = re.compile(r"\b(matrix|env)\b", re.IGNORECASE)
"""What a `runs-on` reads that may differ between the combinations of one entry's matrix."""


class RunnerResolver:
    """The label sets each job of a repository may ask for: those of its legs that may run."""

    def __init__(self, workflows: Iterable[Workflow], valuation: Valuation | None = None) -> None:
        self.valuation = valuation if valuation is not None else Valuation(workflows)
        self.callers = self.valuation.callers
        self._runners: dict[tuple[int, bool], Runners] = {}

    def runners(self, job: Job, running: bool = True) -> Runners:
        """The label sets `job` may ask for, each once (a reusable-workflow call has none of its own); with
        `running`, only those of legs that may run (`if: false`, a skipped need ask for nothing)."""
        key = (id(job), running)
        if key in self._runners:
            return self._runners[key]
        text = _written(self.valuation, job)
        if not running and "${{" not in text:
            # Every leg asks for what is written: no leg is built (most jobs' `runs-on` is a literal).
            written = _runners(job, None)
            self._runners[key] = Runners(list(written.choices), written.complete)
            return self._runners[key]
        unexpanded = not running and _MATRIX_OR_ENV.search(text) is None
        legs = self.valuation.entry_legs(job) if unexpanded else self.valuation.legs(job)
        result = Runners(complete=legs.complete)
        seen: set[tuple[tuple[str, Span, tuple[object, ...]], ...]] = set()
        told: set[tuple[object, ...]] = set()
        for leg in legs.legs:
            # Legs that give `runs-on` the same values ask for the same labels (most matrix axes and dispatch inputs
            # are not runners): a group is told once, by its first leg that may run.
            group = leg.telling(text)
            if group in told or (running and self.valuation.runs(leg) is False):
                continue
            told.add(group)
            found = runners(leg)
            result.complete = result.complete and found.complete
            for choice in found.choices:
                identity = tuple((label.value, label.span, label.via) for label in choice.labels)
                if identity not in seen:
                    seen.add(identity)
                    result.choices.append(choice)
        self._runners[key] = result
        return result

    def asks(self, job: Job, label: Label) -> bool:
        """Whether a leg of `job` that may run asks for this label (as written there)."""
        return any(
            (each.value, each.span) == (label.value, label.span)
            for choice in self.runners(job).choices
            for each in choice.labels
        )


def _written(valuation: Valuation, job: Job) -> str:
    """The text of a job's `runs-on` (every scalar of it), or of the runner a call passes."""
    passed = _passed_runner(job)
    if passed is not None:
        return passed.value
    return valuation.written(job.runs_on.node) if job.runs_on is not None else ""


@dataclass(frozen=True)
class LegRunners:
    """The label sets a leg may ask for; `complete` is False where a part of `runs-on` cannot be known."""

    choices: tuple[RunnerChoice, ...]
    complete: bool


def runners(leg: Leg) -> LegRunners:
    """The label sets a leg asks for (told once for the legs of its job that give `runs-on` the same values)."""
    return leg.valuation.remembered(
        leg, ("runners", _written(leg.valuation, leg.job)), None, None, partial(_runners, leg.job, leg)
    )


_RUNNER_INPUTS = frozenset(
    {"runner", "runs-on", "runs_on", "runner-label", "runner_label", "runner-labels", "runner_labels"}
)
"""What a call to a reusable workflow of another repository names the runner it passes (`runner: linux.g5.4xlarge`,
`runs_on: '["h100", "8gpu"]'`): the labels a job of that workflow asks for."""


def _passed_runner(job: Job) -> Scalar | None:
    """The runner a call to another repository's reusable workflow passes, where an input's name says so."""
    if not job.is_call or job.uses is None or job.uses.kind in ("local", "self"):
        return None
    entry = next((entry for name, entry in job.with_.items() if name.lower() in _RUNNER_INPUTS), None)
    return entry.value if entry is not None and isinstance(entry.value, Scalar) else None


def _runners(job: Job, leg: Leg | None) -> LegRunners:
    """The label sets `job` asks for in `leg`; with no leg, those of a `runs-on` that reads no expression."""
    passed = _passed_runner(job)
    if passed is not None:
        found = _item(job, leg, passed)
        return LegRunners(tuple(RunnerChoice(labels) for labels in found or ()), found is not None)
    runs_on = job.runs_on
    if runs_on is None:
        return LegRunners((), True)
    node = runs_on.node
    body = mapping(node)
    labels = body.get("labels") if body is not None else node
    if labels is None:
        return LegRunners((), body is not None)
    items = labels.items if isinstance(labels, Sequence) else [labels]
    complete = True
    alternatives: list[list[tuple[Label, ...]]] = []
    for item in items:
        if not isinstance(item, Scalar) or item.resolved is None:
            complete = False
            continue
        found = _item(job, leg, item)
        if found is None:
            complete = False
            continue
        alternatives.append(found)
    choices: list[RunnerChoice] = []
    for count, combination in enumerate(product(*alternatives) if alternatives else ()):
        if count >= _MAX_CHOICES:
            complete = False
            break
        choices.append(RunnerChoice(tuple(label for labels in combination for label in labels)))
    return LegRunners(tuple(choices), complete)


def _item(job: Job, leg: Leg | None, item: Scalar) -> list[tuple[Label, ...]] | None:
    """The label lists one item of `runs-on` (or a runner a call passes) may be in `leg`; None where it cannot be
    known (an expression, with no leg to evaluate it in)."""
    if "${{" not in item.value:
        listed = _json_labels(item.value)
        if listed is not None:
            written = Binding("", item.value, item.span, node=item, source=job.workflow.source)
            return [tuple(_label(label, item.span, written) for label in listed)]
        return [(Label(item.value, item.span),)]
    if leg is None:
        return None
    read = leg.reads(item.value)
    source = read[0] if len(read) == 1 else None
    found: list[tuple[Label, ...]] = []
    for value in leg.possible(item.value):
        listed = _json_labels(value) if isinstance(value, str) else None
        if listed is not None:
            found.append(tuple(_label(label, item.span, source) for label in listed))
        elif isinstance(value, str):
            found.append((_label(value, item.span, source),))
        elif isinstance(value, Data) and value.items is not None and all(isinstance(v, str) for v in value.items):
            found.append(tuple(_label(str(label), item.span, source) for label in value.items))
        else:
            return None
    return found


def _json_labels(text: str) -> list[str] | None:
    """A JSON list of labels written as a string (`'["h200", "2gpu"]'`), which a call passes for `fromJSON`."""
    if not text.lstrip().startswith("["):
        return None
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, list) and all(isinstance(label, str) for label in parsed) else None


def _label(value: str, span: Span, source: Binding | None) -> Label:
    if source is None:
        return Label(value, span)
    origin = source.shown if source.value != value else ""  # `matrix.gpu` = `h200` says no more than `h200`
    return Label(value, source.place(value) or span, source.via, origin)
