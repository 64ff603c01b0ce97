"""shellcheck over the `run:` scripts of every file, batched: one process per CPU for all of them.

Every `run:` step whose shell is bash, sh, dash or ksh (its `shell:`, else
the job's or workflow's default; composite-action steps name theirs) becomes
a file in a private temporary folder, with `${{ }}` expressions masked by
underscores of the same length, so that shellcheck's line:column in that file
is an offset into the script, which the `run:` scalar's source map turns into
the exact place in the workflow for any scalar style.

actionlint 1.7 (rule_shellcheck.go) starts one
`shellcheck --norc -f json -x --shell <sh> -e SC1091,SC2194,SC2050,SC2153,SC2154,SC2157,SC2043 -`
per step, on the script with `${{ }}` masked by underscores and `set -e`
(sh) or `set -eo pipefail` (bash) on the line before it. The same is done
here, so the findings compare, with these differences:

- the dialect is a `# shellcheck shell=` directive on each file's first
  line, as one process checks scripts of several shells;
- `-f json1`, which counts a tab as one column (`json` counts it to the next
  tab stop);
- no `-x`: it lets a script make shellcheck read any file it sources
  (`source /dev/zero` exhausts the memory). Without it a sourced file is
  SC1091, which is excluded anyway; only what shellcheck would have learnt
  from a sourced file that exists on this machine is missing.

A `# shellcheck disable=...` directive (or any other: `shell=`, `enable=`) in
a `run:` script is configuration written in a checked file: under
`--config-ref` one that the file at the ref lacks on the same anchor (the key
path and the text it covers, see `anchors`) is blanked in shellcheck's copy
(`_cut_directives_not_in`), so a change cannot silence shellcheck by adding one
or by copying the base's next to new code; a CC092 at the directive says so.

Most of the time goes to shellcheck's own analysis, not to starting it: on a
262-file corpus its 910 distinct scripts take 3 CPU-seconds in one process.
So the findings of each script are kept in a `ResultCache` when the caller
gives one, and a script checked before by the same binary is not checked again.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from ci_checks.backends import tools
from ci_checks.backends.cache import ResultCache, binary_identity, digest
from ci_checks.core.config_source import ConfigSource
from ci_checks.core.diagnostics import Diagnostic, Severity, Span
from ci_checks.core.linters.shellcheck import LINTER
from ci_checks.core.source import SourceFile
from ci_checks.model.loading import LoadedFile
from ci_checks.model.steps import ScalarLocator
from ci_checks.rules.cc092_linter_config import RULE as LINTER_CONFIG
from ci_checks.syntax import anchors
from ci_checks.syntax.shell import expression_ranges, mask_expressions
from ci_checks.syntax.shell.programs import shell_program

EXCLUDED = ("SC1091", "SC2194", "SC2050", "SC2153", "SC2154", "SC2157", "SC2043")
DIALECTS = ("bash", "sh", "dash", "ksh")
_SEVERITIES = {"error": Severity.ERROR, "warning": Severity.WARNING, "info": Severity.INFO, "style": Severity.INFO}
_FINDINGS = (0, 1)
_OPTIONS = ("--norc", "--format=json1", f"--exclude={','.join(EXCLUDED)}")
_CACHE_FORMAT = 1
_FIELDS = ("line", "column", "endLine", "endColumn", "level", "code", "message")
_HEADER_LINES = 2
# What shellcheck reads as a directive: `#`, optional blanks, `shellcheck`, blanks, then `key=value` pairs.
_DIRECTIVE = re.compile(r"#[ \t]*shellcheck[ \t]+[A-Za-z-]+=[^\n]*")
# One process per CPU: on the 262-file corpus, two processes on two idle CPUs take 0.6 of the time of one.
CPUS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1

Finding = tuple[int, int, int, int, str, int, str]
"""A shellcheck comment: line, column, end line, end column (in the file given to it), level, code, message."""


@dataclass(eq=False)
class Script:
    """A `run:` script as shellcheck reads it: `text` has its expressions masked, offsets unchanged."""

    file: LoadedFile
    locator: ScalarLocator
    dialect: str
    text: str

    @property
    def content(self) -> str:
        setup = "set -eo pipefail" if self.dialect == "bash" else "set -e"
        return f"# shellcheck shell={self.dialect}\n{setup}\n{self.text}\n"

    @cached_property
    def line_starts(self) -> list[int]:
        return [0] + [i + 1 for i, char in enumerate(self.text) if char == "\n"]

    def offset(self, line: int, column: int) -> int:
        """The script offset of a 1-based line:column of the file given to shellcheck, within the script."""
        index = line - _HEADER_LINES - 1
        if index < 0:
            return 0
        if index >= len(self.line_starts):
            return len(self.text)
        start = self.line_starts[index]
        end = self.line_starts[index + 1] - 1 if index + 1 < len(self.line_starts) else len(self.text)
        return min(start + max(column, 1) - 1, end)

    def span(self, line: int, column: int, end_line: int, end_column: int) -> Span:
        start = self.offset(line, column)
        end = max(self.offset(end_line, end_column), min(start + 1, len(self.text)))
        return self.locator.span(start, end)


def scripts(files: list[LoadedFile]) -> list[Script]:
    found: list[Script] = []
    for file in files:
        if not file.readable:
            continue
        for step in file.steps:
            dialect = shell_program(step.effective_shell)
            if step.run is None or dialect not in DIALECTS or not step.run.value.strip():
                continue
            text = step.run.value
            locator = ScalarLocator(file.source, step.run)
            found.append(Script(file, locator, dialect, mask_expressions(text, expression_ranges(text))))
    return found


def inputs(files: list[LoadedFile]) -> list[LoadedFile]:
    with_scripts = {id(script.file) for script in scripts(files)}
    return [file for file in files if id(file) in with_scripts]


def run(
    binary: str,
    files: list[LoadedFile],
    root: Path,
    limit: tools.TimeLimit,
    processes: int = CPUS,
    cache: ResultCache | None = None,
    ref: ConfigSource | None = None,
) -> list[Diagnostic]:
    """Findings for every script of `files`, from `processes` shellcheck processes side by side.

    With a cache, a script this binary has checked before with these options
    is not checked again: its findings are read back from the cache. With `ref` (`--config-ref`), the directives
    the file at `ref` lacks on the same anchor are blanked first, with a CC092 at each.
    """
    found_scripts = scripts(files)
    untrusted: list[Diagnostic] = []
    if ref is not None:
        found_scripts, untrusted = _cut_directives_not_in(found_scripts, ref)
    # The same script in several steps (copied between workflows, reached through an alias) is checked once.
    copies: dict[tuple[str, str], list[Script]] = {}
    for script in found_scripts:
        copies.setdefault((script.dialect, script.text), []).append(script)
    unique = list(copies.values())
    keys = _cache_keys(binary, [group[0] for group in unique]) if cache is not None else []
    found = _read(cache, keys)
    unchecked = [index for index in range(len(unique)) if index not in found]
    if unchecked:
        try:
            outputs = _check(binary, {index: unique[index][0] for index in unchecked}, limit, processes)
        except OSError as error:
            raise tools.BackendFailed(f"could not write the scripts to a temporary folder: {error}") from None
        checked: dict[int, list[Finding]] = {index: [] for index in unchecked}
        for output in outputs:
            try:
                for index, finding in _findings(json.loads(output)["comments"]):
                    checked[index].append(finding)
            except (KeyError, TypeError, ValueError, IndexError) as error:
                raise tools.unreadable("shellcheck's json1", error, output) from None
        if cache is not None and keys:
            cache.put({keys[index]: json.dumps(findings) for index, findings in checked.items()})
        found.update(checked)
    return untrusted + [
        LINTER.finding(str(code), _SEVERITIES.get(level, Severity.INFO), message.removesuffix("."), script.span(*place))
        for index, findings in sorted(found.items())
        for (*place, level, code, message) in findings
        for script in unique[index]
    ]


def _cut_directives_not_in(found: list[Script], ref: ConfigSource) -> tuple[list[Script], list[Diagnostic]]:
    """The scripts with each shellcheck directive that the file at `ref` lacks on the same anchor blanked (spaces of
    the same length, so that no position moves), and a CC092 at each."""
    trusted: dict[str, anchors.Trusted] = {}
    layouts: dict[str, anchors.Layout] = {}
    kept: list[Script] = []
    untrusted: list[Diagnostic] = []
    for script in found:
        file = script.file
        text = script.text
        for match in _DIRECTIVE.finditer(script.text):
            if file.path not in trusted:
                trusted[file.path] = anchors.Trusted(_anchors(ref.read(file.path)))
                layouts[file.path] = anchors.layout(file.source, file.document.root)
            where = script.locator.span(match.start(), match.end())
            if trusted[file.path].claim(layouts[file.path].anchor(match.group(), _covered(file.source, where.line))):
                continue
            text = text[: match.start()] + " " * len(match.group()) + text[match.end() :]
            message = (
                f"this `shellcheck` directive is not in {ref.description} on the same key and text, whose "
                "configuration this run uses (--config-ref), so shellcheck does not read it"
            )
            untrusted.append(LINTER_CONFIG.diagnostic(where, message))
        kept.append(script if text == script.text else dataclasses.replace(script, text=text))
    return kept, untrusted


def _anchors(then: SourceFile | None) -> list[anchors.Anchor]:
    """The anchors of the shellcheck directives of a file at the ref (none when it has no readable one)."""
    if then is None or then.problem is not None or "shellcheck" not in then.text:
        return []
    there = anchors.yaml_layout(then)
    return [
        there.anchor(match.group(), _covered(then, then.position(match.start())[0]))
        for match in _DIRECTIVE.finditer(then.text)
    ]


def _covered(source: SourceFile, line: int) -> int:
    """The line a directive covers: the next command's, for a directive on a line of its own."""
    return anchors.next_code_line(source, line) if source.line_text(line).lstrip().startswith("#") else line


def _cache_keys(binary: str, scripts: list[Script]) -> list[str]:
    """Each script's key in the cache: the binary, its options (`$SHELLCHECK_OPTS` too) and the exact text."""
    try:
        identity = binary_identity(binary)
    except OSError:
        return []
    options = [*_OPTIONS, os.environ.get("SHELLCHECK_OPTS", "")]
    return [digest("shellcheck", _CACHE_FORMAT, identity, options, script.content) for script in scripts]


def _read(results: ResultCache | None, keys: list[str]) -> dict[int, list[Finding]]:
    """The findings of the scripts whose keys the cache holds in the form written by `run`."""
    if results is None or not keys:
        return {}
    stored = results.get(keys, lambda value: [_finding(item) for item in json.loads(value)])
    return {index: stored[key] for index, key in enumerate(keys) if key in stored}


def _check(binary: str, unique: dict[int, Script], limit: tools.TimeLimit, processes: int) -> list[str]:
    """shellcheck's outputs for the scripts, written to `<index>.sh` in a private folder removed afterwards.

    The folder is memory-backed where the system has that (see `tools.scratch_folder`): writing a thousand
    small files costs more than shellcheck's own start-up on some disks (0.7 s of 2.5 s for the 910 distinct
    scripts of a 262-file corpus on a disk-backed /tmp, 0.05 s in /dev/shm).
    """
    with tools.scratch_folder("shellcheck") as folder:
        batches: list[list[str]] = [[] for _ in range(min(processes, len(unique)))]
        loads = [0] * len(batches)
        # Largest first, each to the least loaded process, so that the processes end at about the same time.
        for index in sorted(unique, key=lambda i: -len(unique[i].text)):
            (folder / f"{index}.sh").write_bytes(unique[index].content.encode("utf-8"))
            least = loads.index(min(loads))
            batches[least].append(f"{index}.sh")
            loads[least] += len(unique[index].text)
        commands = [[binary, *_OPTIONS, "--", *names] for names in batches]
        return [finished.output(_FINDINGS, (folder,)) for finished in tools.run(commands, folder, limit)]


def _findings(comments: list[dict[str, Any]]) -> Iterator[tuple[int, Finding]]:
    """The index of the script each json1 comment is about, and the comment as a finding."""
    for comment in comments:
        yield int(str(comment["file"]).removesuffix(".sh")), _finding([comment[name] for name in _FIELDS])


def _finding(item: Any) -> Finding:
    """A finding from its seven fields; TypeError or ValueError when they are not that."""
    line, column, end_line, end_column, level, code, message = item
    return (int(line), int(column), int(end_line), int(end_column), str(level), int(code), str(message))
