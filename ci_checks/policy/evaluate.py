"""Running policy rules over a repository's files: order, forbid, require and parity."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterator

from ci_checks.diagnostics import Diagnostic, Occurrence, Related, Span
from ci_checks.loading import LoadedFile, Workspace
from ci_checks.model import Workflow
from ci_checks.policy.matchers import RegexTimeout, find
from ci_checks.policy.model import Kind, Matcher, PolicyRule, Where
from ci_checks.policy.regions import Region, for_each_job, select, step_anchor
from ci_checks.pysource import PythonSyntaxError
from ci_checks.repository import FileKind, kind_of
from ci_checks.rule import Rule
from ci_checks.rules import (
    cc001_file_too_large,
    cc003_invalid_encoding,
    cc004_unreadable_file,
    cc100_policy_order,
    cc101_policy_forbid,
    cc102_policy_require,
    cc103_policy_parity,
    cc104_policy_no_match,
    cc106_policy_unreadable_input,
)
from ci_checks.source import ProblemKind

Covers = Callable[[str], bool]
"""Whether a repo-relative path is among what was asked to be checked."""

_PROBLEM_RULES = {
    ProblemKind.TOO_LARGE: cc001_file_too_large.RULE,
    ProblemKind.ENCODING: cc003_invalid_encoding.RULE,
    ProblemKind.UNREADABLE: cc004_unreadable_file.RULE,
}
_KIND_RULES = {
    Kind.ORDER: cc100_policy_order.RULE,
    Kind.FORBID: cc101_policy_forbid.RULE,
    Kind.REQUIRE: cc102_policy_require.RULE,
    Kind.PARITY: cc103_policy_parity.RULE,
}


def evaluate(
    rules: list[PolicyRule], workspace: Workspace, covers: Covers, policy_files: frozenset[str] = frozenset()
) -> list[Diagnostic]:
    """Every finding of `rules` in the files `covers` accepts; a rule that selects nothing anywhere is one too.

    `policy_files` are never read by rules: a policy names what it forbids.
    """
    found: list[Diagnostic] = []
    for rule in rules:
        if rule.parity is not None:
            found.extend(_parity(rule, workspace, covers))
        else:
            assert rule.where is not None
            found.extend(_scoped(rule, rule.where, workspace, covers, policy_files))
    return found


def _finding(rule: PolicyRule, span: Span, detail: str, related: tuple[Related, ...] = ()) -> Diagnostic:
    message = f"{detail}: {rule.message}" if rule.message else detail
    return Diagnostic(_KIND_RULES[rule.kind].code, rule.id, rule.severity, message, span, related)


def _of(built_in: Rule, rule: PolicyRule, span: Span, message: str) -> Diagnostic:
    return Diagnostic(built_in.code, rule.id, built_in.severity, message, span)


def candidates(where: Where, workspace: Workspace) -> list[str]:
    """The repo-relative paths `where`'s globs name (all workflows and actions when it names none)."""
    repository = workspace.repository
    if not (where.files or where.workflows or where.actions):
        return [*repository.workflows, *repository.actions]
    paths: list[str] = []
    for path in repository.files:
        if repository.excluded(path):
            continue
        if any(glob.matches(path) for glob in where.files):
            paths.append(path)
            continue
        globs = {FileKind.WORKFLOW: where.workflows, FileKind.ACTION: where.actions}.get(kind_of(path), ())
        if any(glob.matches(path) for glob in globs):
            paths.append(path)
    return paths


def _scoped(
    rule: PolicyRule, where: Where, workspace: Workspace, covers: Covers, skipped: frozenset[str]
) -> Iterator[Diagnostic]:
    paths = [path for path in candidates(where, workspace) if path not in skipped]
    covered = [path for path in paths if covers(path)]
    selection = select(where, [workspace.load(path) for path in covered])
    for file in selection.unreadable:
        yield from _unreadable(rule, file)
    if not selection.regions and not selection.unreadable:
        if len(covered) < len(paths):  # judged over the whole repository, not only what was asked for
            if where.files:
                return  # whole files: that the globs name some is enough, nothing needs reading
            selection = select(where, [workspace.load(path) for path in paths])
            if selection.regions or selection.unreadable:
                return
        reason = selection.empty_because or "the repository has no workflow or composite action"
        yield _of(cc104_policy_no_match.RULE, rule, where.span, f"`where` selects nothing: {reason}")
        return
    try:
        for region in selection.regions:
            if covers(region.file.path):
                yield from _check(rule, region)
    except _SearchTimedOut as timeout:
        message = f"{timeout.matcher.description} took over 2 s on {timeout.path}; the rule is not fully checked"
        yield _of(cc106_policy_unreadable_input.RULE, rule, timeout.matcher.span, message)


def _unreadable(rule: PolicyRule, file: LoadedFile) -> Iterator[Diagnostic]:
    """Why a file a rule selects was not checked: its source problem, or that it is not a usable workflow."""
    problem = file.source.problem
    if problem is not None:
        if problem.kind in _PROBLEM_RULES:
            built_in = _PROBLEM_RULES[problem.kind]
            yield built_in.diagnostic(Span.point(file.path, problem.line, problem.column), problem.message)
        return
    issues = file.document.issues
    reason = issues[0].message if issues else "its top level is not a mapping"
    span = issues[0].span if issues else Span.point(file.path)
    message = f"not a usable {file.kind.value} ({reason}); not checked by this rule"
    yield _of(cc106_policy_unreadable_input.RULE, rule, span, message)


class _SearchTimedOut(Exception):
    def __init__(self, matcher: Matcher, path: str) -> None:
        super().__init__(path)
        self.matcher = matcher
        self.path = path


def _find(matcher: Matcher, region: Region) -> list[Occurrence]:
    try:
        return find(matcher, region)
    except RegexTimeout:
        raise _SearchTimedOut(matcher, region.file.path) from None


def _check(rule: PolicyRule, region: Region) -> Iterator[Diagnostic]:
    facts = region.file.python_facts
    if isinstance(facts, PythonSyntaxError) and any(item.fact is not None for item in rule.items):
        yield _of(cc106_policy_unreadable_input.RULE, rule, facts.span, f"{facts.message}; not checked by this rule")
    if rule.kind is Kind.FORBID:
        for item in rule.items:
            for occurrence in _find(item, region):
                detail = f"{item.description} is forbidden here"
                if item.pattern is not None or item.glob is not None:
                    detail += f" (found {occurrence.text!r})"
                yield _finding(rule, occurrence.span, detail)
    elif rule.kind is Kind.REQUIRE:
        for item in rule.items:
            if not _find(item, region):
                yield _finding(rule, region.anchor, f"{region.label} lacks {item.description}")
    else:
        for part in for_each_job(region):
            yield from _order(rule, part)


def _order(rule: PolicyRule, region: Region) -> Iterator[Diagnostic]:
    previous: tuple[Matcher, Occurrence] | None = None
    for item in rule.items:
        occurrences = _find(item, region)
        if not occurrences:
            if rule.report_missing:
                yield _finding(rule, region.anchor, f"{item.description} is missing from {region.label}")
            continue
        first = occurrences[0]
        if previous is not None:
            before, where = previous
            if (first.span.line, first.span.column) < (where.span.line, where.span.column):
                detail = (
                    f"{item.description} at {_at(first.span)} comes before {before.description} "
                    f"at {_at(where.span)} in {region.label}"
                )
                related = (Related(where.span, f"{before.description} is first written here"),)
                yield _finding(rule, first.span, detail, related)
        previous = (item, first)


def _at(span: Span) -> str:
    return f"{span.line}:{span.column}"


def _parity(rule: PolicyRule, workspace: Workspace, covers: Covers) -> Iterator[Diagnostic]:
    assert rule.parity is not None
    workflows: list[tuple[LoadedFile, Workflow]] = []
    for path, span in rule.parity.workflows:
        if not workspace.repository.exists(path):
            yield _of(cc104_policy_no_match.RULE, rule, span, f"workflow {path!r} does not exist")
            continue
        file = workspace.load(path, FileKind.WORKFLOW)
        if file.workflow is None:
            if covers(path):
                yield from _unreadable(rule, file)
            continue
        workflows.append((file, file.workflow))
    if len(workflows) < len(rule.parity.workflows):
        return
    for aspect in rule.parity.compare:
        allowed = rule.parity.allow.get(aspect, ())
        named = [(file, _names(workflow, aspect)) for file, workflow in workflows]
        for file, names in named:
            if not covers(file.path):
                continue
            for name, span in names.items():
                lacking = [other.path for other, other_names in named if name not in other_names]
                if lacking and not any(fnmatch.fnmatchcase(name, glob) for glob in allowed):
                    singular = aspect.removesuffix("s")
                    detail = f"{singular} {name!r} of {file.path} has no counterpart in {', '.join(lacking)}"
                    yield _finding(rule, span, detail)


def _names(workflow: Workflow, aspect: str) -> dict[str, Span]:
    """The names of one aspect of a workflow, each with where it is first defined."""
    call = workflow.workflow_call
    if aspect == "inputs":
        inputs = {**workflow.workflow_dispatch_inputs, **(call.inputs if call else {})}
        return {name: item.key.span for name, item in inputs.items()}
    if aspect == "secrets":
        return {name: secret.key.span for name, secret in (call.secrets if call else {}).items()}
    if aspect == "outputs":
        return {name: output.key.span for name, output in (call.outputs if call else {}).items()}
    if aspect == "jobs":
        return {job_id: job.key.span for job_id, job in workflow.jobs.items()}
    steps: dict[str, Span] = {}
    for step in workflow.steps():
        steps.setdefault(step.label, step_anchor(step))
    return steps
