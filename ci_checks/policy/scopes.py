"""Scopes: compiling a rule's `where`, and building the places it selects (`policy.model.Where`, `Scope`).

A scope is a whole file, a workflow, a trigger (`on.NAME`), a job, a step, a
composite action, a branch of a step's script (the then-branch of an
`if`/`elif`, the `else` of an `if`, an arm of a `case`), or, for rules without
`where`, the repository. Items look at a scope's text, its shell commands, its
steps, the `with`/`env` pairs of everything in it, its YAML node (for `key:`
PATHs), the Python facts of a Python file, or the repository's files.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import regex

from ci_checks.core.diagnostics import Span
from ci_checks.core.globs import Glob, matches_any
from ci_checks.core.repository import FileKind, kind_of
from ci_checks.model import Job, Step
from ci_checks.model.loading import LoadedFile, Workspace
from ci_checks.model.reading import events
from ci_checks.policy.compiling import GLOB_OR_LITERAL, STEP_SELECTOR, name_glob, path_globs, step_selector
from ci_checks.policy.model import Branch, Named, Place, PolicyError, Scope, Where
from ci_checks.syntax import shell
from ci_checks.syntax.yamlpos import Node, Scalar


def is_null(node: Node) -> bool:
    return isinstance(node, Scalar) and node.resolved is None


_GLOBS = {"oneOf": [{"type": "string", "minLength": 1}, {"type": "array", "minItems": 1, "items": {"type": "string"}}]}
_NAMES = {"oneOf": [*GLOB_OR_LITERAL["oneOf"], {"type": "array", "minItems": 1, "items": GLOB_OR_LITERAL}]}
WHERE_PROPERTIES = {
    "files": {**_GLOBS, "description": "Repo-relative globs of any files (workflows, Dockerfiles, Python, patches)."},
    "workflow": {**_GLOBS, "description": "Repo-relative globs of workflow files."},
    "action": {**_GLOBS, "description": "Repo-relative globs of composite action files (action.yml)."},
    "trigger": {**_NAMES, "description": "Events under `on:` (globs); the scope is each trigger's value."},
    "job": {**_NAMES, "description": "Job id globs."},
    "step": STEP_SELECTOR,
    "branch": {
        "description": "A branch of the step's script: an if/elif condition (its then-branch), {if: COND, else: true} "
        "for its else, or {case: WORD, arm: PATTERN} for an arm of a case.",
        "oneOf": [
            {"type": "string", "minLength": 1},
            {
                "type": "object",
                "additionalProperties": False,
                "minProperties": 1,
                "properties": {
                    "if": {"type": "string", "minLength": 1},
                    "else": {"type": "boolean"},
                    "case": {"type": "string", "minLength": 1},
                    "arm": {"type": "string", "minLength": 1},
                },
            },
        ],
    },
}


WHERE_SCHEMA = {
    "description": "The scopes a rule looks in.",
    "type": "object",
    "additionalProperties": False,
    "minProperties": 1,
    "properties": WHERE_PROPERTIES,
}
_STRUCTURAL = ("workflow", "action", "trigger", "job", "step", "branch")


def narrowed(
    rule: Mapping[str, Any] | None, rule_place: Place | None, item: Mapping[str, Any], item_place: Place
) -> tuple[dict[str, Any], Place]:
    """An item's own `where`: the rule's with the keys the item names replaced (`files` replaces the structural
    keys, `workflow` or `action` replaces `files`), and a place that finds each key where it is written."""
    merged = dict(rule or {})
    if "files" in item:
        merged = {key: value for key, value in merged.items() if key not in _STRUCTURAL}
    if "workflow" in item or "action" in item:
        merged.pop("files", None)
    origins = {key: rule_place for key in merged if rule_place is not None}
    merged.update(item)
    origins.update(dict.fromkeys(item, item_place))

    def locate(path: list[str | int], key: bool) -> Span:
        origin = origins.get(path[1]) if len(path) > 1 and isinstance(path[1], str) else None
        return (origin or item_place).span(*path[1:], key=key)

    return merged, Place(locate, ["where"], item_place.repository)


def compile_where(raw: Mapping[str, Any], place: Place) -> Where:
    structural = [key for key in _STRUCTURAL if key in raw]
    if "files" in raw and structural:
        raise PolicyError(
            f"`where: files` selects whole files and cannot be combined with {', '.join(structural)}",
            place.span(structural[0], key=True),
        )
    if "job" in raw and "action" in raw and "workflow" not in raw:
        raise place.error("composite actions have no jobs: `job` needs `workflow`", "job", key=True)
    if "trigger" in raw:
        if "action" in raw:
            raise place.error("composite actions have no triggers: `trigger` needs `workflow`", "trigger", key=True)
        for other, plural in (("job", "jobs"), ("step", "steps"), ("branch", "branches")):
            if other in raw:
                raise place.error(f"a trigger has no {plural}: `trigger` and `{other}` select different parts", other)
    branch = _branch(raw["branch"], place.at("branch")) if "branch" in raw else None
    jobs = raw.get("job")
    job_list = [jobs] if isinstance(jobs, str | dict) else list(jobs or [])
    triggers = raw.get("trigger")
    trigger_list = [triggers] if isinstance(triggers, str | dict) else list(triggers or [])
    return Where(
        place.span(key=True),
        files=path_globs(raw["files"], place.at("files")) if "files" in raw else (),
        workflows=path_globs(raw["workflow"], place.at("workflow")) if "workflow" in raw else (),
        actions=path_globs(raw["action"], place.at("action")) if "action" in raw else (),
        triggers=tuple(
            name_glob(value, place.at("trigger") if isinstance(triggers, str | dict) else place.at("trigger", index))
            for index, value in enumerate(trigger_list)
        ),
        jobs=tuple(
            name_glob(value, place.at("job") if isinstance(jobs, str | dict) else place.at("job", index))
            for index, value in enumerate(job_list)
        ),
        step=step_selector(raw["step"], place.at("step")) if "step" in raw else None,
        branch=branch,
        named=tuple(_named(raw, place)),
    )


_LISTED = {"files": "file", "workflow": "workflow", "action": "action", "trigger": "trigger", "job": "job"}


def _named(raw: Mapping[str, Any], place: Place) -> Iterator[Named]:
    """The names a `where` lists without glob characters, each of which must select something."""
    for key, part in _LISTED.items():
        written = raw.get(key)
        if not isinstance(written, list) or len(written) < 2:
            continue  # a single name that selects nothing leaves the whole `where` empty, which is reported so
        for index, value in enumerate(written):
            glob = name_glob(value, place.at(key, index)) if key in ("trigger", "job") else None
            if glob is None:
                [glob] = path_globs(value, place.at(key, index))
            if glob.literal is not None:
                yield Named(part, glob, place.span(key, index))


def _branch(raw: str | Mapping[str, Any], place: Place) -> Branch:
    if isinstance(raw, str):
        _check_condition(raw, place)
        return Branch(condition=raw)
    if "case" in raw or "arm" in raw:
        if "case" not in raw or "arm" not in raw:
            missing = "arm" if "case" in raw else "case"
            raise place.error(f"a case branch names both `case` and `arm`; `{missing}` is missing")
        if "if" in raw or "else" in raw:
            raise place.error("a branch is an `if` or a `case` arm, not both")
        for key in ("case", "arm"):
            try:
                words = shell.split_words(raw[key])
            except ValueError as error:
                raise place.error(f"invalid {key} {raw[key]!r}: {error}", key) from None
            if len(words) != 1:
                raise place.error(f"`{key}` is one shell word; {raw[key]!r} is not", key)
        return Branch(case=raw["case"], arm=raw["arm"])
    if "if" not in raw:
        raise place.error("a branch names its condition: `branch: COND`, `{if: COND, else: true}` or a `case` arm")
    _check_condition(raw["if"], place.at("if"))
    return Branch(condition=raw["if"], else_=bool(raw.get("else", False)))


def _check_condition(condition: str, place: Place) -> None:
    script = shell.parse_fragment(condition)
    if script.errors or not list(script.commands()):
        raise place.error(f"branch condition {condition!r} is not a shell command")


@dataclass
class Selection:
    scopes: list[Scope]
    empty_because: str
    """When nothing is selected: which part of `where` selected nothing, and what there was instead."""
    unreadable: list[LoadedFile] = field(default_factory=list)
    """Files the globs name that cannot be read, or not as the workflow or action `where` looks into."""


def candidates(where: Where, workspace: Workspace, skipped: frozenset[str]) -> list[str]:
    """The repo-relative paths `where`'s globs name (all workflows and actions when it names none)."""
    repository = workspace.repository
    if not (where.files or where.workflows or where.actions):
        found = (
            [*repository.workflows] if where.triggers or where.jobs else [*repository.workflows, *repository.actions]
        )
        return [path for path in found if path not in skipped]
    paths: list[str] = []
    for path in repository.files:
        if repository.excluded(path) or path in skipped:
            continue
        if matches_any(where.files, path) or (
            path in repository.linked_folders and any(_may_hold(glob, path) for glob in where.files)
        ):
            paths.append(path)
            continue
        globs = {FileKind.WORKFLOW: where.workflows, FileKind.ACTION: where.actions}.get(kind_of(path), ())
        if matches_any(globs, path):
            paths.append(path)
    return paths


def _may_hold(glob: Glob, folder: str) -> bool:
    """Whether a file under `folder` could match `glob`: a linked folder (which is not entered) under a `files:`
    glob is selected itself, and reported as unreadable, rather than skipped in silence."""
    return regex.compile(glob.pattern.pattern).fullmatch(folder + "/", partial=True) is not None


def select(where: Where, files: list[LoadedFile]) -> Selection:
    """The scopes `where` selects among `files` (already narrowed to the files its globs name)."""
    if where.files:
        whole = [file_scope(file) for file in files if file.readable]
        return Selection(whole, _no_file(where.files), [file for file in files if not file.readable])
    wanted = [f for f in files if f.readable and (f.workflow is not None or f.action is not None)]
    unreadable = [f for f in files if f not in wanted]
    if not wanted:
        reason = _no_file((*where.workflows, *where.actions)) if where.workflows or where.actions else ""
        return Selection([], reason, unreadable)
    scopes: list[Scope] = []
    reasons: list[str] = []
    for file in wanted:
        found, reason = _structural(where, file)
        scopes.extend(found)
        if reason:
            reasons.append(reason)
    return Selection(scopes, "; ".join(reasons), unreadable)


def repository_scope(workspace: Workspace, anchor: Span) -> Scope:
    return Scope(None, "the repository", anchor, workspace=workspace)


def _no_file(globs: tuple[Glob, ...]) -> str:
    return "no file matches " + " or ".join(repr(str(glob)) for glob in globs)


def file_scope(file: LoadedFile) -> Scope:
    root = file.document.root
    return Scope(
        file,
        file.path,
        Span.point(file.path),
        0,
        len(file.source.text),
        steps=file.steps,
        jobs=list(file.workflow.jobs.values()) if file.workflow is not None else [],
        whole_file=True,
        node=root,
    )


def _structural(where: Where, file: LoadedFile) -> tuple[list[Scope], str]:
    """Scopes inside one workflow or action, narrowed by trigger, job, step and branch."""
    if file.workflow is not None:
        workflow = file.workflow
        if where.triggers:
            return _triggers(where, file)
        jobs = list(workflow.jobs.values())
        if not where.jobs and where.step is None and where.branch is None:
            return [file_scope(file)], ""
        if where.jobs:
            jobs = [job for job in jobs if matches_any(where.jobs, job.id)]
            if not jobs:
                wanted = " or ".join(repr(str(glob)) for glob in where.jobs)
                return (
                    [],
                    f"no job in {file.path} matches {wanted} (jobs: {', '.join(sorted(workflow.jobs)) or 'none'})",
                )
            if where.step is None and where.branch is None:
                return [job_scope(file, job) for job in jobs], ""
        owners: list[list[Step]] = [job.steps for job in jobs]
    else:
        assert file.action is not None
        if where.triggers or where.jobs:
            return [], ""
        if where.step is None and where.branch is None:
            return [file_scope(file)], ""
        owners = [file.action.steps]
    steps = [step for candidates in owners for step in candidates if where.step is None or where.step.matches(step)]
    if not steps:
        labels = ", ".join(sorted({repr(step.label) for candidates in owners for step in candidates}))
        return [], f"no step in {file.path} matches {where.step} (steps: {labels or 'none'})"
    if where.branch is None:
        return [step_scope(file, step) for step in steps], ""
    scopes: list[Scope] = []
    for step in steps:
        if step.script is None:
            continue
        for body, anchor in where.branch.blocks(step.script):
            label = f"the {where.branch} branch of step {step.label!r}"
            scopes.append(Scope(file, label, anchor, block=body))
    if not scopes:
        return [], f"no step script in {file.path} has {_branch_wanted(where.branch)}{_branches_there(steps)}"
    return scopes, ""


def _branch_wanted(branch: Branch) -> str:
    if branch.case is not None:
        return f"a `case {branch.case} in` with the arm {branch.arm!r}"
    if branch.else_:
        return f"an if with the condition {branch.condition!r} and an else"
    return f"an if/elif with the condition {branch.condition!r}"


def _branches_there(steps: list[Step]) -> str:
    """What branches the selected steps' scripts do have, so that a reworded condition is easy to find.

    Lists in messages are sorted: what a finding says must not depend on the order of keys in a file.
    """
    conditions: list[str] = []
    cases: list[str] = []
    for step in steps:
        if step.script is None:
            continue
        for statement in step.script.if_statements():
            conditions.extend(
                clause.condition.text.strip() for clause in statement.clauses if clause.condition is not None
            )
        for case in step.script.cases():
            patterns = " | ".join(pattern.text for item in case.items for pattern in item.patterns)
            cases.append(f"case {case.subject.text if case.subject else '?'}: {patterns}")
    listed = [*sorted({repr(condition) for condition in conditions}), *sorted(set(cases))]
    return f" (branches there: {', '.join(listed)})" if listed else " (the selected steps have no branches)"


def _triggers(where: Where, file: LoadedFile) -> tuple[list[Scope], str]:
    assert file.workflow is not None
    root = file.workflow.node
    on = root.get("on")
    found = events(on) if on is not None else []
    scopes = [
        Scope(
            file,
            f"trigger {name!r}",
            key.span,
            *_extent(file, key.span, value.span if value is not None else key.span),
            node=None if value is None or is_null(value) else value,
            node_path=("on", name),
        )
        for name, key, value in found
        if matches_any(where.triggers, name)
    ]
    if not scopes:
        wanted = " or ".join(repr(str(glob)) for glob in where.triggers)
        names = ", ".join(sorted(name for name, _, _ in found)) or "none"
        return [], f"no trigger of {file.path} matches {wanted} (triggers: {names})"
    return scopes, ""


def _extent(file: LoadedFile, start: Span, end: Span) -> tuple[int, int]:
    text = file.source
    return text.offset(start.line, start.column), text.offset(end.end_line, end.end_column)


def job_scope(file: LoadedFile, job: Job) -> Scope:
    extent = job.extent
    start, end = _extent(file, extent, extent)
    return Scope(
        file,
        f"job {job.id!r}",
        job.key.span,
        start,
        end,
        steps=job.steps,
        jobs=[job],
        node=job.node,
        node_path=("jobs", job.id),
    )


def step_scope(file: LoadedFile, step: Step) -> Scope:
    span = step.node.span
    start, end = _extent(file, span, span)
    return Scope(
        file,
        f"step {step.label!r}",
        step_anchor(step),
        start,
        end,
        steps=[step],
        node=step.node,
        node_path=step.place,
    )


def step_anchor(step: Step) -> Span:
    """The step's first `key: value` line, which is where people look for a step."""
    if not step.node.pairs:
        return step.span
    key, value = step.node.pairs[0]
    if value.span.line != key.span.line:
        return key.span
    return Span(key.span.path, key.span.line, key.span.column, value.span.end_line, value.span.end_column)


def job_scopes(scope: Scope) -> list[Scope]:
    """A whole workflow as its jobs that have steps (an order holds within a job); any other scope as it is."""
    file = scope.file
    if not scope.whole_file or file is None or file.kind is not FileKind.WORKFLOW or file.workflow is None:
        return [scope]
    jobs = [job for job in file.workflow.jobs.values() if job.steps]
    return [job_scope(file, job) for job in jobs] or [scope]
