"""Which rules run and which findings are kept: the one reading of `select` and `ignore`.

A selector (from `--select`, `--ignore` or the configuration's `select:` and
`ignore:`) is, in this order:

- a policy rule id (`no-amd-patch`);
- a built-in rule code, code prefix or name (`CC011`, `CC0`, `duplicate-key`);
- a linter code or prefix: `SC2086`, `SC`, `AL-expression`, `AL`,
  `ZZ-unpinned-uses`, `ZZ`, the name a linter finding prints:
  `shellcheck`, `actionlint-expression`, `zizmor-unpinned-uses`, or a
  linter's own name for all of its findings: `actionlint`, `zizmor`.

Anything else is an error that suggests the closest known name. A finding is
kept when something selects it (everything, without `select`) and nothing
ignores it. A rule or linter whose findings cannot be kept does not run.

Without `select`, the profile (`--profile`, the configuration's `profile:`)
says which linter findings are kept:

- `correctness` (the default): what breaks or exposes. Every built-in rule,
  actionlint but for its upkeep advice (a runtime deprecated but still run, a
  `description` the Marketplace wants, a reusable workflow's cache scope),
  shellcheck's warnings and errors, and zizmor's high-confidence findings of
  the audits that find something exploitable now (`HARDENING` in
  `ci_checks.core.linters.zizmor` lists the others);
- `security`: that, and the hardening audits and upkeep advice at warning or
  error (unpinned actions and images, permissions, inherited secrets,
  deprecated runtimes), whatever zizmor's confidence;
- `all`: everything, the linters' own info-level notes (shellcheck's `info`
  and `style`, zizmor's `low` and `informational`) included.

Where the repository decides rather than the code (`backends.placement`), a
finding also carries the narrowest profile that keeps it
(`Diagnostic.profile`), which can only leave it out of more: a template
injection of text only people with write access choose is `security`'s, an
SC2046 on a substitution that prints one field is `all`'s.

A finding the profile leaves out is kept when a selector names it
(`--select ZZ-unpinned-uses`, `--select SC`), and `--ignore` removes any.
`severity` overrides (`{ZZ-unpinned-uses: warning}`) change the severity of
the findings a selector names, the most specific selector winning.

`per-file-ignores` (`{".github/workflows/legacy-*.yml": [CC031]}`) is
`ignore` for the files a path glob matches (the file or one of its folders, as
`exclude` matches): whichever front-end runs the check, the configuration's
table applies to the findings of that repository.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from ci_checks.backends.notices import NOTICE_CODES
from ci_checks.config import registry
from ci_checks.core import linters
from ci_checks.core.diagnostics import Diagnostic, Severity
from ci_checks.core.globs import Glob, excluded_by
from ci_checks.core.linters import DEFAULT_PROFILE, PROFILES
from ci_checks.rules.rule import Rule

_UNREADABLE_INPUT = frozenset({"CC001", "CC002", "CC003", "CC004", "CC010", "CC012", "CC014"})
"""A file that could not be read or parsed, which no selected rule could judge: kept under any `select` (as a
syntax error is), dropped only by `ignore`."""


class SelectionError(ValueError):
    """A selector that names nothing; the message suggests what was meant."""


def linter_code(selector: str) -> str | None:
    """The linter code or prefix a selector names (`SC2086`, `AL`, `ZZ-artipacked`), or None for none of theirs."""
    return next(filter(None, (linter.selected(selector) for linter in linters.LINTERS.values())), None)


@dataclass(frozen=True)
class _Targets:
    codes: frozenset[str] = frozenset()
    policy_ids: frozenset[str] = frozenset()
    linter: tuple[str, ...] = ()

    def names_linter_code(self, code: str) -> bool:
        return any(code.lower().startswith(prefix.lower()) for prefix in self.linter)


@dataclass(frozen=True)
class PerFileIgnore:
    """One entry of `per-file-ignores`: what its selectors name is ignored in the files its glob matches."""

    glob: Glob
    ignored: _Targets

    def drops(self, diagnostic: Diagnostic) -> bool:
        return _names(self.ignored, diagnostic) and excluded_by([self.glob], diagnostic.span.path)


@dataclass(frozen=True)
class Selection:
    """The resolved `select` (None: everything), `ignore`, severity overrides and `per-file-ignores`."""

    selected: _Targets | None
    ignored: _Targets = field(default_factory=_Targets)
    overrides: tuple[tuple[str, _Targets, Severity], ...] = ()
    """(selector, what it names, the severity it gives), most specific first."""
    profile: str = DEFAULT_PROFILE
    per_file: tuple[PerFileIgnore, ...] = ()

    def with_per_file_ignores(self, entries: Sequence[PerFileIgnore]) -> Selection:
        return replace(self, per_file=(*self.per_file, *entries)) if entries else self

    def severity(self, diagnostic: Diagnostic) -> Severity:
        for _, targets, severity in self.overrides:
            if _names(targets, diagnostic):
                return severity
        return diagnostic.severity

    def adjusted(self, diagnostic: Diagnostic) -> Diagnostic:
        severity = self.severity(diagnostic)
        return diagnostic if severity is diagnostic.severity else replace(diagnostic, severity=severity)

    @property
    def rules(self) -> list[Rule]:
        """The rules that check files and repositories (`ci_checks/rules/`) whose findings can be kept."""
        return [rule for rule in registry.built_in() if self._keeps_code(rule.code)]

    def _keeps_code(self, code: str) -> bool:
        chosen = self.selected is None or code in self.selected.codes or code in _UNREADABLE_INPUT
        return chosen and code not in self.ignored.codes

    def runs_policy_rule(self, rule_id: str, codes: Iterable[str]) -> bool:
        """Whether a policy rule (whose findings have `codes`) can have a finding kept."""
        if rule_id in self.ignored.policy_ids:
            return False
        if self.selected is None or rule_id in self.selected.policy_ids:
            return True
        return any(code in self.selected.codes and code not in self.ignored.codes for code in codes)

    def runs_linter(self, name: str) -> bool:
        prefix = linters.LINTERS[name].bare_prefix
        if prefix in self.ignored.linter:
            return False
        if self.selected is None:
            return True
        return any(code.upper().startswith(prefix) for code in self.selected.linter)

    def keeps(self, diagnostic: Diagnostic) -> bool:
        if any(entry.drops(diagnostic) for entry in self.per_file):
            return False
        code = diagnostic.code
        if code in registry.NAMES_BY_CODE:
            if diagnostic.policy_id in self.ignored.policy_ids or code in self.ignored.codes:
                return False
            if self.selected is None:
                return True
            if code in NOTICE_CODES and self.selected.linter:  # a linter that is missing or failed
                return True
            if code in _UNREADABLE_INPUT:
                return True
            return code in self.selected.codes or diagnostic.policy_id in self.selected.policy_ids
        if self.ignored.names_linter_code(code):
            return False
        if self.selected is not None and self.selected.names_linter_code(code):
            return True
        return self.selected is None and in_profile(diagnostic, self.profile)


def in_profile(diagnostic: Diagnostic, profile: str) -> bool:
    """Whether a profile keeps a linter's finding (see the module's documentation)."""
    if diagnostic.profile is not None and PROFILES.index(profile) < PROFILES.index(diagnostic.profile):
        return False
    linter = linters.linter_of(diagnostic.code)
    if diagnostic.severity is Severity.INFO:
        tier = "all"
    else:
        tier = linter.tier(diagnostic) if linter is not None else PROFILES[0]
    return PROFILES.index(profile) >= PROFILES.index(tier)


def resolve(
    selected: Sequence[str] | None,
    ignored: Sequence[str],
    policy_ids: Iterable[str],
    severities: Mapping[str, Severity] | None = None,
    profile: str = DEFAULT_PROFILE,
) -> Selection:
    """The selection `select`, `ignore`, `severity` and the profile name; SelectionError for a selector that names
    nothing."""
    ids = frozenset(policy_ids)
    overrides = [(selector, _targets([selector], ids), level) for selector, level in (severities or {}).items()]
    overrides.sort(key=lambda override: _specificity(override[1]), reverse=True)
    chosen = _targets(selected, ids) if selected is not None else None
    return Selection(chosen, _targets(ignored, ids), tuple(overrides), profile)


def per_file_ignore(glob: Glob, selectors: Sequence[str], policy_ids: Iterable[str]) -> PerFileIgnore:
    """An entry of `per-file-ignores`; SelectionError for a selector that names nothing."""
    return PerFileIgnore(glob, _targets(selectors, frozenset(policy_ids)))


def _specificity(targets: _Targets) -> tuple[int, int]:
    """How narrow what a selector names is: a policy id (one rule) before a code (CC101 is every forbid rule),
    built-in codes by how few rules they name, linter codes by how long they are (`SC2086` before `shellcheck`).
    Only selectors of one kind can name the same finding."""
    if targets.policy_ids:
        return (2, 0)
    if targets.codes:
        return (1, -len(targets.codes))
    return (0, max(map(len, targets.linter)))


def _names(targets: _Targets, diagnostic: Diagnostic) -> bool:
    if diagnostic.code in registry.NAMES_BY_CODE:
        return diagnostic.policy_id in targets.policy_ids or diagnostic.code in targets.codes
    return targets.names_linter_code(diagnostic.code)


def _targets(selectors: Sequence[str], policy_ids: frozenset[str]) -> _Targets:
    codes: set[str] = set()
    chosen_ids: set[str] = set()
    linter: list[str] = []
    for selector in selectors:
        if selector in policy_ids:
            chosen_ids.add(selector)
            continue
        matched = registry.codes_matching(selector)
        if matched:
            codes.update(matched)
            continue
        code = linter_code(selector)
        if code is not None:
            linter.append(code)
            continue
        raise SelectionError(f"unknown rule {selector!r}{_suggestion(selector, policy_ids)}; see `ci-checks rules`")
    return _Targets(frozenset(codes), frozenset(chosen_ids), tuple(linter))


def _suggestion(word: str, policy_ids: frozenset[str]) -> str:
    names = [
        name
        for linter in linters.LINTERS.values()
        for name in (
            linter.name,
            linter.bare_prefix,
            *(made(check) for check in sorted(linter.checks) for made in (linter.code, linter.rule)),
        )
    ]
    known = [*registry.NAMES_BY_CODE, *registry.CODES_BY_NAME, *sorted(policy_ids), *names]
    close = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""
