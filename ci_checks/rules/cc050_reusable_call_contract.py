"""A reusable workflow reads a secret its caller does not pass, or an input no call can give it.

## What it does
Reads every `${{ secrets.X }}`, `${{ inputs.X }}` and
`${{ github.event.inputs.X }}` of a workflow that other workflows of the
repository call (`on: workflow_call`), and checks them against its callers
and its own declarations:

- a secret it reads that a calling job neither passes (`secrets: {X: ...}`)
  nor inherits (`secrets: inherit`): in that call it is empty (or, declared
  `required: true`, the call fails before it starts). `GITHUB_TOKEN` is
  always there;
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
Pass what the callee reads (`secrets: {HF_TOKEN: ${{ secrets.HF_TOKEN }}}`
or `secrets: inherit`), and declare every input it reads under
`on.workflow_call.inputs`.
"""

from __future__ import annotations

from collections.abc import Iterator

from ci_checks.context import RepositoryContext
from ci_checks.diagnostics import Diagnostic, Related, Severity
from ci_checks.model import Job, Workflow
from ci_checks.model.contexts import Read, reads
from ci_checks.model.evaluation import Scope, called, holds
from ci_checks.repository import FileKind
from ci_checks.rule import Rule

_ALWAYS_THERE = frozenset({"github_token"})


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
            yield from _secrets(caller, callee, secrets)


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


def _secrets(caller: Job, callee: Workflow, secrets: dict[str, list[Read]]) -> Iterator[Diagnostic]:
    passed = {name.lower() for name in caller.secrets}
    declared = callee.workflow_call.secrets if callee.workflow_call is not None else {}
    required = {name.lower() for name, secret in declared.items() if secret.required}
    known = {name.lower() for name in declared}
    where = caller.uses_node.span if caller.uses_node is not None else caller.key.span
    scope = called(
        caller, callee, Scope(None, caller.workflow.name or caller.workflow.path, caller.workflow.path, None)
    )
    for name, places in secrets.items():
        # A read under an `if:` this call makes false (`if: inputs.upload`, not passed) does not happen in it.
        read = next((r for r in places if all(holds(test, scope) is not False for test in r.guards)), None)
        if name in passed or read is None:
            continue
        if name in required:
            consequence = "it is `required`, so the call fails before it starts"
        elif name not in known:
            consequence = "it is not declared under `on.workflow_call.secrets` either, so it is empty in this call"
        else:
            consequence = "it is empty in this call"
        message = (
            f"job '{caller.id}' calls `{callee.path}` without passing secret `{read.name}` (nor `secrets: inherit`), "
            f"which the workflow reads: {consequence}"
        )
        yield RULE.diagnostic(where, message, [Related(read.span, f"`secrets.{read.name}` read here")])


RULE = Rule(
    "CC050",
    "reusable-call-contract",
    "A reusable workflow reads a secret its caller does not pass, or an input no call can give it",
    Severity.ERROR,
    __doc__,
    frozenset({FileKind.WORKFLOW}),
    None,
    check_repository,
)
