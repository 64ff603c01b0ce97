"""Inline ignores: `# ci-checks: ignore[NAME, ...] reason`, and `# ci-checks: ignore-next-line[...]`.

A comment suppresses the findings whose code (`CC011`), rule name
(`duplicate-key`) or policy rule id (`no-amd-patch`) it names, when it sits
on the finding's own line, or on the first line of the step or the key line of
the job that contains the finding (in workflows and composite actions), or on
the first line of the Dockerfile instruction. The same comment works in YAML,
in `run:` scripts, in Dockerfiles, in shell scripts and in Python; a `#`
inside a quoted YAML scalar or a Python string is text, not a comment.

`ignore-next-line` on a line of its own works as if it were written at the end
of the next line that is neither blank nor a comment: Docker reads a trailing
`#` in an instruction as an argument, so this is the form for Dockerfiles.

A linter's failure (CC091) is never suppressed: the file that made the linter
fail would otherwise hide that it did. Under `--config-ref REF` a comment is
used only where REF's file has the same comment on the same anchor (the key
path and the text it covers, see `anchors`): one a pull request added, or
copied next to other code, is reported (CC092) and suppresses nothing, as
zizmor's own comments are.
"""

from __future__ import annotations

import bisect
import io
import re
import tokenize
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ci_checks.core.config_source import ConfigSource
from ci_checks.core.diagnostics import Diagnostic, Severity, Span
from ci_checks.core.linters import LINTER_FAILED, looks_like_code
from ci_checks.core.repository import FileKind, kind_of
from ci_checks.core.source import SourceFile
from ci_checks.model.loading import LoadedFile
from ci_checks.rules.cc092_linter_config import RULE as LINTER_CONFIG
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus
from ci_checks.syntax import anchors, dockerfile, yamlpos
from ci_checks.syntax.anchors import Layout, Trusted
from ci_checks.syntax.yamlpos import Node, scalars

UNUSED_IGNORE_DOCS = """\
An inline `# ci-checks: ignore[...]` comment suppresses nothing.

## What it does
With `--report-unused-ignores`, reports each name in a
`# ci-checks: ignore[NAME, ...]` comment that suppressed no finding in this
run: the finding was fixed, the comment sits on the wrong line, or the name is
misspelt (names that are no rule code, rule name or policy rule id are said to
be unknown).

## Why it matters
A stale ignore hides the next real finding on that line or step, and a
misspelt one never worked. Reporting them keeps every suppression deliberate.

## Example
```yaml
- run: make  # ci-checks: ignore[CC031] nothing deprecated here any more
```

## Fix
Delete the comment, or the stale name in it.
"""

UNUSED_IGNORE = Rule(
    "CC105",
    "unused-ignore",
    "An inline ignore comment suppresses nothing",
    Severity.WARNING,
    UNUSED_IGNORE_DOCS,
    frozenset(),
    None,
    group=RuleGroup.SUPPRESSION,
    status=RuleStatus.STABLE,
    since="0.1.0",
)


_IGNORE = re.compile(
    r"(?:^|(?<=\s))#\s*ci-checks:\s*ignore(?P<next>-next-line)?\[(?P<names>[^\]\n]*)\](?P<reason>[^\n]*)", re.MULTILINE
)
_NAME = re.compile(r"[^,\s]+")


@dataclass(eq=False)
class Ignore:
    line: int
    """The line whose findings it suppresses."""
    names: list[tuple[str, Span]]
    reason: str
    comment: Span
    """The comment itself."""
    text: str
    """The comment's text, as its anchor under `--config-ref` holds it."""
    used: set[str] = field(default_factory=set)


def comments(source: SourceFile, file: LoadedFile | None) -> dict[int, list[Ignore]]:
    """The ignore comments of a file, by line: a `#` that starts a line or follows a space and may start a comment."""
    return _comments(source, file.document.root if file is not None else None)


def _comments(source: SourceFile, root: Node | None) -> dict[int, list[Ignore]]:
    found: dict[int, list[Ignore]] = {}
    text = source.text
    if "ci-checks:" not in text:
        return found
    counts = _comment_test(source, root)
    for match in _IGNORE.finditer(text):
        if not counts(match.start()):
            continue
        names_start = match.start("names")
        names = [
            (name.group(), source.span(names_start + name.start(), names_start + name.end()))
            for name in _NAME.finditer(match.group("names"))
        ]
        written_on, _ = source.position(match.start())
        line = anchors.next_code_line(source, written_on) if match.group("next") else written_on
        comment = source.span(match.start(), match.end())
        found.setdefault(line, []).append(Ignore(line, names, match.group("reason").strip(), comment, match.group()))
    return found


def untrusted(
    tables: dict[str, dict[int, list[Ignore]]],
    sources: dict[str, SourceFile],
    files: dict[str, LoadedFile],
    ref: ConfigSource,
) -> list[Diagnostic]:
    """Take out of `tables` each comment that the file at `ref` lacks on the same anchor (a pull request's own, or
    one copied next to other code, under `--config-ref`); a CC092 at each."""
    found: list[Diagnostic] = []
    for path, table in tables.items():
        if not table:
            continue
        source = sources[path]
        trusted = _trusted_ignores(ref, path)
        here = _layout(source, files.get(path))
        for line, ignores in list(table.items()):
            kept = [ignore for ignore in ignores if trusted.claim(here.anchor(ignore.text, ignore.line))]
            for ignore in ignores:
                if ignore not in kept:
                    message = (
                        f"this `ci-checks: ignore` is not in {ref.description} on the same key and text, whose "
                        "configuration this run uses (--config-ref), so it suppresses nothing"
                    )
                    found.append(LINTER_CONFIG.diagnostic(ignore.comment, message))
            table[line] = kept
    return found


def _trusted_ignores(ref: ConfigSource, path: str) -> Trusted:
    """The anchors of the ignore comments of the file at `ref` (none when it has no readable file there)."""
    then = ref.read(path)
    if then is None or then.problem is not None:
        return Trusted(())
    kind = kind_of(path)
    root = yamlpos.parse(then).root if kind in (FileKind.WORKFLOW, FileKind.ACTION) else None
    instructions = dockerfile.parse(then) if kind is FileKind.DOCKERFILE else None
    there = anchors.layout(then, root, instructions)
    table = _comments(then, root)
    return Trusted(there.anchor(i.text, i.line) for ignores in table.values() for i in ignores)


def _layout(source: SourceFile, file: LoadedFile | None) -> Layout:
    if file is None:
        return anchors.layout(source, None)
    return anchors.layout(source, file.document.root, file.dockerfile)


def _comment_test(source: SourceFile, root: Node | None) -> Callable[[int], bool]:
    """Whether a `#` at an offset of the file may start a comment.

    In Python only comment tokens count, not `#` inside strings. In YAML a `#`
    inside a quoted scalar is text; one in a block scalar counts, as that is a
    comment of the `run:` script it holds.
    """
    if kind_of(source.path) is FileKind.PYTHON:
        comment_starts = _python_comments(source.text)
        if comment_starts is not None:
            return lambda offset: source.position(offset) in comment_starts
    elif root is not None:
        quoted = _quoted_ranges(source, root)
        quoted_starts = [start for start, _ in quoted]

        def outside_quotes(offset: int) -> bool:
            index = bisect.bisect_right(quoted_starts, offset) - 1
            return index < 0 or offset >= quoted[index][1]

        return outside_quotes
    return lambda offset: True


def _quoted_ranges(source: SourceFile, root: Node) -> list[tuple[int, int]]:
    """The offsets of the quoted scalars of a YAML tree, in order."""
    quoted = [scalar.span for scalar in scalars(root) if scalar.style in ("'", '"')]
    return sorted((source.offset(s.line, s.column), source.offset(s.end_line, s.end_column)) for s in quoted)


def _python_comments(text: str) -> set[tuple[int, int]] | None:
    """Line and column of each comment token; None when the file cannot be tokenized (every match then counts)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    return {(token.start[0], token.start[1] + 1) for token in tokens if token.type == tokenize.COMMENT}


def anchor_lines(file: LoadedFile | None, line: int) -> list[int]:
    """The lines whose ignore comments cover a finding on `line`."""
    lines = [line]
    if file is None:
        return lines
    workflow = file.workflow
    if workflow is not None:
        for job in workflow.jobs.values():
            if job.key.span.line <= line <= job.node.span.end_line:
                lines.append(job.key.span.line)
    for step in file.steps:
        if step.span.line <= line <= step.span.end_line:
            lines.append(step.span.line)
    if file.dockerfile is not None:
        for instruction in file.dockerfile.instructions:
            if instruction.span.line <= line <= instruction.span.end_line:
                lines.append(instruction.span.line)
    return lines


def _names_diagnostic(name: str, diagnostic: Diagnostic) -> bool:
    return name.upper() == diagnostic.code.upper() or name == diagnostic.rule


def apply(
    diagnostics: list[Diagnostic],
    sources: dict[str, SourceFile],
    files: dict[str, LoadedFile],
    known: set[str],
    report_unused: Iterable[str] = (),
    ref: ConfigSource | None = None,
) -> list[Diagnostic]:
    """The diagnostics no ignore comment suppresses, plus unused-ignore findings for the files in `report_unused`.

    `known` holds every code, rule name and policy id, to tell a stale ignore from a misspelt one. With `ref`
    (`--config-ref`), only the comments whose lines the ref's files have are used, and the others reported.
    """
    tables = {path: comments(source, files.get(path)) for path, source in sources.items() if source.problem is None}
    kept = untrusted(tables, sources, files, ref) if ref is not None else []
    for diagnostic in diagnostics:
        table = tables.get(diagnostic.span.path, {}) if diagnostic.code != LINTER_FAILED else {}
        suppressed = False
        for line in anchor_lines(files.get(diagnostic.span.path), diagnostic.span.line) if table else ():
            for ignore in table.get(line, ()):
                for name, _ in ignore.names:
                    if _names_diagnostic(name, diagnostic):
                        ignore.used.add(name)
                        suppressed = True
        if not suppressed:
            kept.append(diagnostic)
    rule = UNUSED_IGNORE
    for path in report_unused:
        for ignores in tables.get(path, {}).values():
            for ignore in ignores:
                for name, span in ignore.names:
                    if name in ignore.used:
                        continue
                    if name in known or name.upper() in known or looks_like_code(name):
                        message = f"ignore[{name}] suppresses nothing here"
                    else:
                        message = f"ignore[{name}] names no rule code, rule name or policy rule id"
                    kept.append(rule.diagnostic(span, message))
    return kept
