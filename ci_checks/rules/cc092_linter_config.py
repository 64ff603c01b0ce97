"""A linter configuration in the checked repository turns checks off, or cannot be used.

## What it does
actionlint reads `.github/actionlint.yaml` (or `.yml`) and zizmor
`.github/zizmor.yml` (or `zizmor.yaml`, at the root too). When the
repository's configuration ignores findings (actionlint's `paths: {...:
{ignore: [...]}}`), disables audits (zizmor's `rules.<audit>.disable`),
ignores files (`rules.<audit>.ignore`), changes severities
(`rules.<audit>.remap`) or reconfigures an audit (`rules.<audit>.config`),
this says what it turns off, once, at the configuration (information: the
run does not fail for it). A configuration that is not valid YAML, or that
the linter rejects, is a warning: the linter then runs without it, and the
message gives the linter's one-line reason.

ci-checks hands the linter a copy of the configuration it read itself, never
the repository's file: a configuration that is a symbolic link, a FIFO or a
folder is a CC004 instead, and the linter runs with no configuration.

Under `--config-ref REF`, an inline `# zizmor: ignore[...]` or `# ci-checks:
ignore[...]` comment on a line that REF's file does not have is reported
here too, and does not suppress anything.

## Why it matters
A pull request can add a linter configuration along with the workflow it
would be flagged for. Without a trace in the output, removing every finding
looks exactly like fixing them. With `--config-ref`, configurations come from
a trusted commit instead, and a pull request cannot change them at all.

## Example
```
.github/zizmor.yml:3:5: CC092 zizmor's configuration turns checks off: audit template-injection disabled
```

## Fix
Nothing, when the configuration is intended: the finding documents it. To
judge pull requests by the configuration of the base branch, run with
`--config-ref` (see the README).
"""

from __future__ import annotations

from ci_checks.diagnostics import Severity
from ci_checks.rule import Rule

RULE = Rule(
    "CC092",
    "linter-config",
    "A linter configuration in the repository turns checks off, or cannot be used",
    Severity.INFO,
    __doc__,
    frozenset(),
    None,
)
