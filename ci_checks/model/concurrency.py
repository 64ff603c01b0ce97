"""The concurrency groups a run asks for, and which events start runs of two workflows at once.

An event starts a run of every workflow that triggers on it. The run asks for
the workflow's `concurrency.group` and, as its jobs start, for each job's;
a job that calls a reusable workflow brings that workflow's groups into the
same run, computed there with the caller's event, the caller's
`github.workflow` and `github.run_id`, and the inputs the call passes. `Run`
lists these `Holder`s with the group each computes (`evaluation`), as far as
it can be told without running anything.

`co_occurring` says which events of two workflows fire together: the same
event with overlapping filters (activity types, literal branch lists, tags
against branches, the same cron), and `pull_request` beside
`pull_request_target`, which the same pull request starts.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from functools import cached_property

from ci_checks.core.diagnostics import Span
from ci_checks.model.evaluation import Scope, Value, called, evaluate, holds, truthy
from ci_checks.model.values import mapping, string_list
from ci_checks.model.workflow import Job, Trigger, Workflow
from ci_checks.syntax.yamlpos import Mapping, Node, Scalar, Sequence

_MAX_DEPTH = 4
_NEVER_SHARED = frozenset({"workflow_dispatch", "workflow_call"})
"""Events that start one workflow only: a dispatch names its workflow, a call is part of its caller's run."""
_DEFAULT_TYPES = {
    "pull_request": frozenset({"opened", "synchronize", "reopened"}),
    "pull_request_target": frozenset({"opened", "synchronize", "reopened"}),
}
_TOGETHER = (("pull_request", "pull_request_target"), ("pull_request_target", "pull_request"))


@dataclass(frozen=True, eq=False)
class Holder:
    """One `concurrency:` of a run, and the group it computes there."""

    workflow: Workflow
    """The workflow whose file holds it."""
    job: Job | None
    """The job it belongs to; None for the workflow's own."""
    group: Value
    group_node: Node
    cancels: bool | None
    """Whether `cancel-in-progress` is on (None: an expression that cannot be told)."""
    calls: tuple[Job, ...]
    """The calling jobs from the run's workflow down to `workflow`."""

    @property
    def span(self) -> Span:
        return self.group_node.span

    @property
    def scope(self) -> tuple[Job, ...]:
        """The jobs of the run it stands for: a workflow's group holds for everything under its caller, a job's
        for that job (and what it calls)."""
        return self.calls if self.job is None else (*self.calls, self.job)

    def holds(self, other: Holder) -> bool:
        """Whether `other` is asked for inside what this one holds: a reusable workflow's or a job's group under
        its workflow's or its calling job's."""
        mine, theirs = self.scope, other.scope
        if theirs[: len(mine)] != mine:
            return False
        return (len(theirs), other.job is None) > (len(mine), self.job is None)

    def __repr__(self) -> str:
        return f"Holder({self.span.path}:{self.span.line}, {self.group!r})"


@dataclass(frozen=True, eq=False)
class Run:
    """What one event starts in one workflow: its groups, its reusable workflows' included."""

    workflow: Workflow
    event: str
    asking: dict[str, Workflow]
    """The workflows by path that ask for a group, themselves or through the workflows they call."""

    @cached_property
    def holders(self) -> list[Holder]:
        if self.workflow.path not in self.asking:
            return []
        name = self.workflow.name or self.workflow.path
        inputs: dict[str, Value] | None = None if self.event == "workflow_dispatch" else {}
        return list(_holders(self.workflow, Scope(self.event, name, self.workflow.path, inputs), (), self.asking))


def runs(workflows: Iterable[Workflow]) -> dict[tuple[str, str], Run]:
    """A run of each workflow for each event it triggers on (a reusable workflow's call is its caller's run)."""
    listed = list(workflows)
    asking = _asking({workflow.path: workflow for workflow in listed})
    return {
        (workflow.path, event): Run(workflow, event, asking)
        for workflow in listed
        for event in workflow.triggers
        if event != "workflow_call"
    }


def _asking(by_path: dict[str, Workflow]) -> dict[str, Workflow]:
    """The workflows that have a `concurrency:` or call one that does, by path (most have none)."""
    asking = {
        path: workflow
        for path, workflow in by_path.items()
        if workflow.concurrency is not None or any(job.concurrency is not None for job in workflow.jobs.values())
    }
    grown = True
    while grown:
        grown = False
        for path, workflow in by_path.items():
            if path not in asking and any(_callee(job, asking) is not None for job in workflow.jobs.values()):
                asking[path] = workflow
                grown = True
    return asking


def _callee(job: Job, by_path: dict[str, Workflow]) -> Workflow | None:
    return by_path.get(job.uses.path) if job.uses is not None and job.uses.kind == "local" else None


def co_occurring(first: Workflow, second: Workflow) -> Iterator[tuple[str, str]]:
    """The pairs of events, one of each workflow, that one happening starts together."""
    for event, trigger in first.triggers.items():
        if event in _NEVER_SHARED:
            continue
        other = second.triggers.get(event)
        if other is not None and _overlap(trigger, other):
            yield event, event
    for one, two in _TOGETHER:
        mine, theirs = first.triggers.get(one), second.triggers.get(two)
        if mine is not None and theirs is not None and _types_overlap(mine, theirs):
            yield one, two


def _holders(
    workflow: Workflow, scope: Scope, calls: tuple[Job, ...], by_path: dict[str, Workflow]
) -> Iterator[Holder]:
    if workflow.concurrency is not None:
        yield from _holder(workflow, None, workflow.concurrency, scope, calls)
    for job in workflow.jobs.values():
        callee = _callee(job, by_path)
        if callee is not None and (callee.workflow_call is None or len(calls) >= _MAX_DEPTH or job in calls):
            callee = None
        if job.concurrency is None and callee is None:
            continue  # nothing of it asks for a group
        job_scope = replace(scope, job=job.id)
        test = job.if_.text if job.if_ is not None else None
        if test is not None and holds(test, job_scope) is False:
            continue  # the job does not run for this event
        if job.concurrency is not None:
            yield from _holder(workflow, job, job.concurrency, job_scope, calls)
        if callee is not None:
            yield from _holders(callee, called(job, callee, scope), (*calls, job), by_path)


def _holder(workflow: Workflow, job: Job | None, node: Node, scope: Scope, calls: tuple[Job, ...]) -> Iterator[Holder]:
    """The holder a `concurrency:` value makes: `group` alone, or `{group, cancel-in-progress}`."""
    body = mapping(node)
    group = body.get("group") if body is not None else node
    if not isinstance(group, Scalar) or group.resolved is None:
        return
    cancel = body.get("cancel-in-progress") if body is not None else None
    cancels: bool | None = False
    if isinstance(cancel, Scalar):
        cancels = cancel.resolved if isinstance(cancel.resolved, bool) else truthy(evaluate(cancel.value, scope))
    yield Holder(workflow, job, evaluate(group.value, scope), group, cancels, calls)


def _overlap(first: Trigger, second: Trigger) -> bool:
    if first.event == "schedule":
        return bool(_crons(first) & _crons(second))
    if not _types_overlap(first, second):
        return False
    if first.event == "push" and {_refs(first), _refs(second)} == {"tags", "branches"}:
        return False  # one runs for tags only, the other for branches only
    for key in ("branches", "workflows"):
        mine, theirs = _literal_list(first, key), _literal_list(second, key)
        if mine is not None and theirs is not None and not mine & theirs:
            return False
    return True


def _types_overlap(first: Trigger, second: Trigger) -> bool:
    mine, theirs = _types(first), _types(second)
    return mine is None or theirs is None or bool(mine & theirs)


def _types(trigger: Trigger) -> frozenset[str] | None:
    listed = string_list(trigger.config.get("types")) if trigger.config is not None else []
    if listed:
        return frozenset(item.value for item in listed)
    return _DEFAULT_TYPES.get(trigger.event)


def _refs(trigger: Trigger) -> str:
    """What a `push` filter lets through: `tags`, `branches` or `both`."""
    config = trigger.config
    tags = config is not None and any(name in config.index for name in ("tags", "tags-ignore"))
    branches = config is not None and any(name in config.index for name in ("branches", "branches-ignore"))
    return "tags" if tags and not branches else "branches" if branches and not tags else "both"


def _literal_list(trigger: Trigger, key: str) -> frozenset[str] | None:
    """A filter list of plain names (no glob characters), or None."""
    items = string_list(trigger.config.get(key)) if trigger.config is not None else []
    if not items or any(any(char in item.value for char in "*?[]!+") for item in items):
        return None
    return frozenset(item.value for item in items)


def _crons(trigger: Trigger) -> set[str]:
    node = trigger.node
    entries = node.items if isinstance(node, Sequence) else []
    found = set()
    for entry in entries:
        cron = entry.get("cron") if isinstance(entry, Mapping) else None
        if isinstance(cron, Scalar):
            found.add(" ".join(cron.value.split()))
    return found
