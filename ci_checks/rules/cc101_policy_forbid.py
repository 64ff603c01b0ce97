"""Something a policy `forbid` rule names occurs.

## What it does
For a rule of kind `forbid`, reports every occurrence of each listed item in
the scopes its `where` selects, each at its exact span: text and regular
expressions in any file, shell commands in `run:` scripts, Dockerfile `RUN`
instructions and shell scripts, Dockerfile instructions such as `COPY`, steps,
`with`/`env` pairs, Python names, imports, assignments and base classes,
`key:` nodes that satisfy the item's comparator (at the value, or at the key
for bare existence and `keys`), and files matching a `file:` glob (at line 1).

## Why it matters
Workarounds outlive the bugs they work around. Once upstream fixes a bug, the
local patch (`amd_patch`) or the monkey-patched class
(`ROCmFileSystemWriterAsync`) should be gone everywhere, and stay gone; a
forbid rule makes their return a failing check rather than a code-review
catch.

## Example
```yaml
rules:
  - id: no-amd-patch
    kind: forbid
    where: {files: [".github/workflows/*.yml", "docker/Dockerfile*"]}
    forbid:
      - text: amd_patch
  - id: no-writer-swap
    kind: forbid
    where: {files: ["**/*.py"]}
    forbid:
      - python: {assign: "*.FileSystemWriterAsync"}
```

## Fix
Remove the occurrence. If one occurrence is intended, say why on its line:
`# ci-checks: ignore[no-amd-patch] kept for the 0.5 image`.
"""

from __future__ import annotations

from ci_checks.core.diagnostics import Severity
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus

RULE = Rule(
    "CC101",
    "policy-forbid",
    "Something a policy `forbid` rule names occurs",
    Severity.ERROR,
    __doc__,
    frozenset(),
    None,
    group=RuleGroup.POLICY,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
