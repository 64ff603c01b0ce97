"""What an editor may do about a finding: apply its fix, or write the comment that ignores it.

An ignore comment names the finding's code (`CC011`, `SC2086`), or the id of
the policy rule that found it (`no-amd-patch`), and goes where
`ci_checks.config.suppression` reads it: at the end of the finding's line, or of the
first line of the step that holds it; in a Dockerfile, where a trailing `#`
would be an argument, on a line of its own before the finding's line or its
instruction (`ignore-next-line`). A name
is added to a comment already there. An edit is offered only when the edited
file still reads as it did (no new YAML problem, and every script runs the
same commands with the same words and here-documents: at the end of a line of
a here-document or of a quoted string that spans lines, `#` is data, and in a
script that is not parsed as shell nothing says what it is) and the comment,
read back, covers the finding.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, fields
from pathlib import Path

from ci_checks.config import suppression
from ci_checks.core import source
from ci_checks.core.diagnostics import Diagnostic
from ci_checks.core.linters import LINTER_FAILED
from ci_checks.core.repository import FileKind, Repository, kind_of
from ci_checks.model.loading import LoadedFile, load
from ci_checks.server.documents import Document
from ci_checks.syntax.shell import Block, Case, Script, walk


@dataclass(frozen=True)
class TextEdit:
    """Text to put between two indexes of a document's text."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Action:
    title: str
    edits: dict[str, tuple[TextEdit, ...]]
    """Edits by the repo-relative path of the file they change."""
    preferred: bool = False


def fix_action(diagnostic: Diagnostic, documents: dict[str, Document]) -> Action | None:
    """The finding's safe fix, as edits of the open documents it changes (None when it has none, or changes a file
    that is not open)."""
    fix = diagnostic.fix
    if fix is None or not fix.safe or not fix.edits:
        return None
    edits: dict[str, list[TextEdit]] = {}
    for edit in fix.edits:
        document = documents.get(edit.span.path)
        if document is None:
            return None
        start = document.offset(*document.from_span(edit.span.line, edit.span.column))
        end = document.offset(*document.from_span(edit.span.end_line, edit.span.end_column))
        text = edit.replacement.replace("\n", document.newline)
        edits.setdefault(edit.span.path, []).append(TextEdit(start, end, text))
    title = f"Fix {diagnostic.code}: {fix.description}"
    return Action(title, {path: tuple(found) for path, found in edits.items()}, preferred=True)


def ignore_name(diagnostic: Diagnostic) -> str | None:
    """What an ignore comment names to suppress this finding alone: the policy rule's id for a policy finding,
    else its code; None for a linter's failure, which no comment suppresses."""
    if diagnostic.code == LINTER_FAILED:
        return None
    return diagnostic.code if diagnostic.policy_id is None else diagnostic.policy_id


def ignore_actions(diagnostic: Diagnostic, document: Document, file: LoadedFile | None, root: Path) -> Iterator[Action]:
    """ "Ignore on this line" and, inside a step that starts on another line, "ignore in this step"; `file` is the
    document as the check read it (None when it was not modelled), `root` its repository's."""
    name = ignore_name(diagnostic)
    relative = diagnostic.span.path
    if name is None or kind_of(relative) is FileKind.TEXT:  # a patch or a README: a `#` is no comment there
        return
    line = diagnostic.span.line
    places = [("on this line", line)]
    enclosing = [("in this step", step.span) for step in (file.steps if file is not None else [])]
    if file is not None and file.dockerfile is not None:
        enclosing += [("in this instruction", instruction.span) for instruction in file.dockerfile.instructions]
    for where, span in enclosing:
        if span.line < line <= span.end_line:
            places.append((where, span.line))
    for where, anchor in places:
        edit = _ignore_edit(document, relative, anchor, name)
        if edit is not None and _covers(document, root, edit, diagnostic, name, file):
            yield Action(f"Ignore {name} {where}", {relative: (edit,)})


def _ignore_edit(document: Document, relative: str, line: int, name: str) -> TextEdit | None:
    """The edit that makes the comment on 1-based `line` name `name`: a name added to the comment there, or a
    comment added."""
    read = source.given(relative, document.content)
    if read.problem is not None:
        return None
    for ignore in suppression.comments(read, None).get(line, ()):
        if ignore.names:
            after = ignore.names[-1][1]
            at = document.offset(*document.from_span(after.end_line, after.end_column))
            return TextEdit(at, at, f", {name}")
    text = document.line(line - 1)
    if kind_of(relative) is FileKind.DOCKERFILE:
        at = document.offset(line - 1, 0)
        indent = text[: len(text) - len(text.lstrip())]
        return TextEdit(at, at, f"{indent}# ci-checks: ignore-next-line[{name}]{document.newline}")
    if text.rstrip().endswith("\\"):  # a comment would end the continued line
        return None
    at = document.offset(line - 1, 0) + len(text.rstrip())
    return TextEdit(at, document.offset(line - 1, 0) + len(text), f"  # ci-checks: ignore[{name}]")


def _covers(
    document: Document, root: Path, edit: TextEdit, diagnostic: Diagnostic, name: str, file: LoadedFile | None
) -> bool:
    """Whether the edited file still reads as it did (no new YAML problem) and its comments, read back, suppress
    the finding (which a comment inserted above it moves down)."""
    relative = diagnostic.span.path
    text = document.text[: edit.start] + edit.text + document.text[edit.end :]
    kind = file.kind if file is not None else kind_of(relative)
    # Read from the edited text alone: nothing else of the repository is read.
    edited = load(Repository(root, documents={relative: text.encode("utf-8", "surrogatepass")}), relative, kind)
    if edited.source.problem is not None:
        return False
    if file is not None and len(edited.document.issues) > len(file.document.issues):
        return False
    unedited = Repository(root, documents={relative: document.text.encode("utf-8", "surrogatepass")})
    before = load(unedited, relative, kind)
    if _script_shapes(before, document, edit.start) != _script_shapes(edited, document, None):
        return False  # the comment landed in a here-document, a quoted string or a script that is not shell
    line_start = document.offset(*document.from_span(diagnostic.span.line, 1))
    moved = edit.text.count(document.newline) if edit.start <= line_start else 0
    table = suppression.comments(edited.source, edited)
    lines = suppression.anchor_lines(edited, diagnostic.span.line + moved)
    return any(name in (found for found, _ in ignore.names) for line in lines for ignore in table.get(line, ()))


def _script_shapes(file: LoadedFile, document: Document, edited_at: int | None) -> list[tuple[object, ...] | None]:
    """What each script of the file runs, without positions or comments: the same before and after an edit that only
    adds a comment; a `run:` script that is not parsed as shell, where the edit lands (`edited_at`), is a shape of
    its own, as nothing tells where a comment may go in it."""
    shapes: list[tuple[object, ...] | None] = []
    for step in file.steps:
        if step.run is not None and step.script is None and edited_at is not None:
            span = step.run.span
            start = document.offset(*document.from_span(span.line, span.column))
            end = document.offset(*document.from_span(span.end_line, span.end_column))
            if start <= edited_at <= end:
                shapes.append(("not shell", step.index))
                continue
        shapes.append(_shape(step.script))
    if file.dockerfile is not None:
        shapes += [_shape(script) for script in file.dockerfile.scripts]
    shapes.append(_shape(file.shell_script))
    return shapes


def _shape(script: Script | None) -> tuple[object, ...] | None:
    """The script's nodes with their words, operators and here-document bodies, in order; its errors counted."""
    if script is None:
        return None
    shape: list[object] = [script.problem, len(script.errors)]
    for node in walk(script):
        shape.append(type(node).__name__)
        if isinstance(node, Block):
            continue  # a block's text holds its comments
        if isinstance(node, Case):  # its subject and patterns are words that `walk` does not enter
            patterns = [pattern for case_item in node.items for pattern in case_item.patterns]
            shape.extend(word.text for word in [*([node.subject] if node.subject is not None else []), *patterns])
        for item in fields(node):
            value = getattr(node, item.name)
            if item.name not in _POSITIONS and isinstance(value, str | bool):
                shape.append(value)
    return tuple(shape)


_POSITIONS = frozenset({"locator", "start", "end"})
