"""Running policy rules over a repository's files: selecting scopes, then letting each rule's kind judge them."""

from __future__ import annotations

from collections.abc import Iterator

from ci_checks.core.diagnostics import Diagnostic, Span
from ci_checks.model.loading import LoadedFile, Workspace
from ci_checks.model.reading import events
from ci_checks.policy.findings import UNREADABLE_INPUT, about, no_match, unreadable
from ci_checks.policy.model import Covers, Named, Part, PolicyRule, Scope, SearchTimedOut, UnreadableItem
from ci_checks.policy.scopes import candidates, repository_scope, select
from ci_checks.syntax.pysource import PythonSyntaxError


def evaluate(
    rules: list[PolicyRule], workspace: Workspace, covers: Covers, policy_files: frozenset[str] = frozenset()
) -> list[Diagnostic]:
    """Every finding of `rules` in the files `covers` accepts; a rule that selects nothing anywhere is one too.

    `policy_files` are never read by rules: a policy names what it forbids.
    """
    found: list[Diagnostic] = []
    for rule in rules:
        if rule.kind.check_repository is not None:
            found.extend(rule.kind.check_repository(rule, workspace, covers))
            continue
        of_rule: dict[tuple[str, Span, str], Diagnostic] = {}
        for part in rule.parts:
            for finding in _part(rule, part, workspace, covers, policy_files):
                of_rule.setdefault((finding.code, finding.span, finding.message), finding)  # a scope in two parts
        found.extend(of_rule.values())
    return found


def _part(
    rule: PolicyRule, part: Part, workspace: Workspace, covers: Covers, skipped: frozenset[str]
) -> Iterator[Diagnostic]:
    unreadable = [item for item in part.items if isinstance(item, UnreadableItem)]
    for item in unreadable:
        message = f"{item.problem.message}; this item of the rule is not checked"
        yield about(UNREADABLE_INPUT, rule, item.problem.span, message)
    readable = tuple(item for item in part.items if item not in unreadable)
    if readable:
        yield from _scoped(rule.judged(Part(part.where, readable)), workspace, covers, skipped)


def _scoped(rule: PolicyRule, workspace: Workspace, covers: Covers, skipped: frozenset[str]) -> Iterator[Diagnostic]:
    where = rule.where
    if where is None:
        scopes = [repository_scope(workspace, rule.span)]
        yield from (finding for finding in _judged(rule, scopes) if covers(finding.span.path))
        return
    paths = candidates(where, workspace, skipped)
    covered = [path for path in paths if covers(path)]
    selection = select(where, [workspace.load(path) for path in covered])
    workspace.consulted.update(covered)
    for file in selection.unreadable:
        yield unreadable(rule, file)
    whole = selection
    if len(covered) < len(paths) and not (where.files and selection.scopes):
        whole = select(where, [workspace.load(path) for path in paths])  # nothing selected is judged repository-wide
    if not whole.scopes:
        if not whole.unreadable:
            reason = whole.empty_because or "the repository has no workflow or composite action"
            yield no_match(rule, where.span, f"`where` selects nothing: {reason}")
        return
    for named in where.named:
        missing = _absent(named, paths, [workspace.load(path) for path in paths])
        if missing:
            yield no_match(rule, named.span, f"`where` names {named.part} {named.glob.text!r}, {missing}")
    yield from _python_unreadable(rule, selection.scopes)
    yield from _shell_unreadable(rule, selection.scopes)
    scopes = [scope for scope in selection.scopes if scope.path is None or covers(scope.path)]
    yield from _judged(rule, scopes)


def _absent(named: Named, paths: list[str], files: list[LoadedFile]) -> str:
    """Why a name `where` lists selects nothing in the repository ("" when it selects something)."""
    if named.part in ("file", "workflow", "action"):
        return "" if any(named.glob.matches(path) for path in paths) else "which does not exist"
    workflows = [file.workflow for file in files if file.workflow is not None]
    if named.part == "job":
        there = sorted({job for workflow in workflows for job in workflow.jobs})
    else:
        on = [workflow.node.get("on") for workflow in workflows]
        there = sorted({name for node in on if node is not None for name, _, _ in events(node)})
    if any(named.glob.matches(name) for name in there):
        return ""
    return f"which matches nothing ({named.part}s there: {', '.join(there) or 'none'})"


def _judged(rule: PolicyRule, scopes: list[Scope]) -> Iterator[Diagnostic]:
    check = rule.kind.check_scope
    assert check is not None
    if rule.kind.merge_scopes is not None:
        scopes = rule.kind.merge_scopes(rule, scopes)
    try:
        found = [finding for scope in scopes for finding in check(rule, scope)]
    except SearchTimedOut as timeout:
        message = f"{timeout.item.description} took over {timeout.seconds:g} s on {timeout.path}"
        message += "; the rule is not fully checked"
        yield about(UNREADABLE_INPUT, rule, timeout.span, message)
        return
    yield from found


def _files_of(scopes: list[Scope]) -> Iterator[LoadedFile]:
    """Each file the scopes lie in, once."""
    seen: set[str] = set()
    for scope in scopes:
        file: LoadedFile | None = scope.file
        if file is not None and file.path not in seen:
            seen.add(file.path)
            yield file


def _shell_unreadable(rule: PolicyRule, scopes: list[Scope]) -> Iterator[Diagnostic]:
    """A script a command item would look into but that was not read (nested too deep) is reported, not passed."""
    if not any(item.kind == "command" for item in rule.items):
        return
    for file in _files_of(scopes):
        for script in file.unread_scripts():
            where = script.errors[0] if script.errors else Span.point(file.path)
            message = f"{script.problem}; not checked by this rule"
            yield about(UNREADABLE_INPUT, rule, where, message)


def _python_unreadable(rule: PolicyRule, scopes: list[Scope]) -> Iterator[Diagnostic]:
    if not any(item.kind == "python" for item in rule.items):
        return
    for file in _files_of(scopes):
        facts = file.python_facts
        if isinstance(facts, PythonSyntaxError):
            yield about(UNREADABLE_INPUT, rule, facts.span, f"{facts.message}; not checked by this rule")
