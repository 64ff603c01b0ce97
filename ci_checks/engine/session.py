"""A check session: paths (and documents given in memory) grouped by repository, each repository checked (kept runs
reused, several side by side in worker processes), then a baseline, `--new-since` or fixes applied.

The command line makes one session per run; the language server keeps a
`live.Workbench` per repository instead, and the query API checks through
`runs.plan` and `check.run`, as a session does.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ci_checks.backends import tools
from ci_checks.core import config_files, config_source, escaping, output_files
from ci_checks.core.diagnostics import sorted_diagnostics
from ci_checks.core.escaping import one_line
from ci_checks.core.repository import Repository, find_root
from ci_checks.engine import errors
from ci_checks.engine.options import Options
from ci_checks.engine.outcome import Failure, Outcome, Request, UsageError
from ci_checks.engine.runs import Runs
from ci_checks.engine.workers import in_workers

if TYPE_CHECKING:
    from ci_checks.engine import baseline, fixes
    from ci_checks.engine.check import Plan

MAX_FIX_PASSES = 5
"""A fix can make another finding fixable, and overlapping fixes wait for a fresh check: a few passes at most."""

RepositoryError = (config_files.ConfigError, config_source.ConfigSourceError, UsageError)
"""What stops one repository from being checked (its configuration, its git revision, an option it refuses)."""


class Session:
    """One check of some paths, with one set of options.

    `paths` name repository roots, folders or files (none: the repository
    containing the working directory); `documents` give the content of files
    (absolute or relative to the working directory) instead of the disk's, as
    an editor holds them or standard input gave them. Both are checked when
    the session is made: a mistake in them is a `UsageError`. `say` is told
    what the session did that is not a finding (`ci-checks: fixed 2 findings in
    1 file`), as it happens; `notes` collect what the user should know at the
    end.
    """

    def __init__(
        self,
        options: Options,
        paths: Sequence[Path] = (),
        documents: Mapping[Path, bytes] | None = None,
        *,
        progress: TextIO | None = None,
        say: Callable[[str], object] = lambda text: None,
    ) -> None:
        self.options = options
        self.notes: list[str] = []
        self.say = say
        self.runs = Runs(options, self.notes, progress)
        if options.config is not None and not options.config.is_file():
            raise UsageError(f"{options.config}: configuration file not found")
        given = dict(documents or {})
        # Each repository is made once its documents are known: first each path by root (with, for a document, its
        # repo-relative path), then each repository and what is asked of it.
        named: dict[Path, list[tuple[Path, str | None]]] = {}
        for path in [*paths, *given] if paths or given else [find_root(Path.cwd())]:
            if path not in given and not path.exists() and not path.is_symlink():
                raise UsageError(f"{path}: no such file or folder")
            root = find_root(path)
            relative = _document_path(Repository(root), path) if path in given else None
            named.setdefault(root, []).append((path, relative))
        self.groups: dict[Path, tuple[Repository, Request]] = {}
        for root, entries in named.items():
            held = {relative: given[path] for path, relative in entries if relative is not None}
            repository, request = Repository(root, documents=held), Request()
            for path, relative in entries:
                if relative is None:
                    request.add(repository, path)
                else:
                    request.files.append(relative)
                    request.named.append((relative, str(path), False))
            self.groups[root] = (repository, request)
        if given and (options.fix or options.diff):
            raise UsageError("--fix and --diff change files on disk; they do not take documents from standard input")
        if options.new_since is not None and len(self.groups) != 1:
            raise UsageError("--new-since compares one repository with a commit; name paths of one repository")
        self.protected = output_files.protected_folders(self.groups, Path.cwd())
        """The folders a pull request may have written into, where no output is written through a link."""

    def check(self) -> Outcome:
        """Check every repository; then record the findings (`write_baseline`), or drop those the baseline accepts
        and those not new since `new_since`.

        With several repositories, one that cannot be checked is an entry of
        `Outcome.failures` and the others are checked; with one, its error is
        raised.
        """
        with _few_collections():
            return self._checked()

    def _checked(self) -> Outcome:
        options = self.options
        outcome = Outcome()
        groups = list(self.groups.values())
        checked_apart, tried = in_workers(self.runs, groups)
        for index, (repository, request) in enumerate(groups):
            part = checked_apart.get(index)
            if part is None:
                try:
                    _, part = self.runs.run_one(repository, request, reuse=index not in tried)
                except RepositoryError as error:
                    if len(groups) == 1:
                        raise
                    outcome.failures.append(Failure(shown_root(repository), error))
                    continue
            _merge(outcome, part if len(groups) == 1 else part.under(shown_root(repository)))
        if options.write_baseline is not None:
            self._write_baseline(options.write_baseline, outcome)
            return outcome
        if options.baseline is not None:
            self._apply_baseline(options.baseline, outcome, [request for _, request in groups])
        if options.new_since is not None:
            [(repository, request)] = groups
            self.runs.keep_new(repository, request, outcome)
        return outcome

    def fix(self) -> list[fixes.Change]:
        """Apply the fixes pass after pass until none is left (`fix`), or return the first pass's changes
        (`diff`)."""
        from ci_checks.engine import fixes

        shown: list[fixes.Change] = []
        fixed, files = 0, 0
        with _few_collections():
            for repository, request in self.groups.values():
                for _ in range(MAX_FIX_PASSES):
                    plan, part = self.runs.run_one(repository, request)  # never a kept run: fixing keeps none
                    zizmor = _binary("zizmor", plan) if plan is not None and "zizmor" in plan.backends else None
                    changes = fixes.plan(repository, part.diagnostics, self.options.unsafe_fixes, zizmor)
                    if self.options.diff:
                        shown.extend(changes)
                        break
                    written = [change for change in changes if fixes.write(repository, change)]
                    if not written:
                        break
                    fixed += sum(len(change.fixed) for change in written)
                    files += len(written)
        if self.options.fix:
            self.say(
                f"ci-checks: fixed {fixed} finding{'s' if fixed != 1 else ''} in {files} "
                f"file{'s' if files != 1 else ''}\n"
            )
        return shown

    def _write_baseline(self, path: Path, outcome: Outcome) -> None:
        from ci_checks.engine import baseline

        if outcome.failures:
            failed = "".join(errors.failure(failure.root, failure.error) for failure in outcome.failures)
            raise UsageError("a repository could not be checked; no baseline written:\n" + failed.rstrip())
        if outcome.internal_errors:
            raise UsageError("the check failed; no baseline written: " + "; ".join(outcome.internal_errors))
        try:
            baseline.write(path, baseline.entries(outcome.diagnostics, outcome.sources), self.protected)
        except baseline.BaselineError as error:
            raise UsageError(str(error)) from None

    def _apply_baseline(self, path: Path, outcome: Outcome, requests: list[Request]) -> None:
        """Keep the findings the baseline does not accept; say how many it accepted and which entries are stale."""
        from ci_checks.engine import baseline

        try:
            recorded = baseline.load(path, self.protected, self.options.config_ref)
        except baseline.BaselineError as error:
            raise UsageError(str(error)) from None
        covered = (
            (lambda relative: any(request.covers(relative) for request in requests))
            if len(requests) == 1
            else (lambda relative: False)
        )
        comparison = baseline.compare(outcome.diagnostics, outcome.sources, recorded, covered)
        outcome.diagnostics = comparison.new
        accepted = f"{comparison.accepted} finding{'s' if comparison.accepted != 1 else ''}"
        said = f"ci-checks: {escaping.path(str(path))} accepted {accepted}"
        if comparison.stale:
            said += f"; {len(comparison.stale)} of its entries match nothing any more (fixed?):\n"
            said += "".join(f"  {_stale(entry)}\n" for entry in comparison.stale)
        self.say(said if comparison.stale else said + "\n")


def _document_path(repository: Repository, path: Path) -> str:
    """The repo-relative path of a file given in memory, which is read from its content wherever it is on disk or
    whether it is there at all."""
    if path.is_dir():
        raise UsageError(f"{path}: a folder, not a file")
    try:
        relative = repository.relative(path)
    except ValueError:
        raise UsageError(f"{path}: not inside the repository at {repository.root}") from None
    if relative == "." or relative.startswith("../") or relative.endswith("/"):
        raise UsageError(f"{path}: not a file of the repository at {repository.root}")
    return relative


def shown_root(repository: Repository) -> str:
    """How paths name a repository when several are checked: relative to the working directory when it lies
    under it (`a`, `.`), else in full."""
    here = Path.cwd()
    if repository.root == here or here in repository.root.parents:
        return repository.root.relative_to(here).as_posix()
    return repository.root.as_posix()


def _merge(outcome: Outcome, part: Outcome) -> None:
    outcome.diagnostics = sorted_diagnostics([*outcome.diagnostics, *part.diagnostics])
    outcome.sources.update(part.sources)
    outcome.files += part.files
    outcome.checked.extend(part.checked)
    outcome.nothing_to_check.extend(part.nothing_to_check)
    outcome.internal_errors.extend(part.internal_errors)


@contextmanager
def _few_collections() -> Iterator[None]:
    """Collect garbage less often while checking.

    A run builds millions of small objects (YAML nodes, models, command trees)
    that live until it ends; the default threshold of 700 allocations spent a
    quarter of the CPU time of the 262-file corpus in collections that freed
    nothing.
    """
    before = gc.get_threshold()
    gc.set_threshold(50_000, 20, 100)
    try:
        yield
    finally:
        # What the run built is old now: moved to the oldest generation unscanned (freeze, then unfreeze), so that
        # restoring the thresholds does not set off a collection of the young ones that scans all of it (about a
        # second over the corpus, freeing nothing the reference counts do not).
        gc.freeze()
        gc.unfreeze()
        gc.set_threshold(*before)


def _binary(name: str, plan: Plan) -> str | None:
    try:
        return tools.find_binary(name, plan.backend_settings.binaries.get(name))
    except tools.Unavailable:
        return None


def _stale(entry: baseline.Entry) -> str:
    """A baseline entry, every part of which the baseline's author chose: escaped like a finding."""
    return f"{escaping.path(entry.path)}: {one_line(entry.code)} {one_line(entry.message)} [{one_line(entry.rule)}]"
