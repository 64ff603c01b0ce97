"""A Markdown summary, as GitHub shows it on a run's summary page ($GITHUB_STEP_SUMMARY).

Messages quote the checked files, which a pull request controls: every
character with a meaning in Markdown or HTML is escaped, so a finding cannot
inject links, images or markup into the summary. The one link in a row is
ours: the code links to its check's documentation (`ci_checks.reporters.docs`,
which accepts only `https://` URLs without characters that end a link).
"""

from __future__ import annotations

import re

from ci_checks.diagnostics import Severity
from ci_checks.outcome import Outcome
from ci_checks.reporters import docs

_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>&~])")
_ICONS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "info"}
MAX_ROWS = 500
"""Job summaries are limited to 1 MiB; a longer table is cut with a note saying how many rows were left out."""


def escape(text: str) -> str:
    return _SPECIAL.sub(r"\\\1", text).replace("\r", " ").replace("\n", " ")


def render(outcome: Outcome) -> str:
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
    for diagnostic in diagnostics[:MAX_ROWS]:
        span = diagnostic.span
        code = escape(diagnostic.code)
        link = docs.url(diagnostic.code, diagnostic.url)
        lines.append(
            f"| {_ICONS[diagnostic.severity]} | {escape(span.path)}:{span.line}:{span.column} "
            f"| {f'[{code}]({link})' if link else code} | {escape(diagnostic.rule)} | {escape(diagnostic.message)} |"
        )
    if len(diagnostics) > MAX_ROWS:
        lines += ["", f"{len(diagnostics) - MAX_ROWS} more not shown; see the job log or the SARIF file."]
    return "\n".join(lines) + "\n"
