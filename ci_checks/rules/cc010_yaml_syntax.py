"""A file is not valid YAML.

## What it does
Reports the first YAML syntax error: bad indentation, a tab used for
indentation, an unclosed quote or bracket, a character YAML forbids, an alias
to an anchor that does not exist, or a second document in the file.

## Why it matters
GitHub refuses to run a workflow that does not parse, and the error is shown
only after the push, on the Actions tab.

## Example
```yaml
jobs:
  test:
        runs-on: ubuntu-latest   # indented with a tab
```

## Fix
Correct the syntax at the reported position; indent with spaces.
"""

from __future__ import annotations

from collections.abc import Iterator

from ci_checks.core.diagnostics import Diagnostic, Severity
from ci_checks.model.loading import LoadedFile
from ci_checks.rules._common import yaml_issues
from ci_checks.rules.rule import YAML_KINDS, Rule, RuleGroup, RuleStatus
from ci_checks.syntax.yamlpos import IssueKind


def check(file: LoadedFile) -> Iterator[Diagnostic]:
    return yaml_issues(file, IssueKind.SYNTAX, RULE)


RULE = Rule(
    "CC010",
    "yaml-syntax",
    "File is not valid YAML",
    Severity.ERROR,
    __doc__,
    YAML_KINDS,
    check,
    group=RuleGroup.YAML,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
