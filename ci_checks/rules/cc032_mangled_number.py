"""A version-like value is read as a number and loses digits.

## What it does
Reports unquoted values in `with:`, `env:` and `strategy.matrix` that YAML
reads as numbers whose text differs from what was written: `3.10` becomes
`3.1`, `12.0` becomes `12`, `010` becomes `10`.

## Why it matters
GitHub converts such a number back to text before passing it on, so
`python-version: 3.10` installs Python 3.1 (or fails to find it), and a
matrix entry `cuda: [11.8, 12.0]` produces the label `12`. The workflow runs,
but not with the version written in it.

## Example
```yaml
strategy:
  matrix:
    python: [3.9, 3.10, 3.11]
steps:
  - uses: actions/setup-python@v5
    with:
      python-version: ${{ matrix.python }}
```

## Fix
Quote the value: `"3.10"`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from ci_checks.core.diagnostics import Diagnostic, Severity
from ci_checks.model import Entry
from ci_checks.model.loading import LoadedFile
from ci_checks.rules.rule import YAML_KINDS, Rule, RuleGroup, RuleStatus
from ci_checks.syntax.yamlpos import Node, Scalar, scalars


def check(file: LoadedFile) -> Iterator[Diagnostic]:
    values: list[Node] = []
    for step in file.steps:
        values += _values(step.with_) + _values(step.env)
    workflow = file.workflow
    if workflow is not None:
        values += _values(workflow.env)
        for job in workflow.jobs.values():
            values += _values(job.env) + _values(job.with_)
            if job.strategy is not None and job.strategy.matrix is not None:
                values.append(job.strategy.matrix)
    for node in values:
        for scalar in scalars(node, keys=False):
            shown = _as_github_text(scalar)
            if shown is not None:
                message = f"{scalar.value} is read as the number {shown}; quote it to keep it as written"
                yield RULE.diagnostic(scalar.span, message)


def _values(entries: dict[str, Entry]) -> list[Node]:
    return [entry.value for entry in entries.values()]


def _as_github_text(scalar: Scalar) -> str | None:
    """The text GitHub makes of a plain number, when it differs from the text written; else None."""
    value = scalar.resolved
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        shown = str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    else:
        shown = str(value)
    written = scalar.value.lstrip("+")
    return shown if shown != written else None


RULE = Rule(
    "CC032",
    "mangled-number",
    "Version-like value is read as a number and loses digits",
    Severity.WARNING,
    __doc__,
    YAML_KINDS,
    check,
    group=RuleGroup.WORKFLOW,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
