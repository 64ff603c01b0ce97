"""Findings a policy rule makes about itself: it selects nothing (CC104), or cannot read what it selects (CC106)."""

from __future__ import annotations

from ci_checks.core.diagnostics import Diagnostic, Severity, Span
from ci_checks.model.loading import LoadedFile
from ci_checks.policy.model import PolicyRule
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus

NO_MATCH_DOCS = """\
A policy rule's `where`, a `key:` PATH, or a parity rule's workflow matches nothing in the repository.

## What it does
Reports a policy rule whose `where` selects no scope at all, at the rule's
`where` in the policy file, naming the part that selected nothing (no file
matches the glob, no job or step has that name, no `if`, `else` or `case` arm
has that condition) and what exists instead. A `parity` rule naming a
workflow that does not exist is reported at that name.

An item that finds nothing is not a CC104 finding: a `forbid` rule then holds
(`forbid: [{key: jobs.docker-decide}]` says the job must not exist), and a
`require` rule reports the scope that lacks it (CC102).

## Why it matters
A rule that silently matches nothing passes forever. Renaming a step, moving a
workflow or rewording an `if` condition would otherwise switch a check off
without anyone noticing; this is the failure mode of string-splitting tests
that ci-checks exists to remove.

## Example
```yaml
where: {workflow: .github/workflows/_run-ci-rocm.yml, step: "Install Megatron"}
```
after the step was renamed to `Install Megatron-LM`.

## Fix
Update the rule to the new name, path or condition, or delete the rule if
what it guarded is gone for good.
"""

NO_MATCH = Rule(
    "CC104",
    "policy-no-match",
    "A policy rule selects nothing",
    Severity.ERROR,
    NO_MATCH_DOCS,
    frozenset(),
    None,
    group=RuleGroup.POLICY_INPUT,
    status=RuleStatus.STABLE,
    since="0.1.0",
)

UNREADABLE_INPUT_DOCS = """\
A file a policy rule must read cannot be parsed or searched.

## What it does
Reports, for each policy rule, each file the rule selects but cannot read: a
workflow or action that is not valid YAML or not a mapping, a file that is too
large, binary, not UTF-8 or unreadable, a Python file with a syntax error
that a rule with a `python:` item reads (at the error), a regular
expression that took longer than two seconds to search a file (at the
expression in the policy file, naming the file), and a `from: {python: FILE,
name: CONSTANT}` value that cannot be read without running the module (a
function call, an environment variable, a missing file or name), or that
takes more than a million steps to read (at the `from:`, saying why; that
item is not checked, the rule's others are). Each is an error: the rule
could not check that file, so its verdict there is unknown.

## Why it matters
A forbid rule over a file it cannot read would pass without having looked.
Saying so keeps "no findings" honest, and the time limit keeps a pathological
regular expression in a pull request from stalling the check.

## Example
```python
def broken(:
    ROCmFileSystemWriterAsync
```
is a syntax error, so `python: {name: ROCmFileSystemWriterAsync}` cannot be
checked there.

## Fix
Fix the syntax error, or simplify the regular expression (avoid nested
repetition such as `(a+)+`); write the constant as literals, or as names of
other constants (`SCHEDULE_POLICIES = {"0 15 * * 6": WEEKLY}` is read: only
its keys are).
"""

UNREADABLE_INPUT = Rule(
    "CC106",
    "policy-unreadable-input",
    "A file a policy rule reads cannot be parsed or searched",
    Severity.ERROR,
    UNREADABLE_INPUT_DOCS,
    frozenset(),
    None,
    group=RuleGroup.POLICY_INPUT,
    status=RuleStatus.STABLE,
    since="0.1.0",
)


def policy_codes(rule: PolicyRule) -> tuple[str, ...]:
    """The codes a policy rule's findings can have: its kind's, and those it makes about what it reads (it selects
    nothing, it cannot read a file)."""
    return (rule.kind.rule.code, NO_MATCH.code, UNREADABLE_INPUT.code)


def about(built_in: Rule, rule: PolicyRule, span: Span, message: str) -> Diagnostic:
    """A finding of a built-in policy rule (CC104, CC106) that names the policy rule it is about."""
    return Diagnostic(built_in.code, rule.id, built_in.severity, message, span, policy_id=rule.id)


def no_match(rule: PolicyRule, span: Span, message: str) -> Diagnostic:
    return about(NO_MATCH, rule, span, message)


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
    return about(UNREADABLE_INPUT, rule, span, message)
