"""File names that are not UTF-8, written the same way in every format.

On POSIX a file name is bytes; Python reads the bytes that are not UTF-8 as
lone surrogates (U+DC80 to U+DCFF), which no encoder writes and strict JSON
readers reject. Every reporter writes each such byte as `%XX` (its value in
hexadecimal, as in a URI, which SARIF's `uri` is): `caf\\xe9.yml` on disk is
`caf%E9.yml` in text, JSON, SARIF, JUnit, Markdown and GitHub annotations
alike. Any other lone surrogate becomes U+FFFD.
"""

from __future__ import annotations

import dataclasses
import re

from ci_checks.diagnostics import Diagnostic, Span
from ci_checks.outcome import Outcome
from ci_checks.source import printable as escape

_SURROGATE = re.compile("[\ud800-\udfff]")


def escaped(outcome: Outcome) -> Outcome:
    """The outcome with its paths and messages escaped; itself when nothing needs it."""
    texts = [d.span.path + d.message + "".join(r.span.path + r.message for r in d.related) for d in outcome.diagnostics]
    if not any(_SURROGATE.search(text) for text in [*texts, *outcome.sources]):
        return outcome
    return dataclasses.replace(
        outcome,
        diagnostics=[_diagnostic(diagnostic) for diagnostic in outcome.diagnostics],
        sources={escape(path): file for path, file in outcome.sources.items()},
    )


def _span(span: Span) -> Span:
    return dataclasses.replace(span, path=escape(span.path))


def _diagnostic(diagnostic: Diagnostic) -> Diagnostic:
    related = tuple(dataclasses.replace(r, span=_span(r.span), message=escape(r.message)) for r in diagnostic.related)
    fix = diagnostic.fix
    if fix is not None:
        edits = tuple(dataclasses.replace(edit, span=_span(edit.span)) for edit in fix.edits)
        fix = dataclasses.replace(fix, edits=edits)
    return dataclasses.replace(
        diagnostic, span=_span(diagnostic.span), message=escape(diagnostic.message), related=related, fix=fix
    )
