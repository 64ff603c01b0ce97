"""A self-hosted runner can be made to run code from a fork.

## What it does
Reports a job on a self-hosted runner (see `self-hosted-timeout` for how
runners are followed through matrices and reusable workflows) that a pull
request from a fork can start with its own code:

- `pull_request` (or `issue_comment`, which anyone can post) with no gate
  that excludes forks;
- `pull_request_target` when the job checks out the pull request's head
  (`ref: ${{ github.event.pull_request.head.sha }}`, `refs/pull/...`,
  `gh pr checkout`).

A gate is an `if:` on the job, on a job it `needs`, or on the job that calls
its reusable workflow, that checks the head repository
(`github.event.pull_request.head.repo.full_name == github.repository`,
`head.repo.fork`), a label, the author's association or the actor; or an
`environment:` (give it required reviewers). An `if:` that limits the job to
other events (`github.event_name == 'push'`) also keeps it out of reach. The
finding is at the job that lacks the gate (for a reusable workflow, the
calling job, when that caller passes a self-hosted runner), with the trigger
and the self-hosted label as notes.

`pull_request_target` with the head checked out, and `issue_comment`, are
errors: nothing outside the workflow stands between a stranger and the runner.
A `pull_request` exposure is a warning: GitHub's repository setting that holds
workflows of fork pull requests for a maintainer's approval (on by default for
first-time contributors) may be the gate, and it is not visible in the
workflow; where it is, say so in an ignore comment.

## Why it matters
A self-hosted runner keeps its disk, credentials, caches and network
position between jobs. Code from a fork that runs there can read secrets
from earlier jobs, plant a backdoored toolchain for the next one, or reach
the internal network. GitHub recommends never running fork code on
self-hosted runners of a public repository.

## Example
```yaml
on: pull_request
jobs:
  gpu-tests:
    runs-on: [self-hosted, nvidia, h100]
    steps:
      - uses: actions/checkout@v4
      - run: pytest tests/gpu
```

## Fix
Gate the job: `if: github.event.pull_request.head.repo.full_name ==
github.repository`, a maintainer-applied label, or an environment with
required reviewers; run fork pull requests on GitHub-hosted runners.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from ci_checks.context import RepositoryContext
from ci_checks.diagnostics import Diagnostic, Related, Severity
from ci_checks.model import Job, Step, Trigger, Workflow
from ci_checks.model.expressions import condition, split_top_level, unwrapped
from ci_checks.model.runners import RunnerChoice, passed_input
from ci_checks.repository import FileKind
from ci_checks.rule import Rule

_UNTRUSTED = ("pull_request", "issue_comment", "pull_request_target")
_FORK_GATE = re.compile(
    r"head\.repo\.(full_name|fork|owner|id)|author_association|\.labels\b|labels\.\*|label\.name"
    r"|github\.(actor|triggering_actor)\b|sender\.login|user\.login",
    re.IGNORECASE,
)
_EVENT_TEST = re.compile(r"github\.event_name\s*(?P<op>==|!=)\s*'(?P<event>[a-z_]+)'\Z", re.IGNORECASE)
_PULL_REQUEST_HEAD = re.compile(
    r"pull_request\.head\.(sha|ref)|github\.head_ref|refs/pull/|merge_commit_sha|gh\s+pr\s+checkout|pull/\$",
    re.IGNORECASE,
)
_MAX_DEPTH = 4


@dataclass(frozen=True)
class _Exposure:
    trigger: Trigger
    workflow: Workflow
    outer: Job
    """The job in the triggered workflow that should be gated: the self-hosted job, or the call leading to it."""
    chain: tuple[Job, ...]
    """The calling jobs from the self-hosted job's workflow up to `outer`."""


def check_repository(context: RepositoryContext) -> Iterator[Diagnostic]:
    for workflow in context.workflows:
        for job in workflow.jobs.values():
            if job.is_call:
                continue
            choices = [c for c in context.resolver.runners(job).choices if c.self_hosted(context.runners)]
            if not choices:
                continue
            seen: set[tuple[str, int, int]] = set()
            for exposure in _exposures(context, job, job, (), 0):
                key = (exposure.workflow.path, exposure.outer.key.span.line, exposure.outer.key.span.column)
                choice = _through(choices, exposure.chain)
                if key not in seen and choice is not None:
                    seen.add(key)
                    yield _diagnostic(job, choice, exposure, context)


def _exposures(
    context: RepositoryContext, job: Job, target: Job, chain: tuple[Job, ...], depth: int
) -> Iterator[_Exposure]:
    """How fork-controlled events reach `target`: through `job` (the target or a job calling its workflow)."""
    workflow = job.workflow
    events = _reachable_events(job)
    head = _checks_out_head(target, chain)
    for name, trigger in workflow.triggers.items():
        if name not in _UNTRUSTED or name not in events or _gated(job):
            continue
        if name == "pull_request_target" and not head:
            continue
        yield _Exposure(trigger, workflow, job, chain)
    call = workflow.workflow_call
    if call is None or depth >= _MAX_DEPTH or _gated(job):
        return
    for caller in context.resolver.callers.get(workflow.path, []):
        if all(caller.workflow.path != passed.workflow.path for passed in (target, *chain)):  # a cycle goes no round
            yield from _exposures(context, caller, target, (*chain, caller), depth + 1)


def _through(choices: list[RunnerChoice], chain: tuple[Job, ...]) -> RunnerChoice | None:
    """The self-hosted choice that the calls of `chain` can lead to: one each of whose labels is written in a
    workflow of the chain and passed down by the callers below it; a chain whose callers pass only GitHub-hosted
    labels exposes nothing. A label's notes say which caller passed it at each call (by the place of its `with:`
    value, not inside the caller where a YAML alias is used)."""
    passes = [{passed_input(caller, entry) for entry in caller.with_.values()} for caller in chain]
    for choice in choices:
        if all(_passed_along(label.via, passes) for label in choice.labels):
            return choice
    return None


def _passed_along(via: tuple[Related, ...], passes: list[set[Related]]) -> bool:
    """Whether the calls a label went through, nearest first, are those of a chain (or its first ones)."""
    return len(via) <= len(passes) and all(hop in passed for hop, passed in zip(via, passes, strict=False))


def _gated(job: Job) -> bool:
    """Whether the job, or a job it needs, has a gate that keeps fork pull requests out."""
    for item in _with_needs(job):
        if item.environment is not None:
            return True
        text = item.if_.text if item.if_ is not None else None
        if text is not None and _FORK_GATE.search(text):
            return True
    return False


def _with_needs(job: Job) -> list[Job]:
    found: dict[str, Job] = {}
    pending = [job]
    while pending:
        current = pending.pop()
        if current.id in found:
            continue
        found[current.id] = current
        pending.extend(
            current.workflow.jobs[need.value] for need in current.needs if need.value in current.workflow.jobs
        )
    return list(found.values())


def _reachable_events(job: Job) -> set[str]:
    """The events the job's own `if:` lets through, from its top-level `github.event_name` tests."""
    events = set(job.workflow.triggers) | set(_UNTRUSTED)
    if job.if_ is None or job.if_.text is None:
        return events
    for term in split_top_level(condition(job.if_.text), "&&"):
        test = _EVENT_TEST.match(unwrapped(term))
        if test is None:
            continue
        if test.group("op") == "==":
            events &= {test.group("event")}
        else:
            events.discard(test.group("event"))
    return events


def _checks_out_head(target: Job, chain: tuple[Job, ...]) -> bool:
    """Whether the self-hosted job works on the pull request's head: it checks it out, or a caller passes it."""
    texts = [_text(step) for step in target.steps]
    texts += [entry.text or "" for caller in chain for entry in caller.with_.values()]
    return any(_PULL_REQUEST_HEAD.search(text) for text in texts)


def _text(step: Step) -> str:
    span, source = step.span, step.source
    return source.text[source.offset(span.line, span.column) : source.offset(span.end_line, span.end_column)]


def _diagnostic(job: Job, choice: RunnerChoice, exposure: _Exposure, context: RepositoryContext) -> Diagnostic:
    event = exposure.trigger.event
    if event == "pull_request_target":
        how = "`pull_request_target` runs it with a checkout of the pull request's head"
    elif event == "issue_comment":
        how = "`issue_comment` lets anyone start it by commenting"
    else:
        how = "`pull_request` runs it for pull requests from forks"
    where = f"job '{exposure.outer.id}'" if exposure.outer is job else f"job '{exposure.outer.id}' (calling '{job.id}')"
    message = (
        f"{where} runs on a self-hosted runner and {how}, with no gate that excludes forks "
        "(a head-repository, label or author check, or an environment with required reviewers)"
    )
    related = [Related(exposure.trigger.key.span, f"`{event}` triggers it here"), *choice.related(context.runners)]
    severity = Severity.WARNING if event == "pull_request" else Severity.ERROR
    return RULE.diagnostic(exposure.outer.key.span, message, related, severity=severity)


RULE = Rule(
    "CC045",
    "untrusted-self-hosted",
    "A self-hosted runner can be made to run code from a fork",
    Severity.ERROR,
    __doc__,
    frozenset({FileKind.WORKFLOW}),
    None,
    check_repository,
)
