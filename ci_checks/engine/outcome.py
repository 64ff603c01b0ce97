"""What a check is asked (`Request`) and what it found (`Outcome`), apart from how it checks.

Reporters, the cache of whole runs and the command line handle these without
importing the rules, the model or the linters.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field, replace
from pathlib import Path

from ci_checks.core.config_files import CONFIG_FILES
from ci_checks.core.diagnostics import Diagnostic, Span
from ci_checks.core.repository import FileKind, Repository, kind_of
from ci_checks.core.source import SourceFile


class UsageError(Exception):
    """A mistake in how ci-checks was called: exit code 2, no diagnostics."""


@dataclass
class Failure:
    """A repository of several that could not be checked: how paths name it, and why."""

    root: str
    error: Exception


@dataclass
class Outcome:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    sources: dict[str, SourceFile] = field(default_factory=dict)
    files: int = 0
    checked: list[str] = field(default_factory=list)
    """The files some rule read, repo-relative (relative to the working directory when several repositories were
    checked: `Outcome.under`)."""
    nothing_to_check: list[tuple[str, bool]] = field(default_factory=list)
    """Paths named on the command line (as written; a folder?) under which no rule read any file."""
    internal_errors: list[str] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    """Repositories that could not be checked, when several were (with one, its error is raised instead)."""

    def under(self, folder: str) -> Outcome:
        """The outcome with every path it gives under `folder` (`a/` for `.github/x.yml`), as one of several
        repositories checked together reports them: no two repositories' files then share a path."""

        def moved(span: Span) -> Span:
            return replace(span, path=posixpath.normpath(posixpath.join(folder, span.path)))

        def diagnostic(found: Diagnostic) -> Diagnostic:
            related = tuple(replace(item, span=moved(item.span)) for item in found.related)
            fix = found.fix
            if fix is not None:
                fix = replace(fix, edits=tuple(replace(edit, span=moved(edit.span)) for edit in fix.edits))
            return replace(found, span=moved(found.span), related=related, fix=fix)

        return replace(
            self,
            diagnostics=[diagnostic(found) for found in self.diagnostics],
            sources={moved(Span.point(path)).path: file for path, file in self.sources.items()},
            checked=[moved(Span.point(path)).path for path in self.checked],
        )


@dataclass
class Request:
    """What was asked to be checked in one repository: whole folders ("" is the root) and single files."""

    folders: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    named: list[tuple[str, str, bool]] = field(default_factory=list)
    """What the command line named: (repo-relative path, "" for the root; the path as written; a folder?)."""

    def covers(self, relative: str) -> bool:
        if relative in self.files:
            return True
        return any(not folder or relative.startswith(folder + "/") for folder in self.folders)

    @classmethod
    def whole(cls) -> Request:
        return cls(folders=[""])

    def add(self, repository: Repository, path: Path, shown: str | None = None) -> None:
        # The repository's root is a folder even when it was named through a link: only links inside it are not
        # followed.
        root = path.is_dir() and repository.relative(path) == "."
        if (path.is_file() or path.is_symlink()) and not root:
            self.files.append(repository.relative(path))
            self.named.append((self.files[-1], shown or str(path), False))
        elif path.is_dir():
            relative = repository.relative(path)
            self.folders.append("" if relative == "." else relative)
            self.named.append((self.folders[-1], shown or str(path), True))
        elif path.exists():
            raise UsageError(f"{path}: not a regular file or folder")
        else:
            raise UsageError(f"{path}: no such file or folder")

    def targets(self, repository: Repository) -> list[tuple[str, FileKind]]:
        """The files built-in rules read: single files as they are, and the workflows and actions in folders.

        A configuration file named on its own is text, not a workflow.
        """
        found = {
            (relative, FileKind.TEXT if relative in CONFIG_FILES else kind_of(relative)) for relative in self.files
        }
        found.update((workflow, FileKind.WORKFLOW) for workflow in repository.workflows if self.covers(workflow))
        found.update((action, FileKind.ACTION) for action in repository.actions if self.covers(action))
        return sorted(found)
