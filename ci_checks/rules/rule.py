"""What a rule is: its code, name, summary, severity, documentation, and check."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ci_checks.core.diagnostics import Diagnostic, Fix, Related, Severity, Span
from ci_checks.core.repository import FileKind
from ci_checks.model.loading import YAML_KINDS, LoadedFile
from ci_checks.rules.context import RepositoryContext

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
    """Checks one file of `kinds`; None for rules that check the repository, or whose findings come from
    elsewhere (the policy evaluator, inline ignores)."""
    check_repository: Callable[[RepositoryContext], Iterable[Diagnostic]] | None = None
    """For rules that read more than one file: runs once per checked repository."""

    def diagnostic(
        self,
        span: Span,
        message: str,
        related: Sequence[Related] = (),
        fix: Fix | None = None,
        severity: Severity | None = None,
    ) -> Diagnostic:
        return Diagnostic(self.code, self.name, severity or self.severity, message, span, tuple(related), fix)
