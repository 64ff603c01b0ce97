"""A file uses YAML features GitHub Actions does not support.

## What it does
Reports merge keys (`<<: *defaults`), mapping keys that are not scalars, and
tags other than YAML's core ones (`!!str`, `!!int`, ...).

## Why it matters
GitHub Actions supports anchors and aliases, but not merge keys, which are a
YAML 1.1 feature absent from YAML 1.2. Local tools that accept them (PyYAML,
many editors) show a workflow that GitHub rejects.

## Example
```yaml
x-defaults: &defaults
  runs-on: ubuntu-latest
jobs:
  test:
    <<: *defaults
    steps: [{run: make test}]
```

## Fix
Write the keys out, or alias whole values (`env: *common-env`) instead of
merging mappings.
"""

from __future__ import annotations

from collections.abc import Iterator

from ci_checks.core.diagnostics import Diagnostic, Severity
from ci_checks.model.loading import LoadedFile
from ci_checks.rules._common import yaml_issues
from ci_checks.rules.rule import YAML_KINDS, Rule, RuleGroup, RuleStatus
from ci_checks.syntax.yamlpos import IssueKind


def check(file: LoadedFile) -> Iterator[Diagnostic]:
    return yaml_issues(file, IssueKind.UNSUPPORTED, RULE)


RULE = Rule(
    "CC014",
    "unsupported-yaml",
    "YAML feature GitHub Actions does not support",
    Severity.ERROR,
    __doc__,
    YAML_KINDS,
    check,
    group=RuleGroup.YAML,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
