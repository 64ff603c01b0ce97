"""A workflow or action file holds no YAML content.

## What it does
Reports a file that is empty or holds only comments and blank lines.

## Why it matters
GitHub lists an empty workflow file as an invalid workflow. It is usually a
workflow that was disabled by commenting it out; deleting it, or disabling
it in the Actions settings, says so clearly.

## Example
```yaml
# name: nightly
# on:
#   schedule: [{cron: "0 3 * * *"}]
```

## Fix
Delete the file, restore its content, or disable the workflow from the
Actions tab instead of commenting it out.
"""

from __future__ import annotations

from collections.abc import Iterator

from ci_checks.core.diagnostics import Diagnostic, Severity
from ci_checks.model.loading import LoadedFile
from ci_checks.rules._common import yaml_issues
from ci_checks.rules.rule import YAML_KINDS, Rule, RuleGroup, RuleStatus
from ci_checks.syntax.yamlpos import IssueKind


def check(file: LoadedFile) -> Iterator[Diagnostic]:
    return yaml_issues(file, IssueKind.EMPTY, RULE)


RULE = Rule(
    "CC013",
    "empty-file",
    "File holds no YAML content",
    Severity.ERROR,
    __doc__,
    YAML_KINDS,
    check,
    group=RuleGroup.YAML,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
