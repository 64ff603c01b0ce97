"""Two runs that start together ask for the same concurrency group: one cancels the other, or waits for itself.

## What it does
Computes the `concurrency.group` of every workflow and job, as far as it can
be told without running anything: `${{ github.workflow }}` is the workflow's
name (in a reusable workflow, its caller's), `${{ github.run_id }}` is one
run's (shared by a caller and the workflows it calls), `${{ github.ref }}`,
`${{ github.event.pull_request.number }}` or `${{ github.head_ref }}` are the
same for every run the same event starts, `a || b` takes `b` where `a` is
empty for that event, and `inputs.*` in a reusable workflow are what the
call passes. Groups compare without case, as GitHub compares them. It reports:

- two workflows that run for the same event (same activity types, branches
  that can meet, the same cron; `pull_request` beside `pull_request_target`)
  and ask for the same group, where either cancels in progress: the one that
  starts second cancels the other;
- in one run, a reusable workflow or a job that asks for a group its caller
  or its own workflow already holds: GitHub cancels it as a deadlock;
- in one run, two jobs that run side by side (neither `needs` the other) and
  ask for the same group, directly or through the reusable workflows they
  call, where either cancels in progress.

A group that depends on what cannot be known here (a matrix value, a step
output, a function of the files) is never reported; neither is a group a
workflow shares with its own earlier runs, which is what `concurrency` is for.
Workflows with no `on:` never run and are not judged.

## Why it matters
A CUDA and a ROCm workflow that both name their group after the pull
request cancel each other on every push: only one platform is ever tested,
and which one is a race. A reusable workflow that takes its caller's group
(`${{ github.workflow }}` is the caller's name there) is cancelled the
moment it starts.

## Example
```yaml
# .github/workflows/cuda.yml                 # .github/workflows/rocm.yml
on: pull_request                               on: pull_request
concurrency:                                   concurrency:
  group: ci-${{ github.ref }}                    group: ci-${{ github.ref }}
  cancel-in-progress: true                       cancel-in-progress: true
```

## Fix
Put something of the workflow's own into the group: a literal prefix
(`cuda-${{ github.ref }}`, `rocm-${{ github.ref }}`), or `${{ github.workflow }}`
in a workflow that is never called. A reusable workflow usually needs no
group of its own: its caller's covers it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import combinations, product

from ci_checks.core.diagnostics import Diagnostic, Related, Severity, Span
from ci_checks.core.repository import FileKind
from ci_checks.model.concurrency import Holder, co_occurring, runs
from ci_checks.model.evaluation import same_text, written
from ci_checks.rules.context import RepositoryContext
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus


@dataclass
class _Clash:
    """Two places that compute the same group, and where their runs meet."""

    first: Holder
    second: Holder
    held: tuple[Holder, Holder] | None = None
    """(outer, inner) when one is asked for inside what the other holds."""
    runs: list[str] = field(default_factory=list)
    """The runs in which they are asked for side by side."""
    workflows: tuple[str, str] | None = None
    events: list[str] = field(default_factory=list)
    """The events for which the two workflows run at once."""
    groups: dict[str, str] = field(default_factory=dict)
    """The group as computed where they meet first: in a run of both (`run`), in runs of each (`across`)."""


def check_repository(context: RepositoryContext) -> Iterator[Diagnostic]:
    workflows = [workflow for workflow in context.workflows if workflow.triggers]
    started = runs(workflows)
    clashes: dict[frozenset[Span], _Clash] = {}
    for run in started.values():
        for first, second in combinations(run.holders, 2):
            if not same_text(first.group, second.group):
                continue
            if first.holds(second):  # a run's holders come as they are entered: one that holds another comes first
                clash = clashes.setdefault(frozenset({first.span, second.span}), _Clash(first, second))
                clash.held = (first, second)
                clash.groups.setdefault("run", written(first.group))
            elif _side_by_side(first, second):
                clash = clashes.setdefault(frozenset({first.span, second.span}), _Clash(first, second))
                _add(clash.runs, f"`{run.workflow.path}` (`{run.event}`)")
                clash.groups.setdefault("run", written(first.group))
    for one, other in combinations(workflows, 2):
        for event, other_event in co_occurring(one, other):
            mine, theirs = started[(one.path, event)].holders, started[(other.path, other_event)].holders
            for first, second in product(mine, theirs):
                if same_text(first.group, second.group) and _may_cancel(first, second):
                    clash = clashes.setdefault(frozenset({first.span, second.span}), _Clash(first, second))
                    clash.workflows = clash.workflows or (one.path, other.path)
                    clash.groups.setdefault("across", written(first.group))
                    _add(clash.events, f"`{event}`" if event == other_event else f"`{event}` beside `{other_event}`")
    for clash in clashes.values():
        yield _diagnostic(clash)


def _add(listed: list[str], item: str) -> None:
    if item not in listed:
        listed.append(item)


def _may_cancel(first: Holder, second: Holder) -> bool:
    return first.cancels is not False or second.cancels is not False


def _side_by_side(first: Holder, second: Holder) -> bool:
    """Whether two groups of one run, neither held inside the other, are asked for at once where one cancels: in
    jobs neither of which `needs` the other. Their scopes part at some job: a scope that starts another holds it."""
    if not _may_cancel(first, second):
        return False
    ours, theirs = first.scope, second.scope
    index = next(i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a is not b)
    mine, other = ours[index], theirs[index]
    return mine.id not in other.transitive_needs() and other.id not in mine.transitive_needs()


def _diagnostic(clash: _Clash) -> Diagnostic:
    group = clash.groups.get("run", "")
    if clash.held is not None:
        outer, inner = clash.held
        holder = "its caller's run" if inner.calls != outer.calls else "its own workflow's run"
        message = (
            f"{_place(inner)} asks for the concurrency group `{group}`, which {holder} already holds "
            f"({_place(outer)}): GitHub cancels it as a deadlock"
        )
        return RULE.diagnostic(inner.span, message, [Related(outer.span, f"`{group}` held here"), *_calls(inner)])
    first, second = clash.first, clash.second
    runs = f"in one run of {_listed(clash.runs)}" if clash.runs else ""
    if clash.workflows is not None:
        one, other = clash.workflows
        group = clash.groups["across"]
        message = (
            f"`{one}` and `{other}` both run for {_listed(clash.events)} and ask for the same concurrency group, "
            f"`{group}`, with `cancel-in-progress`: the run that starts second cancels the other"
        )
        message += f"; so do they, side by side, {runs} (as `{clash.groups['run']}`)" if runs else ""
    else:
        message = (
            f"{_place(first)} and {_place(second)} run side by side {runs} and ask for the same concurrency group, "
            f"`{group}`, with `cancel-in-progress`: one cancels the other"
        )
    related = [Related(first.span, f"`{group}` asked for here")] if first.span != second.span else []
    return RULE.diagnostic(second.span, message, [*related, *_calls(first), *_calls(second)])


def _listed(items: list[str]) -> str:
    return ", ".join(items[:-1]) + (" and " if len(items) > 1 else "") + items[-1]


def _place(holder: Holder) -> str:
    where = f"`{holder.workflow.path}`" if holder.job is None else f"job '{holder.job.id}' of `{holder.workflow.path}`"
    return where if not holder.calls else f"{where} (called by job '{holder.calls[-1].id}')"


def _calls(holder: Holder) -> list[Related]:
    return [
        Related(call.key.span, f"job '{call.id}' calls `{call.uses_node.value}`")
        for call in holder.calls
        if call.uses_node
    ]


RULE = Rule(
    "CC049",
    "concurrency-collision",
    "Two runs that start together ask for the same concurrency group: one cancels the other, or waits for itself",
    Severity.ERROR,
    __doc__,
    frozenset({FileKind.WORKFLOW}),
    None,
    check_repository,
    group=RuleGroup.WORKFLOW,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
