"""Runners: the labels a job asks for (`RunnerChoice`), and the machines a repository has (`RunnerInventory`).

`runs-on` is often an expression: `${{ matrix.runner }}`, or in a reusable
workflow `${{ fromJSON(inputs.runs_on) }}` fed by a caller's
`runs_on: '["self-hosted", "amd", "mi300x"]'`. The value model
(`ci_checks.model.valuation.runners.RunnerResolver`) turns such a `runs-on`
into the label sets each leg of the job asks for, each label with the place it
is written (the matrix value, the caller's `with:` value, the character inside
a JSON string), so that a finding can point there.

The runner inventory is the configuration's `runners:`: named kinds of
self-hosted machine, each with its labels and GPU vendor; with none (or for
the machines it does not name), the one the workflows imply (`inventory`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ci_checks.core.diagnostics import Related, Span
from ci_checks.model.values import Entry
from ci_checks.model.workflow import Job

VENDORS = ("amd", "nvidia")

GENERIC_LABELS = frozenset({"self-hosted", "linux", "windows", "macos", "x64", "x86", "arm", "arm64"})
"""Labels every self-hosted runner gets from its operating system and architecture."""

_GITHUB_HOSTED = re.compile(
    r"(ubuntu-(latest|slim|\d\d\.\d\d(-arm)?)|windows-(latest|\d{4}(-vs\d{4})?|11-arm)"
    r"|macos-(latest|\d+)(-(large|xlarge|intel|arm64))?)\Z",
    re.IGNORECASE,
)


def is_github_hosted(label: str) -> bool:
    """A label of GitHub's standard hosted runners (`ubuntu-latest`, `windows-2022`, `macos-14-xlarge`)."""
    return _GITHUB_HOSTED.match(label) is not None


@dataclass(frozen=True)
class Runner:
    """One kind of machine in the inventory; `labels` are lower-case, as GitHub compares them."""

    name: str
    labels: frozenset[str]
    vendor: str | None
    self_hosted: bool
    span: Span
    inferred: bool = False
    """Implied by the workflows (`inventory.infer`), not named in the configuration."""
    telling: str | None = None
    """The label whose name says what the machine is (`mi300x`), for an inferred runner."""


@dataclass(frozen=True)
class RunnerInventory:
    runners: tuple[Runner, ...] = ()
    declared: tuple[str, ...] = ()
    """Labels `.github/actionlint.yaml` declares that no runner here carries (actionlint knows them already)."""

    def __bool__(self) -> bool:
        return bool(self.runners)

    @property
    def labels(self) -> tuple[str, ...]:
        """Every label of every runner, in the order they are written."""
        return tuple(dict.fromkeys(label for runner in self.runners for label in sorted(runner.labels)))

    def knows(self, label: str) -> bool:
        lower = label.lower()
        return (
            lower in GENERIC_LABELS or lower in self.declared or any(lower in runner.labels for runner in self.runners)
        )

    def matching(self, labels: Iterable[str]) -> list[Runner]:
        """The runners that carry every label of a `runs-on` (the generic ones aside)."""
        wanted = {label.lower() for label in labels} - GENERIC_LABELS
        return [runner for runner in self.runners if wanted and wanted <= runner.labels]


@dataclass(frozen=True)
class Label:
    """A runner label and where it is written; `via` says how it reached the job (a caller, a matrix)."""

    value: str
    span: Span
    via: tuple[Related, ...] = ()
    origin: str = field(default="", compare=False)
    """The value of the leg it is part of, for messages (`` `matrix.runner` = `linux-mi300-gpu-1` ``); "" for a label
    written in `runs-on` itself."""


@dataclass(frozen=True)
class RunnerChoice:
    """One set of labels a job may ask for."""

    labels: tuple[Label, ...]

    @property
    def values(self) -> list[str]:
        return [label.value for label in self.labels]

    def self_hosted(self, inventory: RunnerInventory) -> bool:
        if any(label.value.lower() == "self-hosted" for label in self.labels):
            return True
        return any(runner.self_hosted for runner in inventory.matching(self.values))

    def evidence(self, inventory: RunnerInventory, machine: bool = False) -> Label:
        """The label that shows what the runner is: `self-hosted` (unless `machine`), else one the inventory lists."""
        for label in self.labels:
            if label.value.lower() == "self-hosted" and not machine:
                return label
        runners = inventory.matching(self.values)
        telling = {runner.telling for runner in runners}
        known = {label for runner in runners for label in runner.labels} - GENERIC_LABELS
        return next(
            (label for label in self.labels if label.value.lower() in telling),
            next((label for label in self.labels if label.value.lower() in known), self.labels[0]),
        )

    def related(self, inventory: RunnerInventory, machine: bool = False) -> list[Related]:
        """Where the runner's labels come from: the telling label, and how it reached the job."""
        label = self.evidence(inventory, machine)
        return [Related(label.span, f"runner label `{label.value}`"), *label.via]

    def vendor(self, inventory: RunnerInventory) -> str | None:
        """The GPU vendor of every inventory runner this choice can land on, when they all agree."""
        vendors = {runner.vendor for runner in inventory.matching(self.values)}
        return vendors.pop() if len(vendors) == 1 else None


@dataclass
class Runners:
    """What `runs-on` of a job can be: `choices`, and whether they are all of them (`complete`)."""

    choices: list[RunnerChoice] = field(default_factory=list)
    complete: bool = True

    def self_hosted(self, inventory: RunnerInventory) -> RunnerChoice | None:
        """The first choice that lands on a self-hosted runner, if any does."""
        return next((choice for choice in self.choices if choice.self_hosted(inventory)), None)


def passed_input(caller: Job, entry: Entry) -> Related:
    """The note that a value reached a reusable workflow as an input that `caller` passes in `with:`."""
    return Related(entry.value.span, f"passed as input `{entry.name}` by job '{caller.id}'")
