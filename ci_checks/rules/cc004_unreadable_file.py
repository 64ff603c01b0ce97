"""A workflow or action file cannot be read.

## What it does
Reports a file that cannot be opened or read, that is not a regular file (a
FIFO or a device), or that is a symbolic link pointing outside the
repository. Such a link is never followed.

## Why it matters
ci-checks reads only the repository it checks. A link from
`.github/workflows/ci.yml` to a file elsewhere on the runner would make the
check read, and leak into its output, files a pull request must not reach.

## Example
`.github/workflows/ci.yml` is a symbolic link to `/etc/passwd`.

## Fix
Replace the link with the file itself, or fix the file's permissions.
"""

from __future__ import annotations

from collections.abc import Iterator

from ci_checks.core.diagnostics import Diagnostic, Severity
from ci_checks.core.source import ProblemKind
from ci_checks.model.loading import LoadedFile
from ci_checks.rules._common import source_problems
from ci_checks.rules.rule import YAML_KINDS, Rule, RuleGroup, RuleStatus


def check(file: LoadedFile) -> Iterator[Diagnostic]:
    return source_problems(file, ProblemKind.UNREADABLE, RULE)


RULE = Rule(
    "CC004",
    "unreadable-file",
    "File cannot be read",
    Severity.ERROR,
    __doc__,
    YAML_KINDS,
    check,
    group=RuleGroup.SOURCE,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
