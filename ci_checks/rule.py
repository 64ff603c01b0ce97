"""What a rule is: its code, name, summary, severity, documentation, and check."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ci_checks.diagnostics import Diagnostic, Fix, Related, Severity, Span
from ci_checks.loading import YAML_KINDS, LoadedFile
from ci_checks.repository import FileKind

DOC_SECTIONS = ("What it does", "Why it matters", "Example", "Fix")
__all__ = ["DOC_SECTIONS", "YAML_KINDS", "Rule"]


@dataclass(frozen=True, eq=False)
class Rule:
    code: str
    name: str
    summary: str
    severity: Severity
    docs: str
    kinds: frozenset[FileKind]
    check: Callable[[LoadedFile], Iterable[Diagnostic]] | None
    """None for rules whose findings come from elsewhere: the policy evaluator, inline ignores."""

    def diagnostic(
        self,
        span: Span,
        message: str,
        related: Sequence[Related] = (),
        fix: Fix | None = None,
        severity: Severity | None = None,
    ) -> Diagnostic:
        return Diagnostic(self.code, self.name, severity or self.severity, message, span, tuple(related), fix)
