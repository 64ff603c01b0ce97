"""The read path: source file, then what its kind is read into.

Workflows and composite actions become positioned YAML and then the model;
Dockerfiles, shell scripts and Python files are parsed only when a policy rule
asks about them. Any other file is text.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

from ci_checks.core.repository import FileKind, Repository, kind_of
from ci_checks.core.source import DEFAULT_MAX_BYTES, FileLocator, SourceFile
from ci_checks.model import Action, Step, Workflow
from ci_checks.syntax import dockerfile, pysource, shell, yamlpos
from ci_checks.syntax.yamlpos import Document

YAML_KINDS = frozenset({FileKind.WORKFLOW, FileKind.ACTION})


@dataclass(eq=False)
class LoadedFile:
    """One file at every stage it reached; `workflow`/`action` are None when it could not be modelled.

    `document` is empty (no root, no issues) for files that are not YAML.
    """

    repository: Repository
    path: str
    kind: FileKind
    source: SourceFile
    document: Document
    workflow: Workflow | None = None
    action: Action | None = None

    @property
    def readable(self) -> bool:
        return self.source.problem is None

    @property
    def steps(self) -> list[Step]:
        """Steps of every job of a workflow, or of a composite action."""
        if self.workflow is not None:
            return list(self.workflow.steps())
        if self.action is not None:
            return self.action.steps
        return []

    @cached_property
    def dockerfile(self) -> dockerfile.Dockerfile | None:
        if self.kind is not FileKind.DOCKERFILE or not self.readable:
            return None
        return dockerfile.parse(self.source)

    @cached_property
    def shell_script(self) -> shell.Script | None:
        if self.kind is not FileKind.SHELL or not self.readable:
            return None
        return shell.parse(self.source.text, FileLocator(self.source))

    @cached_property
    def python_facts(self) -> list[pysource.Fact] | pysource.PythonSyntaxError | None:
        if self.kind is not FileKind.PYTHON or not self.readable:
            return None
        return pysource.facts(self.source)

    def unread_scripts(self) -> Iterator[shell.Script]:
        """The scripts of the file that were not read (`Script.problem`), whose commands no rule sees."""
        scripts = [step.script for step in self.steps]
        if self.dockerfile is not None:
            scripts += self.dockerfile.scripts
        scripts.append(self.shell_script)
        yield from (script for script in scripts if script is not None and script.problem is not None)

    def commands(self) -> Iterator[shell.Command]:
        """Every shell command of the file: in `run:` scripts, `RUN` instructions, or the script itself."""
        for step in self.steps:
            if step.script is not None:
                yield from step.script.commands()
        if self.dockerfile is not None:
            yield from self.dockerfile.commands()
        if self.shell_script is not None:
            yield from self.shell_script.commands()


def load(repository: Repository, relative: str, kind: FileKind, max_bytes: int = DEFAULT_MAX_BYTES) -> LoadedFile:
    source = repository.read(relative, max_bytes)
    if kind not in YAML_KINDS:
        return LoadedFile(repository, relative, kind, source, Document(source))
    document = yamlpos.parse(source)
    loaded = LoadedFile(repository, relative, kind, source, document)
    if kind is FileKind.WORKFLOW:
        loaded.workflow = Workflow.from_document(document)
    elif kind is FileKind.ACTION:
        loaded.action = Action.from_document(document)
    return loaded


class Workspace:
    """The files of one repository as they are loaded, each once, for rules, policy rules and ignores."""

    def __init__(
        self, repository: Repository, max_bytes: int = DEFAULT_MAX_BYTES, loaded: dict[str, LoadedFile] | None = None
    ) -> None:
        self.repository = repository
        self.max_bytes = max_bytes
        self.loaded: dict[str, LoadedFile] = {} if loaded is None else loaded
        """The files loaded, by path: `loaded` when given, shared with the workspaces of earlier checks (whose
        repositories read those files as this one does)."""
        self.consulted: set[str] = set()
        """Files policy rules looked into (their scopes, and the files they could not read)."""

    def load(self, relative: str, kind: FileKind | None = None) -> LoadedFile:
        """The file as `kind` (by default, what it was first loaded as, or what its path says).

        A file first loaded as another kind (`ci/rocm.yml.in`, text to a `files:` scope, that a `parity`
        rule reads as a workflow) is read again as the kind asked for, so that no verdict depends on which
        rule read it first; the first one stays the file's entry."""
        loaded = self.loaded.get(relative)
        if loaded is not None and kind in (None, loaded.kind):
            return loaded
        fresh = load(self.repository, relative, kind or kind_of(relative), self.max_bytes)
        self.loaded.setdefault(relative, fresh)
        return fresh
