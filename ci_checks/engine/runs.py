"""One repository's check: its configuration found and read, a kept run reused or the rules run (and the run kept).

A run's findings follow from the code, what it was asked and what it read on
disk (`run_cache`): a kept run is reused only from the work tree as it is, not
with a base branch's configuration, nor while fixing, nor over documents given
in memory. What checking needs (the rules, the model, the configuration's
parser) is imported only once no kept run is reused.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ci_checks.backends import tools
from ci_checks.backends.cache import ResultCache, binary_identity, default_folder
from ci_checks.core import config_files, config_source
from ci_checks.core.escaping import one_line
from ci_checks.core.linters import BACKENDS, DEFAULT_PROFILE, BackendSettings
from ci_checks.core.repository import Repository
from ci_checks.core.source import DEFAULT_MAX_BYTES, SourceFile
from ci_checks.engine.journal import Journal, Journaled
from ci_checks.engine.options import Options, asked, parse_backends
from ci_checks.engine.outcome import Outcome, Request, UsageError
from ci_checks.engine.progress import Progress

if TYPE_CHECKING:
    from ci_checks.config import load as config
    from ci_checks.engine.check import Plan
    from ci_checks.policy import PolicyRule


@dataclass
class Attempt:
    """One repository's run as it starts: its configuration found and read, and where a kept run would be.

    When the run is to be kept, it reads through `repository`, a `Journaled` one that notes in `journal`
    what it asked of the file system; else `repository` is the one checked and `journal` is None.
    """

    repository: Repository
    journal: Journal | None
    files: config_source.ConfigSource
    config_file: SourceFile | None
    cache_folder: Path | None
    results: ResultCache | None
    key: str


class Runs:
    """How a session checks each of its repositories: with its options, telling its notes and its progress."""

    def __init__(self, options: Options, notes: list[str], progress: TextIO | None = None) -> None:
        self.options = options
        self.notes = notes
        """Things the user should know that are not findings."""
        self.progress = progress
        """A terminal's standard error, for a self-erasing progress line; None shows none."""

    @contextmanager
    def attempt(self, repository: Repository, request: Request) -> Iterator[Attempt]:
        options = self.options
        keeps = options.config_ref is None and not (options.fix or options.diff) and not repository.documents
        journal = Journal() if keeps else None
        if journal is not None:
            repository = Journaled(repository.root, exclude=repository.exclude, journal=journal)
        files = config_source.open_source(repository, options.config_ref)
        results: ResultCache | None = None
        try:
            config_file = self.config_file(repository, files)
            cache_folder = self.cache_folder(repository)
            key = ""
            if journal is not None and cache_folder is not None:
                from ci_checks.engine import run_cache

                results = ResultCache(cache_folder)
                key = run_cache.run_key(self._asked(repository, request, config_file), self._linters())
            yield Attempt(repository, journal, files, config_file, cache_folder, results, key)
        finally:
            files.close()
            if results is not None:
                results.close()

    def kept(self, attempt: Attempt, repository: Repository) -> Outcome | None:
        if attempt.results is None:
            return None
        from ci_checks.engine import run_cache

        return run_cache.fetch(attempt.results, attempt.key, repository, attempt.config_file)

    def run_one(self, repository: Repository, request: Request, reuse: bool = True) -> tuple[Plan | None, Outcome]:
        """Check one repository: the plan it ran (None when a kept run was reused, see `run_cache`) and its outcome.

        `reuse` is False where the caller has already found no kept run to reuse.
        """
        with self.attempt(repository, request) as attempt:
            kept = self.kept(attempt, repository) if reuse else None
            if kept is not None:
                return None, kept
            settings = self.settings(attempt.repository, request, attempt.config_file)
            plan, outcome = self.checked_now(attempt.repository, request, settings, attempt.cache_folder, attempt.files)
            if attempt.results is not None and attempt.journal is not None:
                from ci_checks.engine import run_cache

                run_cache.store(
                    attempt.results, attempt.key, attempt.journal, settings.exclude, outcome, attempt.config_file
                )
        return plan, outcome

    def reused(self, repository: Repository, request: Request) -> Outcome | None:
        """A kept run of the repository that can be reused, checking nothing."""
        with self.attempt(repository, request) as attempt:
            return self.kept(attempt, repository)

    @staticmethod
    def settings(repository: Repository, request: Request, config_file: SourceFile | None) -> config.Config:
        """The configuration parsed (none: the defaults); a request naming it widens to the whole repository."""
        from ci_checks.config import load as config

        settings = config.parse(config_file, repository) if config_file is not None else config.Config()
        if settings.path in request.files and "" not in request.folders:
            request.folders.append("")  # a changed policy may change findings anywhere: check everything
        return settings

    def checked_now(
        self,
        repository: Repository,
        request: Request,
        settings: config.Config,
        cache_folder: Path | None,
        files: config_source.ConfigSource,
    ) -> tuple[Plan, Outcome]:
        """Check the repository now, as `settings` (the configuration) says: its exclusions too."""
        from ci_checks.engine.check import run

        chosen = plan(self.options, settings, cache_folder)
        chosen.backend_settings = dataclasses.replace(chosen.backend_settings, config_source=files)
        with Progress(self.progress) as progress:
            return chosen, run(repository.with_exclude(settings.exclude), request, chosen, settings, progress.say)

    def keep_new(self, repository: Repository, request: Request, outcome: Outcome) -> None:
        """`--new-since`: keep the findings that are new since the commit (see `changes`), the base checked with the
        work tree's options and configuration (from the work tree, `--config` or `--config-ref`, as the work tree
        was)."""
        from ci_checks.engine.changes import BaseUnavailable, new_since

        def check_base(base: Repository, base_request: Request) -> Outcome:
            files = config_source.open_source(repository, self.options.config_ref)
            try:
                config_file = self.config_file(repository, files)
                cache_folder = self.cache_folder(base)
                settings = self.settings(base, base_request, config_file)
                checked = self.checked_now(base, base_request, settings, cache_folder, files)[1]
            except (config_files.ConfigError, config_source.ConfigSourceError, UsageError) as error:
                raise BaseUnavailable(f"its files could not be checked ({one_line(str(error))})") from None
            finally:
                files.close()
            unread = _unread_in_base(checked, outcome)
            if unread is not None:
                # A policy value read from a file the base lacks, say: the rule could not be evaluated there, and
                # comparing with it would clear the change's findings of it, so the base is not compared.
                raise BaseUnavailable(f"its files could not be checked ({unread})")
            return checked

        assert self.options.new_since is not None
        max_bytes = self.options.max_file_size or DEFAULT_MAX_BYTES
        outcome.diagnostics, note = new_since(
            repository, self.options.new_since, outcome, request, check_base, max_bytes
        )
        if note is not None:
            self.notes.append(note)

    def config_file(self, repository: Repository, files: config_source.ConfigSource) -> SourceFile | None:
        """The configuration for one repository: `--config FILE` (shown repo-relative when inside it), else its own
        (from the work tree, or from `--config-ref`), read but not parsed."""
        explicit = self.options.config
        if explicit is None:
            return config_files.find(files)
        from ci_checks.core import source

        try:
            display = repository.relative(explicit)
        except ValueError:
            display = str(explicit)
        return config_files.readable(source.read(display, explicit))

    def cache_folder(self, repository: Repository) -> Path | None:
        """Where findings are kept between runs (`run_cache`, and shellcheck's per script): anywhere but inside the
        checked repository.

        A pull request could commit a cache file there with rows that clear its
        own scripts of every finding. A folder named by option or variable inside
        it is refused (exit 2); a default folder that is not usable (no home
        folder, a relative `$HOME`, one inside the repository) means no cache, and a
        note says so.
        """
        options = self.options
        if options.no_cache:
            return None
        from_environment = os.environ.get("CI_CHECKS_CACHE_DIR")
        folder: Path | None
        if options.cache_dir is not None:
            folder, origin = Path(options.cache_dir), "--cache-dir"
        elif from_environment:
            folder, origin = Path(from_environment), "$CI_CHECKS_CACHE_DIR"
        else:
            folder, why_not = default_folder()
            if folder is not None and folder.resolve().is_relative_to(repository.real_root):
                folder, why_not = None, f"the default cache folder {str(folder)!r} is inside the checked repository"
            if folder is None:
                self.notes.append(f"findings are not kept between runs: {why_not}; choose a folder with --cache-dir")
            return folder
        if folder.resolve().is_relative_to(repository.real_root):
            raise UsageError(
                f"{origin} {str(folder)!r} is inside the checked repository, where a pull request could plant "
                "findings; choose a folder outside it, or --no-cache"
            )
        return folder

    def _asked(self, repository: Repository, request: Request, config_file: SourceFile | None) -> dict[str, object]:
        """What decides a run's findings besides the code and the disk: the request, the options, the configuration.

        The configuration counts by its text, which decides everything read from it
        (the rules, the exclusions, the linters): a run is reused without parsing it.
        """
        return {
            "root": str(repository.root),
            "request": [request.folders, request.files, request.named],
            "options": json.dumps(asked(self.options), default=str),
            "own files": sorted(repository.relative_paths(self.options.own_files)),
            "config": None if config_file is None else [config_file.path, config_file.text],
        }

    def _linters(self) -> dict[str, list[str | int]]:
        """Which build of each linter would run, whether or not this run runs it (which the configuration
        decides)."""
        return {name: _identity(name, self.options.binary(name)) for name in BACKENDS}


def _identity(name: str, named: str | None) -> list[str | int]:
    """Which build of a linter would run: its binary's path, size and modification time."""
    try:
        return binary_identity(tools.find_binary(name, named))
    except (tools.Unavailable, tools.NamedBinaryError, OSError) as error:
        return [f"not run: {error}"]


def plan(
    options: Options,
    settings: config.Config,
    cache_folder: Path | None = None,
    policy_rules: list[PolicyRule] | None = None,
) -> Plan:
    """What to run, from the options and the configuration (see `ci_checks.config.selection` for what selectors name):
    `policy_rules`, when given, are the policy rules to run instead of those the selection keeps."""
    from ci_checks.config.selection import SelectionError, resolve
    from ci_checks.engine.check import Plan

    selected: list[str] | None = options.select or settings.select
    ignored = [*settings.ignore, *options.ignore]
    try:
        profile = options.profile or settings.profile or DEFAULT_PROFILE
        selection = resolve(selected, ignored, (rule.id for rule in settings.rules), settings.severity, profile)
    except SelectionError as error:
        raise UsageError(str(error)) from None
    if policy_rules is None:
        policy_rules = []
        if settings.rules:
            from ci_checks.policy import policy_codes

            policy_rules = [rule for rule in settings.rules if selection.runs_policy_rule(rule.id, policy_codes(rule))]
    backends = options.backends
    if backends is None:
        from_environment = os.environ.get("CI_CHECKS_BACKENDS")
        try:
            backends = parse_backends(from_environment) if from_environment is not None else settings.backends
        except ValueError as error:
            raise UsageError(f"CI_CHECKS_BACKENDS: {error}") from None
    backends = [name for name in (list(BACKENDS) if backends is None else backends) if selection.runs_linter(name)]
    return Plan(
        selection,
        policy_rules,
        backends,
        BackendSettings(dict(options.binaries), options.backend_timeout, cache_folder),
        options.max_file_size or settings.max_file_size or DEFAULT_MAX_BYTES,
        options.report_unused_ignores,
        tuple(options.own_files),
    )


def check_repository(
    repository: Repository,
    request: Request,
    options: Options,
    settings: config.Config,
    policy_rules: list[PolicyRule] | None = None,
) -> Outcome:
    """Check a repository whose configuration is already read, as a session checks it once it has read it (the
    query API's way in): no kept run, no linter the options do not name."""
    from ci_checks.engine.check import run

    chosen = plan(options, settings, policy_rules=policy_rules)
    return run(repository.with_exclude(settings.exclude), request, chosen, settings)


def _unread_in_base(base: Outcome, work_tree: Outcome) -> str | None:
    """Why a policy rule could not read in the base what it reads in the work tree (a CC106 only the base has),
    or None."""
    from ci_checks.policy.findings import UNREADABLE_INPUT

    code = UNREADABLE_INPUT.code
    in_work_tree = {(found.rule, found.message) for found in work_tree.diagnostics if found.code == code}
    for found in base.diagnostics:
        if found.code == code and (found.rule, found.message) not in in_work_tree:
            return one_line(f"{found.span.path}: {found.message}")
    return None
