"""Diagnostics as JSON data and back, for results kept between runs.

Reading back is strict: anything but exactly the shapes `encode_diagnostics`
writes raises ValueError or TypeError, which a cache reads as a miss.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ci_checks.core.diagnostics import Diagnostic, Edit, Fix, Related, Severity, Span
from ci_checks.core.linters import PROFILES

_FIELDS = {"code", "rule", "severity", "message", "span", "related", "fix", "url", "confidence", "profile", "policy_id"}
"""The keys of each diagnostic `encode_diagnostics` writes."""


def encode_diagnostics(diagnostics: Iterable[Diagnostic]) -> list[dict[str, Any]]:
    return [
        {
            "code": d.code,
            "rule": d.rule,
            "severity": d.severity.value,
            "message": d.message,
            "span": _span(d.span),
            "related": [[_span(r.span), r.message] for r in d.related],
            "fix": None
            if d.fix is None
            else [d.fix.description, [[_span(e.span), e.replacement] for e in d.fix.edits], d.fix.safe],
            "url": d.url,
            "confidence": d.confidence,
            "profile": d.profile,
            "policy_id": d.policy_id,
        }
        for d in diagnostics
    ]


def decode_diagnostics(data: object) -> list[Diagnostic]:
    """Diagnostics as `encode_diagnostics` wrote them; ValueError or TypeError for anything else."""
    found = []
    for item in as_list(data):
        fields = as_mapping(item, _FIELDS)
        fix = None
        if fields["fix"] is not None:
            description, edits, safe = as_list(fields["fix"], 3)
            fix = Fix(
                as_str(description),
                tuple(Edit(_span_of(span), as_str(text)) for span, text in (as_list(e, 2) for e in as_list(edits))),
                as_bool(safe),
            )
        found.append(
            Diagnostic(
                as_str(fields["code"]),
                as_str(fields["rule"]),
                Severity(fields["severity"]),
                as_str(fields["message"]),
                _span_of(fields["span"]),
                tuple(
                    Related(_span_of(span), as_str(text))
                    for span, text in (as_list(r, 2) for r in as_list(fields["related"]))
                ),
                fix,
                _optional_str(fields["url"]),
                _optional_str(fields["confidence"]),
                _profile(fields["profile"]),
                _optional_str(fields["policy_id"]),
            )
        )
    return found


def _profile(data: object) -> str | None:
    if data is not None and data not in PROFILES:
        raise ValueError("not a profile")
    return _optional_str(data)


def _span(span: Span) -> list[str | int]:
    return [span.path, span.line, span.column, span.end_line, span.end_column]


def _span_of(data: object) -> Span:
    path, *numbers = as_list(data, 5)
    line, column, end_line, end_column = (as_int(number) for number in numbers)
    return Span(as_str(path), line, column, end_line, end_column)


def as_mapping(data: object, keys: set[str] | None = None) -> dict[str, Any]:
    if not isinstance(data, dict) or (keys is not None and set(data) != keys):
        raise ValueError("not the mapping written")
    return data


def as_list(data: object, length: int | None = None) -> list[Any]:
    if not isinstance(data, list) or (length is not None and len(data) != length):
        raise ValueError("not the list written")
    return data


def as_str(data: object) -> str:
    if not isinstance(data, str):
        raise ValueError("not a string")
    return data


def _optional_str(data: object) -> str | None:
    return None if data is None else as_str(data)


def as_int(data: object) -> int:
    if not isinstance(data, int) or isinstance(data, bool):
        raise ValueError("not a number")
    return data


def as_bool(data: object) -> bool:
    if not isinstance(data, bool):
        raise ValueError("not true or false")
    return data
