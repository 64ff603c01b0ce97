"""A Markdown summary, as GitHub shows it on a run's summary page ($GITHUB_STEP_SUMMARY).

Messages quote the checked files, which a pull request controls, so a finding
cannot inject links, images or markup into the summary. Everything from a
finding is written inside a table cell, where GitHub's Markdown reads only
inline markup, so only what has a meaning there is escaped, and the raw text
stays readable (`ci-checks.yml`, `snake_case`):

- `\\`, `` ` ``, `*`, `[`, `]`, `<`, `>`, `&`, `~` and `|` always;
- `_` where it could open or close emphasis, not inside a word (`a_b`);
- a word that GitHub would turn into a link by itself (one holding `://`,
  `www.` or an `@` before a `.`: a URL, a domain, an e-mail address, which
  no escape stops) is written as code instead.

The one link in a row is ours: the code links to its check's documentation
(`ci_checks.reporters.docs`, which accepts only `https://` URLs without
characters that end a link), where there is one.
"""

from __future__ import annotations

import re

from ci_checks.core.diagnostics import Diagnostic, Severity
from ci_checks.engine.outcome import Outcome
from ci_checks.reporters import docs

_SPECIAL = re.compile(r"[\\`*\[\]<>&~|]|_+")
_LINKS_BY_ITSELF = re.compile(r"://|www\.|@\S*\.", re.IGNORECASE)
_SPACES = re.compile(r"(\s+)")
_BACKTICKS = re.compile(r"`+")
_ICONS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "info"}
MAX_BYTES = 1 << 20
"""GitHub takes at most 1 MiB of job summary per step: a longer table is cut, by its UTF-8 bytes, with a note
saying how many rows were left out."""
MAX_MESSAGE_CHARS = 1000
"""A message longer than this is cut in its row (`…`), so that one finding cannot fill the summary."""
_NOTE_BYTES = 200


def escape(text: str) -> str:
    """Text for a table cell that GitHub shows as it is (see the module)."""
    words = _SPACES.split(text.replace("\r", " ").replace("\n", " "))
    return "".join(_code(word) if _LINKS_BY_ITSELF.search(word) else _inline(word) for word in words)


def _inline(text: str) -> str:
    def escaped(match: re.Match[str]) -> str:
        found = match.group()
        if not found.startswith("_"):
            return "\\" + found
        before = text[match.start() - 1] if match.start() else ""
        after = text[match.end()] if match.end() < len(text) else ""
        return found if before.isalnum() and after.isalnum() else "\\_" * len(found)

    return _SPECIAL.sub(escaped, text)


def _code(word: str) -> str:
    """A word as a code span, which GitHub never links; `|` stays escaped, as a table cell needs."""
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(word)), default=0) + 1)
    padding = " " if word.startswith("`") or word.endswith("`") else ""
    return f"{fence}{padding}{word.replace('|', chr(92) + '|')}{padding}{fence}"


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
