"""The checked repository's configurations of actionlint and zizmor, read by ci-checks and handed over as copies.

A linter is never pointed at the repository's own configuration file: the
file is read here, as configuration files are (`ConfigSource`: a regular
file, not a link, or the file at `--config-ref`), parsed with the same
limits as workflows, and written as JSON (which both linters read as YAML)
into a private folder. So a configuration that is a link to a secret, a FIFO
or a YAML bomb never reaches the linter, and the linter's errors cannot quote
anything but what ci-checks wrote.

What a configuration turns off is reported (CC092, information), once, at
the first place in the file that turns something off. Under `--config-ref`,
the configuration of the ref is the one used, and each of the work tree's
that differs from it (changed, or added) is reported too (CC092, information,
at the work tree's file): a change cannot switch a linter's checks off before
it is merged, nor unseen.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ci_checks.core.config_source import ConfigSource
from ci_checks.core.diagnostics import Diagnostic, Severity, Span
from ci_checks.core.linters import LINTERS
from ci_checks.rules.cc004_unreadable_file import RULE as UNREADABLE
from ci_checks.rules.cc092_linter_config import RULE as LINTER_CONFIG
from ci_checks.syntax import yamlpos
from ci_checks.syntax.yamlpos import IssueKind

_SHOWN = 8
_COPY_POSITION = re.compile(r",? at line \d+,? column \d+")
_KEY_PATH = re.compile(r"(?P<path>[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*): ")
_QUOTED_CHARS = 60


@dataclass
class LinterConfig:
    """What a linter runs with: `data` is written for it (None: no configuration at all)."""

    linter: str
    path: str | None = None
    """The repository's configuration file it came from, repo-relative."""
    data: dict[str, Any] | None = None
    findings: list[Diagnostic] = field(default_factory=list)
    root: yamlpos.Node | None = None
    """The repository's file as read, for placing what the linter says about it."""
    changed: list[Diagnostic] = field(default_factory=list)
    """Under `--config-ref`, the work tree's configurations that differ from the ref's (also in `findings`)."""

    def write(self, folder: Path) -> Path | None:
        """The copy the linter reads, in `folder`; None when there is nothing to read."""
        if self.data is None:
            return None
        path = folder / f"{self.linter}-config.yaml"
        path.write_text(json.dumps(self.data), encoding="utf-8")
        return path

    def without_it(self, reason: str) -> LinterConfig:
        """The configuration to retry with after the linter refused this one: none, and a warning saying why.

        The linter read ci-checks' copy, so the line and column it gives are dropped; the key path it starts its
        reason with (`rules.x: invalid type ...`) places the warning in the repository's file.
        """
        reason = _COPY_POSITION.sub("", reason)
        where = Span.point(self.path or "")
        keys = _KEY_PATH.match(reason)
        if keys is not None and self.root is not None:
            where = _span_of(self.root, list(keys["path"].split(".")))
        message = f"{self.linter} cannot use this configuration ({reason}); it ran without it"
        warning = LINTER_CONFIG.diagnostic(where, message, severity=Severity.WARNING)
        data: dict[str, Any] | None = {} if self.linter == "actionlint" else None
        return LinterConfig(self.linter, self.path, data, [*self.changed, warning], changed=self.changed)


def read(
    linter: str, files: ConfigSource, runner_labels: tuple[str, ...] = (), work_tree: ConfigSource | None = None
) -> LinterConfig:
    """The configuration `linter` runs with: the repository's, when it is a usable regular file, else none.

    `work_tree`, when `files` is a ref's: the files the change holds, each one that differs reported (CC092).
    """
    config = LinterConfig(linter, data={} if linter == "actionlint" else None)
    if work_tree is not None:
        config.changed = _changed_since(linter, files, work_tree)
        config.findings += config.changed
    for relative in LINTERS[linter].config_files:
        found = files.read(relative)
        if found is None:
            continue
        config.path = relative
        if found.problem is not None:
            where = Span.point(relative, found.problem.line, found.problem.column)
            config.findings.append(UNREADABLE.diagnostic(where, f"{found.problem.message}; {linter} ran without it"))
            break
        document = yamlpos.parse(found)
        issues = [issue for issue in document.issues if issue.kind is not IssueKind.EMPTY]
        root = document.root
        if issues or (root is not None and not isinstance(root, yamlpos.Mapping)):
            reason = issues[0].message if issues else "its top level is not a mapping"
            where = found.clamp(issues[0].span) if issues else Span.point(relative)
            message = f"{linter} configuration cannot be read ({reason}); {linter} ran without it"
            config.findings.append(LINTER_CONFIG.diagnostic(where, message, severity=Severity.WARNING))
            break
        data = yamlpos.to_plain(root) if root is not None else {}
        assert isinstance(data, dict)
        try:
            json.dumps(data, allow_nan=False)
        except ValueError:
            message = f"{linter} configuration holds a number that is not finite; {linter} ran without it"
            config.findings.append(LINTER_CONFIG.diagnostic(Span.point(relative), message, severity=Severity.WARNING))
            break
        config.data = data
        config.root = root
        turned_off = list(_actionlint_off(data) if linter == "actionlint" else _zizmor_off(data))
        if turned_off and root is not None:
            where = _span_of(root, turned_off[0][0])
            described = [description for _, description in turned_off]
            shown = "; ".join(described[:_SHOWN]) + (
                f"; and {len(described) - _SHOWN} more" if len(described) > _SHOWN else ""
            )
            config.findings.append(
                LINTER_CONFIG.diagnostic(where, f"{linter}'s configuration turns checks off: {shown}")
            )
        break
    if linter == "actionlint" and runner_labels:
        config.data = _with_runner_labels(config.data or {}, runner_labels)
    return config


def _changed_since(linter: str, ref: ConfigSource, work_tree: ConfigSource) -> list[Diagnostic]:
    """A CC092 at each of the work tree's configuration files of `linter` that the ref lacks or has otherwise."""
    found = []
    for relative in LINTERS[linter].config_files:
        now = work_tree.read(relative)
        if now is None:
            continue
        then = ref.read(relative)
        if then is not None and then.text == now.text and then.problem == now.problem:
            continue
        how = "is not in" if then is None else "differs from the one in"
        message = (
            f"this {linter} configuration {how} {ref.description}, whose configuration this run uses "
            "(--config-ref): the change takes effect once it is merged"
        )
        found.append(LINTER_CONFIG.diagnostic(Span.point(relative), message))
    return found


def _with_runner_labels(data: dict[str, Any], labels: tuple[str, ...]) -> dict[str, Any]:
    runners = data.get("self-hosted-runner")
    runners = dict(runners) if isinstance(runners, dict) else {}
    known = runners.get("labels")
    known = [str(label) for label in known] if isinstance(known, list) else []
    runners["labels"] = [*known, *(label for label in labels if label not in known)]
    return {**data, "self-hosted-runner": runners}


Place = list[str | int]


def _actionlint_off(data: dict[str, Any]) -> Iterator[tuple[Place, str]]:
    """actionlint's `paths: {glob: {ignore: [regex, ...]}}`: errors matching a regex are dropped in those files."""
    paths = data.get("paths")
    if not isinstance(paths, dict):
        return
    for glob, settings in paths.items():
        ignored = settings.get("ignore") if isinstance(settings, dict) else None
        if isinstance(ignored, list) and ignored:
            patterns = ", ".join(_quoted(pattern) for pattern in ignored)
            yield ["paths", glob, "ignore"], f"errors matching {patterns} ignored in {_quoted(glob)}"


def _zizmor_off(data: dict[str, Any]) -> Iterator[tuple[Place, str]]:
    """zizmor's `rules.<audit>`: `disable`, `ignore`, `remap.severity` and `config`."""
    rules = data.get("rules")
    if not isinstance(rules, dict):
        return
    for audit, settings in rules.items():
        if not isinstance(settings, dict):
            continue
        name = _quoted(audit)
        if settings.get("disable") is True:
            yield ["rules", audit, "disable"], f"audit {name} disabled"
        ignored = settings.get("ignore")
        if isinstance(ignored, list) and ignored:
            yield ["rules", audit, "ignore"], f"{name} findings ignored in {', '.join(map(_quoted, ignored))}"
        remap = settings.get("remap")
        if isinstance(remap, dict) and "severity" in remap:
            yield ["rules", audit, "remap"], f"{name} severity changed to {_quoted(remap['severity'])}"
        if "config" in settings:
            yield ["rules", audit, "config"], f"audit {name} reconfigured"


def _quoted(value: object) -> str:
    text = str(value)
    return repr(text if len(text) <= _QUOTED_CHARS else text[: _QUOTED_CHARS - 1] + "…")


def _span_of(root: yamlpos.Node, place: Place) -> Span:
    node, key = yamlpos.node_at(root, place)
    return key.span if key is not None else node.span
