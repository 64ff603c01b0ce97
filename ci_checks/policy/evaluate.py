"""Running policy rules over a repository's files: selecting scopes, then letting each rule's kind judge them."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from ci_checks.diagnostics import Diagnostic, Span
from ci_checks.loading import LoadedFile, Workspace
from ci_checks.policy.findings import about, no_match, unreadable
from ci_checks.policy.model import Covers, PolicyRule, SearchTimedOut, UnreadableItem
from ci_checks.policy.scopes import Scope, candidates, repository_scope, select
from ci_checks.pysource import PythonSyntaxError
from ci_checks.rules import cc106_policy_unreadable_input


def evaluate(
    rules: list[PolicyRule], workspace: Workspace, covers: Covers, policy_files: frozenset[str] = frozenset()
) -> list[Diagnostic]:
    """Every finding of `rules` in the files `covers` accepts; a rule that selects nothing anywhere is one too.

    `policy_files` are never read by rules: a policy names what it forbids.
    """
    found: list[Diagnostic] = []
    for rule in rules:
        unreadable = [item for item in rule.items if isinstance(item, UnreadableItem)]
        if unreadable:
            for item in unreadable:
                message = f"{item.problem.message}; this item of the rule is not checked"
                found.append(about(cc106_policy_unreadable_input.RULE, rule, item.problem.span, message))
            rule = replace(rule, items=tuple(item for item in rule.items if item not in unreadable))
            if not rule.items:
                continue
        if rule.kind.check_repository is not None:
            found.extend(rule.kind.check_repository(rule, workspace, covers))
        else:
            found.extend(_scoped(rule, workspace, covers, policy_files))
    return found


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
    yield from _python_unreadable(rule, selection.scopes)
    yield from _shell_unreadable(rule, selection.scopes)
    scopes = [scope for scope in selection.scopes if scope.path is None or covers(scope.path)]
    yield from _judged(rule, scopes)


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
        yield about(cc106_policy_unreadable_input.RULE, rule, timeout.item.span, message)
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
            yield about(cc106_policy_unreadable_input.RULE, rule, where, message)


def _python_unreadable(rule: PolicyRule, scopes: list[Scope]) -> Iterator[Diagnostic]:
    if not any(item.kind == "python" for item in rule.items):
        return
    for file in _files_of(scopes):
        facts = file.python_facts
        if isinstance(facts, PythonSyntaxError):
            yield about(
                cc106_policy_unreadable_input.RULE, rule, facts.span, f"{facts.message}; not checked by this rule"
            )
