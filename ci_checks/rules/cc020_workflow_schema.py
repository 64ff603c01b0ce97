"""A workflow does not match the GitHub workflow schema.

## What it does
Validates each workflow the way GitHub reads it, against SchemaStore's GitHub
workflow schema (as shipped by the `check-jsonschema` package) with GitHub's
differences applied, and reports each violation at the exact key or value:
unknown keys (with a "did you mean"), missing required keys, values of the
wrong type, values outside a fixed set (events, activity types, permission
levels), a step with both `uses` and `run` (at the second key), and what
GitHub checks beyond the schema: job and step ids, `needs` that name no job
or form a cycle, cron expressions, `wait` and `cancel` steps that name no
earlier step. GitHub's newer keys are known: `concurrency.queue`, a
schedule's `timezone`, background steps (`background`, `wait`, `wait-all`,
`cancel`) and `parallel` groups, and `$/` self-repository references.

Values are read as GitHub reads them: YAML 1.2 (`on` and `yes` are strings),
`!`-tagged scalars as text, and null, booleans and numbers as text where a
string is wanted (`run: true`, `env: {X: }`, `working-directory:`). Where
SchemaStore and GitHub disagree GitHub wins; `ci_checks.rules.schema.OVERRIDES`
lists every such difference with a shape that shows it, and a test compares
ci-checks with GitHub's own parser on over 500 generated workflows. A file
with YAML that GitHub does not support (CC014) is not validated: it is
reported once for that.

## Why it matters
A typo such as `runs-of:` or `need:` makes GitHub reject the workflow, or,
for some keys, silently ignore the setting; either way it surfaces only after
the push.

## Example
```yaml
on: push
jobs:
  test:
    runs-of: ubuntu-latest
    steps:
      - run: make test
```

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
    for error in schema.validate(file.document, FileKind.WORKFLOW):
        yield RULE.diagnostic(error.span, error.message, error.related)


RULE = Rule(
    "CC020",
    "workflow-schema",
    "Workflow is not one GitHub accepts: its schema, ids, `needs`, cron",
    Severity.ERROR,
    __doc__,
    frozenset({FileKind.WORKFLOW}),
    check,
    group=RuleGroup.SCHEMA,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
