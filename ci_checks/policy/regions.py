"""Regions: the places a policy rule's `where` selects, and what can be found inside each.

A region is a whole file, a workflow, a job, a step, a composite action, or the
then-branch of an `if` in a step's script. Every matcher looks inside the
region: its text, its shell commands, its steps, the `with`/`env` pairs of
everything in it, and the Python facts of a Python file.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from ci_checks.diagnostics import Occurrence, Span
from ci_checks.globs import PathGlob
from ci_checks.loading import LoadedFile
from ci_checks.model import Entry, Job, Step
from ci_checks.policy.model import Where
from ci_checks.repository import FileKind
from ci_checks.shell import Block, Command


@dataclass(eq=False)
class Region:
    file: LoadedFile
    label: str
    anchor: Span
    """Where a finding about the whole region (a missing item) is reported."""
    start: int
    end: int
    """File offsets of the region's text; unused when `block` is set."""
    steps: list[Step] = field(default_factory=list)
    jobs: list[Job] = field(default_factory=list)
    block: Block | None = None
    whole_file: bool = False

    def commands(self) -> Iterator[Command]:
        if self.block is not None:
            yield from self.block.commands()
        elif self.whole_file:
            yield from self.file.commands()
        else:
            for step in self.steps:
                if step.script is not None:
                    yield from step.script.commands()

    def search(self, finditer: Callable[[str, int, int], Iterator[tuple[int, int]]]) -> list[Occurrence]:
        """Occurrences of what `finditer(text, start, end)` finds in the region's text."""
        if self.block is not None:
            script = self.block
            found = []
            for start, end in finditer(script.text, 0, len(script.text)):
                span = script.locator.span(script.start + start, script.start + end)
                found.append(Occurrence(span, script.text[start:end]))
            return found
        text = self.file.source.text
        return [Occurrence(self.file.source.span(s, e), text[s:e]) for s, e in finditer(text, self.start, self.end)]

    def mappings(self, section: str) -> Iterator[dict[str, Entry]]:
        """The `with` or `env` mappings of the region and of everything inside it."""
        if self.block is not None:
            return
        workflow = self.file.workflow
        if self.whole_file and workflow is not None and section == "env":
            yield workflow.env
        for job in self.jobs:
            yield job.with_ if section == "with" else job.env
        for step in self.steps:
            yield step.with_ if section == "with" else step.env


@dataclass
class Selection:
    regions: list[Region]
    empty_because: str
    """When nothing is selected: which part of `where` selected nothing, and what there was instead."""
    unreadable: list[LoadedFile] = field(default_factory=list)
    """Files the globs name that cannot be read, or not as the workflow or action `where` looks into."""


def select(where: Where, files: list[LoadedFile]) -> Selection:
    """The regions `where` selects among `files` (already narrowed to the files its globs name)."""
    if where.files:
        regions = [_file_region(file) for file in files if file.readable]
        return Selection(regions, _no_file(where.files), [file for file in files if not file.readable])
    wanted = [f for f in files if f.readable and (f.workflow is not None or f.action is not None)]
    unreadable = [f for f in files if f not in wanted]
    if not wanted:
        reason = _no_file((*where.workflows, *where.actions)) if where.workflows or where.actions else ""
        return Selection([], reason, unreadable)
    scopes: list[Region] = []
    reasons: list[str] = []
    for file in wanted:
        found, reason = _structural(where, file)
        scopes.extend(found)
        if reason:
            reasons.append(reason)
    return Selection(scopes, "; ".join(reasons), unreadable)


def _no_file(globs: tuple[PathGlob, ...]) -> str:
    return "no file matches " + " or ".join(repr(str(glob)) for glob in globs)


def _file_region(file: LoadedFile) -> Region:
    return Region(
        file,
        file.path,
        Span.point(file.path),
        0,
        len(file.source.text),
        steps=file.steps,
        jobs=list(file.workflow.jobs.values()) if file.workflow is not None else [],
        whole_file=True,
    )


def _structural(where: Where, file: LoadedFile) -> tuple[list[Region], str]:
    """Regions inside one workflow or action, narrowed by job, step and branch."""
    regions: list[Region] = []
    if file.workflow is not None:
        jobs = list(file.workflow.jobs.values())
        if where.job is None and where.step is None and where.branch is None:
            return [_file_region(file)], ""
        if where.job is not None:
            jobs = [job for job in jobs if fnmatch.fnmatchcase(job.id, where.job)]
            if not jobs:
                return [], f"no job in {file.path} matches {where.job!r} (jobs: {', '.join(file.workflow.jobs)})"
            if where.step is None and where.branch is None:
                return [_job_region(file, job) for job in jobs], ""
        owners: list[tuple[str, list[Step]]] = [(f"job {job.id!r}", job.steps) for job in jobs]
    else:
        assert file.action is not None
        if where.step is None and where.branch is None:
            return [_file_region(file)], ""
        owners = [("the action", file.action.steps)]
    steps = [step for _, candidates in owners for step in candidates if where.step is None or where.step.matches(step)]
    if not steps:
        labels = ", ".join(repr(step.label) for _, candidates in owners for step in candidates)
        return [], f"no step in {file.path} matches {where.step} (steps: {labels or 'none'})"
    if where.branch is None:
        return [_step_region(file, step) for step in steps], ""
    for step in steps:
        if step.script is None:
            continue
        for clause in step.script.clauses(where.branch):
            assert clause.condition is not None
            label = f"the `{where.branch}` branch of step {step.label!r}"
            regions.append(Region(file, label, clause.condition.span, 0, 0, block=clause.body))
    if not regions:
        return [], f"no step script in {file.path} has an if/elif with the condition {where.branch!r}"
    return regions, ""


def _job_region(file: LoadedFile, job: Job) -> Region:
    text = file.source
    extent = job.extent
    start = text.offset(extent.line, extent.column)
    end = text.offset(extent.end_line, extent.end_column)
    return Region(file, f"job {job.id!r}", job.key.span, start, end, steps=job.steps, jobs=[job])


def _step_region(file: LoadedFile, step: Step) -> Region:
    text = file.source
    span = step.node.span
    start = text.offset(span.line, span.column)
    end = text.offset(span.end_line, span.end_column)
    return Region(file, f"step {step.label!r}", step_anchor(step), start, end, steps=[step])


def step_anchor(step: Step) -> Span:
    """The step's first `key: value` line, which is where people look for a step."""
    if not step.node.pairs:
        return step.span
    key, value = step.node.pairs[0]
    if value.span.line != key.span.line:
        return key.span
    return Span(key.span.path, key.span.line, key.span.column, value.span.end_line, value.span.end_column)


def for_each_job(region: Region) -> list[Region]:
    """An order is a sequence within one job: a whole workflow is split into its jobs that have steps."""
    if not region.whole_file or region.file.kind is not FileKind.WORKFLOW or region.file.workflow is None:
        return [region]
    jobs = [job for job in region.file.workflow.jobs.values() if job.steps]
    return [_job_region(region.file, job) for job in jobs] or [region]
