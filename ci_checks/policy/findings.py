"""Findings a policy rule makes about itself: it selects nothing (CC104), or cannot read what it selects (CC106)."""

from __future__ import annotations

from ci_checks.core.diagnostics import Diagnostic, Span
from ci_checks.model.loading import LoadedFile
from ci_checks.policy.model import PolicyRule
from ci_checks.rules import cc104_policy_no_match, cc106_policy_unreadable_input
from ci_checks.rules.rule import Rule


def about(built_in: Rule, rule: PolicyRule, span: Span, message: str) -> Diagnostic:
    """A finding of a built-in policy rule (CC104, CC106) that names the policy rule it is about."""
    return Diagnostic(built_in.code, rule.id, built_in.severity, message, span, policy_id=rule.id)


def no_match(rule: PolicyRule, span: Span, message: str) -> Diagnostic:
    return about(cc104_policy_no_match.RULE, rule, span, message)


def unreadable(rule: PolicyRule, file: LoadedFile) -> Diagnostic:
    """Why a file the rule must read was not checked by it: the file's problem, or that it is no usable workflow."""
    problem = file.source.problem
    if problem is not None:
        span = Span.point(file.path, problem.line, problem.column)
        message = f"{problem.message}; not checked by this rule"
    else:  # a workflow or an action (the only kinds selected by what they hold) that GitHub would not read
        issues = file.document.issues
        reason = issues[0].message if issues else "its top level is not a mapping"
        span = issues[0].span if issues else Span.point(file.path)
        message = f"not a usable {file.kind.value} ({reason}); not checked by this rule"
    return about(cc106_policy_unreadable_input.RULE, rule, span, message)
