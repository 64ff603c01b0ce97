"""An external linter that was asked for cannot be run.

## What it does
When `--backends` asks for actionlint, shellcheck or zizmor and its binary
is not found (or, for actionlint, is older than 1.7), reports that once, at
the first file that linter would have read, saying which linter and how to
install it or where to point ci-checks at it. It is information: the run
does not fail for it. The linters are looked up at the path given by
`--actionlint`, `--shellcheck` or `--zizmor`, then in `CI_CHECKS_ACTIONLINT`,
`CI_CHECKS_SHELLCHECK` or `CI_CHECKS_ZIZMOR`, then on PATH, then next to the
Python that runs ci-checks.

## Why it matters
Without the note, a machine that lacks a linter would pass quietly with
fewer checks than a machine that has it, and a clean result would mean less
than it seems.

## Example
```
$ ci-checks check --backends actionlint,shellcheck .
.github/workflows/ci.yml:1:1: CC090 shellcheck is not installed, so it checked nothing; ...
```

## Fix
Install the linters with `pip install 'ci-checks[linters]'`, or name a
binary with the option or environment variable, or leave that linter out of
`--backends`.
"""

from __future__ import annotations

from ci_checks.core.diagnostics import Severity
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus

RULE = Rule(
    "CC090",
    "backend-unavailable",
    "An external linter cannot be run",
    Severity.INFO,
    __doc__,
    frozenset(),
    None,
    group=RuleGroup.LINTER_RUN,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
