"""The read path: source file, positioned YAML, then the workflow or action model."""

from __future__ import annotations

from dataclasses import dataclass

from ci_checks import yamlpos
from ci_checks.model import Action, Workflow
from ci_checks.repository import FileKind, Repository
from ci_checks.source import DEFAULT_MAX_BYTES, SourceFile
from ci_checks.yamlpos import Document


@dataclass(eq=False)
class LoadedFile:
    """One checked file at every stage it reached; `workflow`/`action` are None when it could not be modelled."""

    repository: Repository
    path: str
    kind: FileKind
    source: SourceFile
    document: Document
    workflow: Workflow | None = None
    action: Action | None = None


def load(repository: Repository, relative: str, kind: FileKind, max_bytes: int = DEFAULT_MAX_BYTES) -> LoadedFile:
    source = repository.read(relative, max_bytes)
    document = yamlpos.parse(source)
    loaded = LoadedFile(repository, relative, kind, source, document)
    if kind is FileKind.WORKFLOW:
        loaded.workflow = Workflow.from_document(document)
    elif kind is FileKind.ACTION:
        loaded.action = Action.from_document(document)
    return loaded
