"""zizmor's offline audits over workflows and composite actions: one process, its JSON findings.

Only files ci-checks could read as a workflow or action are given, as their
private copies (`mirror`). zizmor skips, with a warning, any input it cannot
parse, and stops with "no inputs collected" when it can parse none; each such
file gets a CC091, as it was not audited. A file it cannot turn into a model
stops it for every file; that file is left out and the others audited again
(`context.isolating`). The repository's `zizmor.yml` reaches it as a copy
(`--config`), or not at all (`--no-config`): zizmor never looks for one
itself. `--offline` keeps it from the network.

An inline `# zizmor: ignore[audit]` comment is zizmor's configuration written
in a checked file: under `--config-ref` one that the file at the ref lacks on
the same anchor (the key path and the text it covers, see `anchors`) is
blanked in the copy before zizmor runs (`cut_ignores_not_in`), so a change
cannot silence a finding by adding one or by copying the base's next to new
code; a CC092 at the comment says so.

zizmor reads the lock file `.github/workflows/actions.lock` of the copy, and
one it rejects stops it for every input: zizmor then runs again without it,
and the lock file gets the CC091 (`_LockFile`). A lock file that is a link,
a FIFO or anything but a regular file is not copied and gets a CC004.

Positions: zizmor's rows and columns count from 0 and its columns in UTF-8
bytes; they become ci-checks' 1-based character columns. Each finding is
reported at its primary location, with its related locations attached.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from typing import Any

from ci_checks.backends import tools
from ci_checks.backends.context import ConfigRefused, Context, FileFailed, named_in, with_its_config
from ci_checks.backends.mirror import LOCK_FILE, Mirror
from ci_checks.backends.notices import FAILED
from ci_checks.core.config_source import ConfigSource
from ci_checks.core.diagnostics import Diagnostic, Fix, Related, Severity, Span
from ci_checks.core.linters.zizmor import LINTER
from ci_checks.core.source import SourceFile
from ci_checks.model.loading import LoadedFile
from ci_checks.rules.cc004_unreadable_file import RULE as UNREADABLE
from ci_checks.rules.cc092_linter_config import RULE as LINTER_CONFIG
from ci_checks.syntax import anchors

# zizmor exits with 10 plus the highest severity it found (unknown 10 ... high 14).
_FINDINGS = (0, 10, 11, 12, 13, 14)
_SEVERITIES = {"High": Severity.ERROR, "Medium": Severity.WARNING}
_CONFIDENCES = {"High": "high", "Medium": "medium", "Low": "low"}
_UNPARSED = "failed to parse input:"
_AUDITED = re.compile(r"\bcompleted (.+)$", re.MULTILINE)
_QUOTED = re.compile(r"\"[^\"]*\"|`[^`]*`|'[^']*'")
_IGNORE = re.compile(r"#\s*zizmor:\s*ignore\[[^\]\n]*\]")
_SKIPPED = re.compile(r"failed to validate file:(?P<path>\S+) as \w+:", re.MULTILINE)


def inputs(files: list[LoadedFile]) -> list[LoadedFile]:
    return [file for file in files if file.readable and (file.workflow is not None or file.action is not None)]


def run(binary: str, files: list[LoadedFile], context: Context) -> list[Diagnostic]:
    lock = _LockFile(context.mirror)
    found = with_its_config(context, lambda batch: lock.run(lambda: _run(binary, batch, context)), files)
    return [*lock.findings(), *found]


class _LockFile:
    """zizmor's lock file in the copy, taken out once when zizmor fails for a whole batch with it there."""

    def __init__(self, mirror: Mirror) -> None:
        self.mirror = mirror
        self.tried = False
        self.refused: str | None = None

    def run(self, attempt: Callable[[], list[Diagnostic]]) -> list[Diagnostic]:
        """`attempt`'s findings; when it fails for no one file, its findings without the lock file if that runs."""
        try:
            return attempt()
        except (ConfigRefused, FileFailed):
            raise
        except tools.BackendFailed as failure:
            copy = self.mirror.root / LOCK_FILE
            if failure.timed_out or self.tried or not copy.is_file():
                raise
            self.tried = True
            text = copy.read_text(encoding="utf-8")
            copy.unlink()
            try:
                found = attempt()
            except tools.BackendFailed:
                copy.write_text(text, encoding="utf-8")
                raise failure from None
            self.refused = str(failure)
            return found

    def findings(self) -> list[Diagnostic]:
        """A CC004 for a lock file that is not a regular file, a CC091 for one zizmor rejected."""
        lock = self.mirror.lock
        if lock is not None and lock.problem is not None:
            where = Span.point(LOCK_FILE, lock.problem.line, lock.problem.column)
            return [UNREADABLE.diagnostic(where, f"{lock.problem.message}; zizmor ran without it")]
        if self.refused is not None:
            message = f"zizmor rejected this lock file and ran without it: {self.refused}"
            return [FAILED.diagnostic(Span.point(LOCK_FILE), message)]
        return []


def _run(binary: str, files: list[LoadedFile], context: Context) -> list[Diagnostic]:
    mirror = context.mirror
    paths = {tools.path_key(mirror.path_of(file)): file for file in files}
    config = context.config_file()
    argv = [binary, "--offline", "--format", "json", "--no-progress"]
    argv += ["--config", str(config)] if config is not None else ["--no-config"]
    # With RUST_BACKTRACE set, a backtrace would push zizmor's error out of what is read of stderr.
    environment = {key: value for key, value in os.environ.items() if key != "ZIZMOR_CONFIG"}
    environment["RUST_BACKTRACE"] = "0"
    finished = tools.run([[*argv, "--", *paths]], mirror.root, context.limit, env=environment)[0]
    stderr = finished.stderr.decode("utf-8", errors="replace")
    unread = _unread(stderr, paths, mirror)
    if finished.returncode not in _FINDINGS:
        if b"no inputs collected" in finished.stderr:
            return unread
        summary = tools.tail(finished.stderr, mirror.root, context.scratch)
        if "configuration error" in stderr and context.config.path is not None:
            raise ConfigRefused(summary)
        reason = f"exited with status {finished.returncode}: {summary}"
        named = named_in(stderr, files, mirror)
        if named is not None:
            raise FileFailed(named, reason)
        raise tools.BackendFailed(reason)
    output = finished.stdout.decode("utf-8", errors="replace")
    try:
        return [*_diagnostics(json.loads(output), paths), *unread]
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as error:
        raise tools.unreadable("zizmor's JSON", error, output) from None


def _unread(stderr: str, paths: dict[str, LoadedFile], mirror: Mirror) -> list[Diagnostic]:
    """A CC091 at each input zizmor could not parse (and skipped), although ci-checks read it.

    zizmor logs a reason for each without naming the file, and names each file
    it audited and each it skipped as not matching the workflow schema. The
    other inputs it did not audit, in the order given, get the reasons in the
    order logged; when the counts differ, one CC091 at the first input gives
    them all.
    """
    found: list[Diagnostic] = []
    # A file zizmor names as not matching the workflow schema is one ci-checks reports itself (CC020): no CC091.
    named = {tools.path_key(mirror.root / match["path"].removeprefix("//")) for match in _SKIPPED.finditer(stderr)}
    reasons = [
        _QUOTED.sub('"…"', line.split(_UNPARSED, 1)[1].strip()) for line in stderr.splitlines() if _UNPARSED in line
    ]
    if not reasons:
        return found
    audited = {tools.path_key(mirror.root / match[1].strip()) for match in _AUDITED.finditer(stderr)}
    skipped = [file for key, file in paths.items() if key not in audited and key not in named]
    if len(skipped) != len(reasons) or not skipped:
        first = next(iter(paths.values()))
        message = f"zizmor could not read {len(reasons)} of the files, so it audited nothing in them: "
        return [*found, FAILED.diagnostic(Span.point(first.path), message + "; ".join(reasons))]
    message = "zizmor could not read this file, so it audited nothing in it: "
    pairs = zip(skipped, reasons, strict=True)
    return [*found, *(FAILED.diagnostic(Span.point(file.path), message + reason) for file, reason in pairs)]


def _diagnostics(findings: list[dict[str, Any]], paths: dict[str, LoadedFile]) -> Iterator[Diagnostic]:
    for finding in findings:
        if finding.get("ignored"):
            continue
        audit = str(finding["ident"])
        located = [_location(location, paths) for location in finding["locations"]]
        primary = next((place for place in located if place is not None and place[0] == "Primary"), None)
        if primary is None:
            continue
        _, span, annotation = primary
        related = tuple(Related(where, note) for kind, where, note in filter(None, located) if kind == "Related")
        determinations = finding["determinations"]
        severity = _SEVERITIES.get(str(determinations["severity"]), Severity.INFO)
        message = f"{finding['desc']}: {annotation}" if annotation else str(finding["desc"])
        url = finding.get("url")
        yield LINTER.finding(
            audit,
            severity,
            message,
            span,
            related,
            _fix(finding),
            url=str(url) if url else None,
            confidence=_CONFIDENCES.get(str(determinations.get("confidence"))),
        )


def cut_ignores_not_in(mirror: Mirror, ref: ConfigSource) -> list[Diagnostic]:
    """Blank, in the copy, each `# zizmor: ignore[...]` comment that the file at `ref` lacks on the same anchor
    (spaces of the same length, so that no position moves); a CC092 at each."""
    found: list[Diagnostic] = []
    for file in mirror.files.values():
        text = file.source.text
        if "zizmor" not in text:
            continue
        trusted = anchors.Trusted(_anchors(ref.read(file.path)))
        here = anchors.layout(file.source, file.document.root)
        cut = text
        for match in _IGNORE.finditer(text):
            line, column = file.source.position(match.start())
            if trusted.claim(here.anchor(match.group(), line)):
                continue
            cut = cut[: match.start()] + " " * len(match.group()) + cut[match.end() :]
            where = Span(file.path, line, column, line, column + len(match.group()))
            message = (
                f"this `zizmor: ignore` is not in {ref.description} on the same key and text, whose configuration "
                "this run uses (--config-ref), so zizmor does not use it"
            )
            found.append(LINTER_CONFIG.diagnostic(where, message))
        if cut != text:
            mirror.rewrite(file, cut)
    return found


def _anchors(then: SourceFile | None) -> list[anchors.Anchor]:
    """The anchors of the `# zizmor: ignore[...]` comments of a file at the ref (none when it has no readable one)."""
    if then is None or then.problem is not None or "zizmor" not in then.text:
        return []
    there = anchors.yaml_layout(then)
    return [there.anchor(match.group(), then.position(match.start())[0]) for match in _IGNORE.finditer(then.text)]


def _fix(finding: dict[str, Any]) -> Fix | None:
    """zizmor's own fix, which `--fix` asks zizmor to apply (it gives no edits in its JSON)."""
    offered = [fix for fix in finding.get("fixes") or () if isinstance(fix, dict) and fix.get("title")]
    if not offered:
        return None
    safe = all(fix.get("disposition") == "safe" for fix in offered)
    return Fix("; ".join(str(fix["title"]) for fix in offered) + " (by zizmor)", (), safe)


def _location(location: dict[str, Any], paths: dict[str, LoadedFile]) -> tuple[str, Span, str] | None:
    """(kind, span, annotation) of a location in one of `paths`; None for a place elsewhere."""
    symbolic = location["symbolic"]
    local = symbolic["key"].get("Local")
    # Older zizmor releases call the path as given `given_path`.
    given = local.get("verbatim_path", local.get("given_path")) if local else None
    file = paths.get(tools.path_key(given)) if given else None
    if file is None:
        return None
    where = location["concrete"]["location"]
    line, column = _position(file, where["start_point"])
    end_line, end_column = _position(file, where["end_point"])
    span = Span(file.path, line, column, end_line, end_column)
    return str(symbolic["kind"]), span, str(symbolic.get("annotation") or "")


def _position(file: LoadedFile, point: dict[str, Any]) -> tuple[int, int]:
    line = int(point["row"]) + 1
    return line, tools.char_column(file.source.line_text(line), int(point["column"]) + 1)
