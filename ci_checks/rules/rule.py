"""What a rule is: its code, name, summary, severity, documentation, group, status, and check."""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from ci_checks.core.diagnostics import Diagnostic, Fix, Related, Severity, Span
from ci_checks.core.repository import FileKind
from ci_checks.model.loading import YAML_KINDS, LoadedFile
from ci_checks.rules.context import RepositoryContext

DOC_SECTIONS = ("What it does", "Why it matters", "Example", "Fix")
__all__ = ["DOC_SECTIONS", "YAML_KINDS", "Rule", "RuleGroup", "RuleStatus"]


class RuleGroup(enum.Enum):
    """What a rule's findings are about. Codes are numbered by group: CC0xx files and workflows, CC09x the
    external linters, CC1xx policy rules and ignore comments."""

    SOURCE = "source"
    """A file cannot be read as text: too large, binary, not UTF-8, unreadable (CC001-CC004)."""
    YAML = "yaml"
    """A file read as text is not YAML that can be modelled (CC010-CC014)."""
    SCHEMA = "schema"
    """A workflow or action GitHub would reject by its schema (CC020, CC021)."""
    WORKFLOW = "workflow"
    """What a workflow, action, Dockerfile or script does (CC030-CC055)."""
    LINTER_RUN = "linter-run"
    """An external linter could not run or complete (CC090, CC091): a finding of the machine, not of the files."""
    LINTER_CONFIG = "linter-config"
    """A linter configuration in the repository (CC092)."""
    POLICY = "policy"
    """A policy rule's verdict, one code per rule kind (CC100-CC103)."""
    POLICY_INPUT = "policy-input"
    """What a policy rule reads: it selects nothing, or cannot read it (CC104, CC106)."""
    SUPPRESSION = "suppression"
    """An ignore comment (CC105)."""


class RuleStatus(enum.Enum):
    STABLE = "stable"
    PREVIEW = "preview"
    """Its findings may still change much between versions."""
    DEPRECATED = "deprecated"
    """Still checked; to be removed."""
    REMOVED = "removed"
    """No longer checked; kept so that `ci-checks rule` and its page say so. A rule taken out of the registry
    altogether leaves its code to `registry.RETIRED_CODES`."""


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
    group: RuleGroup = field(kw_only=True)
    status: RuleStatus = field(kw_only=True)
    since: str = field(kw_only=True)
    """The version of ci-checks that first had the rule."""

    def diagnostic(
        self,
        span: Span,
        message: str,
        related: Sequence[Related] = (),
        fix: Fix | None = None,
        severity: Severity | None = None,
    ) -> Diagnostic:
        return Diagnostic(self.code, self.name, severity or self.severity, message, span, tuple(related), fix)
