"""Which profile keeps a linter finding, where the repository decides it rather than the finding's code.

Two kinds of finding are right for most repositories only in some places:

- zizmor's `template-injection` flags every `${{ }}` expanded into a script
  as code injection, at high confidence for `${{ inputs.* }}` too. It is an
  injection where an outsider chooses the text (`model.trust`): a fork pull
  request's title or branch, an issue's or a comment's text, directly or
  through the inputs callers in this repository pass. Where only people with
  write access choose it (a `workflow_dispatch` input, an input every caller
  fills with a constant, `github.ref_name`), it is hardening advice: the
  `security` profile keeps it, with the same message. An outsider's text that
  reached the expression through callers gets a note at each caller's value.
  Where it cannot be told (a step's output), the finding stays where its
  confidence puts it.
- shellcheck's SC2046 (an unquoted `$(...)` is split into words) is only
  style where the command prints one field (`shell.fields`: `$(id -u)`,
  `$(nproc)`, `$(git rev-parse HEAD)`): only `all` keeps it.

Every other finding is left as it is; `settings.in_profile` reads the
profile given here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from ci_checks.core.diagnostics import Diagnostic, Span
from ci_checks.core.repository import FileKind
from ci_checks.model import Action
from ci_checks.model.expressions import condition
from ci_checks.model.loading import LoadedFile
from ci_checks.model.trust import Author, Place, Trust
from ci_checks.rules.context import RepositoryContext
from ci_checks.syntax.shell import Word, walk
from ci_checks.syntax.shell.fields import one_field

INJECTION = "ZZ-template-injection"
SPLIT_SUBSTITUTION = "SC2046"


def placed(diagnostics: list[Diagnostic], context: RepositoryContext) -> list[Diagnostic]:
    """The linters' findings, each template injection and SC2046 given the profile the repository decides."""
    trust: Trust | None = None
    found = []
    for diagnostic in diagnostics:
        if diagnostic.code == INJECTION:
            trust = trust or Trust(context.workflows, lambda: _actions(context))
            diagnostic = _injection(diagnostic, context, trust)
        elif diagnostic.code == SPLIT_SUBSTITUTION:
            diagnostic = _split(diagnostic, context)
        found.append(diagnostic)
    return found


def _actions(context: RepositoryContext) -> Iterator[Action]:
    for path in context.repository.actions:
        action = context.workspace.load(path, FileKind.ACTION).action
        if action is not None:
            yield action


def _injection(diagnostic: Diagnostic, context: RepositoryContext, trust: Trust) -> Diagnostic:
    file = context.workspace.load(diagnostic.span.path)
    place = _place(file, diagnostic.span)
    if place is None:
        return diagnostic
    control = trust.of(condition(_text(file, diagnostic.span)), place)
    if control.author is not Author.OUTSIDER:
        return dataclasses.replace(diagnostic, profile="security")
    notes = tuple(note for note in control.via if note not in diagnostic.related)
    return dataclasses.replace(diagnostic, related=(*diagnostic.related, *notes)) if notes else diagnostic


def _place(file: LoadedFile, span: Span) -> Place | None:
    """The workflow and job, or the action, the span is written in."""
    if file.action is not None:
        return Place(action=file.action)
    if file.workflow is None:
        return None
    job = next((job for job in file.workflow.jobs.values() if _inside(span, job.extent)), None)
    return Place(file.workflow, job)


def _text(file: LoadedFile, span: Span) -> str:
    source = file.source
    return source.text[source.offset(span.line, span.column) : source.offset(span.end_line, span.end_column)]


def _inside(span: Span, outer: Span) -> bool:
    return (outer.line, outer.column) <= (span.line, span.column) and (span.end_line, span.end_column) <= (
        outer.end_line,
        outer.end_column,
    )


def _split(diagnostic: Diagnostic, context: RepositoryContext) -> Diagnostic:
    """SC2046 placed in `all` where the substitution it is about prints one field."""
    file = context.workspace.load(diagnostic.span.path)
    for step in file.steps:
        if step.run is None or step.script is None or not _inside(diagnostic.span, step.run.span):
            continue
        for node in walk(step.script):
            if not isinstance(node, Word):
                continue
            for substitution in node.substitutions:
                if _inside(substitution.span, diagnostic.span):
                    return dataclasses.replace(diagnostic, profile="all") if one_field(substitution) else diagnostic
    return diagnostic
