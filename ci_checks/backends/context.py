"""What actionlint and zizmor run with, and how one file they cannot load is kept from costing every other file.

Each linter runs over the private copy of the checked files (`Mirror`) with
the configuration ci-checks read for it (`LinterConfig`). When it fails for
the whole batch, the file it names in its error is left out and it runs
again; when it names none, the batch is halved until the file is found. The
file that caused the failure gets the CC091; the other files keep their
findings. A configuration the linter refuses is dropped (CC092) and the run
repeated without it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ci_checks.backends import tools
from ci_checks.backends.linter_config import LinterConfig
from ci_checks.backends.mirror import Mirror
from ci_checks.backends.notices import FAILED
from ci_checks.core.diagnostics import Diagnostic, Span
from ci_checks.model.loading import LoadedFile

MAX_RUNS = 16
"""How many times one linter is started to isolate the files it cannot load, at most."""


@dataclass
class Context:
    name: str
    mirror: Mirror
    scratch: Path
    config: LinterConfig
    limit: tools.TimeLimit

    def config_file(self) -> Path | None:
        return self.config.write(self.scratch)


class FileFailed(tools.BackendFailed):
    """The linter stopped on one file it named."""

    def __init__(self, file: LoadedFile, message: str) -> None:
        super().__init__(message)
        self.file = file


class ConfigRefused(tools.BackendFailed):
    """The linter rejected the configuration it was given."""


def named_in(stderr: str, files: list[LoadedFile], mirror: Mirror) -> LoadedFile | None:
    """The one file of `files` that a linter's error names (by its copy's path), if exactly one is named."""
    named = [
        file
        for file in files
        if re.search(rf"(^|[\s\"'/]){re.escape(file.path)}($|[\s\"':])", mirror.shown(stderr), re.MULTILINE)
    ]
    return named[0] if len(named) == 1 else None


def with_its_config(
    context: Context, run: Callable[[list[LoadedFile]], list[Diagnostic]], files: list[LoadedFile]
) -> list[Diagnostic]:
    """`run` over the files the copy holds (see `isolating`), with the linter's configuration's own findings; a
    configuration the linter refuses is dropped (CC092) and the files are checked again without it."""
    inputs = [file for file in files if context.mirror.has(file)]
    config = context.config
    try:
        return [*config.findings, *isolating(context, run, inputs)]
    except ConfigRefused as refused:
        context.config = config.without_it(str(refused))
        return [*context.config.findings, *isolating(context, run, inputs)]


def isolating(
    context: Context, run: Callable[[list[LoadedFile]], list[Diagnostic]], files: list[LoadedFile]
) -> list[Diagnostic]:
    """`run` over `files`, and over fewer of them each time it fails for a batch, until it runs or names its file."""
    budget = [MAX_RUNS]
    found, failing, reason = _isolate(context.name, run, files, budget)
    if failing:
        found += _failed_batch(context, failing, reason, len(failing) < len(files))
    return found


def _isolate(
    name: str, run: Callable[[list[LoadedFile]], list[Diagnostic]], batch: list[LoadedFile], budget: list[int]
) -> tuple[list[Diagnostic], list[LoadedFile], str]:
    """Findings, and the files that still fail together with the reason (none: every other file was checked).

    A batch whose two halves both fail as it did fails as a whole: the linter,
    not one of its files, is what fails.
    """
    found: list[Diagnostic] = []
    while batch:
        budget[0] -= 1
        try:
            return [*found, *run(batch)], [], ""
        except ConfigRefused:
            raise
        except FileFailed as failure:
            found.append(_failed_file(name, failure.file, str(failure)))
            batch = [file for file in batch if file is not failure.file]
        except tools.BackendFailed as failure:
            reason = str(failure)
            if failure.timed_out or len(batch) == 1 or budget[0] < 2:
                return found, batch, reason
            middle = len(batch) // 2
            halves = [_isolate(name, run, half, budget) for half in (batch[:middle], batch[middle:])]
            if all(failing and half_reason == reason for _, failing, half_reason in halves):
                return [*found, *(d for half_found, _, _ in halves for d in half_found)], batch, reason
            failing = [file for _, half_failing, _ in halves for file in half_failing]
            reasons = [half_reason for _, half_failing, half_reason in halves if half_failing]
            found += [d for half_found, _, _ in halves for d in half_found]
            return found, failing, reasons[0] if reasons else ""
    return found, [], ""


def _failed_batch(context: Context, batch: list[LoadedFile], reason: str, some: bool) -> list[Diagnostic]:
    """A CC091 for files a linter failed on: at the file itself when it is one of several, else at the first."""
    if len(batch) == 1 and some:
        return [_failed_file(context.name, batch[0], reason)]
    message = f"{context.name} failed: {reason}"
    if some:
        message += f" ({len(batch)} files unchecked)"
    return [FAILED.diagnostic(Span.point(batch[0].path), message)]


def _failed_file(name: str, file: LoadedFile, reason: str) -> Diagnostic:
    return FAILED.diagnostic(
        Span.point(file.path), f"{name} failed on this file, so it checked nothing in it: {reason}"
    )
