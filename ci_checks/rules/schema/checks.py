"""What GitHub checks beyond any schema: identifiers, `needs`, cron expressions, background step targets.

The checks report on the positioned YAML directly.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ci_checks.core.diagnostics import Related
from ci_checks.rules.schema.messages import SchemaError
from ci_checks.rules.schema.overrides import workflow
from ci_checks.syntax.yamlpos import Mapping, Node, Scalar, Sequence


@dataclass(frozen=True)
class Check:
    name: str
    shape: str
    """A workflow GitHub rejects for this reason alone."""
    run: Callable[[Mapping], Iterator[SchemaError]]


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")
_MAX_IDENTIFIER = 100


def _identifier_problem(value: str, what: str) -> str | None:
    if not _IDENTIFIER.match(value) or len(value) >= _MAX_IDENTIFIER:
        return (
            f"{what} {value!r} is not a valid identifier: it must start with a letter or `_`, "
            f"hold only letters, digits, `-` and `_`, and be shorter than {_MAX_IDENTIFIER} characters"
        )
    return None


def _jobs(root: Mapping) -> list[tuple[Scalar, Mapping]]:
    jobs = root.get("jobs")
    if not isinstance(jobs, Mapping):
        return []
    return [(key, value) for key, value in jobs.items() if isinstance(value, Mapping)]


def _job_ids(root: Mapping) -> Iterator[SchemaError]:
    jobs, key = root.get("jobs"), root.key_node("jobs")
    if isinstance(jobs, Mapping) and not jobs.index:
        yield SchemaError("a workflow needs at least one job", key.span if key is not None else jobs.span)
    for key, _ in jobs.items() if isinstance(jobs, Mapping) else ():
        problem = _identifier_problem(key.value, "job id")
        if problem is not None:
            yield SchemaError(problem, key.span)


def _step_ids(root: Mapping) -> Iterator[SchemaError]:
    for _, job in _jobs(root):
        steps = job.get("steps")
        seen: dict[str, Scalar] = {}
        for step in steps.items if isinstance(steps, Sequence) else ():
            node = step.get("id") if isinstance(step, Mapping) else None
            if not isinstance(node, Scalar) or node.resolved is None or "${{" in node.value:
                continue
            problem = _identifier_problem(node.value, "step id")
            if problem is None and node.value.startswith("__"):
                problem = f"step id {node.value!r} is reserved: ids starting with `__` are GitHub's"
            if problem is None and node.value in seen:
                message = f"step id {node.value!r} is already used by an earlier step of this job"
                yield SchemaError(message, node.span, (Related(seen[node.value].span, "first used here"),))
            seen.setdefault(node.value, node)
            if problem is not None:
                yield SchemaError(problem, node.span)


def _background_targets(root: Mapping) -> Iterator[SchemaError]:
    for _, job in _jobs(root):
        yield from _targets(job.get("steps"))


def _targets(steps: Node | None) -> Iterator[SchemaError]:
    """`wait` and `cancel` name steps of the same list (a job's, or a `parallel` group's) that come before them."""
    known: list[str] = []
    for step in steps.items if isinstance(steps, Sequence) else ():
        if not isinstance(step, Mapping):
            continue
        own = step.get("id")
        own_id = own.value if isinstance(own, Scalar) and own.resolved is not None else None
        for kind in ("wait", "cancel"):
            node = step.get(kind)
            for target in node.items if isinstance(node, Sequence) else [node] if node is not None else []:
                if not isinstance(target, Scalar) or target.resolved is None or "${{" in target.value:
                    continue
                if own_id is not None and target.value.lower() == own_id.lower():
                    yield SchemaError(f"step {own_id!r} cannot {kind} for itself", target.span)
                elif target.value not in known:
                    listed = ", ".join(known) or "none"
                    message = f"`{kind}: {target.value}` names no earlier step of this list (ids before it: {listed})"
                    yield SchemaError(message, target.span)
        yield from _targets(step.get("parallel"))
        if own_id is not None:
            known.append(own_id)


def _needs(root: Mapping) -> Iterator[SchemaError]:
    jobs = _jobs(root)
    needs: dict[str, list[Scalar]] = {}
    for key, job in jobs:
        node = job.get("needs")
        items = node.items if isinstance(node, Sequence) else [node] if node is not None else []
        needs[key.value] = [item for item in items if isinstance(item, Scalar) and item.resolved is not None]
    for key, _ in jobs:
        for need in needs[key.value]:
            if need.value not in needs:
                close = difflib.get_close_matches(need.value, list(needs), n=1, cutoff=0.6)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                yield SchemaError(
                    f"job {key.value!r} needs {need.value!r}, which is not a job of this workflow{hint}", need.span
                )
    yield from _cycles(jobs, needs)


def _cycles(jobs: list[tuple[Scalar, Mapping]], needs: dict[str, list[Scalar]]) -> Iterator[SchemaError]:
    if jobs and all(needs[key.value] for key, _ in jobs):
        yield SchemaError(
            "every job needs another one, so none can start: one job must have no `needs`", jobs[0][0].span
        )
        return
    state: dict[str, int] = {}  # 1 while its needs are being followed, 2 once done

    def visit(job: str) -> Iterator[SchemaError]:
        state[job] = 1
        for need in needs.get(job, []):
            if state.get(need.value) == 1:
                yield SchemaError(f"job {job!r} needs {need.value!r}, which needs it in turn: a cycle", need.span)
            elif need.value in needs and need.value not in state:
                yield from visit(need.value)
        state[job] = 2

    for key, _ in jobs:
        if key.value not in state:
            yield from visit(key.value)


_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_CRON_FIELDS: tuple[tuple[str, int, int, dict[str, int]], ...] = (
    ("minute", 0, 59, {}),
    ("hour", 0, 23, {}),
    ("day of month", 1, 31, {}),
    ("month", 1, 12, {name: n + 1 for n, name in enumerate(_MONTHS)}),
    ("day of week", 0, 6, {name: n for n, name in enumerate(_DAYS)}),
)


def _cron_part(value: str, low: int, high: int, names: dict[str, int], separators: bool = True) -> bool:
    """GitHub's reading of one cron field: `*`, numbers or names, `a-b`, `x/step` and `,` lists."""
    if value.lower() in names or value == "*":
        return True
    if "," in value:
        return separators and all(part and _cron_part(part, low, high, names) for part in value.split(","))
    if "/" in value:
        start, _, step = value.partition("/")
        return (
            separators
            and bool(start)
            and step.isdigit()
            and int(step) > 0
            and "/" not in step
            and _cron_part(start, low, high, names)
            and _cron_part(step, low, high, names, separators=False)
        )
    if "-" in value:
        start, _, end = value.partition("-")
        if not separators:  # an empty end, or a second `-`, fails as a plain value below
            return False
        ends = [names.get(part.lower(), int(part) if part.isdigit() else -1) for part in (start, end)]
        return all(_cron_part(part, low, high, names, False) for part in (start, end)) and ends[1] >= ends[0]
    return value.isdigit() and low <= int(value) <= high


def _crons(root: Mapping) -> Iterator[SchemaError]:
    on = root.get("on")
    schedule = on.get("schedule") if isinstance(on, Mapping) else None
    for item in schedule.items if isinstance(schedule, Sequence) else ():
        cron = item.get("cron") if isinstance(item, Mapping) else None
        if not isinstance(cron, Scalar) or cron.resolved is None or not cron.value:
            continue
        parts = re.split(r" +", cron.value)
        valid = len(parts) == len(_CRON_FIELDS) and all(
            _cron_part(part, low, high, names) for part, (_, low, high, names) in zip(parts, _CRON_FIELDS, strict=True)
        )
        if not valid:
            message = (
                f"{cron.value!r} is not a cron expression GitHub accepts: five fields (minute hour day-of-month "
                "month day-of-week) of numbers, names, `*`, ranges, steps and lists; no `@daily` macros"
            )
            yield SchemaError(message, cron.span)


CHECKS: tuple[Check, ...] = (
    Check("job-ids", workflow().replace("  build:", "  1build:"), _job_ids),
    Check("step-ids", workflow(step="      - id: a\n        run: x\n      - id: a\n        run: y\n"), _step_ids),
    Check(
        "needs",
        "on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - run: x\n"
        "  b:\n    runs-on: x\n    needs: [a, bulid]\n    steps:\n      - run: x\n",
        _needs,
    ),
    Check("cron", workflow(on="on:\n  schedule:\n    - cron: '0 25 * * *'\n"), _crons),
    Check(
        "background-targets",
        workflow(step="      - id: server\n        run: ./serve\n        background: true\n      - wait: sever\n"),
        _background_targets,
    ),
)
