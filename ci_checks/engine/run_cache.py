"""Whole runs kept between runs: one repository's findings reused while nothing that decides them has changed.

A run's findings follow from three things: what ci-checks is (its code, the
linters' binaries), what it was asked (the request, the options and
environment that change findings, the configuration), and what it found on
disk. The first two make the key (`run_key`). The third is the run's
`Journal`: every question the run asked of the file system through its
repository (each file read, each path looked up, each folder listed) with
a digest of the answer. A stored run is reused only when asking every one of
those questions again gives the same answers; the files it read are then
read again, so reports quote them as they are now.

What is stored is JSON ci-checks wrote, read back strictly: a row that does
not decode to exactly the shapes written is a miss, so a corrupt or foreign
cache can cost a re-check but never decide a finding. Runs that a linter
could not complete (the `linter-run` group: CC090, CC091) or in which a rule failed are not kept:
they say nothing about the next run.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path

from ci_checks import __version__
from ci_checks.backends.cache import ResultCache, digest, environment
from ci_checks.core.diagnostic_data import (
    as_bool,
    as_int,
    as_list,
    as_mapping,
    as_str,
    decode_diagnostics,
    encode_diagnostics,
)
from ci_checks.core.diagnostics import Diagnostic
from ci_checks.core.repository import Repository
from ci_checks.core.source import SourceFile
from ci_checks.engine.journal import Journal, answer_digest
from ci_checks.engine.outcome import Outcome

FORMAT = 3
"""The layout of stored runs; a change to it makes every stored run a miss."""

_PACKAGE = Path(__file__).resolve().parents[1]


@cache
def code_identity() -> str:
    """What tells this ci-checks from another without reading it all: version, Python, and each module's size and
    modification time (an edited install is another ci-checks)."""
    modules = sorted(
        (str(path.relative_to(_PACKAGE)), status.st_size, status.st_mtime_ns)
        for path in _PACKAGE.rglob("*")
        if path.suffix in (".py", ".json") and (status := path.stat())
    )
    return digest(__version__, sys.version, modules)


def run_key(asked: object, linters: Mapping[str, object]) -> str:
    """The key of a run: this ci-checks, what it was asked (JSON data), the linters' identities, the environment."""
    return digest("run", FORMAT, code_identity(), asked, sorted(linters.items()), environment())


def fetch(cache: ResultCache, key: str, repository: Repository, config_source: SourceFile | None) -> Outcome | None:
    """The stored outcome under `key` when the file system still answers as it did for it, with its files as read now.

    The questions are asked again of `repository`'s root, with the exclusions
    the stored run had: its configuration's, which the key holds by its text.
    `config_source` is the configuration this run read, which reports quote
    along with the files.
    """
    stored = cache.get([key], _decoded).get(key)
    if stored is None:
        return None
    journal, outcome, sources, exclude = stored
    asking = Repository(repository.root, exclude=tuple(exclude))
    read = journal.replay(asking)
    if read is None or any(digest not in read for digest in sources.values()):
        return None
    outcome.sources = {path: read[digest] for path, digest in sources.items()}
    if config_source is not None:
        outcome.sources[config_source.path] = config_source
    return outcome


def transient(diagnostic: Diagnostic) -> bool:
    """Whether a finding says that a linter could not run or complete: a run holding one is not kept."""
    from ci_checks.backends.notices import (
        NOTICE_CODES,  # imported once a run checked something: a kept run never needs it
    )

    return diagnostic.code in NOTICE_CODES


def store(
    cache: ResultCache,
    key: str,
    journal: Journal,
    exclude: Sequence[str],
    outcome: Outcome,
    config_source: SourceFile | None,
) -> None:
    """Keep `outcome` of a run that asked the file system what `journal` noted and excluded the paths `exclude`
    matches, unless it holds what says nothing about the next run, or it quotes a file the journal lacks."""
    if outcome.internal_errors or any(transient(d) for d in outcome.diagnostics):
        return
    sources: dict[str, str] = {}
    noted = set(journal.entries.values())
    for path, source in outcome.sources.items():
        if config_source is not None and path == config_source.path and source is config_source:
            continue
        sources[path] = answer_digest(source)
        if sources[path] not in noted:
            return
    value = {
        "journal": [[*question, answer] for question, answer in journal.entries.items()],
        "diagnostics": encode_diagnostics(outcome.diagnostics),
        "sources": sources,
        "files": outcome.files,
        "checked": outcome.checked,
        "nothing_to_check": [[shown, folder] for shown, folder in outcome.nothing_to_check],
        "exclude": list(exclude),
    }
    cache.put({key: json.dumps(value)})


def _decoded(value: str) -> tuple[Journal, Outcome, dict[str, str], list[str]]:
    fields = {"journal", "diagnostics", "sources", "files", "checked", "nothing_to_check", "exclude"}
    data = as_mapping(json.loads(value), fields)
    journal = Journal()
    for entry in as_list(data["journal"]):
        *question, answer = as_list(entry)
        if not question or not all(isinstance(part, (str, int)) for part in question):
            raise ValueError("a journal question is not strings and numbers")
        journal.entries[tuple(question)] = as_str(answer)
    sources = {as_str(path): as_str(answer) for path, answer in as_mapping(data["sources"]).items()}
    nothing = [as_list(pair) for pair in as_list(data["nothing_to_check"])]
    outcome = Outcome(
        diagnostics=decode_diagnostics(data["diagnostics"]),
        files=as_int(data["files"]),
        checked=[as_str(path) for path in as_list(data["checked"])],
        nothing_to_check=[(as_str(pair[0]), as_bool(pair[1])) for pair in nothing if len(pair) == 2],
    )
    if len(outcome.nothing_to_check) != len(nothing):
        raise ValueError("a nothing-to-check entry is not a pair")
    return journal, outcome, sources, [as_str(glob) for glob in as_list(data["exclude"])]
