"""A workflow or action file is not UTF-8.

## What it does
Reports a file whose bytes are not valid UTF-8 (with or without a byte-order
mark), at the first byte that cannot be decoded; UTF-16 and UTF-32 files are
reported at the top.

## Why it matters
GitHub reads workflow files as UTF-8. A file saved in Latin-1 or UTF-16 by an
editor fails to load or shows garbled names and messages.

## Example
A step name `Résumé` saved in Latin-1: the byte `0xe9` is not UTF-8.

## Fix
Re-save the file as UTF-8.
"""

from __future__ import annotations

from collections.abc import Iterator

from ci_checks.core.diagnostics import Diagnostic, Severity
from ci_checks.core.source import ProblemKind
from ci_checks.model.loading import LoadedFile
from ci_checks.rules._common import source_problems
from ci_checks.rules.rule import YAML_KINDS, Rule, RuleGroup, RuleStatus


def check(file: LoadedFile) -> Iterator[Diagnostic]:
    return source_problems(file, ProblemKind.ENCODING, RULE)


RULE = Rule(
    "CC003",
    "invalid-encoding",
    "File is not valid UTF-8",
    Severity.ERROR,
    __doc__,
    YAML_KINDS,
    check,
    group=RuleGroup.SOURCE,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
