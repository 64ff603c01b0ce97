"""A reusable workflow reads a secret its caller does not pass, or an input no call can give it.

## What it does
Reads every `${{ secrets.X }}`, `${{ inputs.X }}` and
`${{ github.event.inputs.X }}` of a workflow that other workflows of the
repository call (`on: workflow_call`), and checks them against its callers
and its own declarations:

- a secret it reads that a calling job neither passes (`secrets: {X: ...}`)
  nor inherits (`secrets: inherit`): declared `required: true`, the call
  fails before it starts (an error); not declared under
  `on.workflow_call.secrets`, no call can pass it by name, so it is empty
  (an error); declared optional (`required: false`, or no `required`), it is
  empty in that call, which the workflow was written to allow (a warning).
  A calling job whose `if:` tests where the pull request comes from
  (`github.event.pull_request.head.repo.fork`, `head.repo.full_name`) has
  decided what forks get: an optional secret it withholds is not reported.
  `GITHUB_TOKEN` is always there;
- an input it reads but does not declare (under `on.workflow_call.inputs`,
  or `on.workflow_dispatch.inputs` for a workflow that is also dispatched):
  no call can pass it, so it is always empty;
- `github.event.inputs.X`: in a called workflow, `github.event` is the
  event of the caller's run, so this reads the caller's dispatch inputs, not
  what the call passes (a warning; `inputs.X` reads the call's).

actionlint checks the other half of the contract (required inputs and
secrets passed, no undeclared one passed, the types); where it reports the
same undeclared input at the same place, the two are one finding.

## Why it matters
An empty `HF_TOKEN` or `WANDB_API_KEY` does not fail the step that reads it:
the download is refused an hour later, or the run is logged nowhere, and the
workflow that forgot to pass it looks fine.

## Example
```yaml
# .github/workflows/_gpu-tests.yml
on:
  workflow_call:
    secrets:
      HF_TOKEN: {required: false}
jobs:
  test:
    steps:
      - run: pytest
        env: {HF_TOKEN: "${{ secrets.HF_TOKEN }}"}
# .github/workflows/ci.yml
jobs:
  gpu:
    uses: ./.github/workflows/_gpu-tests.yml   # passes no secrets
```

## Fix
Pass what the callee reads (`secrets: {HF_TOKEN: ${{ secrets.HF_TOKEN }}}`),
and declare every input it reads under `on.workflow_call.inputs`.
`secrets: inherit` hands the callee every secret of the repository: the
advice is given only where no fork can start the calling workflow. Where one
can (`pull_request`, `pull_request_target`, `issue_comment`,
`pull_request_review`, `pull_request_review_comment` or `workflow_run`
triggers it, or a workflow so triggered calls it), pass the one secret
explicitly in the runs that are trusted
(`${{ !github.event.pull_request.head.repo.fork && secrets.HF_TOKEN || '' }}`),
or nothing.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterator

from ci_checks.core.diagnostics import Diagnostic, Related, Severity, Span
from ci_checks.core.repository import FileKind
from ci_checks.model import Job, Trigger, Workflow
from ci_checks.model.contexts import Read, reads
from ci_checks.model.evaluation import Scope, called, holds
from ci_checks.rules.context import RepositoryContext
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus

_ALWAYS_THERE = frozenset({"github_token"})
_FORK_EVENTS = (
    "pull_request_target",
    "workflow_run",
    "issue_comment",
    "pull_request_review_comment",
    "pull_request_review",
    "pull_request",
)
"""The events a fork can start a workflow with, those that give it the repository's secrets first."""
_FORK_TEST = re.compile(
    r"head\.repo\.(fork|full_name|owner|id)\b|head_repository\.(fork|full_name|owner|id)\b", re.IGNORECASE
)
_Fork = tuple[Workflow, Trigger]
"""A workflow a fork can start, and the trigger it does it with."""


def check_repository(context: RepositoryContext) -> Iterator[Diagnostic]:
    for callee in context.workflows:
        if callee.workflow_call is None:  # read from `on:`, so a callee is always triggered
            continue
        # Findings are kept only in the files the run is about: a callee's own ones there, a call's at the caller.
        judged = context.covers(callee.path)
        callers = [
            caller
            for caller in context.resolver.callers.get(callee.path, [])
            if not caller.secrets_inherit and caller.workflow.triggers and context.covers(caller.workflow.path)
        ]
        if not judged and not callers:
            continue
        found = list(reads(callee.document.root, callee.source))
        if judged:
            yield from _inputs(callee, found, _dispatched(context, callee))
        secrets: dict[str, list[Read]] = {}
        for read in found:
            if read.context == "secrets" and read.name.lower() not in _ALWAYS_THERE:
                secrets.setdefault(read.name.lower(), []).append(read)
        for caller in callers:
            yield from _secrets(context, caller, callee, secrets)


def _dispatched(context: RepositoryContext, callee: Workflow) -> set[str]:
    """The dispatch inputs `github.event.inputs` can hold in `callee`: its own, and those of every workflow whose
    run may call it."""
    names: set[str] = set()
    pending, seen = [callee], set()
    while pending:
        workflow = pending.pop()
        if workflow.path in seen:
            continue
        seen.add(workflow.path)
        names.update(name.lower() for name in workflow.workflow_dispatch_inputs)
        if workflow.workflow_call is not None:
            pending.extend(caller.workflow for caller in context.resolver.callers.get(workflow.path, []))
    return names


def _inputs(callee: Workflow, found: list[Read], dispatched: set[str]) -> Iterator[Diagnostic]:
    calls = {name.lower() for name in callee.workflow_call.inputs} if callee.workflow_call else set()
    declared = set(calls)
    # An input only `workflow_dispatch` declares is the dispatch's own (a debug switch, say): empty in a call,
    # by design.
    declared |= {name.lower() for name in callee.workflow_dispatch_inputs}
    for read in found:
        name = read.name.lower()
        if read.context == "inputs" and name not in declared:
            message = (
                f"`inputs.{read.name}` is declared under neither `on.workflow_call.inputs` nor "
                "`on.workflow_dispatch.inputs`: no call can pass it, so it is always empty"
            )
            yield RULE.diagnostic(read.span, message)
        elif read.context == "github.event.inputs" and name not in dispatched:
            instead = f"; what the call passes is `inputs.{read.name}`" if name in calls else ""
            message = (
                f"`github.event.inputs.{read.name}` in a reusable workflow reads the event of the caller's run, and "
                f"no workflow that runs it is dispatched with an input `{read.name}`: it is always empty{instead}"
            )
            yield RULE.diagnostic(read.span, message, severity=Severity.WARNING)


def _secrets(
    context: RepositoryContext, caller: Job, callee: Workflow, secrets: dict[str, list[Read]]
) -> Iterator[Diagnostic]:
    passed = {name.lower() for name in caller.secrets}
    declared = callee.workflow_call.secrets if callee.workflow_call is not None else {}
    required = {name.lower() for name, secret in declared.items() if secret.required}
    known = {name.lower() for name in declared}
    where = caller.uses_node.span if caller.uses_node is not None else caller.key.span
    scope = called(
        caller, callee, Scope(None, caller.workflow.name or caller.workflow.path, caller.workflow.path, None)
    )
    fork = _fork_trigger(context, caller.workflow)
    for name, places in secrets.items():
        # A read under an `if:` this call makes false (`if: inputs.upload`, not passed) does not happen in it.
        read = next((r for r in places if all(holds(test, scope) is not False for test in r.guards)), None)
        if name in passed or read is None:
            continue
        optional = name in known and name not in required
        if optional and _decides_for_forks(caller):
            continue
        yield _missing(caller, callee, read, where, optional, name in required, fork)


def _missing(
    caller: Job, callee: Workflow, read: Read, where: Span, optional: bool, required: bool, fork: _Fork | None
) -> Diagnostic:
    secret = f"{'optional ' if optional else ''}secret `{read.name}`"
    inherit = "" if fork is not None else " (nor `secrets: inherit`)"
    if required:
        consequence = "it is `required`, so the call fails before it starts"
    elif optional:
        consequence = "it is empty in this call"
    else:
        consequence = (
            "it is not declared under `on.workflow_call.secrets`, so no call can pass it by name and it is empty in "
            "this call"
        )
    message = f"job '{caller.id}' calls `{callee.path}` without passing {secret}{inherit}, which the workflow reads: "
    message += consequence
    related = [Related(read.span, f"`secrets.{read.name}` read here")]
    if fork is not None:
        workflow, trigger = fork
        event = f"`{trigger.event}`"
        if workflow is not caller.workflow:
            event += f" of `{workflow.path}`, which runs it,"
        if required:
            advice = "pass this one secret"
        elif optional:
            advice = "pass this one secret only where the run is trusted, or nothing"
        else:
            advice = "declare it there and pass it only where the run is trusted, or nothing"
        message += (
            f"; {event} lets a fork start this workflow, so {advice} (`secrets: inherit` would hand every secret "
            "to the fork's code)"
        )
        related.append(Related(trigger.key.span, f"`{trigger.event}` lets a fork start it here"))
    return RULE.diagnostic(where, message, related, severity=Severity.WARNING if optional else None)


def _fork_trigger(context: RepositoryContext, workflow: Workflow) -> _Fork | None:
    """The trigger through which a fork can start `workflow`, and whose it is: one of its own, else one of a
    workflow whose run calls it (nearest first, each workflow once)."""
    pending, seen = deque([workflow]), set()
    while pending:
        current = pending.popleft()
        if current.path in seen:
            continue
        seen.add(current.path)
        trigger = next((current.triggers[event] for event in _FORK_EVENTS if event in current.triggers), None)
        if trigger is not None:
            return current, trigger
        if current.workflow_call is not None:
            pending.extend(caller.workflow for caller in context.resolver.callers.get(current.path, []))
    return None


def _decides_for_forks(caller: Job) -> bool:
    """Whether the calling job runs only for, or only not for, pull requests from forks (its `if:` tests the head
    repository): what it withholds, it withholds on purpose."""
    text = caller.if_.text if caller.if_ is not None else None
    return text is not None and _FORK_TEST.search(text) is not None


RULE = Rule(
    "CC050",
    "reusable-call-contract",
    "A reusable workflow reads a secret its caller does not pass, or an input no call can give it",
    Severity.ERROR,
    __doc__,
    frozenset({FileKind.WORKFLOW}),
    None,
    check_repository,
    group=RuleGroup.WORKFLOW,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
