"""One problem, one finding: a linter's finding and one of ci-checks' own that say the same thing become one.

`names.EQUIVALENT` lists the pairs of codes that can report the same fact.
They are the same finding when they stand at the same place, each pair in its
own way (`names.SAME_COLUMN`, `names.SAME_JOB`), and, where a code covers
more than one fact, name the same thing (`names.NAMED`: the missing job, the
secret, the label). One finding remains: ci-checks' own, unless the linter's
message is the more precise one for that fact (`names.LINTER_FIRST`: an
invalid cron, where actionlint names the field that is wrong); the other
stays as a note of the one kept, so nothing said is lost.

A finding of ours inside a `run:` script also counts on the script's first
line, where actionlint reports what it finds in the script as a whole (a
deprecated workflow command).
"""

from __future__ import annotations

import dataclasses
import re

from ci_checks.core.diagnostics import Diagnostic, Related, Span
from ci_checks.core.linters import EQUIVALENT, LINTER_FIRST, NAMED, SAME_COLUMN, SAME_JOB
from ci_checks.model.loading import LoadedFile

_NOTE_CHARS = 200


def merged(own: list[Diagnostic], external: list[Diagnostic], files: dict[str, LoadedFile]) -> list[Diagnostic]:
    """Our findings and the linters', each fact reported by both once (see the module's documentation)."""
    places = _Places(files)
    notes: dict[int, list[Related]] = {}
    replaced: dict[int, Diagnostic] = {}
    used: set[int] = set()
    kept: list[Diagnostic] = []
    for finding in external:
        candidates = [ours for ours in own if places.same_fact(finding, ours)]
        if not candidates:
            kept.append(finding)
            continue
        ours = next((d for d in candidates if id(d) not in used), candidates[0])
        used.add(id(ours))
        pattern = LINTER_FIRST.get(finding.code)
        if pattern is not None and pattern.search(finding.message) and id(ours) not in replaced:
            replaced[id(ours)] = finding
        else:
            notes.setdefault(id(ours), []).append(_note(finding))
    result = []
    for ours in own:
        extra = tuple(notes.get(id(ours), ()))
        instead = replaced.get(id(ours))
        if instead is not None:
            result.append(dataclasses.replace(instead, related=(*instead.related, _note(ours), *extra)))
        else:
            result.append(dataclasses.replace(ours, related=(*ours.related, *extra)) if extra else ours)
    return [*result, *kept]


def _note(finding: Diagnostic) -> Related:
    message = finding.message
    if len(message) > _NOTE_CHARS:
        message = message[: _NOTE_CHARS - 1].rstrip() + "…"
    return Related(finding.span, f"{finding.code} says the same: {message}")


class _Places:
    """Where our findings stand, as the linters place the same facts."""

    def __init__(self, files: dict[str, LoadedFile]) -> None:
        self.files = files
        self._scripts: dict[str, list[Span]] = {}
        self._jobs: dict[str, list[tuple[int, Span]]] = {}

    def same_fact(self, finding: Diagnostic, ours: Diagnostic) -> bool:
        if ours.code not in EQUIVALENT.get(finding.code, ()) or finding.span.path != ours.span.path:
            return False
        if finding.code in SAME_COLUMN:
            at = (finding.span.line, finding.span.column) == (ours.span.line, ours.span.column)
        elif finding.code in SAME_JOB:
            at = finding.span.line in (ours.span.line, self._job_line(ours.span))
        else:
            at = finding.span.line in (ours.span.line, self._script_line(ours.span))
        named = NAMED.get(finding.code)
        if not at or named is None:
            return at
        match = named.search(finding.message)
        thing = next((group for group in match.groups() if group), None) if match is not None else None
        return thing is not None and re.search(rf"(?<![\w-]){re.escape(thing)}(?![\w-])", ours.message) is not None

    def _script_line(self, span: Span) -> int | None:
        """The first line of the `run:` script a place lies in (after it), if any."""
        if span.path not in self._scripts:
            file = self.files.get(span.path)
            steps = file.steps if file is not None else []
            self._scripts[span.path] = [step.run.span for step in steps if step.run is not None]
        return next((s.line for s in self._scripts[span.path] if s.line < span.line <= s.end_line), None)

    def _job_line(self, span: Span) -> int | None:
        """The key line of the job a place lies in, if any."""
        if span.path not in self._jobs:
            file = self.files.get(span.path)
            workflow = file.workflow if file is not None else None
            jobs = workflow.jobs.values() if workflow is not None else []
            self._jobs[span.path] = [(job.key.span.line, job.extent) for job in jobs]
        return next(
            (line for line, extent in self._jobs[span.path] if extent.line <= span.line <= extent.end_line), None
        )
