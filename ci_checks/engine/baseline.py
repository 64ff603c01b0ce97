"""Baselines: today's findings, recorded so that a check reports only the findings that are new.

`ci-checks baseline write FILE` records each finding by its code, rule, file
and a fingerprint of what it is about (the text of its line and of its span,
and its message), never its line number, so that the entries survive lines
moving up or down. `check --baseline FILE` drops the findings the file
accepts, says how many it accepted, and lists the entries that match nothing
any more (fixed, or changed past recognition). Identical findings on
identical lines are told apart by their order in the file.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ci_checks.core import output_files
from ci_checks.core.config_source import ConfigSourceError, GitRef
from ci_checks.core.diagnostics import Diagnostic
from ci_checks.core.linters import LINTER_FAILED
from ci_checks.core.own_output import BASELINE_FORMAT
from ci_checks.core.source import SourceFile

MAX_BYTES = 64 << 20


class BaselineError(Exception):
    """A baseline file that cannot be read or written; the message says why (exit code 2)."""


@dataclass(frozen=True, order=True)
class Entry:
    path: str
    code: str
    rule: str
    fingerprint: str
    message: str = field(compare=False)


def fingerprints(diagnostics: Iterable[Diagnostic], sources: dict[str, SourceFile]) -> list[tuple[Diagnostic, str]]:
    """Each finding with its fingerprint, in the order given."""
    seen: Counter[tuple[str, str, str, str]] = Counter()
    found = []
    for diagnostic in diagnostics:
        span = diagnostic.span
        source = sources.get(span.path)
        line = source.line_text(span.line) if source is not None and source.problem is None else ""
        if line.lstrip().startswith("#"):
            line = ""  # a finding about the whole file (an empty one) sits on its first line, whatever that says
        start = max(span.column - 1, 0)
        end = span.end_column - 1 if span.end_line == span.line else len(line)
        context = "\0".join((" ".join(line.split()), line[start:end].strip(), diagnostic.message))
        digest = hashlib.sha256(context.encode("utf-8", "surrogatepass")).hexdigest()[:20]
        key = (span.path, diagnostic.code, diagnostic.rule, digest)
        found.append((diagnostic, f"{digest}:{seen[key]}"))
        seen[key] += 1
    return found


def entries(diagnostics: Iterable[Diagnostic], sources: dict[str, SourceFile]) -> list[Entry]:
    """The entries that accept these findings; a linter's failure is never one (see `LINTER_FAILED`)."""
    return sorted(
        Entry(d.span.path, d.code, d.rule, fingerprint, d.message)
        for d, fingerprint in fingerprints(diagnostics, sources)
        if d.code != LINTER_FAILED
    )


def write(path: Path, recorded: list[Entry], protected: Iterable[Path] = ()) -> None:
    """Write the baseline (`output_files`: never through a link inside the `protected` folders)."""
    data = {
        "version": BASELINE_FORMAT,
        "findings": [
            {"path": e.path, "code": e.code, "rule": e.rule, "fingerprint": e.fingerprint, "message": e.message}
            for e in recorded
        ],
    }
    text = json.dumps(data, indent=1, ensure_ascii=True) + "\n"
    try:
        output_files.write(path, text, protected)
    except output_files.OutputError as error:
        raise BaselineError(str(error)) from None


def load(path: Path, protected: Sequence[Path], ref: str | None) -> list[Entry]:
    """The entries of the baseline at `path`, read from where the configuration comes from.

    Inside a protected folder (a checked repository or its checkout, which the
    checked change controls) the baseline is read through no link, and with
    `--config-ref REF` from REF's git objects, as the configuration is: a pull
    request cannot accept its own findings by adding entries. Outside them it
    is read from the file given.
    """
    try:
        place = output_files.locate(path, protected)
    except output_files.OutputError as error:
        raise BaselineError(f"{error.path}: cannot read the baseline: {error.reason}") from None
    if place.protected_by is None:
        return read(path)
    if ref is None:
        return read(place.real)
    top = next((folder for folder in place.real.parents if (folder / ".git").exists()), None)
    if top is None:
        raise BaselineError(f"{path}: not in a git repository, so the baseline cannot be read from {ref}")
    commit = GitRef(top, ref)
    try:
        found = commit.read(place.real.relative_to(top).as_posix(), MAX_BYTES)
    except ConfigSourceError as error:
        raise BaselineError(f"--baseline {path}, read from the commit --config-ref names: {error}") from None
    finally:
        commit.close()
    if found is None:
        raise BaselineError(
            f"{path}: not in {ref}; with --config-ref the baseline is read from that commit, as the configuration "
            "is, so that a change cannot accept its own findings (name a baseline outside the checkout to use another)"
        )
    if found.problem is not None:
        raise BaselineError(f"{path}: cannot read the baseline from {ref}: {found.problem.message}")
    return parse(found.text, path)


def read(path: Path) -> list[Entry]:
    if path.is_symlink() or not path.is_file():
        raise BaselineError(f"{path}: the baseline must be a regular file")
    try:
        with path.open("rb") as stream:
            data_bytes = stream.read(MAX_BYTES + 1)
    except OSError as error:
        raise BaselineError(f"{path}: cannot read the baseline: {error.strerror}") from None
    if len(data_bytes) > MAX_BYTES:
        raise BaselineError(f"{path}: the baseline is larger than {MAX_BYTES >> 20} MiB")
    return parse(data_bytes, path)


def parse(text: str | bytes, path: Path) -> list[Entry]:
    """A baseline's entries from its JSON; BaselineError when it is not one."""
    try:
        data: Any = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise BaselineError(f"{path}: not a ci-checks baseline ({error})") from None
    findings = data.get("findings") if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("version") != BASELINE_FORMAT or not isinstance(findings, list):
        raise BaselineError(f"{path}: not a ci-checks baseline of format {BASELINE_FORMAT} (write it again)")
    recorded = []
    for item in findings:
        fields = ("path", "code", "rule", "fingerprint", "message")
        if not isinstance(item, dict) or not all(isinstance(item.get(name), str) for name in fields):
            raise BaselineError(f"{path}: an entry lacks one of {', '.join(fields)}")
        recorded.append(Entry(*(item[name] for name in fields)))
    return recorded


@dataclass
class Comparison:
    new: list[Diagnostic]
    accepted: int
    stale: list[Entry]


def compare(
    diagnostics: list[Diagnostic], sources: dict[str, SourceFile], recorded: list[Entry], covers: Callable[[str], bool]
) -> Comparison:
    """The findings the baseline does not accept; its entries, among the files checked, that matched nothing."""
    remaining = Counter((e.path, e.code, e.rule, e.fingerprint) for e in recorded)
    new = []
    accepted = 0
    for diagnostic, fingerprint in fingerprints(diagnostics, sources):
        key = (diagnostic.span.path, diagnostic.code, diagnostic.rule, fingerprint)
        if remaining[key] > 0 and diagnostic.code != LINTER_FAILED:
            remaining[key] -= 1
            accepted += 1
        else:
            new.append(diagnostic)
    stale = []
    for entry in recorded:
        key = (entry.path, entry.code, entry.rule, entry.fingerprint)
        if remaining[key] > 0:
            remaining[key] -= 1
            if covers(entry.path):
                stale.append(entry)
    return Comparison(new, accepted, sorted(stale))
