"""Running the rules: from command-line paths to files, from files to sorted diagnostics.

Built-in rules read the workflows and composite actions asked for; policy
rules read whatever their `where` selects among the files asked for; inline
ignores then drop what they name.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from ci_checks.config import registry, suppression
from ci_checks.config.load import Config
from ci_checks.config.selection import Selection
from ci_checks.core import config_source
from ci_checks.core.config_files import CONFIG_FILES
from ci_checks.core.diagnostics import Diagnostic, Span, sorted_diagnostics
from ci_checks.core.linters import BackendSettings
from ci_checks.core.repository import Repository
from ci_checks.core.source import DEFAULT_MAX_BYTES, SourceFile
from ci_checks.engine import interrupts
from ci_checks.engine.outcome import Outcome, Request
from ci_checks.model.loading import YAML_KINDS, LoadedFile, Workspace
from ci_checks.rules.context import RepositoryContext
from ci_checks.rules.rule import Rule

if TYPE_CHECKING:  # the policy engine is imported only when a configuration has rules
    from ci_checks.policy import PolicyRule


@dataclass
class Plan:
    """What to run: built-in rules, policy rules and external linters, and which of their findings to keep."""

    selection: Selection = field(default_factory=lambda: Selection(None))
    policy_rules: list[PolicyRule] = field(default_factory=list)
    backends: list[str] = field(default_factory=list)
    backend_settings: BackendSettings = field(default_factory=BackendSettings)
    max_bytes: int = DEFAULT_MAX_BYTES
    report_unused_ignores: bool = False
    own_files: tuple[Path, ...] = ()
    """The files the run reads or writes itself (its baseline, its reports), as given: those inside the repository
    are no part of it (`RepositoryContext.own_files`)."""

    @cached_property
    def rules(self) -> list[Rule]:
        return self.selection.rules

    def keeps(self, diagnostic: Diagnostic) -> bool:
        return self.selection.keeps(diagnostic)


@dataclass
class Reuse:
    """What a check may take from earlier checks of the same repository with the same plan (the language
    server's): the files they loaded (a changed one is dropped from `loaded` first), each file's findings of the
    rules that read that file alone, and the linters' findings, found apart (on a save)."""

    loaded: dict[str, LoadedFile] = field(default_factory=dict)
    """By path, as `Workspace.loaded`: each check's workspace loads into it."""
    file_findings: dict[str, tuple[LoadedFile, list[Diagnostic], list[str]]] = field(default_factory=dict)
    """By path: the file as loaded, what the rules found in it, and the rules' failures."""
    linted: list[Diagnostic] | None = None


def run(
    repository: Repository,
    request: Request,
    plan: Plan,
    config: Config | None = None,
    progress: Callable[[str], None] | None = None,
    reuse: Reuse | None = None,
) -> Outcome:
    """Check what `request` names in one repository as `plan` says.

    `progress` is told what is being done, for a terminal to show on long runs.
    """
    outcome = Outcome()
    config = config or Config()
    if config.per_file_ignores:  # the configuration's, whichever front-end made the plan
        plan = dataclasses.replace(plan, selection=plan.selection.with_per_file_ignores(config.per_file_ignores))
    say = progress or (lambda doing: None)
    workspace = Workspace(repository, plan.max_bytes, reuse.loaded if reuse is not None else None)
    found: list[Diagnostic] = []
    named = request.targets(repository)
    targets = []
    for index, (relative, kind) in enumerate(named):
        say(f"reading {index + 1}/{len(named)}: {relative}")
        targets.append(workspace.load(relative, kind))
    context = RepositoryContext(
        workspace,
        targets,
        request.covers,
        config.runners,
        config.fix_timeout_minutes,
        plan.backend_settings.config_source,
        repository.relative_paths(plan.own_files),
    )
    # The linters start as soon as the files they read and the runners are known: they take longer than the rest.
    linters = _start_linters(plan, [file for file in targets if file.kind in YAML_KINDS], repository, context)
    if linters is not None:
        say(f"running {', '.join(plan.backends)} beside ci-checks' own rules")
    found_by_policy: list[Diagnostic] = []
    try:
        for target in targets:
            found.extend(_check_file(target, plan.rules, outcome, reuse.file_findings if reuse is not None else None))
        found.extend(_check_repository(context, plan.rules, outcome))
        if plan.policy_rules:
            from ci_checks import policy

            policy_files = frozenset({*CONFIG_FILES, *([config.path] if config.path else [])})
            found_by_policy = policy.evaluate(plan.policy_rules, workspace, request.covers, policy_files)
    except BaseException:
        if linters is not None:
            linters.stop()
        raise
    linted = linters.result() if linters is not None else reuse.linted if reuse is not None else None
    if linted is not None:  # a finding left out by the selection leaves the other of its pair alone
        from ci_checks.backends.merge import merged
        from ci_checks.backends.placement import placed

        external = [diagnostic for diagnostic in placed(linted, context) if plan.keeps(diagnostic)]
        found = merged([diagnostic for diagnostic in found if plan.keeps(diagnostic)], external, workspace.loaded)
    found.extend(found_by_policy)
    found = [plan.selection.adjusted(diagnostic) for diagnostic in found if plan.keeps(diagnostic)]
    sources = {path: file.source for path, file in workspace.loaded.items()}
    if config.source is not None and config.path is not None:
        sources[config.path] = config.source
    unused_in = [path for path in sources if request.covers(path)] if plan.report_unused_ignores else []
    if plan.report_unused_ignores and config.path is not None and config.rules:
        unused_in.append(config.path)
    known = {*registry.NAMES_BY_CODE, *registry.CODES_BY_NAME, *(rule.id for rule in config.rules)}
    ref = plan.backend_settings.config_source
    trusted_from = ref if isinstance(ref, config_source.GitRef) else None
    kept = suppression.apply(found, sources, workspace.loaded, known, unused_in, trusted_from)
    kept = [_inside_the_file(diagnostic, sources) for diagnostic in kept]
    outcome.diagnostics = sorted_diagnostics(kept)
    outcome.sources = sources
    checked = sorted(
        {file.path for file in targets if file.kind in YAML_KINDS}
        | {path for path in workspace.consulted if request.covers(path)}
        | ({config.path} if config.path is not None and config.path in request.files else set())
    )
    outcome.files = len(checked)
    outcome.checked = checked
    for relative, shown, folder in request.named:
        if not any(path == relative or not relative or path.startswith(relative + "/") for path in checked):
            outcome.nothing_to_check.append((shown, folder))
    return outcome


class _Linters:
    """The external linters running in a thread of their own while ci-checks' own rules run: they spend their
    time in their own processes, so the two overlap."""

    CLEAN_UP_S = 30.0

    def __init__(self, run: Callable[[], list[Diagnostic]]) -> None:
        self._found: list[Diagnostic] = []
        self._error: BaseException | None = None
        # Waited for through an event, not `Thread.join`: a join interrupted by a signal can leave the thread
        # reported as finished while it still runs.
        self._done = threading.Event()
        threading.Thread(target=self._run, args=(run,), name="ci-checks linters", daemon=True).start()

    def _run(self, run: Callable[[], list[Diagnostic]]) -> None:
        try:
            self._found = run()
        except BaseException as error:  # handed to the main thread, which decides what it means
            self._error = error
        finally:
            self._done.set()

    def stop(self) -> None:
        """End the linters' processes now, the run being abandoned, and give the thread a moment to remove its
        private copies (it has nothing left to wait for)."""
        from ci_checks.backends import tools

        tools.stop_all()
        self._done.wait(timeout=self.CLEAN_UP_S)

    def result(self) -> list[Diagnostic]:
        try:
            interrupts.wait_for(self._done.wait)
        except BaseException:  # an interrupt or SIGTERM while waiting
            self.stop()
            raise
        if self._error is not None:
            raise self._error
        return self._found


def _start_linters(
    plan: Plan, files: list[LoadedFile], repository: Repository, context: RepositoryContext
) -> _Linters | None:
    if not plan.backends:
        return None
    from ci_checks.backends.external import run_backends  # the linters' modules, only when one runs

    names, settings = plan.backends, plan.backend_settings
    if "actionlint" in names:  # the runners' labels are actionlint's self-hosted ones too
        settings = dataclasses.replace(settings, runner_labels=context.actionlint_runner_labels)
    return _Linters(lambda: run_backends(names, files, repository.root, settings, repository))


def _inside_the_file(diagnostic: Diagnostic, sources: dict[str, SourceFile]) -> Diagnostic:
    """The diagnostic with every position it gives on a line and column that exist in its file.

    A parser reports some problems just past the last character (an unclosed
    `{` at the end of a file with no final newline); a reader would look for a
    line that is not there.
    """
    spans = [diagnostic.span, *(related.span for related in diagnostic.related)]
    readable = {span.path: sources[span.path] for span in spans if span.path in sources}
    readable = {path: file for path, file in readable.items() if file.problem is None}
    if not readable:
        return diagnostic

    def inside(span: Span) -> Span:
        file = readable.get(span.path)
        return file.clamp(span) if file is not None else span

    related = tuple(dataclasses.replace(item, span=inside(item.span)) for item in diagnostic.related)
    return dataclasses.replace(diagnostic, span=inside(diagnostic.span), related=related)


def _check_repository(context: RepositoryContext, rules: list[Rule], outcome: Outcome) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for rule in rules:
        if rule.check_repository is None:
            continue
        try:
            found.extend(d for d in rule.check_repository(context) if context.covers(d.span.path))
        except Exception as error:  # a bug in a rule must not hide the other rules' findings
            outcome.internal_errors.append(f"{rule.code} {rule.name} failed on {context.repository.root}: {error!r}")
    return found


def _check_file(
    file: LoadedFile,
    rules: list[Rule],
    outcome: Outcome,
    kept: dict[str, tuple[LoadedFile, list[Diagnostic], list[str]]] | None = None,
) -> list[Diagnostic]:
    """What the rules that read one file alone find in it (taken from `kept` when the file is the one they read)."""
    earlier = kept.get(file.path) if kept is not None else None
    if earlier is not None and earlier[0] is file:
        outcome.internal_errors.extend(earlier[2])
        return list(earlier[1])
    found: list[Diagnostic] = []
    failures: list[str] = []
    if file.kind in YAML_KINDS:
        for rule in rules:
            if rule.check is None or file.kind not in rule.kinds:
                continue
            try:
                found.extend(rule.check(file))
            except Exception as error:  # a bug in a rule must not hide the other rules' findings
                failures.append(f"{rule.code} {rule.name} failed on {file.path}: {error!r}")
    outcome.internal_errors.extend(failures)
    if kept is not None:
        kept[file.path] = (file, list(found), failures)
    return found
