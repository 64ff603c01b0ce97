"""One repository kept loaded between checks of the documents an editor changes: the language server's engine.

The files a check reads stay parsed and modelled between checks (`check.Reuse`):
a change to a document drops that file alone, whose own rules run again, and
the repository-wide rules and the policy run again over the files kept, for
the open documents (what the change can affect and the editor shows). A file
on disk that changed since it was read (a checkout, a save) is read again
(`refresh`). The configuration is read as the command line reads it (the
work tree's, `Options.config` or `config_ref`), again whenever it may have
changed; the external linters run only when asked (`linter_job`), over what
was saved, and their findings count while a document still holds the text they
were found in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ci_checks.core import config_files, config_source
from ci_checks.core.diagnostics import Diagnostic
from ci_checks.core.repository import Repository
from ci_checks.engine.options import Options
from ci_checks.engine.outcome import Outcome, Request, UsageError
from ci_checks.engine.runs import Runs, plan

if TYPE_CHECKING:
    from ci_checks.config.load import Config
    from ci_checks.engine.check import Plan, Reuse
    from ci_checks.model.loading import LoadedFile, Workspace


@dataclass(frozen=True)
class Linted:
    """What the linters found in one document, and the content they read."""

    content: bytes
    diagnostics: tuple[Diagnostic, ...]


class Workbench:
    """A repository, its configuration and its loaded files, checked again as documents change.

    `repository` is made again whenever what it reads changes (the documents, the configuration's exclusions, the
    disk): each check reads through the one made last.
    """

    def __init__(self, root: Path, options: Options) -> None:
        self.documents: dict[str, bytes] = {}
        """The open documents' content as the editor holds it, by repo-relative path (`update`)."""
        self.repository = Repository(root)
        self.options = replace(options, fix=False, diff=False, write_baseline=None, baseline=None, new_since=None)
        self.notes: list[str] = []
        self.runs = Runs(self.options, self.notes)
        self.settings: Config | None = None
        self.config_error: config_files.ConfigError | None = None
        """Why the configuration cannot be used (positioned); the last one that could be, or none, is used."""
        self.problem: str | None = None
        """Why the options cannot be used with this repository (an unknown selector, an unreadable revision)."""
        self.own_plan: Plan | None = None
        self.linters: list[str] = []
        self._reuse: Reuse | None = None
        self._read_at: dict[str, tuple[int, int] | None] = {}
        self._config_stamp: tuple[tuple[int, int] | None, ...] = ()
        """When each file read from disk was last changed, as it was read (modification time, size)."""
        self.linted: dict[str, Linted] = {}
        self.configure()

    @property
    def config_path(self) -> str | None:
        return self.settings.path if self.settings is not None else None

    def configure(self) -> None:
        """Read the configuration (again) and decide what runs; every file's findings are found again."""
        from ci_checks.config import load as config
        from ci_checks.engine.check import Reuse

        self.config_error = self.problem = None
        self._config_stamp = self._config_files_stamp()
        settings = self.settings or config.Config()
        try:
            files = config_source.open_source(self.repository, self.options.config_ref)
            try:
                found = self.runs.config_file(self.repository, files)
            finally:
                files.close()
            settings = config.parse(found, self.repository) if found is not None else config.Config()
        except config_files.ConfigError as error:
            self.config_error = error
        except (config_source.ConfigSourceError, UsageError) as error:
            self.problem = str(error)
        self.settings = settings
        self.repository = self.repository.with_exclude(settings.exclude)
        try:
            whole = plan(self.options, settings, self._cache_folder())
        except UsageError as error:
            self.problem, whole = str(error), plan(Options(backends=[]), settings)
        self.own_plan = replace(whole, backends=[])
        self.linters = list(whole.backends)
        self._linter_settings = whole.backend_settings
        self._reuse = Reuse()

    def _cache_folder(self) -> Path | None:
        try:
            return self.runs.cache_folder(self.repository)
        except UsageError as error:  # a cache folder named inside the repository: nothing is kept
            self.notes.append(str(error))
            return None

    def _workspace(self) -> Workspace:
        """The files the checks loaded, read further through the repository as it is now."""
        from ci_checks.model.loading import Workspace

        assert self.own_plan is not None and self._reuse is not None
        return Workspace(self.repository, self.own_plan.max_bytes, self._reuse.loaded)

    def update(self, relative: str, content: bytes | None) -> None:
        """A document's content as the editor holds it; None when it is closed (the disk's is read again)."""
        if content is None:
            self.documents.pop(relative, None)
        else:
            self.documents[relative] = content
        self.repository = self.repository.with_documents(self.documents)
        assert self._reuse is not None
        self._reuse.loaded.pop(relative, None)
        self._read_at.pop(relative, None)
        if relative == self.config_path or (self.config_path is None and _is_config(relative)):
            self.configure()

    def refresh(self) -> None:
        """Files may have changed on disk (a save, a checkout, a pull): those read from disk that did are read again,
        and the repository's files are listed again."""
        assert self._reuse is not None
        loaded = self._reuse.loaded
        for relative, seen in list(self._read_at.items()):
            if _changed_at(self.repository.root / relative) != seen:
                loaded.pop(relative, None)
                del self._read_at[relative]
        repository = self.repository
        self.repository = Repository(repository.root, exclude=repository.exclude, documents=self.documents)
        if self._config_files_stamp() != self._config_stamp:
            self.configure()

    def _config_files_stamp(self) -> tuple[tuple[int, int] | None, ...]:
        """When the configuration files on disk (the repository's, and `Options.config`) last changed; one an
        editor holds counts as its document, not the disk."""
        names = [*config_files.CONFIG_FILES, *([str(self.options.config)] if self.options.config is not None else [])]
        root = self.repository.root
        return tuple(None if name in self.documents else _changed_at(root / name) for name in names)

    def check(self, relatives: Sequence[str]) -> Outcome:
        """The findings of ci-checks' own rules and the policy in these files (the open documents), with those the
        linters found in the documents that still hold what they read."""
        from ci_checks.engine.check import run

        assert self.own_plan is not None and self._reuse is not None and self.settings is not None
        request = Request(files=list(relatives), named=[(relative, relative, False) for relative in relatives])
        if self.config_path in relatives:
            request.folders.append("")  # a changed policy may change findings anywhere
        reuse = self._reuse
        reuse.linted = [
            diagnostic
            for relative, linted in self.linted.items()
            if self._content(relative) == linted.content
            for diagnostic in linted.diagnostics
        ]
        outcome = run(self.repository, request, self.own_plan, self.settings, reuse=reuse)
        for relative in reuse.loaded:
            if relative not in self.documents and relative not in self._read_at:
                self._read_at[relative] = _changed_at(self.repository.root / relative)
        return outcome

    def linter_job(self, relative: str) -> Callable[[], Linted] | None:
        """The external linters over one saved document, to run away from the editor's requests (it reads only
        what it is given and the repository's files); None when no linter is to run."""
        from ci_checks.backends.external import run_backends
        from ci_checks.model.loading import YAML_KINDS
        from ci_checks.rules.context import RepositoryContext

        assert self._reuse is not None
        if not self.linters:
            return None
        workspace = self._workspace()
        file = workspace.load(relative)
        if file.kind not in YAML_KINDS:
            return None
        content = self._content(relative)
        if content is None:
            return None
        settings = self._linter_settings
        if "actionlint" in self.linters:  # the runners' labels are actionlint's self-hosted ones too
            assert self.settings is not None
            context = RepositoryContext(workspace, [file], lambda path: path == relative, self.settings.runners)
            settings = replace(settings, runner_labels=context.actionlint_runner_labels)
        names, root, repository = list(self.linters), self.repository.root, self.repository

        def lint() -> Linted:
            found = run_backends(names, [file], root, settings, repository)
            return Linted(content, tuple(found))

        return lint

    def loaded(self, relative: str) -> LoadedFile | None:
        """A file as the last check read it, if it read it."""
        assert self._reuse is not None
        return self._reuse.loaded.get(relative)

    def read(self, relative: str) -> str | None:
        """A file's text as checks read it (the document's where one is given), or None when it cannot be read."""
        loaded = self.loaded(relative)
        found = loaded.source if loaded is not None else self.repository.read(relative)
        return found.text if found.problem is None else None

    def _content(self, relative: str) -> bytes | None:
        given = self.documents.get(relative)
        if given is not None:
            return given
        try:
            return (self.repository.root / relative).read_bytes()
        except OSError:
            return None


def _is_config(relative: str) -> bool:
    return relative in config_files.CONFIG_FILES


def _changed_at(path: Path) -> tuple[int, int] | None:
    try:
        status = path.stat()
    except OSError:
        return None
    return status.st_mtime_ns, status.st_size
