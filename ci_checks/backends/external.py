"""External linters feeding ci-checks' diagnostics: actionlint, shellcheck and zizmor.

`run_backends` runs the linters asked for side by side, each over the files
it can read, each under the same time limit, and returns their findings as
diagnostics with ci-checks' positions (1-based lines, character columns):

- actionlint: `AL-<kind>` (e.g. `AL-expression`), rule `actionlint-<kind>`, error;
- shellcheck: `SC<number>`, rule `shellcheck`, error, warning or info as shellcheck says;
- zizmor: `ZZ-<audit>` (e.g. `ZZ-template-injection`), rule `zizmor-<audit>`,
  high severity an error, medium a warning, anything lower info.

A linter that cannot be run gives one CC090 (info), one that fails one CC091
(an error no filter drops), at 1:1 of the first file it would have read (or
of the one file it failed on). A linter named by option or environment
variable that is missing or is not that linter stops the run
(`tools.NamedBinaryError`, exit code 2).
Nothing from the checked repository is run; actionlint and zizmor read a
private copy of the files ci-checks itself read (`mirror`), with the
configuration ci-checks read for them (`linter_config`), and shellcheck reads
the scripts ci-checks wrote out. An interrupted run ends every linter process
before it unwinds.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import import_module
from pathlib import Path
from typing import Protocol, cast

from ci_checks.backends import linter_config, mirror, tools, zizmor
from ci_checks.backends.cache import ResultCache, binary_identity, digest, environment
from ci_checks.backends.context import Context
from ci_checks.backends.notices import FAILED, UNAVAILABLE
from ci_checks.core.config_source import ConfigSource, WorkTree
from ci_checks.core.diagnostic_data import decode_diagnostics, encode_diagnostics
from ci_checks.core.diagnostics import Diagnostic, Span, sorted_diagnostics
from ci_checks.core.linters import BACKENDS, LINTERS, BackendSettings
from ci_checks.core.repository import Repository
from ci_checks.model.loading import LoadedFile


class _Backend(Protocol):
    """The module that runs a linter (its `Linter.backend`): the files it reads, and its run over them."""

    def inputs(self, files: list[LoadedFile]) -> list[LoadedFile]: ...


class _MirroredBackend(_Backend, Protocol):
    """A linter that reads the private copy of the files and its configuration (`Linter.mirrored`)."""

    def run(self, binary: str, files: list[LoadedFile], context: Context) -> list[Diagnostic]: ...


class _ScriptBackend(_Backend, Protocol):
    """A linter that reads the scripts ci-checks writes out, each found kept in `cache`."""

    def run(
        self,
        binary: str,
        files: list[LoadedFile],
        root: Path,
        limit: tools.TimeLimit,
        *,
        cache: ResultCache | None,
        ref: ConfigSource | None,
    ) -> list[Diagnostic]: ...


def _backend(name: str) -> _Backend:
    return cast(_Backend, import_module(LINTERS[name].backend))


def run_backends(
    names: Sequence[str],
    files: Sequence[LoadedFile],
    root: Path,
    settings: BackendSettings,
    repository: Repository | None = None,
) -> list[Diagnostic]:
    """Findings of the linters `names` over `files` of the repository at `root`, sorted.

    `repository`, the one the files were read from, is asked for whatever else the linters read (their
    configuration, the targets of local `uses:`), so that its journal notes it too.
    """
    unknown = [name for name in names if name not in BACKENDS]
    if unknown:
        raise ValueError(f"unknown backend {unknown[0]!r}; backends: {', '.join(BACKENDS)}")
    root = Path(os.path.normpath(root.absolute()))
    tools.allow_runs()
    jobs = [(name, _backend(name).inputs(list(files))) for name in dict.fromkeys(names)]
    jobs = [(name, inputs) for name, inputs in jobs if inputs]
    if not jobs:
        return []
    repository = repository or Repository(root)
    configs = settings.config_source or WorkTree(repository)
    changes = WorkTree(repository) if not isinstance(configs, WorkTree) else None
    with tools.scratch_folder("linters") as scratch:
        mirrored = [file for name, inputs in jobs if LINTERS[name].mirrored for file in inputs]
        copy = mirror.build(scratch / "repository", dict.fromkeys(mirrored), repository)
        unused = zizmor.cut_ignores_not_in(copy, configs) if changes is not None and "zizmor" in names else []
        contexts = {
            name: Context(
                name,
                copy,
                scratch,
                linter_config.read(name, configs, settings.runner_labels, changes),
                tools.TimeLimit(settings.timeout_s),
            )
            for name, _ in jobs
            if LINTERS[name].mirrored
        }
        if "zizmor" in contexts:
            contexts["zizmor"].config.findings += unused
        with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
            running = [
                pool.submit(_run, name, inputs, root, settings, scratch, contexts.get(name)) for name, inputs in jobs
            ]
            try:
                return sorted_diagnostics([diagnostic for job in running for diagnostic in job.result()])
            except BaseException:  # an interrupt, or a linter named by option that is not one: end the others now
                tools.stop_all()
                raise


def _run(
    name: str, inputs: list[LoadedFile], root: Path, settings: BackendSettings, scratch: Path, context: Context | None
) -> list[Diagnostic]:
    where = Span.point(inputs[0].path)
    named = tools.named_binary(name, settings.binaries.get(name))
    try:
        binary = named[0] if named is not None else tools.find_binary(name, None)
        results = ResultCache(settings.cache_folder) if settings.cache_folder is not None else None
        try:
            try:
                tools.verify(name, binary, scratch, results)
            except tools.BackendFailed as failure:
                if named is not None:
                    raise tools.NamedBinaryError(f"{named[1]} names {binary!r}, which is not {name}") from None
                raise failure
            if context is not None:
                return _repository_wide(name, binary, inputs, context, results)
            configs = settings.config_source
            ref = configs if configs is not None and not isinstance(configs, WorkTree) else None
            backend = cast(_ScriptBackend, _backend(name))
            return backend.run(binary, inputs, root, tools.TimeLimit(settings.timeout_s), cache=results, ref=ref)
        finally:
            if results is not None:
                results.close()
    except tools.Unavailable as unavailable:
        if named is not None:
            raise tools.NamedBinaryError(f"{named[1]}: {unavailable}") from None
        return [UNAVAILABLE.diagnostic(where, str(unavailable))]
    except tools.BackendFailed as failure:
        return [FAILED.diagnostic(where, f"{name} failed: {failure}")]


def _repository_wide(
    name: str, binary: str, inputs: list[LoadedFile], context: Context, results: ResultCache | None
) -> list[Diagnostic]:
    """A mirrored linter's findings (actionlint's, zizmor's) over the private copy, kept under a key of everything
    they read.

    The key is the binary, the environment, the configuration given to it and
    the whole copy (every file, as written): they read nothing else. A run in
    which the linter failed on some file is not kept.
    """
    runner = cast(_MirroredBackend, _backend(name)).run
    if results is None:
        return runner(binary, inputs, context)
    config = context.config
    copied = sorted(
        (str(path.relative_to(context.mirror.root)), path.read_text(encoding="utf-8"))
        for path in context.mirror.root.rglob("*")
        if path.is_file()
    )
    key = digest(
        "linter",
        name,
        binary_identity(binary),
        environment(),
        [config.path, json.dumps(config.data, default=str, sort_keys=True), encode_diagnostics(config.findings)],
        copied,
        sorted(file.path for file in inputs),
    )
    kept = results.get([key], lambda value: decode_diagnostics(json.loads(value))).get(key)
    if kept is not None:
        return kept
    found = runner(binary, inputs, context)
    if not any(diagnostic.code == FAILED.code for diagnostic in found):
        results.put({key: json.dumps(encode_diagnostics(found))})
    return found
