"""actionlint over workflow files: one process, its JSON findings, positions in ci-checks' columns.

actionlint runs without its per-step shellcheck (the shellcheck backend
batches that) and without pyflakes. It is given workflows only: it would read
a composite action as a broken workflow. It reads the private copy of the
checked files (`mirror`), which holds the actions and reusable workflows used
from `./` that lie inside the repository, and an explicit `-config-file`
that ci-checks wrote (`linter_config`): the repository's own configuration
file is never opened by it.

Positions. actionlint gives a node's column in characters, but a place inside
a scalar as the scalar's column plus a byte offset into its value: in
`run: echo "€ ${{ x }}"` it puts `x` two columns right of where it is, and a
place in a `|` block is reported on the block's first line, at the `|`
column plus the byte offset in the whole script. So a column past the start
of a scalar that begins on the reported line is read as a byte offset into
that scalar's value and mapped back through the scalar's source map; any
other column is a character column. The end column is in the same mixed
units, so it is used only where the start needed no conversion; elsewhere
the span runs to the end of the word, which is what actionlint underlines
when a rule gives no end. An expression written over several lines of a `|`
block (a multi-line `if:`) is the exception: a place on one of its later lines
is reported at the `|` line plus the line within the expression, and is mapped
back the same way (see `_in_expression_lines`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ci_checks.backends import tools
from ci_checks.backends.context import ConfigRefused, Context, FileFailed, named_in, with_its_config
from ci_checks.backends.mirror import Mirror
from ci_checks.core.diagnostics import Diagnostic, Severity, Span
from ci_checks.core.linters.actionlint import LINTER
from ci_checks.core.repository import FileKind
from ci_checks.model.loading import LoadedFile
from ci_checks.model.steps import ScalarLocator
from ci_checks.syntax.yamlpos import Node, Scalar, scalars

MIN_VERSION = (1, 7)
_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.\d+)?")
_FINDINGS = (0, 1)
_OPTIONS = ("-format", "{{json .}}", "-shellcheck=", "-pyflakes=", "-no-color")


def inputs(files: list[LoadedFile]) -> list[LoadedFile]:
    return [file for file in files if file.kind is FileKind.WORKFLOW and file.readable]


def run(binary: str, files: list[LoadedFile], context: Context) -> list[Diagnostic]:
    _check_version(binary, context.scratch)
    return with_its_config(context, lambda batch: _run(binary, batch, context), files)


def _run(binary: str, files: list[LoadedFile], context: Context) -> list[Diagnostic]:
    mirror = context.mirror
    config = context.config_file()
    paths = [mirror.path_of(file) for file in files]
    argv = [binary, *(["-config-file", str(config)] if config else []), *_OPTIONS, "--", *paths]
    finished = tools.run([argv], mirror.root, context.limit)[0]
    if finished.returncode not in _FINDINGS:
        stderr = finished.stderr.decode("utf-8", errors="replace")
        reason = (
            f"exited with status {finished.returncode}: {tools.tail(finished.stderr, mirror.root, context.scratch)}"
        )
        if "config file" in stderr and context.config.path is not None:
            raise ConfigRefused(tools.tail(finished.stderr, mirror.root, context.scratch))
        named = named_in(stderr, files, mirror)
        if named is not None:
            raise FileFailed(named, reason)
        raise tools.BackendFailed(reason)
    output = finished.stdout.decode("utf-8", errors="replace")
    try:
        # Without findings, some versions print `null` or nothing.
        return _diagnostics(json.loads(output) if output.strip() else None, mirror)
    except (KeyError, TypeError, ValueError) as error:
        raise tools.unreadable("actionlint's JSON", error, output) from None


def _check_version(binary: str, cwd: Path) -> None:
    """Unavailable for a version before 1.7; a version it cannot read is given the benefit of the doubt."""
    output = tools.version(binary, ("-version",), cwd) or ""
    match = _VERSION.search(output)
    if match is not None and (int(match[1]), int(match[2])) < MIN_VERSION:
        raise tools.Unavailable(
            f"actionlint {match[0]} at {binary} is older than 1.7, which ci-checks needs; "
            "install a newer one with `pip install 'ci-checks[linters]'`"
        )


def _diagnostics(errors: list[dict[str, Any]] | None, mirror: Mirror) -> list[Diagnostic]:
    found = []
    scalars: dict[str, dict[int, list[Scalar]]] = {}
    for error in errors or []:
        kind, message = str(error["kind"]), mirror.shown(str(error["message"]))
        line, column = int(error["line"]), int(error["column"])
        end_column = int(error.get("end_column", column))
        # A finding in a file that was not asked about (an action a workflow uses) is left to that file's own check.
        file = mirror.file_of(str(error["filepath"]))
        if file is None:
            continue
        line, column = file.source.from_yaml_position(line, column)
        starts = scalars.setdefault(file.path, _scalar_starts(file.document.root))
        span = _span(file, starts, line, column, end_column)
        found.append(LINTER.finding(kind, Severity.ERROR, message, span))
    return found


def _scalar_starts(root: Node | None) -> dict[int, list[Scalar]]:
    """The scalars (keys included) that begin on each line, rightmost first."""
    starts: dict[int, list[Scalar]] = {}
    for scalar in scalars(root) if root is not None else ():
        starts.setdefault(scalar.span.line, []).append(scalar)
    for line in starts.values():
        line.sort(key=lambda scalar: scalar.span.column, reverse=True)
    return starts


def _span(file: LoadedFile, starts: dict[int, list[Scalar]], line: int, column: int, end_column: int) -> Span:
    source = file.source
    line = min(max(line, 1), len(source.line_starts))
    column = max(column, 1)
    start_line, start_column = line, min(column, len(source.line_text(line)) + 1)
    if line not in starts:
        in_expression = _in_expression_lines(file, starts, line, column)
        if in_expression is not None:
            start_line, start_column = in_expression
    for scalar in starts.get(line, []):
        begin = scalar.span.column
        if column == begin:
            break
        if column < begin:
            continue
        offset = column - begin - (1 if scalar.style in ("'", '"') else 0)
        value = scalar.value.encode("utf-8")
        if offset > len(value):
            continue
        index = len(value[:offset].decode("utf-8", errors="ignore"))
        place = ScalarLocator(source, scalar).span(index, index)
        start_line, start_column = place.line, place.column
        break
    text = source.line_text(start_line)
    if (start_line, start_column) == (line, column) and end_column >= column:
        end = min(end_column + 1, len(text) + 1)
    else:
        end = start_column
        while end <= len(text) and text[end - 1] not in " \t":
            end += 1
    return Span(file.path, start_line, start_column, start_line, max(end, start_column + 1))


def _in_expression_lines(
    file: LoadedFile, starts: dict[int, list[Scalar]], line: int, column: int
) -> tuple[int, int] | None:
    """Where a place on a later line of an expression written over several lines of a `|` block is.

    actionlint adds the line within the expression to the `|` line, and the
    character column within that line to the `|` column (plus, for a `${{`
    that opens on the block's first line, the column after it). Elsewhere, or
    for an expression it cannot tell apart, None: the position is kept.
    """
    for begin in range(line - 1, 0, -1):
        for scalar in starts.get(begin, []):
            if scalar.style != "|" or scalar.span.end_line < line:
                continue
            lines = scalar.value.split("\n")
            index = line - begin
            opening = lines[0].rfind("${{")
            if "${{" not in scalar.value:
                after = 0
            elif opening >= 0 and "}}" not in lines[0][opening:]:
                after = opening + 3
            else:
                return None
            within = column - scalar.span.column - after
            if index >= len(lines) or not 0 <= within <= len(lines[index]):
                return None
            offset = sum(len(text) + 1 for text in lines[:index]) + within
            place = ScalarLocator(file.source, scalar).span(offset, offset)
            return place.line, place.column
    return None
