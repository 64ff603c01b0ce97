"""What a run asked of the file system, for a kept run to be reused only while the answers stay the same
(`run_cache`).

A run whose result is to be kept reads through a `Journaled` repository,
which notes every question and its answer in the run's own `Journal`; the
`Repository` the session made stays as it was.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from ci_checks.core.repository import Repository
from ci_checks.core.source import SourceFile


class Journal:
    """Every question a run asked of the file system through a `Repository`, with a digest of each answer.

    A run's findings follow from these answers alone, so a stored result may
    be reused when asking the same questions again gives the same answers
    (`replay`). Answers are taken as the run used them: a file's decoded text,
    a path's real location and whether it is a folder, a folder's listing.
    """

    def __init__(self) -> None:
        self.entries: dict[tuple[str | int, ...], str] = {}

    def note(self, question: tuple[str | int, ...], answer: object) -> None:
        if question not in self.entries:
            self.entries[question] = answer_digest(answer)

    def replay(self, repository: Repository) -> dict[str, SourceFile] | None:
        """The files read, as they read now, by their answers' digests, when every question gets the answer it
        got; else None.

        `repository` must be a plain one, not a `Journaled`, so that asking again notes nothing.
        """
        read: dict[str, SourceFile] = {}
        for question, digest in self.entries.items():
            answer = _ask(repository, question)
            if answer is _UNKNOWN or answer_digest(answer) != digest:
                return None
            if isinstance(answer, SourceFile):
                read[digest] = answer
        return read


_UNKNOWN = object()


def _ask(repository: Repository, question: tuple[str | int, ...]) -> object:
    match question:
        case ("read", str(relative), int(max_bytes)):
            return repository.read(relative, max_bytes)
        case ("read_regular", str(relative), int(max_bytes)):
            return repository.read_regular(relative, max_bytes)
        case ("locate", str(relative)):
            return repository.locate(relative)
        case ("resolve", str(relative)):
            return repository.resolve(relative)
        case ("in_checkout",):
            return repository.in_checkout
        case ("walk",):
            return repository.files, repository.linked_folders
        case ("workflows",):
            return repository.workflows
        case ("real_root",):
            return repository.real_root
    return _UNKNOWN


def answer_digest(answer: object) -> str:
    return hashlib.sha256(json.dumps(_plain(answer), ensure_ascii=False).encode("utf-8", "surrogatepass")).hexdigest()


def _plain(answer: object) -> object:
    """The answer as JSON data; a path says where it leads now and whether a folder is there."""
    if isinstance(answer, SourceFile):
        problem = answer.problem
        said = [problem.kind.value, problem.message, problem.line, problem.column] if problem is not None else None
        return ["file", answer.path, answer.text, said]
    if isinstance(answer, Path):
        # os.path's answer, not Path's: a name too long for the system is no folder (Path.is_dir raises)
        return ["path", str(answer), os.path.isdir(answer), os.path.lexists(answer)]  # noqa: PTH112
    if isinstance(answer, frozenset):
        return sorted(answer)
    if isinstance(answer, (list, tuple)):
        return [_plain(item) for item in answer]
    return answer


@dataclass(frozen=True, eq=False)
class Journaled(Repository):
    """A repository that notes in `journal` every question asked of it and its answer."""

    journal: Journal = field(kw_only=True, repr=False)

    def _note(self, question: tuple[str | int, ...], answer: object) -> None:
        self.journal.note(question, answer)
