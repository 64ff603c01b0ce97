"""Spans, diagnostics and the severities that decide exit codes.

Positions are 1-based lines and columns counted in characters (Unicode code
points); an end column is exclusive. They stay numbers here: only reporters turn
them into text.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def fails(self) -> bool:
        """Whether a finding of this severity makes `ci-checks check` exit 1."""
        return self is not Severity.INFO


@dataclass(frozen=True, slots=True, order=True)
class Span:
    path: str
    line: int
    column: int
    end_line: int
    end_column: int

    @classmethod
    def point(cls, path: str, line: int = 1, column: int = 1) -> Span:
        return cls(path, line, column, line, column + 1)


@dataclass(frozen=True, slots=True)
class Occurrence:
    """A piece of text found at a span; its repr names the place, for assertion messages."""

    span: Span
    text: str

    def __repr__(self) -> str:
        return f"{self.span.path}:{self.span.line}:{self.span.column}: {self.text!r}"


@dataclass(frozen=True, slots=True)
class Answer:
    """A yes-or-no answer that says why, so that a failing `assert` shows the positions involved."""

    value: bool
    reason: str

    def __bool__(self) -> bool:
        return self.value

    def __repr__(self) -> str:
        return self.reason


@dataclass(frozen=True, slots=True)
class Related:
    span: Span
    message: str


@dataclass(frozen=True, slots=True)
class Edit:
    span: Span
    replacement: str


@dataclass(frozen=True, slots=True)
class Fix:
    """Edits that fix a finding. `safe` ones keep what the workflow does; `--fix` applies only those unless asked.

    A linter's own fix has no edits: `--fix` asks the linter to apply it.
    """

    description: str
    edits: tuple[Edit, ...]
    safe: bool = True


@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: str
    rule: str
    severity: Severity
    message: str
    span: Span
    related: tuple[Related, ...] = field(default=())
    fix: Fix | None = None
    url: str | None = None
    """The documentation of the check, when the linter that found it names it (zizmor's audit page)."""
    confidence: str | None = None
    """How sure the linter is of the finding, when it says (zizmor: `high`, `medium` or `low`)."""
    profile: str | None = None
    """The narrowest profile that keeps a linter's finding, where ci-checks tells it from the repository rather than
    from the code and severity alone (`backends.placement`: an injection only maintainers can reach is `security`'s);
    None where the code, severity and confidence decide (`settings.in_profile`)."""
    policy_id: str | None = None
    """The id of the policy rule whose finding this is (then also its `rule`); None for every other finding. A policy
    rule's id may be any name, a built-in rule's included, so this, not `rule`, tells a policy finding."""

    def sort_key(self) -> tuple[str, int, int, int, int, str, str, str]:
        s = self.span
        return (s.path, s.line, s.column, s.end_line, s.end_column, self.code, self.rule, self.message)


def sorted_diagnostics(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Deterministic output order: by file, position, code, rule, then message.

    Only exact repeats of one rule's finding are dropped: two policy rules that
    say the same thing at the same place are two verdicts.
    """
    unique = {(d.sort_key(), d.related, d.fix, d.severity): d for d in diagnostics}
    return [unique[k] for k in sorted(unique, key=lambda k: k[0])]
