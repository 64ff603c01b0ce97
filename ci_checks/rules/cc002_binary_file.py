"""A workflow or action file is binary.

## What it does
Reports a file that contains a NUL byte, where the first one is.

## Why it matters
A binary file under `.github/workflows/` or named `action.yml` is never a
valid workflow; it is usually a file committed by mistake or a corrupted one.

## Example
An `action.yml` that is really a gzip archive.

## Fix
Replace the file with the YAML text it should hold, or remove it.
"""

from __future__ import annotations

from collections.abc import Iterator

from ci_checks.core.diagnostics import Diagnostic, Severity
from ci_checks.core.source import ProblemKind
from ci_checks.model.loading import LoadedFile
from ci_checks.rules._common import source_problems
from ci_checks.rules.rule import YAML_KINDS, Rule, RuleGroup, RuleStatus


def check(file: LoadedFile) -> Iterator[Diagnostic]:
    return source_problems(file, ProblemKind.BINARY, RULE)


RULE = Rule(
    "CC002",
    "binary-file",
    "File is binary",
    Severity.ERROR,
    __doc__,
    YAML_KINDS,
    check,
    group=RuleGroup.SOURCE,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
