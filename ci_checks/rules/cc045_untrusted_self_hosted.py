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

A gate is what keeps the job from running for a pull request from a fork:
an `if:` on the job, on a job it `needs` (a job whose needs are skipped is
skipped), or on the job that calls its reusable workflow, that is false for
such a pull request when it is evaluated with the value model
(`github.event.pull_request.head.repo.full_name == github.repository`,
`head.repo.fork == false`, a label only a maintainer can add,
`author_association` of a member, or an event or ref that a pull request
never has: `github.event_name == 'push'`, `github.ref == 'refs/heads/main'`);
or an `environment:` (give it required reviewers). A condition that does not
decide it (`!=` the base repository, `|| true`, a string literal, the draft
flag, a step output) is no gate, and neither is the actor of a pull request
(`github.actor == 'release-bot'`): it is whoever caused the event, and a
maintainer or a bot pushing to the fork's branch runs the fork's code under
their own name. Each leg of the job is judged for
itself: a matrix leg or a caller that passes a GitHub-hosted runner exposes
nothing, and `if: false` never runs. The finding is at the job that lacks the
gate (for a reusable workflow, the calling job, when that caller passes a
self-hosted runner), with the trigger and the self-hosted label as notes.

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

from ci_checks.core.diagnostics import Diagnostic, Related, Severity, Span
from ci_checks.core.repository import FileKind
from ci_checks.model import Job, Step, Trigger
from ci_checks.model.runners import RunnerChoice
from ci_checks.model.valuation import Leg
from ci_checks.model.valuation.runners import runners
from ci_checks.rules.context import RepositoryContext
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus

_UNTRUSTED = ("pull_request", "issue_comment", "pull_request_target")
_PULL_REQUEST_HEAD = re.compile(
    r"pull_request\.head\.(sha|ref)|github\.head_ref|refs/pull/|merge_commit_sha|gh\s+pr\s+checkout|pull/\$",
    re.IGNORECASE,
)


def check_repository(context: RepositoryContext) -> Iterator[Diagnostic]:
    valuation = context.valuation
    for workflow in context.workflows:
        for job in workflow.jobs.values():
            if job.is_call or context.resolver.runners(job, running=False).self_hosted(context.runners) is None:
                continue  # no leg of it asks for a self-hosted runner
            seen: set[tuple[str, Span]] = set()
            for leg in valuation.legs(job).legs:
                trigger = _untrusted_trigger(leg)
                if trigger is None:
                    continue
                outer = leg.chain[0].job if leg.chain else job
                key = (outer.workflow.path, outer.key.span)
                if key in seen:
                    continue
                choice = next((c for c in runners(leg).choices if c.self_hosted(context.runners)), None)
                if choice is None:
                    continue
                if trigger.event == "pull_request_target" and not _checks_out_head(job, leg):
                    continue
                if valuation.runs(leg, fork=True, approval=True) is False:
                    continue  # gated: a fork's pull request (or an outsider's comment) does not reach it
                seen.add(key)
                yield _diagnostic(job, outer, choice, trigger, context)


def _untrusted_trigger(leg: Leg) -> Trigger | None:
    """The trigger of the run's workflow that an outsider can fire, if the leg's event is one."""
    if leg.event not in _UNTRUSTED:
        return None
    return leg.entry.top.triggers.get(leg.event or "")


def _checks_out_head(target: Job, leg: Leg) -> bool:
    """Whether the self-hosted job works on the pull request's head: it checks it out, or a caller passes it."""
    texts = [_text(step) for step in target.steps]
    texts += [entry.text or "" for caller in leg.chain for entry in caller.job.with_.values()]
    return any(_PULL_REQUEST_HEAD.search(text) for text in texts)


def _text(step: Step) -> str:
    span, source = step.span, step.source
    return source.text[source.offset(span.line, span.column) : source.offset(span.end_line, span.end_column)]


def _diagnostic(job: Job, outer: Job, choice: RunnerChoice, trigger: Trigger, context: RepositoryContext) -> Diagnostic:
    event = trigger.event
    if event == "pull_request_target":
        how = "`pull_request_target` runs it with a checkout of the pull request's head"
    elif event == "issue_comment":
        how = "`issue_comment` lets anyone start it by commenting"
    else:
        how = "`pull_request` runs it for pull requests from forks"
    where = f"job '{outer.id}'" if outer is job else f"job '{outer.id}' (calling '{job.id}')"
    message = (
        f"{where} runs on a self-hosted runner and {how}, with no gate that excludes forks "
        "(a head-repository, label or author check, or an environment with required reviewers)"
    )
    related = [Related(trigger.key.span, f"`{event}` triggers it here"), *choice.related(context.runners)]
    severity = Severity.WARNING if event == "pull_request" else Severity.ERROR
    return RULE.diagnostic(outer.key.span, message, related, severity=severity)


RULE = Rule(
    "CC045",
    "untrusted-self-hosted",
    "A self-hosted runner can be made to run code from a fork",
    Severity.ERROR,
    __doc__,
    frozenset({FileKind.WORKFLOW}),
    None,
    check_repository,
    group=RuleGroup.WORKFLOW,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
