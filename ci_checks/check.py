"""Running the rules: from command-line paths to files, from files to sorted diagnostics."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ci_checks.diagnostics import Diagnostic, sorted_diagnostics
from ci_checks.loading import load
from ci_checks.repository import FileKind, Repository, kind_of
from ci_checks.rule import Rule
from ci_checks.source import DEFAULT_MAX_BYTES, SourceFile


class UsageError(Exception):
    """A mistake in how ci-checks was called: exit code 2, no diagnostics."""


@dataclass
class Outcome:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    sources: dict[str, SourceFile] = field(default_factory=dict)
    files: int = 0
    internal_errors: list[str] = field(default_factory=list)


def targets(repository: Repository, path: Path) -> list[tuple[str, FileKind]]:
    """What checking `path` means: one file, or the workflows and actions found under a folder."""
    if path.is_file() or path.is_symlink():
        relative = repository.relative(path)
        kind = kind_of(relative)
        if kind is None or kind is FileKind.DOCKERFILE:
            raise UsageError(f"{path}: not a workflow or action file (expected .yml or .yaml)")
        return [(relative, kind)]
    if path.is_dir():
        relative = repository.relative(path)
        prefix = "" if relative == "." else relative + "/"
        found = [(workflow, FileKind.WORKFLOW) for workflow in repository.workflows]
        found += [(action, FileKind.ACTION) for action in repository.actions]
        return sorted(item for item in found if item[0].startswith(prefix))
    if path.exists():
        raise UsageError(f"{path}: not a regular file or folder")
    raise UsageError(f"{path}: no such file or folder")


def run(
    repository: Repository,
    files: list[tuple[str, FileKind]],
    rules: list[Rule],
    max_bytes: int = DEFAULT_MAX_BYTES,
    outcome: Outcome | None = None,
) -> Outcome:
    """Check `files` of one repository with `rules`, adding to `outcome`."""
    outcome = outcome or Outcome()
    for relative, kind in files:
        loaded = load(repository, relative, kind, max_bytes)
        outcome.files += 1
        outcome.sources.setdefault(relative, loaded.source)
        for rule in rules:
            if kind not in rule.kinds:
                continue
            try:
                outcome.diagnostics.extend(rule.check(loaded))
            except Exception as error:  # a bug in a rule must not hide the other rules' findings
                outcome.internal_errors.append(f"{rule.code} {rule.name} failed on {relative}: {error!r}")
    outcome.diagnostics = sorted_diagnostics(outcome.diagnostics)
    return outcome
