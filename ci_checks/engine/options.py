"""What a check is asked to do, as each front-end gives it: the command line's options, an editor's settings, the
pytest plugin's configuration. How the findings are shown (formats, colour, exit codes) is not here."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from ci_checks.core.linters import BACKENDS, backend_names


@dataclass
class Options:
    select: list[str] | None = None
    """Only these rules (codes, prefixes, names); None: the configuration's `select`, else every rule."""
    ignore: list[str] = field(default_factory=list)
    """Skip these rules, besides the configuration's `ignore`."""
    profile: str | None = None
    """Which linter findings to keep; None: the configuration's profile, else `correctness`."""
    config: Path | None = None
    """A configuration file to use instead of each repository's own."""
    config_ref: str | None = None
    """A git revision to read each repository's configuration (and the linters') from instead of its work tree."""
    max_file_size: int | None = None
    backends: list[str] | None = None
    """The linters to run; None: `$CI_CHECKS_BACKENDS`, else the configuration's `backends`, else all."""
    binaries: dict[str, str] = field(default_factory=dict)
    """A linter's binary by its name, where one is named; the others are looked up (`tools.find_binary`)."""
    backend_timeout: float = 120.0
    jobs: int | None = None
    """How many repositories are checked at once, each in a process of its own; None: the CPUs available."""
    cache_dir: Path | None = None
    """Where findings are kept between runs; None: `$CI_CHECKS_CACHE_DIR`, else the user's cache folder."""
    no_cache: bool = False
    fix: bool = False
    """Apply the safe fixes findings offer, then check again."""
    diff: bool = False
    """Compute the fixes `fix` would make, and write nothing."""
    unsafe_fixes: bool = False
    new_since: str | None = None
    """Keep only the findings that are new since this git commit."""
    baseline: Path | None = None
    """Keep only the findings this baseline file does not accept."""
    write_baseline: Path | None = None
    """Record the findings in this baseline file."""
    reports: list[Path] = field(default_factory=list)
    """The files the findings are written to besides standard output (`--output FORMAT=FILE`)."""
    report_unused_ignores: bool = False

    @property
    def own_files(self) -> list[Path]:
        """The files the run reads or writes itself (its baseline, its reports): no rule reads them as part of the
        repository, so the findings depend on where they are (see `Repository.relative_paths`)."""
        return [path for path in (self.baseline, self.write_baseline, *self.reports) if path is not None]

    def binary(self, name: str) -> str | None:
        return self.binaries.get(name)


NOT_ASKED = frozenset(
    {"cache_dir", "no_cache", "new_since", "baseline", "write_baseline", "reports", "jobs", "backend_timeout"}
)
"""Options that change only what is done with the findings (filtered, recorded), or how they are found, not the
findings of one repository's run.

The files a run reads or writes itself change what the rules read of the repository: those inside it count, by
their repo-relative path (`Runs._asked`), wherever the command was run from.

The linters' time limit is one: a run in which a linter did not finish is never kept (`run_cache.transient`).
"""


def asked(options: Options) -> dict[str, object]:
    """The options that decide a run's findings, as JSON data for the key of a kept run."""
    return {name: value for name, value in dataclasses.asdict(options).items() if name not in NOT_ASKED}


def parse_backends(value: str) -> list[str]:
    """`all`, `none` or linter names, comma-separated, as `--backends` and `$CI_CHECKS_BACKENDS` take them;
    ValueError naming what is not one."""
    names = [part.strip() for part in value.split(",") if part.strip()]
    unknown = [name for name in names if name not in (*BACKENDS, "all", "none")]
    if unknown:
        raise ValueError(f"unknown backend {unknown[0]!r}; use all, none or {', '.join(BACKENDS)}")
    return backend_names(names)
