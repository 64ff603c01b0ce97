"""`--output-format json`: the document described by `schemas/ci-checks-output.schema.json`."""

from __future__ import annotations

import json
from typing import Any

from ci_checks.core.diagnostics import Diagnostic, Span
from ci_checks.core.escaping import json_text
from ci_checks.reporters import docs


def _position(span: Span) -> dict[str, Any]:
    return {
        "path": span.path,
        "line": span.line,
        "column": span.column,
        "end_line": span.end_line,
        "end_column": span.end_column,
    }


def as_dict(diagnostic: Diagnostic) -> dict[str, Any]:
    item: dict[str, Any] = {"code": diagnostic.code, "rule": diagnostic.rule, "severity": diagnostic.severity.value}
    item.update(_position(diagnostic.span))
    item["message"] = diagnostic.message
    if diagnostic.related:
        item["related"] = [{**_position(r.span), "message": r.message} for r in diagnostic.related]
    if diagnostic.fix is not None:
        edits = [{**_position(e.span), "replacement": e.replacement} for e in diagnostic.fix.edits]
        item["fix"] = {"description": diagnostic.fix.description, "safe": diagnostic.fix.safe, "edits": edits}
    link = docs.url(diagnostic.code, diagnostic.url)
    if link is not None:
        item["url"] = link
    if diagnostic.confidence is not None:
        item["confidence"] = diagnostic.confidence
    return item


def render(diagnostics: list[Diagnostic]) -> str:
    return json_text(json.dumps({"version": 1, "diagnostics": [as_dict(d) for d in diagnostics]}, indent=2)) + "\n"
