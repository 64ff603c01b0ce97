"""A mapping has the same key twice.

## What it does
Reports every repeated key in a mapping, pointing at the repeat and naming
where the key was first defined.

## Why it matters
Many YAML loaders silently keep the last value, so a second `env:` or `if:`
added lower in a long job quietly replaces the first one. GitHub rejects
the workflow instead, but only once it is pushed.

## Example
```yaml
jobs:
  test:
    runs-on: ubuntu-latest
    runs-on: [self-hosted, mi300x]
```

## Fix
Keep one of the keys, or merge their values.
"""

from __future__ import annotations

from collections.abc import Iterator

from ci_checks.core.diagnostics import Diagnostic, Severity
from ci_checks.model.loading import LoadedFile
from ci_checks.rules._common import yaml_issues
from ci_checks.rules.rule import YAML_KINDS, Rule, RuleGroup, RuleStatus
from ci_checks.syntax.yamlpos import IssueKind


def check(file: LoadedFile) -> Iterator[Diagnostic]:
    return yaml_issues(file, IssueKind.DUPLICATE_KEY, RULE)


RULE = Rule(
    "CC011",
    "duplicate-key",
    "A mapping repeats a key",
    Severity.ERROR,
    __doc__,
    YAML_KINDS,
    check,
    group=RuleGroup.YAML,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
