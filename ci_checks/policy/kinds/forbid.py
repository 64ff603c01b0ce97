"""`forbid`: every occurrence of every item in the scopes `where` selects is a finding, at its exact span.

A `key:` item with a comparator reports the selected nodes that satisfy it;
a `file:` item (in a rule without `where`) each matching file.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ci_checks.core.diagnostics import Diagnostic, Severity
from ci_checks.policy.model import PolicyRule, RuleContext, RuleKind, Scope
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus

RULE_DOCS = """\
Something a policy `forbid` rule names occurs.

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

RULE = Rule(
    "CC101",
    "policy-forbid",
    "Something a policy `forbid` rule names occurs",
    Severity.ERROR,
    RULE_DOCS,
    frozenset(),
    None,
    group=RuleGroup.POLICY,
    status=RuleStatus.STABLE,
    since="0.1.0",
)


def _compile(raw: Mapping[str, Any], context: RuleContext) -> None:
    return None


def _check(rule: PolicyRule, scope: Scope) -> Iterator[Diagnostic]:
    for item in rule.items:
        for hit in item.find(scope):
            if hit.satisfied:
                if hit.value:
                    detail = f"{hit.text}{hit.context} is {hit.value}, which is forbidden here ({item.description})"
                elif item.kind in ("key", "file"):
                    detail = f"{hit.text}{hit.context} is forbidden here"
                else:
                    found = f" (found {hit.text!r})" if item.kind in ("regex", "python") else ""
                    detail = f"{item.description} is forbidden here{found}"
                yield rule.finding(hit.span, detail)


KIND = RuleKind(
    "forbid",
    RULE,
    {"forbid": {"description": "What must not occur in any scope.", "type": "array", "minItems": 1}},
    ("forbid",),
    _compile,
    __doc__ or "",
    items="forbid",
    check_scope=_check,
)
