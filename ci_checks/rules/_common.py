"""What several rules share: turning recorded source and YAML problems into diagnostics, a runner label's hint."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator

from ci_checks.core.diagnostics import Diagnostic, Related, Span
from ci_checks.core.source import ProblemKind
from ci_checks.model.inventory import one_edit_apart, other_model, same_machine_class
from ci_checks.model.loading import LoadedFile
from ci_checks.model.runners import GENERIC_LABELS
from ci_checks.rules.rule import Rule
from ci_checks.syntax.yamlpos import IssueKind


def source_problems(file: LoadedFile, kind: ProblemKind, rule: Rule) -> Iterator[Diagnostic]:
    problem = file.source.problem
    if problem is not None and problem.kind is kind:
        yield rule.diagnostic(Span.point(file.path, problem.line, problem.column), problem.message)


def yaml_issues(file: LoadedFile, kind: IssueKind, rule: Rule) -> Iterator[Diagnostic]:
    for issue in file.document.issues:
        if issue.kind is kind:
            related = (Related(issue.related, issue.related_message),) if issue.related is not None else ()
            yield rule.diagnostic(issue.span, issue.message, related)


def did_you_mean(label: str, known: Iterable[str]) -> str:
    """` (did you mean X?)` with the known label closest to `label` (at least 0.6 alike), among those that may name
    the same kind of machine (`same_machine_class`, not `other_model`): never an AMD runner for an NVIDIA label, a
    GPU runner for a CPU one, nor another GPU model (`mi300x` for `mi250`); one every self-hosted runner has only
    for a label one edit from it (`self-hostd`, not `linux-cpu-8` for `linux`); else nothing."""
    lower = label.lower()
    generic = sorted(other for other in GENERIC_LABELS if one_edit_apart(lower, other))
    alike = [
        other
        for other in known
        if other not in GENERIC_LABELS and same_machine_class(label, other) and not other_model(label, other)
    ]
    close = generic[:1] or difflib.get_close_matches(lower, alike, n=1, cutoff=0.6)
    return f" (did you mean `{close[0]}`?)" if close else ""
