"""An external linter ran but gave no findings ci-checks could use.

## What it does
Reports, once per linter and at the first file it read, that actionlint,
shellcheck or zizmor crashed, ran past `--backend-timeout` (and was
stopped), exited with a status that does not mean "findings", or printed
output ci-checks cannot read. The message gives the reason and the last
lines the linter printed on stderr. None of that linter's findings are
reported for the run; the other linters' and ci-checks' own are.

Also reported, at the file, when zizmor skips a file that ci-checks reads as
a workflow or action (zizmor 1.32 cannot parse one that starts with a UTF-8
byte-order mark): its other files' findings are kept.

## Why it matters
A linter that fails silently looks exactly like a linter that found nothing.
The warning fails the run, so a broken or hanging linter is noticed rather
than trusted.

## Example
```
.github/workflows/ci.yml:1:1: CC091 zizmor failed: did not finish within 120 s (raise the limit with --backend-timeout)
```

## Fix
Read the reason: raise `--backend-timeout` for a slow machine, upgrade or
reinstall the linter (`pip install -U 'ci-checks[linters]'`), or, for an
input the linter cannot handle, report it to that linter's authors and leave
the linter out of `--backends` meanwhile.
"""

from __future__ import annotations

from ci_checks.diagnostics import Severity
from ci_checks.rule import Rule

RULE = Rule(
    "CC091",
    "backend-failed",
    "An external linter failed, timed out or printed unreadable output",
    Severity.WARNING,
    __doc__,
    frozenset(),
    None,
)
