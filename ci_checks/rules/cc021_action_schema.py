"""An `action.yml` does not match the GitHub action metadata schema.

## What it does
Validates each action metadata file (`action.yml` or `action.yaml`) against
SchemaStore's GitHub action schema (as shipped by `check-jsonschema`) and
reports each violation at the exact key or value. Of the top-level keys only
`runs` is required, as the runner requires it; `name` and `description` are
what the Marketplace asks of a published action, and a local action runs
without them.

## Why it matters
A composite action with a misspelled `runs.using`, a `run:` step without
`shell:`, or an input key typo fails in every workflow that uses it, and only
at run time.

## Example
```yaml
name: setup
description: Set up the toolchain
runs:
  using: composite
  steps:
    - run: ./setup.sh
```
(`shell:` is required on `run:` steps of a composite action.)

## Fix
Correct the key or value at the reported position.
"""

from __future__ import annotations

from collections.abc import Iterator

from ci_checks.core.diagnostics import Diagnostic, Severity
from ci_checks.core.repository import FileKind
from ci_checks.model.loading import LoadedFile
from ci_checks.rules import schema
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus


def check(file: LoadedFile) -> Iterator[Diagnostic]:
    for error in schema.validate(file.document, FileKind.ACTION):
        yield RULE.diagnostic(error.span, error.message, error.related)


RULE = Rule(
    "CC021",
    "action-schema",
    "Action metadata does not match the GitHub action schema",
    Severity.ERROR,
    __doc__,
    frozenset({FileKind.ACTION}),
    check,
    group=RuleGroup.SCHEMA,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
