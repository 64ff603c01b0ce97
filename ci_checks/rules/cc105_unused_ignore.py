"""An inline `# ci-checks: ignore[...]` comment suppresses nothing.

## What it does
With `--report-unused-ignores`, reports each name in a
`# ci-checks: ignore[NAME, ...]` comment that suppressed no finding in this
run: the finding was fixed, the comment sits on the wrong line, or the name is
misspelt (names that are no rule code, rule name or policy rule id are said to
be unknown).

## Why it matters
A stale ignore hides the next real finding on that line or step, and a
misspelt one never worked. Reporting them keeps every suppression deliberate.

## Example
```yaml
- run: make  # ci-checks: ignore[CC031] nothing deprecated here any more
```

## Fix
Delete the comment, or the stale name in it.
"""

from __future__ import annotations

from ci_checks.core.diagnostics import Severity
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus

RULE = Rule(
    "CC105",
    "unused-ignore",
    "An inline ignore comment suppresses nothing",
    Severity.WARNING,
    __doc__,
    frozenset(),
    None,
    group=RuleGroup.SUPPRESSION,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
