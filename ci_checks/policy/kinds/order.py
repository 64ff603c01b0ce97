"""`order`: in every scope `where` selects, the first occurrence of each item comes after the item before it's.

A whole workflow is checked job by job, since steps have an order only within
a job. With `across: jobs`, the items are ordered across the jobs of each
workflow by the `needs:` graph: an item in job B comes after one in job A when
B needs A (transitively), or when both are in one job and B's is written
later; items in jobs that `needs:` does not order are a finding that says so.
A missing item is a finding unless the rule says `missing: ignore`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ci_checks.core.diagnostics import Diagnostic, Related, Severity
from ci_checks.model import Job
from ci_checks.policy import shapes
from ci_checks.policy.model import Hit, Item, PolicyRule, RuleContext, RuleKind, Scope, Where
from ci_checks.policy.scopes import job_scope, job_scopes
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus

RULE_DOCS = """\
Things happen in the wrong order, as a policy `order` rule defines it.

## What it does
For a rule of kind `order` in the policy file, looks in every scope its
`where` selects (a job, a step, or the then-branch of an `if` in a step's
script) and checks that the first occurrence of each listed item comes after
the first occurrence of the item before it. Items are shell commands, steps,
text, regular expressions, Python facts, `with`/`env` pairs or `key:` nodes.
A whole workflow is checked job by job, since steps only have an order within
a job; with `across: jobs`, items are ordered across jobs by the `needs:`
graph, and items in jobs that `needs:` does not order are reported as such. An
item missing from a scope is reported too, unless the rule says `missing:
ignore`.

## Why it matters
The order of steps and commands is where real CI bugs hide: installing a tree
before checking out the ref that should be installed, applying a patch before
the fetch it patches. String-splitting tests (`text.index(a) < text.index(b)`)
break when the file is re-indented and never see a command moved into another
branch; this rule compares positions in the parsed command tree.

## Example
```yaml
# .github/ci-checks.yml
rules:
  - id: megatron-override-order
    kind: order
    where: {workflow: .github/workflows/_run-ci-rocm.yml, step: Install Megatron, branch: '[ -n "$MEGATRON_PR" ]'}
    order:
      - command: git checkout -f FETCH_HEAD
      - command: pip install -e .
```
reports a branch that runs `pip install -e .` before `git checkout -f FETCH_HEAD`.

## Fix
Move the later item below the earlier one, or, if the order really is
intended, change the rule or add `# ci-checks: ignore[rule-id] reason` on the
line.
"""

RULE = Rule(
    "CC100",
    "policy-order",
    "A policy `order` rule is broken",
    Severity.ERROR,
    RULE_DOCS,
    frozenset(),
    None,
    group=RuleGroup.POLICY,
    status=RuleStatus.STABLE,
    since="0.1.0",
)


@dataclass(frozen=True)
class OrderSpec:
    report_missing: bool
    across_jobs: bool


def _compile(raw: Mapping[str, Any], context: RuleContext) -> OrderSpec:
    across = raw.get("across") == "jobs"
    written = raw.get("where", {})
    wheres = list(enumerate(written)) if isinstance(written, list) else [(None, written)]
    if across:
        for index, where in wheres:
            for key in ("step", "branch", "trigger", "files"):
                if key in where:
                    parts = ("where", key) if index is None else ("where", index, key)
                    raise context.place.error(
                        f"`across: jobs` orders the jobs of workflows; its `where` cannot have `{key}:`", *parts
                    )
    return OrderSpec(raw.get("missing") != "ignore", across)


def _item_shapes(spec: OrderSpec, where: Where) -> tuple[shapes.Shape, ...]:
    """Items are looked for job by job in a whole workflow: their PATHs are relative to a job there."""
    whole = not (where.jobs or where.step or where.branch or where.triggers)
    if spec.across_jobs or (whole and not where.actions):
        return (shapes.JOB,) if spec.across_jobs or where.workflows else (shapes.JOB, shapes.ACTION)
    return where.shapes


def _first(item: Item, scope: Scope) -> Hit | None:
    return next((hit for hit in item.find(scope) if hit.satisfied), None)


def _check(rule: PolicyRule, scope: Scope) -> Iterator[Diagnostic]:
    spec: OrderSpec = rule.spec
    if spec.across_jobs:
        yield from _across_jobs(rule, scope, spec)
        return
    for part in job_scopes(scope):
        previous: tuple[Item, Hit] | None = None
        for item in rule.items:
            first = _first(item, part)
            if first is None:
                if spec.report_missing:
                    yield rule.finding(part.anchor, f"{item.description} is missing from {part.label}")
                continue
            if previous is not None:
                before, earlier = previous
                if (first.span.line, first.span.column) < (earlier.span.line, earlier.span.column):
                    detail = f"{item.description} comes before {before.description} in {part.label}"
                    related = (Related(earlier.span, f"{before.description} is first written here"),)
                    yield rule.finding(first.span, detail, related)
            previous = (item, first)


def _across_jobs(rule: PolicyRule, scope: Scope, spec: OrderSpec) -> Iterator[Diagnostic]:
    file = scope.file
    if file is None or file.workflow is None:
        return
    jobs = scope.jobs
    found: list[dict[str, Hit]] = []
    for item in rule.items:
        per_job = {}
        for job in jobs:
            hit = _first(item, job_scope(file, job))
            if hit is not None:
                per_job[job.id] = hit
        found.append(per_job)
        if not per_job and spec.report_missing:
            yield rule.finding(scope.anchor, f"{item.description} is missing from {scope.label}")
    by_id = {job.id: job for job in file.workflow.jobs.values()}
    for index in range(1, len(rule.items)):
        before, after = rule.items[index - 1], rule.items[index]
        earlier, later = found[index - 1], found[index]
        if not earlier:
            continue
        for job_id, hit in later.items():
            yield from _placed(rule, by_id, before, earlier, after, job_id, hit)


def _placed(
    rule: PolicyRule,
    jobs: dict[str, Job],
    before: Item,
    earlier: dict[str, Hit],
    after: Item,
    job_id: str,
    hit: Hit,
) -> Iterator[Diagnostic]:
    job = jobs[job_id]
    needed = job.transitive_needs()
    if job_id in earlier and (earlier[job_id].span.line, earlier[job_id].span.column) <= (
        hit.span.line,
        hit.span.column,
    ):
        return  # written later in the job, or one command that satisfies both items, as `_check` has it
    if any(other in needed for other in earlier):
        return
    if job_id in earlier:
        written = Related(earlier[job_id].span, f"{before.description} is first written here")
        yield rule.finding(
            hit.span, f"{after.description} comes before {before.description} in job {job_id!r}", (written,)
        )
        return
    first_id, first = next(iter(earlier.items()))
    related = (Related(first.span, f"{before.description}, in job {first_id!r}, is first written here"),)
    after_it = [other for other in earlier if job_id in jobs[other].transitive_needs()]
    if after_it:
        detail = (
            f"{after.description} in job {job_id!r} runs before {before.description} "
            f"in job {after_it[0]!r}, which needs it"
        )
        related = (Related(earlier[after_it[0]].span, f"{before.description} is written here"),)
    else:
        names = ", ".join(repr(other) for other in earlier)
        detail = (
            f"{after.description} in job {job_id!r} is not ordered after {before.description} in job {names}: "
            f"`needs:` does not make one wait for the other"
        )
    yield rule.finding(hit.span, detail, related)


def _by_workflow(rule: PolicyRule, scopes: list[Scope]) -> list[Scope]:
    """For `across: jobs`, the selected jobs of each workflow as one scope."""
    spec: OrderSpec = rule.spec
    if not spec.across_jobs:
        return scopes
    merged: dict[str, Scope] = {}
    for scope in scopes:
        if scope.file is None or scope.whole_file:
            merged.setdefault(scope.path or "", scope)
            continue
        whole = merged.setdefault(scope.file.path, Scope(scope.file, scope.file.path, scope.anchor, jobs=[]))
        whole.jobs.extend(job for job in scope.jobs if job not in whole.jobs)
    return list(merged.values())


KIND = RuleKind(
    "order",
    RULE,
    {
        "order": {"description": "Items in the order they must come.", "type": "array", "minItems": 2},
        "missing": {
            "description": "What an absent item is: a finding (report, the default) or nothing (ignore).",
            "enum": ["report", "ignore"],
        },
        "across": {
            "description": "jobs: order the items across the jobs of a workflow by their `needs:`.",
            "enum": ["jobs"],
        },
    },
    ("where", "order"),
    _compile,
    __doc__ or "",
    items="order",
    min_items=2,
    check_scope=_check,
    item_shapes=_item_shapes,
    merge_scopes=_by_workflow,
)
