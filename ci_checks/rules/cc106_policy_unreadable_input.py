"""A file a policy rule must read cannot be parsed or searched.

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

from __future__ import annotations

from ci_checks.core.diagnostics import Severity
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus

RULE = Rule(
    "CC106",
    "policy-unreadable-input",
    "A file a policy rule reads cannot be parsed or searched",
    Severity.ERROR,
    __doc__,
    frozenset(),
    None,
    group=RuleGroup.POLICY_INPUT,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
