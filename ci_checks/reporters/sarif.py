"""SARIF 2.1.0 for GitHub code scanning and other SARIF consumers.

Columns count Unicode code points (`columnKind: unicodeCodePoints`), as all of
ci-checks does; paths are relative to the repository root (`%SRCROOT%`).
Every rule carries a `helpUri` (see `ci_checks.reporters.docs`) and a full
description; built-in rules also their whole documentation as `help`. A policy
rule is its own SARIF rule (`CC101/no-amd-patch`), so that code scanning groups
its alerts by policy. A finding's fix is a SARIF `fix`: one `artifactChange`
per file, each edit a replacement of its exact span (an empty one inserts),
and `properties.safe` saying whether `--fix` applies it without
`--unsafe-fixes`; a linter's own fix, which has no edits, is not one.
zizmor's confidence in a finding is the result's `properties.confidence`.
"""

from __future__ import annotations

import json
from typing import Any

from ci_checks import __version__
from ci_checks.config import registry
from ci_checks.core.diagnostics import Diagnostic, Fix, Severity, Span
from ci_checks.core.escaping import json_text
from ci_checks.engine.outcome import Outcome
from ci_checks.reporters import docs
from ci_checks.rules.rule import Rule

_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
_SRCROOT = "%SRCROOT%"


def rule_id(diagnostic: Diagnostic) -> str:
    if diagnostic.policy_id is not None:
        return f"{diagnostic.code}/{diagnostic.rule}"
    return diagnostic.code


def _region(span: Span) -> dict[str, int]:
    """A finding's region: never empty, so that a finding at an insertion point still underlines a character."""
    region = _exact_region(span)
    if span.end_line == span.line:
        region["endColumn"] = max(span.end_column, span.column + 1)
    return region


def _exact_region(span: Span) -> dict[str, int]:
    """The span as it is; in a fix's `deletedRegion`, an empty one is an insertion point."""
    return {"startLine": span.line, "startColumn": span.column, "endLine": span.end_line, "endColumn": span.end_column}


def _artifact(path: str) -> dict[str, str]:
    return {"uri": path, "uriBaseId": _SRCROOT}


def _location(span: Span, message: str | None = None) -> dict[str, Any]:
    location: dict[str, Any] = {"physicalLocation": {"artifactLocation": _artifact(span.path), "region": _region(span)}}
    if message is not None:
        location["message"] = {"text": message}
    return location


def _rule(identifier: str, diagnostic: Diagnostic) -> dict[str, Any]:
    """The rule's descriptor: what it checks, its documentation (in full for built-in rules) and where it is online."""
    entry: dict[str, Any] = {"id": identifier, "name": diagnostic.rule}
    link = docs.url(diagnostic.code, diagnostic.url)
    if link is not None:
        entry["helpUri"] = link
    built_in = registry.BY_CODE.get(diagnostic.code)
    check = docs.linter_check(diagnostic.code)
    if built_in is not None:
        entry.update(_built_in(built_in, diagnostic, link))
    elif check is not None:
        entry["shortDescription"] = {"text": f"{check.linter} {check.code}"}
        entry["fullDescription"] = {"text": check.description}
        entry["help"] = {"text": f"{check.description} {link}", "markdown": f"{check.description} [{link}]({link})"}
        entry["properties"] = {"tags": [check.linter]}
    else:
        entry["shortDescription"] = {"text": f"{diagnostic.rule} ({diagnostic.code})"}
    return entry


def _built_in(rule: Rule, diagnostic: Diagnostic, link: str | None) -> dict[str, Any]:
    policy = diagnostic.policy_id is not None
    page = rule.docs.strip()
    return {
        "shortDescription": {"text": f"Policy rule {diagnostic.rule} ({rule.summary})" if policy else rule.summary},
        "fullDescription": {"text": docs.what_it_does(rule)},
        "help": {"text": page, "markdown": page + (f"\n\n[{rule.code} {rule.name}]({link})" if link else "")},
        "defaultConfiguration": {"level": _LEVELS[diagnostic.severity if policy else rule.severity]},
        "properties": {"tags": ["ci-checks", "policy"] if policy else ["ci-checks"]},
    }


def _fixes(fix: Fix) -> list[dict[str, Any]]:
    """The fix as SARIF: one change per file, its replacements in order, each deleting the exact span."""
    changes: dict[str, list[dict[str, Any]]] = {}
    for edit in sorted(fix.edits, key=lambda edit: edit.span):
        replacement = {"deletedRegion": _exact_region(edit.span), "insertedContent": {"text": edit.replacement}}
        changes.setdefault(edit.span.path, []).append(replacement)
    artifact_changes = [{"artifactLocation": _artifact(path), "replacements": found} for path, found in changes.items()]
    description = {"text": fix.description}
    return [{"description": description, "artifactChanges": artifact_changes, "properties": {"safe": fix.safe}}]


def document(outcome: Outcome) -> dict[str, Any]:
    rules: dict[str, dict[str, Any]] = {}
    indices: dict[str, int] = {}
    results = []
    for diagnostic in outcome.diagnostics:
        identifier = rule_id(diagnostic)
        if identifier not in rules:
            indices[identifier] = len(rules)
            rules[identifier] = _rule(identifier, diagnostic)
        result: dict[str, Any] = {
            "ruleId": identifier,
            "ruleIndex": indices[identifier],
            "level": _LEVELS[diagnostic.severity],
            "message": {"text": diagnostic.message},
            "locations": [_location(diagnostic.span)],
        }
        if diagnostic.related:
            result["relatedLocations"] = [
                {"id": index, **_location(related.span, related.message)}
                for index, related in enumerate(diagnostic.related)
            ]
        # A linter's own fix has no edits: only `ci-checks check --fix` (asking the linter) can apply it.
        if diagnostic.fix is not None and diagnostic.fix.edits:
            result["fixes"] = _fixes(diagnostic.fix)
        if diagnostic.confidence is not None:
            result["properties"] = {"confidence": diagnostic.confidence}
        results.append(result)
    driver: dict[str, Any] = {"name": "ci-checks", "version": __version__}
    repository = docs.repository()
    if repository is not None:
        driver["informationUri"] = repository
    driver["rules"] = list(rules.values())
    run = {"tool": {"driver": driver}, "columnKind": "unicodeCodePoints", "results": results}
    return {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0", "runs": [run]}


def render(outcome: Outcome) -> str:
    return json_text(json.dumps(document(outcome), indent=2)) + "\n"
