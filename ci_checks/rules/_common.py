"""What several rules share: turning recorded source and YAML problems into diagnostics."""

from __future__ import annotations

from collections.abc import Iterator

from ci_checks.diagnostics import Diagnostic, Related, Span
from ci_checks.loading import LoadedFile
from ci_checks.rule import Rule
from ci_checks.source import ProblemKind
from ci_checks.yamlpos import IssueKind


def source_problems(file: LoadedFile, kind: ProblemKind, rule: Rule) -> Iterator[Diagnostic]:
    problem = file.source.problem
    if problem is not None and problem.kind is kind:
        yield rule.diagnostic(Span.point(file.path, problem.line, problem.column), problem.message)


def yaml_issues(file: LoadedFile, kind: IssueKind, rule: Rule) -> Iterator[Diagnostic]:
    for issue in file.document.issues:
        if issue.kind is kind:
            related = (Related(issue.related, issue.related_message),) if issue.related is not None else ()
            yield rule.diagnostic(issue.span, issue.message, related)
