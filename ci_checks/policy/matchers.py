"""Finding a matcher's occurrences inside a region, in the order they are written."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator

import regex

from ci_checks.diagnostics import Occurrence, Span
from ci_checks.model import Entry
from ci_checks.policy.model import Matcher, pair_text
from ci_checks.policy.regions import Region, step_anchor
from ci_checks.pysource import Fact, FactKind

REGEX_TIMEOUT_S = 2.0
"""How long one regular expression may search one region: a policy comes from the checked repository."""


class RegexTimeout(Exception):
    """A policy regex took longer than `REGEX_TIMEOUT_S` on a region (catastrophic backtracking)."""


def find(matcher: Matcher, region: Region) -> list[Occurrence]:
    found = list(_find(matcher, region))
    return sorted(found, key=lambda o: (o.span.line, o.span.column, o.span.end_line, o.span.end_column))


def _find(matcher: Matcher, region: Region) -> Iterator[Occurrence]:
    if matcher.command is not None:
        pattern = matcher.command
        for command in region.commands():
            if pattern.matches(command.argv):
                yield Occurrence(command.span, command.text)
    elif matcher.step is not None:
        selector = matcher.step
        for step in region.steps:
            if selector.matches(step):
                yield Occurrence(step_anchor(step), step.label)
    elif matcher.text is not None:
        needle = matcher.text
        yield from region.search(lambda text, start, end: _substrings(text, start, end, needle))
    elif matcher.pattern is not None:
        yield from region.search(lambda text, start, end: _regex(matcher.pattern, text, start, end))
    elif matcher.fact is not None and matcher.glob is not None:
        facts = region.file.python_facts
        if isinstance(facts, list):
            for fact in facts:
                if fact.kind is matcher.fact and _fact_matches(fact, matcher.glob):
                    yield Occurrence(fact.span, fact.value)
    else:
        for mapping in region.mappings(matcher.kind):
            entries = [mapping.get(key) for key, _ in matcher.pairs]
            if all(
                entry is not None and _value(entry) == want
                for entry, (_, want) in zip(entries, matcher.pairs, strict=True)
            ):
                first = entries[0]
                assert first is not None
                span = Span(first.key.span.path, first.key.span.line, first.key.span.column, *_end(first.span))
                yield Occurrence(span, ", ".join(f"{key}: {want}" for key, want in matcher.pairs))


def _end(span: Span) -> tuple[int, int]:
    return span.end_line, span.end_column


def _value(entry: Entry) -> str | None:
    resolved = entry.resolved
    if isinstance(resolved, bool):
        return pair_text(resolved)
    return entry.text


def _substrings(text: str, start: int, end: int, needle: str) -> Iterator[tuple[int, int]]:
    position = text.find(needle, start, end)
    while position >= 0:
        yield position, position + len(needle)
        position = text.find(needle, position + 1, end)


def _regex(pattern: regex.Pattern[str] | None, text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    assert pattern is not None
    try:
        for match in pattern.finditer(text, start, end, timeout=REGEX_TIMEOUT_S):
            if match.end() > match.start():
                yield match.start(), match.end()
    except TimeoutError:
        raise RegexTimeout from None


def _fact_matches(fact: Fact, glob: str) -> bool:
    """A glob matches the dotted name, or (without a dot of its own) its last part; an import also by its module."""
    candidates = [fact.value]
    if "." not in glob:
        candidates.append(fact.value.rsplit(".", 1)[-1])
    if fact.kind is FactKind.IMPORT and "." in fact.value:
        candidates.append(fact.value.rsplit(".", 1)[0])
    return any(fnmatch.fnmatchcase(candidate, glob) for candidate in candidates)
