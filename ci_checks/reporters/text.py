"""`path:line:col: CODE message`, then the source line with a caret underline; or, `concise`, one line a finding.

With `colour` (on a terminal, unless `NO_COLOR` is set), the place is bold,
the code and the carets take the severity's colour (red error, yellow warning,
cyan info), and the rule id is dim; the text is otherwise the same.

`concise` (`--output-format concise`, as ruff's) writes each finding as
`path:line:col: CODE message [name]`, the name of its rule always given (a
policy rule's id, a linter finding's `shellcheck` or `zizmor-artipacked`),
then the summary line: what editors' error formats and `grep` read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ci_checks.core.diagnostics import Diagnostic, Severity, Span
from ci_checks.core.escaping import one_line
from ci_checks.core.source import SourceFile
from ci_checks.rules import NAMES_BY_CODE

if TYPE_CHECKING:
    from ci_checks.engine.outcome import Outcome


_COLOURS = {Severity.ERROR: "31", Severity.WARNING: "33", Severity.INFO: "36"}


def _paint(text: str, code: str, colour: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if colour and text else text


def header(diagnostic: Diagnostic, colour: bool = False, named: bool = False) -> str:
    """`path:line:col: CODE message`, with `[policy-rule-id]` after findings of policy rules and the rule's name after
    a linter's findings (`named`: after every finding, its rule's name)."""
    span = diagnostic.span
    shown = named or diagnostic.policy_id is not None or diagnostic.code not in NAMES_BY_CODE
    rule = f" {_paint(f'[{diagnostic.rule}]', '2', colour)}" if shown else ""
    place = _paint(f"{span.path}:{span.line}:{span.column}:", "1", colour)
    code = _paint(diagnostic.code, "1;" + _COLOURS[diagnostic.severity], colour)
    return f"{place} {code} {diagnostic.message}{rule}"


def excerpt(span: Span, source: SourceFile | None, carets: str = "") -> list[str]:
    """The span's first line, numbered, with carets under the span (to the end of that line)."""
    if source is None or source.problem is not None or not source.text:
        return []
    line = one_line(source.line_text(span.line).replace("\t", " "), starts_line=False)
    if not line.strip():
        return []
    start = min(span.column, len(line) + 1)
    end = span.end_column if span.end_line == span.line else len(line) + 1
    width = max(1, min(end, len(line) + 1) - start)
    number = str(span.line)
    gutter = " " * len(number)
    underline = f"\x1b[{carets}m{'^' * width}\x1b[0m" if carets else "^" * width
    return [f"{gutter} |", f"{number} | {line}", f"{gutter} | {' ' * (start - 1)}{underline}"]


def render(diagnostics: list[Diagnostic], sources: dict[str, SourceFile], files: int, colour: bool = False) -> str:
    lines: list[str] = []
    for diagnostic in diagnostics:
        lines.append(header(diagnostic, colour))
        carets = _COLOURS[diagnostic.severity] if colour else ""
        lines.extend(excerpt(diagnostic.span, sources.get(diagnostic.span.path), carets))
        for related in diagnostic.related:
            where = related.span
            location = f"{where.line}:{where.column}" if where.path == diagnostic.span.path else header_of(where)
            lines.append(f"  = note: {related.message} at {location}")
        fix = diagnostic.fix
        if fix is not None:
            label = fix.description if fix.safe else f"{fix.description}; unsafe: --unsafe-fixes"
            for edit in fix.edits:
                if "\n" in edit.replacement:
                    lines.append(f"  = fix ({label}):")
                    parts = edit.replacement.strip("\n").split("\n")
                    lines.extend(f"    | {one_line(part, starts_line=False)}" for part in parts)
                else:
                    lines.append(f"  = fix ({label}): {one_line(edit.replacement, starts_line=False)}")
            if not fix.edits:
                lines.append(f"  = fix: {label}")
        lines.append("")
    lines.append(summary(diagnostics, files, colour))
    return "\n".join(lines) + "\n"


def concise(diagnostics: list[Diagnostic], files: int, colour: bool = False) -> str:
    """One line a finding, then the summary line."""
    lines = [header(diagnostic, colour, named=True) for diagnostic in diagnostics]
    lines.append(summary(diagnostics, files, colour))
    return "\n".join(lines) + "\n"


def header_of(span: Span) -> str:
    return f"{span.path}:{span.line}:{span.column}"


def summary(diagnostics: list[Diagnostic], files: int, colour: bool = False) -> str:
    checked = f"{files} file{'s' if files != 1 else ''} checked"
    if not diagnostics:
        return f"No problems found; {checked}."
    counts = []
    for severity in Severity:
        count = sum(1 for d in diagnostics if d.severity is severity)
        if count:
            counts.append(_paint(f"{count} {severity.value}{'s' if count != 1 else ''}", _COLOURS[severity], colour))
    return f"Found {len(diagnostics)} problem{'s' if len(diagnostics) != 1 else ''} ({', '.join(counts)}); {checked}."


def statistics(outcome: Outcome) -> str:
    """How many findings each rule has, most first: `count  code  rule  severity`, then the summary line."""
    counts: dict[tuple[str, str, Severity], int] = {}
    for diagnostic in outcome.diagnostics:
        key = (diagnostic.code, diagnostic.rule, diagnostic.severity)
        counts[key] = counts.get(key, 0) + 1
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0][0], item[0][1]))
    width = max((len(code) for (code, _, _), _ in ordered), default=0)
    lines = [f"{count:>6}  {code:<{width}}  {rule}  ({severity.value})" for (code, rule, severity), count in ordered]
    lines.append(summary(outcome.diagnostics, outcome.files))
    return "\n".join(lines) + "\n"
