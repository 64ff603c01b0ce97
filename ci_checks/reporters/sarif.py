"""SARIF 2.1.0 for GitHub code scanning and other SARIF consumers.

Columns count Unicode code points (`columnKind: unicodeCodePoints`), as all of
ci-checks does; paths are relative to the repository root (`%SRCROOT%`).
Built-in rules carry their documentation; a policy rule is its own SARIF rule
(`CC101/no-amd-patch`), so that code scanning groups its alerts by policy.
"""

from __future__ import annotations

import json
from typing import Any

from ci_checks import __version__, registry
from ci_checks.check import Outcome
from ci_checks.diagnostics import Diagnostic, Severity, Span

_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
_SRCROOT = "%SRCROOT%"


def rule_id(diagnostic: Diagnostic) -> str:
    built_in = registry.BY_CODE.get(diagnostic.code)
    if built_in is not None and built_in.name != diagnostic.rule:
        return f"{diagnostic.code}/{diagnostic.rule}"
    return diagnostic.code


def _region(span: Span) -> dict[str, int]:
    return {
        "startLine": span.line,
        "startColumn": span.column,
        "endLine": span.end_line,
        "endColumn": max(span.end_column, span.column + 1) if span.end_line == span.line else span.end_column,
    }


def _location(span: Span, message: str | None = None) -> dict[str, Any]:
    location: dict[str, Any] = {
        "physicalLocation": {
            "artifactLocation": {"uri": span.path, "uriBaseId": _SRCROOT},
            "region": _region(span),
        }
    }
    if message is not None:
        location["message"] = {"text": message}
    return location


def _rule(identifier: str, diagnostic: Diagnostic) -> dict[str, Any]:
    built_in = registry.BY_CODE.get(diagnostic.code)
    entry: dict[str, Any] = {"id": identifier, "name": diagnostic.rule}
    if built_in is None:
        entry["shortDescription"] = {"text": f"{diagnostic.rule} ({diagnostic.code})"}
        return entry
    level = _LEVELS[built_in.severity if identifier == built_in.code else diagnostic.severity]
    entry["shortDescription"] = {"text": built_in.summary}
    entry["help"] = {"text": built_in.docs.strip(), "markdown": built_in.docs.strip()}
    entry["defaultConfiguration"] = {"level": level}
    if identifier != built_in.code:
        entry["shortDescription"] = {"text": f"Policy rule {diagnostic.rule} ({built_in.summary})"}
    return entry


def document(outcome: Outcome) -> dict[str, Any]:
    rules: dict[str, dict[str, Any]] = {}
    results = []
    for diagnostic in outcome.diagnostics:
        identifier = rule_id(diagnostic)
        if identifier not in rules:
            rules[identifier] = _rule(identifier, diagnostic)
        result: dict[str, Any] = {
            "ruleId": identifier,
            "ruleIndex": list(rules).index(identifier),
            "level": _LEVELS[diagnostic.severity],
            "message": {"text": diagnostic.message},
            "locations": [_location(diagnostic.span)],
        }
        if diagnostic.related:
            result["relatedLocations"] = [
                {"id": index, **_location(related.span, related.message)}
                for index, related in enumerate(diagnostic.related)
            ]
        if diagnostic.fix is not None and diagnostic.fix.edits:  # a linter's own fix has no edits to describe
            result["fixes"] = [
                {
                    "description": {"text": diagnostic.fix.description},
                    "artifactChanges": [
                        {
                            "artifactLocation": {"uri": edit.span.path, "uriBaseId": _SRCROOT},
                            "replacements": [
                                {"deletedRegion": _region(edit.span), "insertedContent": {"text": edit.replacement}}
                            ],
                        }
                        for edit in diagnostic.fix.edits
                    ],
                }
            ]
        results.append(result)
    driver = {
        "name": "ci-checks",
        "version": __version__,
        "rules": list(rules.values()),
    }
    run = {"tool": {"driver": driver}, "columnKind": "unicodeCodePoints", "results": results}
    return {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0", "runs": [run]}


def render(outcome: Outcome) -> str:
    return json.dumps(document(outcome), indent=2) + "\n"
