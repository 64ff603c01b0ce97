"""The legs of a job: each way it runs (an event, a call, a matrix combination), with the values it runs with.

A job's workflow is started by each event under its `on:` (a dispatch with
each value of its typed inputs: every `choice` option and both booleans are
`Several` values, tried one by one where an expression reads them), and a
reusable workflow by each leg of each job in this repository that calls it,
with the inputs that call passes (evaluated in the caller's leg, so a caller's
matrix reaches the callee; each read the first time an expression needs it),
the defaults for the rest; a reusable workflow no job here calls gets its
defaults, and UNKNOWN for inputs without one. Each of
these `Entry`s expands the job's matrix (`matrix.expand`, evaluated in the
entry: `${{ fromJSON(inputs.gpus) }}`) into `Leg`s.

A leg evaluates any expression of its job (`Leg.possible`): its `inputs.*`
and `matrix.*` are known, its `env.*` is the workflow's, job's and step's
`env:` evaluated there, `steps.*.outputs.*` are what the step's script writes
to `$GITHUB_OUTPUT` (each value it may write, see `shell.walk`) and
`needs.*.outputs.*` the needed job's `outputs:` evaluated in its legs of the
same entry. Whether a leg runs at all (`Valuation.runs`) is decided by the
`if:` of the job, of the jobs it needs (a job whose needs are all skipped is
skipped, unless its `if:` asks for `always()` or `cancelled()`) and of the
jobs that call its workflow, evaluated for the leg's event, and for a pull
request from a fork or not (`fork`).

Everything is bounded: `MAX_LEGS` legs per job, `MAX_ENTRIES` ways into a
workflow, `MAX_DEPTH` calls deep, and `evaluation.MAX_POSSIBLE` values per
expression; past a bound the legs are marked incomplete.
"""

from __future__ import annotations

import json
import re
from abc import abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TypeVar, cast

from ci_checks.core.diagnostics import Related, Span
from ci_checks.core.source import SourceFile
from ci_checks.model.action import Action
from ci_checks.model.evaluation import (
    UNKNOWN,
    Data,
    Scope,
    Several,
    Text,
    Value,
    as_text,
    from_plain,
    holds,
    possible,
)
from ci_checks.model.expressions import EXPRESSION
from ci_checks.model.steps import ScalarLocator, Step
from ci_checks.model.valuation import matrix as matrices
from ci_checks.model.valuation.shell import Env, Possible, ReadScript, ShellValues, walk
from ci_checks.model.values import Entry as ModelEntry
from ci_checks.model.values import mapping
from ci_checks.model.workflow import Input, Job, Workflow
from ci_checks.syntax.yamlpos import Mapping as YamlMapping
from ci_checks.syntax.yamlpos import Node, Scalar, Sequence

MAX_LEGS = 64
MAX_ENTRIES = 256
"""How many ways into one workflow (events, dispatch choices, callers' legs) are followed."""
MAX_DEPTH = 4
_MAX_SEVERAL = 16
_MAX_PLACES = 256
_STRINGS = re.compile(r"'(?:[^']|'')*'")
_NEEDS_IGNORED = re.compile(r"\b(always|cancelled)\s*\(", re.IGNORECASE)
_PER_LEG = re.compile(r"\b(env|needs|steps|vars|secrets|job|runner|strategy)\s*[.\[]", re.IGNORECASE)
"""Contexts (and shell variables) whose values the leg's bindings do not tell."""
_T = TypeVar("_T")
_READ = re.compile(r"(?<![\w.-])(?P<context>matrix|inputs|env)\.(?P<name>[A-Za-z_][A-Za-z0-9_-]*)", re.IGNORECASE)
_SHELL_VARIABLE = re.compile(r"\$\{?(?P<name>[A-Za-z_][A-Za-z0-9_]*)")


@dataclass(frozen=True)
class Binding:
    """A value a leg gives a name (`matrix.runner`, `inputs.gpu`), and where it is written."""

    name: str
    value: Value | Several
    """Its value; `Several` where a call passes an expression of more than one value (each is tried in turn)."""
    span: Span | None
    via: tuple[Related, ...] = ()
    node: Node | None = None
    """The YAML the value is written as, when it is (a part of it, a label of a list, is placed there)."""
    source: SourceFile | None = None

    @property
    def shown(self) -> str:
        values = self.value.values if isinstance(self.value, Several) else (self.value,)
        return f"`{self.name}` = " + " or ".join(f"`{shown(value)}`" for value in values)

    def place(self, part: str) -> Span | None:
        """Where a part of the value is written: the scalar that is it (an item of a list), or its characters
        inside a scalar (a JSON string); else the value itself."""
        if self.node is None or self.source is None or not part:
            return self.span
        scalars = list(_scalars(self.node))
        for scalar in scalars:
            if scalar.value == part:
                return scalar.span
        quoted = json.dumps(part)
        for scalar in scalars:
            start = scalar.value.find(quoted)
            if start >= 0:
                return ScalarLocator(self.source, scalar).span(start + 1, start + len(quoted) - 1)
        return self.span


def _expressions(node: Node) -> Iterator[str]:
    """The texts of a value's scalars that hold an expression."""
    pending = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, Scalar):
            if "${{" in current.value:
                yield current.value
        elif isinstance(current, Sequence):
            pending.extend(current.items)
        elif isinstance(current, YamlMapping):
            pending.extend(value for _, value in current.items())


def _scalars(node: Node) -> Iterator[Scalar]:
    """The scalars of a value, in document order (a few hundred at most)."""
    pending = [node]
    count = 0
    while pending and count < _MAX_PLACES:
        current = pending.pop(0)
        count += 1
        if isinstance(current, Scalar):
            yield current
        elif isinstance(current, Sequence):
            pending[:0] = current.items
        elif isinstance(current, YamlMapping):
            pending[:0] = [value for _, value in current.items()]


def shown(value: Value) -> str:
    """A value as a reader would write it: a list or object as JSON, an unknown one as `…`."""
    if isinstance(value, Data):
        try:
            return json.dumps(value.plain, separators=(", ", ": "))
        except TypeError:
            return "…"
    text = as_text(value)
    if text is UNKNOWN:
        return "…"
    if isinstance(text, Text):
        return "".join(part if isinstance(part, str) else "${{ " + part.shown + " }}" for part in text.parts)
    return text


@dataclass(frozen=True, eq=False)
class Entry:
    """One way a run reaches a workflow: the event that started the run (None: one not known here, for a reusable
    workflow called from elsewhere), the inputs it gets, and the leg of the job that calls it."""

    workflow: Workflow
    event: str | None
    inputs: Mapping[str, Binding]
    caller: Leg | None = None

    @property
    def top(self) -> Workflow:
        return self.caller.entry.top if self.caller is not None else self.workflow

    @property
    def depth(self) -> int:
        return self.caller.entry.depth + 1 if self.caller is not None else 0


@dataclass
class Legs:
    legs: list[Leg] = field(default_factory=list)
    complete: bool = True


@dataclass(eq=False)
class Leg:
    """One way a job runs: an entry of its workflow and one combination of its matrix."""

    job: Job
    entry: Entry
    matrix: dict[str, Binding]
    valuation: Valuation = field(repr=False)
    _env: dict[int, Mapping[str, Value]] = field(default_factory=dict, repr=False)
    _shell: dict[int, ShellValues] = field(default_factory=dict, repr=False)
    _scopes: dict[tuple[int, bool | None], Scope] = field(default_factory=dict, repr=False)
    _bare: Scope | None = field(default=None, repr=False)
    _telling: dict[str, tuple[object, ...]] = field(default_factory=dict, repr=False)

    @property
    def event(self) -> str | None:
        return self.entry.event

    @property
    def chain(self) -> tuple[Leg, ...]:
        """The legs of the jobs that call this job's workflow, outermost first."""
        caller = self.entry.caller
        return (*caller.chain, caller) if caller is not None else ()

    def scope(self, step: Step | None = None, fork: bool | None = None) -> Scope:
        key = (0 if step is None else id(step), fork)
        if key not in self._scopes:
            instance = "/".join(leg.job.id for leg in self.chain)
            self._scopes[key] = replace(self._bare_scope(), instance=instance, env=self.env(step), fork=fork)
        return self._scopes[key]

    def possible(self, text: str, step: Step | None = None) -> tuple[Value, ...]:
        """Each value a template or expression of the job may have in this leg."""
        if "${{" not in text:
            return (text,)
        return self.valuation.remembered(self, ("possible", text), step, None, lambda: possible(text, self.scope(step)))

    def holds(self, test: str, step: Step | None = None, fork: bool | None = None) -> bool | None:
        return self.valuation.remembered(self, ("holds", test), step, fork, lambda: holds(test, self.scope(step, fork)))

    def telling(self, text: str) -> tuple[object, ...]:
        """What of this leg a text's value depends on, to tell it apart from the other legs of its job: the values of
        the bindings it reads (and the event and run, where it reads `github.*`); the leg itself where it reads what
        bindings do not tell (outputs, `env`, `vars`)."""
        if text not in self._telling:
            if _PER_LEG.search(text):
                self._telling[text] = (id(self),)
            else:
                bindings = (
                    (binding.name, repr(binding.value), binding.span, binding.via) for binding in self.reads(text)
                )
                # `github.*` differs by event and by the workflow the run started; a text that reads none does not
                run = (self.event, self.entry.top.path) if "github" in text.lower() else ()
                self._telling[text] = (*run, *bindings)
        return self._telling[text]

    def env(self, step: Step | None = None) -> Mapping[str, Value]:
        """`env.*` where `step` (None: the job) runs: the workflow's, job's and step's `env:`, each evaluated here
        when first read."""
        key = 0 if step is None else id(step)
        if key not in self._env:
            base = self.env(None) if step is not None else {}
            entries = step.env if step is not None else {**self.job.workflow.env, **self.job.env}
            self._env[key] = _Env(base, entries, replace(self._bare_scope(), env=base))
        return self._env[key]

    def _bare_scope(self) -> Scope:
        """The scope of the leg without `env` (what `env:` values are evaluated in)."""
        if self._bare is None:
            top = self.entry.top
            self._bare = Scope(
                self.event,
                top.name or top.path,
                top.path,
                _Values(self.entry.inputs),
                job=self.job.id,
                matrix={
                    name: binding.value
                    for name, binding in self.matrix.items()
                    if not isinstance(binding.value, Several)
                },
                outputs=self._outputs,
            )
        return self._bare

    def shell(self, step: Step) -> ShellValues | None:
        """The values of the variables at each command of a `run:` step's script, in this leg."""
        if step.script is None:
            return None
        key = id(step)
        if key not in self._shell:
            self._shell[key] = walk(
                step.script, self.shell_env(step), self.expression(step), self.valuation.read_script
            )
        return self._shell[key]

    def shell_env(self, step: Step) -> Env:
        """The variables a step's script starts with: its `env:` and what earlier steps wrote to `$GITHUB_ENV`."""
        env: dict[str, Possible] = {}
        for earlier in self.job.steps:
            if earlier is step:
                break
            if earlier.run is not None and "GITHUB_ENV" in earlier.run.value:
                found = self.shell(earlier)
                for written in found.written if found is not None else ():
                    if written.to_env:
                        env[written.name] = written.values
        for name, value in self.env(step).items():
            env[name] = frozenset({value}) if isinstance(value, str) else None
        return env

    def expression(self, step: Step) -> Callable[[str], Possible]:
        """The values a `${{ }}` in a step's script may have here, as the text GitHub writes into the script."""

        def values(body: str) -> Possible:
            found: set[str] = set()
            for value in possible("${{" + body + "}}", self.scope(step)):
                text = as_text(value)
                if not isinstance(text, str):
                    return None
                found.add(text)
            return frozenset(found)

        return values

    def _outputs(self, path: list[str]) -> Value | Several:
        return self.valuation.outputs(self, path)

    def reads(self, *texts: str, step: Step | None = None) -> list[Binding]:
        """The bindings of this leg that these texts read (`matrix.x`, `inputs.y`, and through `env.z` or `$Z`, the
        ones the `env:` of the job, or of `step`, reads), in the order first read."""
        found: dict[str, Binding] = {}
        for context, name in self.valuation.names(self.job, step, texts):
            binding = (self.matrix if context == "matrix" else self.entry.inputs).get(name)
            if binding is not None:
                found.setdefault(f"{context}.{name}", binding)
        return list(found.values())

    def describe(self, *texts: str, step: Step | None = None) -> str:
        """The values of this leg these texts read, for a message: "`matrix.gpu` = `mi300x`"; "" where none."""
        return ", ".join(binding.shown for binding in self.reads(*texts, step=step))


class _Env(Mapping[str, Value]):
    """`env.*` of a job or step: the outer `env` and these `env:` entries, each evaluated when first read."""

    def __init__(self, base: Mapping[str, Value], entries: Mapping[str, ModelEntry], scope: Scope) -> None:
        self._base, self._entries, self._scope = base, entries, scope
        self._values: dict[str, Value] = {}

    def __getitem__(self, name: str) -> Value:
        if name in self._entries:
            if name not in self._values:
                self._values[name] = _env_value(self._entries[name].text, self._scope)
            return self._values[name]
        return self._base[name]

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self._base, *self._entries]))

    def __len__(self) -> int:
        return len(set(self._base) | set(self._entries))


def _env_value(text: str | None, scope: Scope) -> Value:
    """An `env:` value as the variable's text (GitHub writes `true` for a boolean)."""
    if text is None:
        return UNKNOWN
    if "${{" not in text:
        return text
    values = possible(text, scope)
    if len(values) != 1:
        return UNKNOWN
    written = as_text(values[0])
    return written if isinstance(written, str) else UNKNOWN


class Valuation:
    """The legs of the jobs of a repository's workflows, and what each runs with (built as asked, kept)."""

    def __init__(self, workflows: Iterable[Workflow], read_script: ReadScript | None = None) -> None:
        self.workflows = list(workflows)
        self.read_script = read_script
        self.callers: dict[str, list[Job]] = {}
        for workflow in self.workflows:
            for job in workflow.jobs.values():
                if job.uses is not None and job.uses.kind in ("local", "self"):
                    self.callers.setdefault(job.uses.path, []).append(job)
        self._legs: dict[int, Legs] = {}
        self._entry_legs: dict[int, Legs] = {}
        self._entries: dict[int, tuple[list[Entry], bool]] = {}
        self._building: set[str] = set()
        self._runs: dict[tuple[Leg, bool | None, bool], bool | None] = {}
        self._asking: set[tuple[int, str]] = set()
        self._truncated = False
        """Whether what is being built met a cycle of calls (and is then not kept: it is built again whole)."""
        self._remembered: dict[tuple[object, ...], object] = {}
        self._names: dict[tuple[int, int, tuple[str, ...]], tuple[tuple[str, str], ...]] = {}
        self._written: dict[int, str] = {}
        self._actions: dict[tuple[int, int, int], Leg] = {}

    # -- legs

    def legs(self, job: Job) -> Legs:
        """Every leg of a job (of a reusable workflow call too: the legs of the calling job)."""
        key = id(job)
        if key in self._legs:
            return self._legs[key]
        outer, truncated = not self._building, self._truncated
        self._truncated = False
        result = self._build(job)
        if outer or not self._truncated:  # legs cut short by a cycle of calls are built again from its start
            self._legs[key] = result
        self._truncated = truncated or self._truncated
        return result

    def entry_legs(self, job: Job) -> Legs:
        """A leg of the job for each way a run reaches its workflow, with no matrix: for a text that reads no
        `matrix` (nor `env`, which may), every combination of an entry gives it the same value, and the matrix
        need not be expanded."""
        key = id(job)
        if key not in self._entry_legs:
            entries, complete = self.entries(job.workflow)
            legs = [Leg(job, entry, {}, self) for entry in entries[:MAX_LEGS]]
            self._entry_legs[key] = Legs(legs, complete and len(entries) <= MAX_LEGS)
        return self._entry_legs[key]

    def _build(self, job: Job) -> Legs:
        result = Legs()
        source = job.workflow.source
        entries, complete = self.entries(job.workflow)
        result.complete = complete
        matrix = job.strategy.matrix if job.strategy is not None else None
        written = " ".join(_expressions(matrix)) if matrix is not None else ""
        expanded: dict[tuple[object, ...], list[dict[str, Binding]]] = {}
        for entry in entries:
            bare = Leg(job, entry, {}, self)  # the entry without a matrix: what the matrix is evaluated in
            # Entries that give the matrix's expressions the same values expand it alike (most matrices are literal).
            key = bare.telling(written)
            if key not in expanded:
                expansion = matrices.expand(matrix, partial(_one, bare))
                result.complete = result.complete and expansion.complete
                cells: dict[int, Binding] = {}
                expanded[key] = [
                    {
                        name: cells.get(id(cell))
                        or cells.setdefault(
                            id(cell), Binding(f"matrix.{name}", cell.value, cell.span, node=cell.node, source=source)
                        )
                        for name, cell in combination.items()
                    }
                    for combination in expansion.combinations[:MAX_LEGS]
                ]
            for bindings in expanded[key]:
                if len(result.legs) >= MAX_LEGS:
                    result.complete = False
                    return result
                result.legs.append(Leg(job, entry, bindings, self))
        return result

    def entries(self, workflow: Workflow) -> tuple[list[Entry], bool]:
        """How runs reach a workflow, and whether that is all of them."""
        key = id(workflow)
        if key in self._entries:
            return self._entries[key]
        if workflow.path in self._building:
            self._truncated = True
            return [], False  # a cycle of calls goes no round
        outer, truncated = not self._building, self._truncated
        self._truncated = False
        self._building.add(workflow.path)
        try:
            found, complete = self._entries_of(workflow)
        finally:
            self._building.discard(workflow.path)
        if outer or not self._truncated:
            self._entries[key] = (found, complete)
        self._truncated = truncated or self._truncated
        return found, complete

    def _entries_of(self, workflow: Workflow) -> tuple[list[Entry], bool]:
        found: list[Entry] = []
        complete = True
        for event in workflow.triggers:
            if event == "workflow_call":
                continue
            if event == "workflow_dispatch":
                found.append(Entry(workflow, event, _dispatched(workflow)))
            else:
                found.append(Entry(workflow, event, {}))
        if not workflow.triggers:
            # It never runs, but still says which runners exist (a disabled workflow names them): one entry of no
            # event, which the rules that judge runs pass over.
            found.append(Entry(workflow, None, {}))
        if workflow.workflow_call is None:
            return found, complete
        callers = self.callers.get(workflow.path, [])
        if not callers:
            found.append(Entry(workflow, None, _defaults(workflow)))
            return found, complete
        for caller in callers:
            legs = self.legs(caller)
            complete = complete and legs.complete
            for leg in legs.legs:
                if leg.entry.depth + 1 > MAX_DEPTH:
                    complete = False
                    continue
                if len(found) >= MAX_ENTRIES:
                    return found, False
                found.append(Entry(workflow, leg.event, _Passed(caller, workflow, leg), leg))
        return found, complete

    def written(self, node: Node) -> str:
        """The text of every scalar of a value (kept: the same `runs-on` is read for each leg)."""
        key = id(node)
        if key not in self._written:
            texts: list[str] = []
            pending = [node]
            while pending:
                current = pending.pop()
                if isinstance(current, Scalar):
                    texts.append(current.value)
                elif isinstance(current, Sequence):
                    pending.extend(current.items)
                elif isinstance(current, YamlMapping):
                    pending.extend(value for _, value in current.items())
            self._written[key] = " ".join(texts)
        return self._written[key]

    def names(self, job: Job, step: Step | None, texts: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
        """The `matrix.*` and `inputs.*` names (lower case) texts of a job read, directly or through the `env:` of
        the job (or of `step`) that they read as `env.X` or `$X`, in the order first read (the same for every leg)."""
        key = (id(job), id(step), texts)
        if key in self._names:
            return self._names[key]
        found: dict[tuple[str, str], None] = {}
        pending = list(texts)
        seen_env: set[str] = set()
        env_entries = {**job.workflow.env, **job.env, **(step.env if step is not None else {})}
        while pending:
            text = pending.pop(0)
            for match in _READ.finditer(text):
                context, name = match.group("context").lower(), match.group("name")
                if context != "env":
                    found.setdefault((context, name.lower()))
                elif name not in seen_env and name in env_entries:
                    seen_env.add(name)
                    pending.append(env_entries[name].text or "")
            for match in _SHELL_VARIABLE.finditer(text):
                name = match.group("name")
                if name not in seen_env and name in env_entries:
                    seen_env.add(name)
                    pending.append(env_entries[name].text or "")
        self._names[key] = tuple(found)
        return self._names[key]

    # -- evaluations shared by legs that tell the same

    def remembered(
        self, leg: Leg, question: tuple[str, str], step: Step | None, fork: bool | None, answer: Callable[[], _T]
    ) -> _T:
        """The answer to a question about a text in a leg, asked once for all the legs of its job that give the text
        the same values (most matrix axes and dispatch inputs are read by few texts)."""
        key = (id(leg.job), id(step), fork, *question, *leg.telling(question[1]))
        if key not in self._remembered:
            self._remembered[key] = answer()
        return cast(_T, self._remembered[key])

    # -- composite actions

    def action_leg(self, leg: Leg, step: Step, action: Action) -> Leg:
        """The leg a composite action's steps run in when `step` of `leg` uses it: its `inputs.*` what the step
        passes in `with:` (evaluated in `leg`), the action's defaults for the rest; the job, its `env` and its matrix
        are the calling job's."""
        key = (id(leg), id(step), id(action))
        if key not in self._actions:
            entry = Entry(leg.entry.workflow, leg.event, _Given(step, action, leg), leg)
            self._actions[key] = Leg(leg.job, entry, leg.matrix, self)
        return self._actions[key]

    # -- outputs

    def outputs(self, leg: Leg, path: list[str]) -> Value | Several:
        """`steps.ID.outputs.NAME` and `needs.JOB.outputs.NAME` in a leg."""
        if len(path) != 4 or path[2] != "outputs":
            return UNKNOWN
        key = (id(leg), ".".join(path))
        if key in self._asking:
            return UNKNOWN  # an output that reads itself
        self._asking.add(key)
        try:
            values = self._step_output(leg, path[1], path[3]) if path[0] == "steps" else self._needs(leg, path)
        finally:
            self._asking.discard(key)
        if values is None:
            return UNKNOWN
        unique = list(dict.fromkeys(values))
        if len(unique) == 1:
            return unique[0]
        if not unique or len(unique) > _MAX_SEVERAL:
            return UNKNOWN if unique else None
        return Several(".".join(path), tuple(unique))

    def _step_output(self, leg: Leg, step_id: str, name: str) -> list[Value] | None:
        step = next((each for each in leg.job.steps if (each.id or "").lower() == step_id), None)
        if step is None or step.run is None:
            return None
        text = step.run.value
        if "GITHUB_OUTPUT" not in text or not re.search(rf"(?<![\w-]){re.escape(name)}=", text, re.IGNORECASE):
            return None  # not written where the script can be read: a program it runs may write it
        found = leg.shell(step)
        if found is None:
            return None
        values: list[Value] = []
        for written in found.written:
            if written.to_env or written.name.lower() != name:
                continue
            if written.values is None:
                return None
            values.extend(sorted(written.values))
        return values or None  # a program the script runs may write it

    def _needs(self, leg: Leg, path: list[str]) -> list[Value] | None:
        needed = next((job for key, job in leg.job.workflow.jobs.items() if key.lower() == path[1]), None)
        if needed is None or needed.is_call:
            return None
        entry = next((each for name, each in needed.outputs.items() if name.lower() == path[3]), None)
        if entry is None or entry.text is None:
            return [None]
        values: list[Value] = []
        for other in self.legs(needed).legs:
            if other.entry is leg.entry:
                values.extend(other.possible(entry.text))
        return values if values and UNKNOWN not in values else None

    # -- conditions

    def runs(self, leg: Leg, fork: bool | None = None, approval: bool = False) -> bool | None:
        """Whether a leg runs: True, False (its `if:`, a skipped need or a caller that does not run rules it out) or
        None (it cannot be told). With `fork`, for a pull request from a fork (True) or not (False); with `approval`,
        a job with an `environment:` counts as one that waits for a reviewer, not as one that runs."""
        key = (leg, fork, approval)
        if key in self._runs:
            return self._runs[key]
        self._runs[key] = None  # a cycle of needs decides nothing
        outcomes: list[bool | None] = []
        if leg.entry.caller is not None:
            outcomes.append(self.runs(leg.entry.caller, fork, approval))
        job = leg.job
        if approval and job.environment is not None:
            outcomes.append(False)
        test = job.if_.text if job.if_ is not None else None
        if test is not None:
            outcomes.append(leg.holds(test, fork=fork))
        if test is None or not _NEEDS_IGNORED.search(_STRINGS.sub("''", test)):
            for need in job.needs_ids:
                needed = job.workflow.jobs.get(need)
                if needed is None or needed is job:
                    continue
                outcomes.append(self._any_runs(needed, leg.entry, fork, approval))
                if outcomes[-1] is False:
                    break  # one need that never runs skips the job
        result = False if False in outcomes else True if all(outcome is True for outcome in outcomes) else None
        self._runs[key] = result
        return result

    def _any_runs(self, job: Job, entry: Entry, fork: bool | None, approval: bool) -> bool | None:
        """Whether some leg of `job` in `entry` runs (True at the first that does), none does, or it cannot be told."""
        found: bool | None = False
        for other in self.legs(job).legs:
            if other.entry is entry:
                runs = self.runs(other, fork, approval)
                if runs is True:
                    return True
                if runs is None:
                    found = None
        return None if found is None or not any(other.entry is entry for other in self.legs(job).legs) else False

    def step_runs(self, leg: Leg, step: Step, fork: bool | None = None) -> bool | None:
        """Whether a step of a leg's job runs, by its own `if:` (given that the job runs)."""
        test = step.if_.text if step.if_ is not None else None
        return True if test is None else leg.holds(test, step, fork)


def _one(leg: Leg, text: str) -> Value:
    """An expression of a matrix, evaluated in the leg's entry: its value where it has one."""
    values = leg.possible(text)
    return values[0] if len(values) == 1 else UNKNOWN


def _dispatched(workflow: Workflow) -> dict[str, Binding]:
    """The inputs a dispatch may give: every `choice` option and both booleans (`Several` values, each tried where an
    expression reads it), the default of the others."""
    found: dict[str, Binding] = {}
    for name, item in workflow.workflow_dispatch_inputs.items():
        values = _dispatch_values(name.lower(), item, workflow.source)
        first = values[0]
        if len(values) > 1:
            several = Several(
                first.name, tuple(binding.value for binding in values if not isinstance(binding.value, Several))
            )
            first = Binding(first.name, several, first.span, first.via, first.node, first.source)
        found[name.lower()] = first
    return found


def _dispatch_values(name: str, item: Input, source: SourceFile) -> list[Binding]:
    label = f"inputs.{name}"
    default = item.default
    default_value = _typed(default.value) if default is not None else None
    default_span = default.value.span if default is not None else None
    if item.type == "choice":
        options = _option_nodes(item)
        if options:
            ordered = sorted(options, key=lambda node: node.value != default_value)
            return [Binding(label, option.value, option.span, node=option, source=source) for option in ordered]
    if item.type == "boolean":
        first = default_value is True
        return [
            Binding(label, first, default_span),
            Binding(label, not first, item.key.span),
        ]
    if default is not None:
        value = default_value if item.type == "number" else as_text(default_value)
        return [Binding(label, value, default_span, node=default.value, source=source)]
    return [Binding(label, UNKNOWN if item.required else "", item.key.span)]


def _option_nodes(item: Input) -> list[Scalar]:
    body = mapping(item.node)
    options = body.get("options") if body is not None else None
    return [node for node in options.items if isinstance(node, Scalar)] if isinstance(options, Sequence) else []


def _typed(node: Node) -> Value:
    """A YAML value as GitHub keeps it in `inputs` (booleans and numbers keep their type)."""
    if isinstance(node, Scalar):
        return from_plain(node.resolved)
    return UNKNOWN


def _defaults(workflow: Workflow) -> dict[str, Binding]:
    """The inputs of a reusable workflow no job here calls: its defaults, UNKNOWN for the others."""
    declared = workflow.workflow_call.inputs if workflow.workflow_call is not None else {}
    found = {}
    for name, item in declared.items():
        default = item.default
        if default is not None:
            found[name.lower()] = Binding(
                f"inputs.{name.lower()}",
                _typed(default.value),
                default.value.span,
                node=default.value,
                source=workflow.source,
            )
        else:
            found[name.lower()] = Binding(f"inputs.{name.lower()}", UNKNOWN, item.key.span)
    return found


class _Values(Mapping[str, "Value | Several"]):
    """The values of a leg's inputs, each read from its binding when an expression reads it."""

    def __init__(self, bindings: Mapping[str, Binding]) -> None:
        self._bindings = bindings

    def __getitem__(self, name: str) -> Value | Several:
        return self._bindings[name].value

    def __iter__(self) -> Iterator[str]:
        return iter(self._bindings)

    def __len__(self) -> int:
        return len(self._bindings)


class _Inputs(Mapping[str, Binding]):
    """The declared inputs of a workflow or action as one use gives them: each value evaluated when first read
    (most never are)."""

    def __init__(self, declared: Mapping[str, Input], given: Mapping[str, ModelEntry]) -> None:
        self._declared = {name.lower(): item for name, item in declared.items()}
        self._given = {name.lower(): entry for name, entry in given.items()}
        self._bindings: dict[str, Binding] = {}

    def __getitem__(self, name: str) -> Binding:
        if name not in self._bindings:
            self._bindings[name] = self._binding(name, self._declared[name])
        return self._bindings[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._declared)

    def __len__(self) -> int:
        return len(self._declared)

    @abstractmethod
    def _binding(self, name: str, item: Input) -> Binding:
        """The binding of a declared input: what this use gives it, else its default."""


class _Given(_Inputs):
    """The inputs a step gives a composite action in a leg of its job: each `with:` value evaluated there when first
    read, the action's default for the rest."""

    def __init__(self, step: Step, action: Action, leg: Leg) -> None:
        super().__init__(action.inputs, step.with_)
        self._step, self._action, self._leg = step, action, leg

    def _binding(self, name: str, item: Input) -> Binding:
        label = f"inputs.{name}"
        entry = self._given.get(name)
        if entry is None or not isinstance(entry.value, Scalar):
            default = item.default
            if default is None:
                return Binding(label, "" if entry is None else UNKNOWN, None)
            return Binding(label, as_text(_typed(default.value)), default.value.span, node=default.value,
                           source=self._action.source)  # fmt: skip
        via = (Related(entry.value.span, f"passed as input `{entry.name}` by step '{self._step.label}'"),)
        node = entry.value
        if "${{" not in node.value:
            return Binding(label, node.value, node.span, via, node, self._step.source)
        values = [as_text(value) for value in self._leg.possible(node.value, self._step)]
        known = tuple(value if isinstance(value, str) else UNKNOWN for value in values)
        if len(known) == 1:
            return Binding(label, known[0], node.span, via)
        return Binding(label, Several(label, known[:_MAX_SEVERAL]), node.span, via)


class _Passed(_Inputs):
    """The inputs one call passes in a leg of the calling job, each evaluated there the first time it is read (most
    never are), and the defaults of what it does not pass; a value that may be several is `Several`."""

    def __init__(self, caller: Job, callee: Workflow, leg: Leg) -> None:
        super().__init__(callee.workflow_call.inputs if callee.workflow_call is not None else {}, caller.with_)
        self._caller, self._callee, self._leg = caller, callee, leg

    def _binding(self, name: str, item: Input) -> Binding:
        label = f"inputs.{name}"
        entry = self._given.get(name)
        if entry is None:
            default = item.default
            if default is None:
                return Binding(label, None, None)
            return Binding(
                label, _typed(default.value), default.value.span, node=default.value, source=self._callee.source
            )
        caller, leg = self._caller, self._leg
        via = (Related(entry.value.span, f"passed as input `{entry.name}` by job '{caller.id}'"),)
        node = entry.value if isinstance(entry.value, Scalar) else None
        if node is None:
            value = matrices.node_value(entry.value, partial(_one, leg))
            return Binding(label, value, entry.value.span, via, entry.value, caller.workflow.source)
        if "${{" not in node.value:
            return Binding(label, _typed(node), node.span, via, node, caller.workflow.source)
        values = leg.possible(node.value)
        read = leg.reads(node.value)
        inner = read[0] if len(read) == 1 and EXPRESSION.fullmatch(node.value.strip()) else None
        if inner is not None and len(values) == 1 and inner.value == values[0]:
            return Binding(label, values[0], inner.span, (*via, *inner.via), inner.node, inner.source)
        if len(values) == 1:
            return Binding(label, values[0], node.span, via)
        return Binding(label, Several(label, values[:_MAX_SEVERAL]), node.span, via)
