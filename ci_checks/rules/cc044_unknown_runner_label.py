"""A `runs-on` label no runner has: one the `runners:` inventory lacks, or a typo of a label used elsewhere.

## What it does
Checks every label a job may ask for: labels written in `runs-on`, matrix
values it takes, and JSON lists passed by callers into a reusable workflow
(`runs_on: '["self-hosted", "amd", "mi300x"]'`, followed into
`runs-on: ${{ fromJSON(inputs.runs_on) }}`), in each leg of the job that may
run (see `docs/values.md`), and the runner a call passes to a reusable
workflow of another repository in an input named for one (`runner:`,
`runs-on:`, `runs_on:`, a label or a JSON list). Each finding is where the label is written, the
character inside a JSON string included, and names the value it came from
where that is more than the label (`inputs.runs_on` = `["h200", "4gup"]`).

With no `runners:` in the configuration, the workflows themselves say which
labels exist: a label only one job asks for, one edit from a label other jobs
ask for or one every self-hosted runner has (`mi300` beside `mi300x`,
`self-hosed`), is reported with "did you mean". Where the other label, too,
is asked for by one job only, the one that reads less as a runner's label is
the typo (`4gup` beside `4gpu`, `mi305` beside `mi350`), and two that read
alike (`box-one`, `box-onee`) are left alone. Labels that differ only in a
number (`h100`/`h200`, `cpu-4`/`cpu-8`) name different machines and are not
compared, unless only the other one's number makes a GPU model that exists
(`mi305` for `mi350`). Jobs are counted, not places where a label is written,
so YAML anchors change nothing. Any other custom label is taken as the name
of a runner of the repository's own, and given to actionlint as such, so its
`runner-label` findings for them go away (not where the repository lists its
labels to actionlint: see below).

With a `runners:` inventory, a label must belong to one of its runners, be
one every self-hosted runner has (`self-hosted`, `linux`, `x64`, `arm64`
...), or name a GitHub-hosted runner (`ubuntu-24.04`, `windows-latest`,
`macos-14`).

"Did you mean" never crosses vendors, classes of machine or GPU models, as
the label names read word by word say them (see `docs/runners-and-runs.md`):
no AMD label is offered for an NVIDIA one, no GPU runner for `linux-cpu-8`,
no `mi300x` runner for `mi250` (a family's name, `mi300`, may still mean
`mi300x`). A label written once, one edit from a label of another vendor or
class, or a GPU model that exists and differs in a letter (`mi300a` beside
`mi300x`), is taken for another machine, not for a typo.

Where `.github/actionlint.yaml` lists the repository's labels
(`self-hosted-runner.labels`), that list says which exist, and
undeclared-runner-label (CC054) checks every label against it, the
inventory's and GitHub's: this rule then reports nothing, and no label the
list declares is taken for a typo.

Workflows with no `on:` never run and are not judged.

## Why it matters
A job whose labels no runner has is never picked up: it waits in the queue
until GitHub gives up after a day, and nothing says why. A typo (`mi300`
for `mi300x`) or a retired machine class is enough.

## Example
```yaml
jobs:
  gfx942:
    runs-on: [self-hosted, amd, mi300x]
  gfx942-nightly:
    runs-on: [self-hosted, amd, mi300x]
  gfx942-long:
    runs-on: [self-hosted, amd, mi300]   # one edit from `mi300x`, written nowhere else
```

## Fix
Use the label the runners have; with an inventory, add the new runner to
`runners:`.
"""

from __future__ import annotations

from collections.abc import Iterator

from ci_checks.core.diagnostics import Diagnostic, Related, Severity, Span
from ci_checks.core.repository import FileKind
from ci_checks.model.inventory import Typo
from ci_checks.model.runners import Label, is_github_hosted
from ci_checks.rules._common import did_you_mean
from ci_checks.rules.context import RepositoryContext
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus

_SHOWN_PLACES = 2


def check_repository(context: RepositoryContext) -> Iterator[Diagnostic]:
    if context.runner_label_list is not None:
        return  # the repository lists its labels: undeclared-runner-label checks every label against that list
    if context.configured_runners:
        yield from _against_the_inventory(context)
    else:
        yield from _typos(context)


def _against_the_inventory(context: RepositoryContext) -> Iterator[Diagnostic]:
    inventory = context.configured_runners
    reported: set[tuple[Span, str]] = set()
    for workflow in context.workflows:
        if not workflow.triggers:
            continue  # a workflow with no `on:` never runs
        for job in workflow.jobs.values():
            for choice in context.resolver.runners(job, running=False).choices:
                for label in choice.labels:
                    known = inventory.knows(label.value) or is_github_hosted(label.value)
                    if known or (label.span, label.value) in reported or not context.resolver.asks(job, label):
                        continue  # (only a leg that may run is judged; most labels are known, and told first)
                    reported.add((label.span, label.value))
                    hint = did_you_mean(label.value, inventory.labels)
                    message = (
                        f"job '{job.id}'{_from(label)} asks for runner label `{label.value}`, which no runner in the "
                    )
                    message += f"`runners:` inventory has{hint}"
                    yield RULE.diagnostic(label.span, message, label.via)


def _typos(context: RepositoryContext) -> Iterator[Diagnostic]:
    typos = context.inferred.typos
    reported: set[tuple[Span, str]] = set()
    for workflow in context.workflows:
        if not workflow.triggers:
            continue
        for job in workflow.jobs.values():
            for choice in context.resolver.runners(job, running=False).choices:
                for label in choice.labels:
                    typo = typos.get((label.span, label.value))
                    if typo is None or (label.span, label.value) in reported or not context.resolver.asks(job, label):
                        continue
                    reported.add((label.span, label.value))
                    yield _typo(f"'{job.id}'{_from(label)}", typo, label.via)


def _from(label: Label) -> str:
    """The value of the leg a label comes from, when it does not stand in `runs-on` itself: " (`matrix.gpu` = `x`)"."""
    return f" ({label.origin})" if label.origin else ""


def _typo(job: str, typo: Typo, via: tuple[Related, ...]) -> Diagnostic:
    count = typo.askers
    if count:
        meant = f"which {count} other job{'s' if count > 1 else ''} ask{'' if count > 1 else 's'} for"
    else:
        meant = "a label every self-hosted runner has"
    message = (
        f"job {job} asks for runner label `{typo.label.value}`, which nothing else names; it is one edit from "
        f"`{typo.meant}`, {meant}, so no runner may carry it (did you mean `{typo.meant}`?)"
    )
    shown = [Related(span, f"`{typo.meant}` asked for here") for span in typo.elsewhere[:_SHOWN_PLACES]]
    return RULE.diagnostic(typo.label.span, message, [*via, *shown])


RULE = Rule(
    "CC044",
    "unknown-runner-label",
    "A `runs-on` label no runner has: one the `runners:` inventory lacks, or a typo of a label used elsewhere",
    Severity.ERROR,
    __doc__,
    frozenset({FileKind.WORKFLOW}),
    None,
    check_repository,
    group=RuleGroup.WORKFLOW,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
