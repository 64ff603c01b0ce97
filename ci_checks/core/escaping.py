"""Text that came from checked files or a baseline, written so that it cannot pass for anything ci-checks writes.

A pull request controls every file name and every byte ci-checks quotes, and
the GitHub runner reads each line a step prints for workflow commands: a line
that starts with `::` once leading white space is trimmed (`::error ...::`,
`::stop-commands::TOKEN`, which silences the commands that follow), and
`##[command]` anywhere in a line. The runner ends a line at `\\n`, `\\r` or
`\\r\\n`; other readers also at U+2028, U+2029, U+0085 and the like. So every
such text is written on one line and can neither start a line with `::` nor
hold `##[`, in every format and on both streams:

- **messages, rule names, codes and quoted lines** (`one_line`): each control
  character is shown as its Unicode control picture (`\\n` as U+240A `␊`,
  one character for one, so that carets under a quoted line stay in place),
  line and paragraph separators, C1 controls and the characters Unicode
  lets comparisons ignore (zero-width spaces and joiners, bidirectional
  marks, variation selectors) as `\\uXXXX`, the second `#` of `##[` as
  U+FF03 (fullwidth number sign), and a leading `:` as `\\x3a`;
- **file names** (`path`): bytes that are not UTF-8 (read by Python as lone
  surrogates, U+DC80 to U+DCFF), control and separator characters, white space
  or `:` at the start, and the `#` of `##[` are written `%XX` (their UTF-8
  bytes in hexadecimal, as in a URI, which SARIF's `uri` is): `caf\\xe9.yml` on
  disk is `caf%E9.yml`, `::error::x` is `%3A%3Aerror::x`, in text, JSON,
  SARIF, JUnit, Markdown and GitHub annotations alike. Any other lone
  surrogate becomes U+FFFD.

A fix's replacement text is data that `--fix` writes back: JSON and SARIF
keep it exact, with `##[` written `#\\u0023[` (`json_text`); text output shows
it line by line through `one_line`.
"""

from __future__ import annotations

import dataclasses
import re

from ci_checks.core.diagnostics import Diagnostic, Related, Span
from ci_checks.core.source import printable

_CONTROL = "\x00-\x08\x0a-\x1f\x7f"
_UNSEEN = (
    "\x80-\x9f\u2028\u2029\xad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff"
)
"""C1 controls, the line and paragraph separators, and Unicode's default-ignorable characters (zero-width spaces
and joiners, bidirectional marks and overrides, variation selectors): a comparison that ignores them, as a
culture-aware one does, would read `:\u200b:` as `::`."""
_SPACE = f"\\s{_UNSEEN}"
"""What a reader may trim from the start of a line: white space (`\\s`, as .NET's `TrimStart` trims) and the
invisible characters some take for it."""
_NEEDS_ESCAPING = re.compile(f"[\ud800-\udfff{_CONTROL}{_UNSEEN}]|##\\[|^[{_SPACE}]*:")
_UNSHOWN = re.compile(f"[{_CONTROL}{_UNSEEN}]")
_LEADING_COMMAND = re.compile(f"^([{_SPACE}]*):")
"""A colon at the start of a text, after what a reader trims: the first of a `::`."""

# A file name is stricter: no `:` or white space at its start at all, so that it is never read as more.
_PATH_NEEDS_ESCAPING = re.compile(f"[\ud800-\udfff{_CONTROL}{_UNSEEN}]|##\\[|^[{_SPACE}:]")
_PATH_START = re.compile(f"^[{_SPACE}:]+")
COMMAND_PREFIX = "##["
"""The runner's older form of a workflow command, which it looks for anywhere in a line."""


def one_line(text: str, starts_line: bool = True) -> str:
    """Untrusted text for a place inside a line ci-checks writes: one line, no workflow command.

    `starts_line=False` for text that follows something of ci-checks' own on its line (a quoted source line after
    its number): a leading `:` is then left as it is, and the text keeps its width.
    """
    if not _NEEDS_ESCAPING.search(text):
        return text
    text = printable(text)
    text = _UNSHOWN.sub(lambda match: _picture(match.group()), text)
    text = text.replace(COMMAND_PREFIX, "#\uff03[")
    if not starts_line:
        return text
    return _LEADING_COMMAND.sub(lambda match: match.group(1) + "\\x3a", text, count=1)


def path(text: str) -> str:
    """A file name as every format writes it: `%XX` for what `one_line` would picture (see the module)."""
    if not _PATH_NEEDS_ESCAPING.search(text):
        return text
    text = printable(text)
    text = _UNSHOWN.sub(lambda match: _percent(match.group()), text)
    text = _PATH_START.sub(lambda match: "".join(map(_percent, match.group())), text, count=1)
    return text.replace(COMMAND_PREFIX, "#%23[")


def json_text(document: str) -> str:
    """A JSON document with `##[` inside its strings written `#\\u0023[`: the same data, and no workflow command
    (JSON has `#` nowhere but inside strings)."""
    return document.replace(COMMAND_PREFIX, "#\\u0023[")


def _picture(character: str) -> str:
    """A control character's Unicode control picture (U+2400 to U+241F, U+2421 for DEL); any other as `\\uXXXX`."""
    code = ord(character)
    if code < 0x20:
        return chr(0x2400 + code)
    return "\u2421" if code == 0x7F else f"\\u{code:04x}"


def _percent(character: str) -> str:
    """A character's UTF-8 bytes as `%XX` (no lone surrogate is left by then: `printable` wrote them)."""
    return "".join(f"%{byte:02X}" for byte in character.encode())


def needs_path(name: str) -> bool:
    return bool(_PATH_NEEDS_ESCAPING.search(name))


def needs(diagnostic: Diagnostic) -> bool:
    texts = [diagnostic.code, diagnostic.rule, diagnostic.message, *(r.message for r in diagnostic.related)]
    if diagnostic.fix is not None:
        texts.append(diagnostic.fix.description)
    paths = [diagnostic.span.path, *(r.span.path for r in diagnostic.related)]
    return any(_NEEDS_ESCAPING.search(text) for text in texts) or any(needs_path(name) for name in paths)


def _span(span: Span) -> Span:
    return dataclasses.replace(span, path=path(span.path))


def escaped_diagnostic(diagnostic: Diagnostic) -> Diagnostic:
    related = tuple(Related(_span(r.span), one_line(r.message)) for r in diagnostic.related)
    fix = diagnostic.fix
    if fix is not None:
        edits = tuple(dataclasses.replace(edit, span=_span(edit.span)) for edit in fix.edits)
        fix = dataclasses.replace(fix, description=one_line(fix.description), edits=edits)
    return dataclasses.replace(
        diagnostic,
        code=one_line(diagnostic.code),
        rule=one_line(diagnostic.rule),
        policy_id=None if diagnostic.policy_id is None else one_line(diagnostic.policy_id),
        message=one_line(diagnostic.message),
        span=_span(diagnostic.span),
        related=related,
        fix=fix,
    )


_LINE_END = re.compile("\r\n|[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]")
_COMMAND_LINE = re.compile(f"^[{_SPACE}]*::")


def holds_commands(text: str) -> bool:
    """Whether a line of `text` would be read as a workflow command (at any line end a reader might see)."""
    return COMMAND_PREFIX in text or any(_COMMAND_LINE.match(line) for line in _LINE_END.split(text))


def commands_stopped(text: str) -> str:
    """Text that has to be written as it is (a diff of a checked file) between `::stop-commands::TOKEN` and
    `::TOKEN::`, the runner's own way to print what it must not obey, when it holds a workflow command; the token
    is one nobody can guess and the text does not hold."""
    if not holds_commands(text):
        return text
    import secrets

    token = secrets.token_hex(16)
    while token in text:
        token = secrets.token_hex(16)
    return f"::stop-commands::{token}\n{text}{'' if text.endswith(chr(10)) else chr(10)}::{token}::\n"
