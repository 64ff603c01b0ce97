"""What a repository-level rule reads: the files asked for, any other file of the repository, the configuration.

Some rules need more than the file they report on: a workflow's `bash
scripts/x.sh` is checked against the repository's files, a patch against
everything that could mention it, a reusable workflow's `runs-on` against the
labels its callers pass. They get a `RepositoryContext`; what they load goes
through the same `Workspace` as everything else (each file read once, never
outside the repository), and their findings are kept only in the files the
run was asked about.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import cached_property
from typing import TYPE_CHECKING

from ci_checks.core.config_source import ConfigSource, WorkTree
from ci_checks.core.diagnostics import Span
from ci_checks.core.linters import LINTERS
from ci_checks.core.repository import FileKind, Repository
from ci_checks.model import Workflow
from ci_checks.model.inventory import Inference, infer, looks_github_hosted, merged
from ci_checks.model.loading import LoadedFile, Workspace
from ci_checks.model.runners import RunnerInventory
from ci_checks.model.valuation.runners import RunnerResolver
from ci_checks.model.values import mapping, string_list
from ci_checks.syntax import yamlpos

if TYPE_CHECKING:
    from ci_checks.model.files.repository import RepositoryFiles
    from ci_checks.model.valuation import Valuation
    from ci_checks.syntax.shell import Block

GITHUB_TIMEOUT_MINUTES = 360
"""How long GitHub lets a job run when it sets no `timeout-minutes`."""


@dataclass(frozen=True)
class DeclaredLabels:
    """The `self-hosted-runner.labels` list of a repository's actionlint configuration: labels or globs (`gpu-*`),
    and where the list is written (the file, and the list in it)."""

    path: str
    labels: tuple[str, ...]
    span: Span

    def declares(self, label: str) -> bool:
        """Whether a label is one of the list, or matched by one of its globs, without case as GitHub compares."""
        lower = label.lower()
        return any(lower == known.lower() or fnmatchcase(lower, known.lower()) for known in self.labels)


@dataclass(eq=False)
class RepositoryContext:
    workspace: Workspace
    targets: list[LoadedFile]
    """The workflows, actions and files the run was asked about."""
    covers: Callable[[str], bool]
    """Whether a repo-relative path is one the run reports on."""
    configured_runners: RunnerInventory = field(default_factory=RunnerInventory)
    """The configuration's `runners:`."""
    fix_timeout_minutes: int = GITHUB_TIMEOUT_MINUTES
    """The `timeout-minutes` a fix gives a self-hosted job (the configuration's `fixes.timeout-minutes`)."""
    config_files: ConfigSource | None = None
    """Where the linters' configurations are read from (default: the work tree)."""
    own_files: frozenset[str] = frozenset()
    """The repo-relative paths of the files the run itself reads or writes (its baseline, its reports): about the
    repository, not part of it (see `own_output`)."""

    @property
    def repository(self) -> Repository:
        return self.workspace.repository

    @cached_property
    def whole_checkout(self) -> bool:
        """Whether the root is in a checkout (it or a folder above it holds `.git`): only then does a missing file
        prove anything.

        A folder found by its `.github` alone, outside any checkout, may be a
        copy of the workflows without the rest of the repository.
        """
        return self.repository.in_checkout

    def load(self, relative: str) -> LoadedFile:
        """A file the rule judges (a Dockerfile, a patch): it counts as checked when the run was asked about it."""
        if self.covers(relative):
            self.workspace.consulted.add(relative)
        return self.workspace.load(relative)

    @cached_property
    def workflows(self) -> list[Workflow]:
        """Every workflow of the repository that could be modelled, asked about or not (callers, callees),
        and the workflow files asked about that lie elsewhere."""
        paths = dict.fromkeys([*self.repository.workflows, *(t.path for t in self.targets if t.workflow is not None)])
        loaded = [self.workspace.load(path, FileKind.WORKFLOW) for path in paths]
        return [file.workflow for file in loaded if file.workflow is not None]

    @cached_property
    def files(self) -> RepositoryFiles:
        """What every job, composite action and Dockerfile of the repository does to its files (built as asked)."""
        from ci_checks.model.files.repository import RepositoryFiles

        return RepositoryFiles(self.workspace, lambda: self.workflows, self.trusted_files)

    @property
    def trusted_files(self) -> ConfigSource | None:
        """The ref the configuration is read from under `--config-ref` (None: the work tree, which a change edits)."""
        return (
            self.config_files if self.config_files is not None and not isinstance(self.config_files, WorkTree) else None
        )

    @cached_property
    def valuation(self) -> Valuation:
        """The legs of every job and the values each runs with (built as asked)."""
        from ci_checks.model.valuation import Valuation

        return Valuation(self.workflows, self.repository_script)

    def repository_script(self, relative: str) -> Block | None:
        """A shell script of the repository that a script sources (`source ci/env.sh`), parsed; None for a path
        outside the repository or a file that is not there."""
        normalized = posixpath.normpath(relative.removeprefix("./"))
        if normalized.startswith(("../", "/")) or normalized in ("..", ".") or "\0" in normalized:
            return None
        if not self.repository.exists(normalized):
            return None
        return self.workspace.load(normalized, FileKind.SHELL).shell_script

    @cached_property
    def resolver(self) -> RunnerResolver:
        return RunnerResolver(self.workflows, self.valuation)

    @cached_property
    def runner_label_list(self) -> DeclaredLabels | None:
        """The self-hosted runner labels the repository declares to actionlint (the `self-hosted-runner.labels` list
        of `.github/actionlint.yaml`), read from where actionlint's configuration is; None when it has no such list,
        or a file actionlint could not use either."""
        files = self.config_files or WorkTree(self.repository)
        for relative in LINTERS["actionlint"].config_files:
            found = files.read(relative)
            if found is None:
                continue
            document = yamlpos.parse(found) if found.problem is None else None
            if document is None or any(issue.kind is not yamlpos.IssueKind.EMPTY for issue in document.issues):
                return None
            root = mapping(document.root)
            runners = mapping(root.get("self-hosted-runner")) if root is not None else None
            labels = runners.get("labels") if runners is not None else None
            if not isinstance(labels, yamlpos.Sequence):
                return None
            return DeclaredLabels(relative, tuple(label.value for label in string_list(labels)), labels.span)
        return None

    @property
    def declared_labels(self) -> tuple[str, ...]:
        """The labels of `runner_label_list`, if any."""
        return self.runner_label_list.labels if self.runner_label_list is not None else ()

    def undeclared(self, label: str) -> bool:
        """Whether the repository lists its runner labels to actionlint, and this one is none of them (nor matched
        by one of its globs), nor one every self-hosted runner has, nor GitHub's (or one that looks it, left to
        actionlint), nor one of the configured `runners:` inventory: no runner carries it."""
        declared = self.runner_label_list
        if declared is None or declared.declares(label) or self.configured_runners.knows(label):
            return False
        return not looks_github_hosted(label)

    @property
    def actionlint_runner_labels(self) -> tuple[str, ...]:
        """The self-hosted labels actionlint is told of besides those the repository declares to it: with a list of
        its own, only the configured `runners:` inventory's, so that a label the list lacks (a retired machine) is
        reported as actionlint alone reports it; with none, every runner's of the inventory, configured and
        inferred."""
        if self.runner_label_list is not None:
            return self.configured_runners.labels
        return self.runners.labels

    @cached_property
    def inferred(self) -> Inference:
        """The runners the workflows imply, and the labels that read as typos."""
        return infer(self.workflows, self.resolver, self.declared_labels)

    @cached_property
    def runners(self) -> RunnerInventory:
        """The runner inventory every runner rule reads: the configured runners, then the inferred ones the
        configuration does not name."""
        return merged(self.configured_runners, self.inferred.inventory)

    @property
    def target_workflows(self) -> list[Workflow]:
        return [file.workflow for file in self.targets if file.workflow is not None]
