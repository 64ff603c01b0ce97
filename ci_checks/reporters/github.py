"""GitHub workflow commands: one `::error file=...,line=...::message` annotation per finding.

Escaping follows the runner's toolkit: in the message `%`, `\r` and `\n`
become `%25`, `%0D` and `%0A`; in properties `:` and `,` also become `%3A`
and `%2C`.
"""

from __future__ import annotations

from ci_checks.core.diagnostics import Diagnostic, Severity
from ci_checks.engine.outcome import Outcome

_COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(diagnostic: Diagnostic) -> str:
    span = diagnostic.span
    properties = {
        "file": span.path,
        "line": str(span.line),
        "col": str(span.column),
        "endLine": str(span.end_line),
        "endColumn": str(span.end_column),
        "title": f"{diagnostic.code} {diagnostic.rule}",
    }
    joined = ",".join(f"{key}={escape_property(value)}" for key, value in properties.items())
    return f"::{_COMMANDS[diagnostic.severity]} {joined}::{escape_data(diagnostic.message)}"


def render(outcome: Outcome) -> str:
    return "".join(command(diagnostic) + "\n" for diagnostic in outcome.diagnostics)
