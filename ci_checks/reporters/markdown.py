"""A Markdown summary, as GitHub shows it on a run's summary page ($GITHUB_STEP_SUMMARY).

Messages quote the checked files, which a pull request controls: every
character with a meaning in Markdown or HTML is escaped, so a finding cannot
inject links, images or markup into the summary. The one link in a row is
ours: the code links to its check's documentation (`ci_checks.reporters.docs`,
which accepts only `https://` URLs without characters that end a link).
"""

from __future__ import annotations

import re

from ci_checks.diagnostics import Diagnostic, Severity
from ci_checks.outcome import Outcome
from ci_checks.reporters import docs

_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>&~])")
_ICONS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "info"}
MAX_BYTES = 1 << 20
"""GitHub takes at most 1 MiB of job summary per step: a longer table is cut, by its UTF-8 bytes, with a note
saying how many rows were left out."""
MAX_MESSAGE_CHARS = 1000
"""A message longer than this is cut in its row (`…`), so that one finding cannot fill the summary."""
_NOTE_BYTES = 200


def escape(text: str) -> str:
    return _SPECIAL.sub(r"\\\1", text).replace("\r", " ").replace("\n", " ")


def render(outcome: Outcome, max_bytes: int = MAX_BYTES) -> str:
    """The summary, at most `max_bytes` of UTF-8 (nothing when even its heading would not fit)."""
    diagnostics = outcome.diagnostics
    files = f"{outcome.files} file{'s' if outcome.files != 1 else ''} checked"
    if not diagnostics:
        return f"## ci-checks\n\nNo problems found; {files}.\n"
    counts = ", ".join(
        f"{count} {severity.value}{'s' if count != 1 else ''}"
        for severity in Severity
        if (count := sum(1 for d in diagnostics if d.severity is severity))
    )
    lines = [
        "## ci-checks",
        "",
        f"Found {len(diagnostics)} problem{'s' if len(diagnostics) != 1 else ''} ({counts}); {files}.",
        "",
        "| severity | location | code | rule | message |",
        "|---|---|---|---|---|",
    ]
    used = len("\n".join(lines).encode("utf-8")) + 1 + _NOTE_BYTES
    if used > max_bytes:
        return ""
    shown = 0
    for diagnostic in diagnostics:
        row = _row(diagnostic)
        size = len(row.encode("utf-8")) + 1
        if used + size > max_bytes:
            break
        lines.append(row)
        used += size
        shown += 1
    if shown < len(diagnostics):
        lines += ["", f"{len(diagnostics) - shown} more not shown; see the job log or the SARIF file."]
    return "\n".join(lines) + "\n"


def _row(diagnostic: Diagnostic) -> str:
    span = diagnostic.span
    code = escape(diagnostic.code)
    link = docs.url(diagnostic.code, diagnostic.url)
    message = diagnostic.message
    if len(message) > MAX_MESSAGE_CHARS:
        message = message[: MAX_MESSAGE_CHARS - 1] + "…"
    return (
        f"| {_ICONS[diagnostic.severity]} | {escape(span.path)}:{span.line}:{span.column} "
        f"| {f'[{code}]({link})' if link else code} | {escape(diagnostic.rule)} | {escape(message)} |"
    )
