"""What a linter's run says about itself: the linter cannot be run (CC090), or it ran and failed (CC091).

These findings are about the machine and the linter, not about the checked
files: `external` makes them for a linter it cannot start or that fails as a
whole, `context` and `zizmor` for one file a linter cannot load.
"""

from __future__ import annotations

from ci_checks.core.diagnostics import Severity
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus

UNAVAILABLE_DOCS = """\
An external linter that was asked for cannot be run.

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

UNAVAILABLE = Rule(
    "CC090",
    "backend-unavailable",
    "An external linter cannot be run",
    Severity.INFO,
    UNAVAILABLE_DOCS,
    frozenset(),
    None,
    group=RuleGroup.LINTER_RUN,
    status=RuleStatus.STABLE,
    since="0.1.0",
)

FAILED_DOCS = """\
An external linter ran but gave no findings ci-checks could use.

## What it does
Reports, once per linter and at the first file it read, that actionlint,
shellcheck or zizmor crashed, ran past `--backend-timeout` (and was
stopped), exited with a status that does not mean "findings", or printed
output ci-checks cannot read. The message gives the reason and the last
lines the linter printed on stderr. None of that linter's findings are
reported for the run; the other linters' and ci-checks' own are.

Where the failure comes from one file, the finding is at that file and the
others keep their findings: a workflow or action the linter cannot load, and
zizmor's lock file `.github/workflows/actions.lock` when zizmor rejects it
(zizmor then runs again without it). Also reported, at the file, when zizmor
skips a file that ci-checks reads as a workflow or action (zizmor 1.32
cannot parse one that starts with a UTF-8 byte-order mark).

It is an error that no filter drops: a baseline never accepts it,
`--new-since` keeps it wherever it is, `--fail-on error` fails on it, and an
inline `# ci-checks: ignore[CC091]` does not hide it.

## Why it matters
A linter that fails silently looks exactly like a linter that found nothing,
and a change that makes it fail (one garbage file is enough to stop zizmor
for the whole repository) would pass with every finding the linter would
have made. The error fails the run, so a broken or hanging linter is noticed
rather than trusted.

## Example
```
.github/workflows/ci.yml:1:1: CC091 zizmor failed: did not finish within 120 s (raise the limit with --backend-timeout)
```

## Fix
Read the reason: raise `--backend-timeout` for a slow machine, upgrade or
reinstall the linter (`pip install -U 'ci-checks[linters]'`), or, for an
input the linter cannot handle, report it to that linter's authors and leave
the linter out of `--backends` meanwhile. A lock file zizmor rejects is
written again with `gh actions-lock`, or removed.
"""

FAILED = Rule(
    "CC091",
    "backend-failed",
    "An external linter failed, timed out or printed unreadable output",
    Severity.ERROR,
    FAILED_DOCS,
    frozenset(),
    None,
    group=RuleGroup.LINTER_RUN,
    status=RuleStatus.STABLE,
    since="0.1.0",
)

NOTICE_CODES = frozenset({UNAVAILABLE.code, FAILED.code})
"""The codes of what a linter's run says about itself: a finding of the machine, not of the files."""
