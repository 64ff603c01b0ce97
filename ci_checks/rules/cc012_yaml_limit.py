"""A YAML document exceeds ci-checks' expansion or nesting limits.

## What it does
Reports a document whose aliases would expand it by more than 100,000 nodes
(the "billion laughs" attack), an alias that refers to a collection containing
itself, or collections nested more than 256 levels deep. Reading stops at the
reported position.

## Why it matters
Expanding such a document takes exponential time and memory. ci-checks runs
on untrusted pull requests and must answer in bounded time; no real workflow
comes near these limits.

## Example
```yaml
a: &a [x, x, x, x, x, x, x, x, x, x]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
# ... and so on, each level ten times the one before
```

## Fix
Remove the aliases that multiply; write the values out, or use a matrix.
"""

from __future__ import annotations

from collections.abc import Iterator

from ci_checks.core.diagnostics import Diagnostic, Severity
from ci_checks.model.loading import LoadedFile
from ci_checks.rules._common import yaml_issues
from ci_checks.rules.rule import YAML_KINDS, Rule, RuleGroup, RuleStatus
from ci_checks.syntax.yamlpos import IssueKind


def check(file: LoadedFile) -> Iterator[Diagnostic]:
    return yaml_issues(file, IssueKind.LIMIT, RULE)


RULE = Rule(
    "CC012",
    "yaml-limit",
    "Document exceeds alias or nesting limits",
    Severity.ERROR,
    __doc__,
    YAML_KINDS,
    check,
    group=RuleGroup.YAML,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
