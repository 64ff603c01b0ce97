"""A file a policy rule must read cannot be parsed or searched.

## What it does
Reports a Python file that a rule with a `python:` item selects but that has
a syntax error (at the error), and a regular expression that took longer than
two seconds to search a file (at the expression in the policy file, naming the
file). In both cases the rule could not check that file.

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
repetition such as `(a+)+`).
"""

from __future__ import annotations

from ci_checks.diagnostics import Severity
from ci_checks.rule import Rule

RULE = Rule(
    "CC106",
    "policy-unreadable-input",
    "A file a policy rule reads cannot be parsed or searched",
    Severity.WARNING,
    __doc__,
    frozenset(),
    None,
)
