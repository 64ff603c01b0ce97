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

Under `--config-ref REF`, what a change adds to turn a check off is reported
here too, and turns nothing off:

- an inline `# zizmor: ignore[...]` or `# ci-checks: ignore[...]` comment, or
  a `# shellcheck disable=...` directive (any `# shellcheck key=value`) in a
  `run:` script, that REF's file does not have on the same anchor: the same
  key path and the same text it covers (a copy of the base's comment next to
  new code is not the base's);
- a `path = ...` entry of `.gitmodules` that REF's `.gitmodules` does not
  have: the folder stays this repository's, and CC041 still checks what
  leads into it.

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

import re
from collections.abc import Iterator

from ci_checks.core.diagnostics import Diagnostic, Severity
from ci_checks.rules.context import RepositoryContext
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus

_SUBMODULE_PATH = re.compile(r"^[ \t]*(?P<entry>path[ \t]*=[ \t]*(?P<folder>.+))$", re.MULTILINE)


def check_repository(context: RepositoryContext) -> Iterator[Diagnostic]:
    """Under `--config-ref`, each submodule path of the work tree's `.gitmodules` that the ref's lacks."""
    trusted = context.trusted_files
    if trusted is None or not context.repository.exists(".gitmodules"):
        return
    kept = set(context.files.submodules)
    source = context.workspace.load(".gitmodules").source
    if source.problem is not None:
        return
    for match in _SUBMODULE_PATH.finditer(source.text):
        folder = match.group("folder").strip().strip("/")
        if folder in kept:
            continue
        message = (
            f"`{folder}` is no submodule in {trusted.description}, whose configuration this run uses (--config-ref), "
            "so its files are checked as this repository's"
        )
        yield RULE.diagnostic(source.span(match.start("entry"), match.end("entry")), message)


RULE = Rule(
    "CC092",
    "linter-config",
    "A linter configuration in the repository turns checks off, or cannot be used",
    Severity.INFO,
    __doc__,
    frozenset(),
    None,
    check_repository,
    group=RuleGroup.LINTER_CONFIG,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
