"""The shell a `run:` script runs with cannot be known, so the script is not checked.

## What it does
Reports a `run:` step whose shell (its `shell:`, or the job's or workflow's
`defaults.run.shell`) cannot be resolved to a program the way the runner
starts it. A program path (`/usr/bin/bash`), `{0}`, options and the wrappers
`env`, `nice`, `nohup`, `stdbuf` and `sudo` with their options are resolved:
`/usr/bin/env bash -e {0}` and `sudo -E bash {0}` run bash, and their
scripts are checked like any bash script. What is left is an expression
(`${{ matrix.shell }}`, `${{ inputs.shell }}`), a wrapper option that is not
known, or a quoted word. For a workflow, the value model is asked what the
expression gives in each leg of the job: where every leg names a program
that is not a POSIX shell (`pwsh`, `python`), there is nothing to check and
no finding. The finding is information: it does not fail the run.

## Why it matters
The rules that read scripts, the policy rules and shellcheck check a script
only when they know it is POSIX shell. A shell that cannot be resolved would
otherwise hide its script from all of them without a word: a pull request
could move any script out of sight by wrapping its shell.

## Example
```yaml
strategy:
  matrix:
    shell: [bash, pwsh]
defaults:
  run:
    shell: ${{ matrix.shell }}
steps:
  - run: ./scripts/run-gpu-tests.sh
```

## Fix
Name the shell literally (`shell: bash`), or split the step into one per
shell; a wrapper written with known options (`sudo -E bash {0}`) is checked.
"""

from __future__ import annotations

from collections.abc import Iterator

from ci_checks.core.diagnostics import Diagnostic, Severity
from ci_checks.core.repository import FileKind
from ci_checks.model import Job, Step
from ci_checks.rules.context import RepositoryContext
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus
from ci_checks.syntax.shell.programs import is_posix_shell, shell_program
from ci_checks.syntax.shell.quoting import is_expression


def check_repository(context: RepositoryContext) -> Iterator[Diagnostic]:
    for file in context.targets:
        if not file.readable:
            continue
        for step in file.steps:
            shell = step.effective_shell
            if step.run is None or shell is None or shell_program(shell) is not None:
                continue
            if is_expression(shell) and _never_posix(context, step, shell):
                continue
            node = step.node.get("shell")
            where = f"`shell: {shell}`" if node is not None else f"the default shell `{shell}`"
            message = (
                f"{where} cannot be resolved to a program, so its `run:` script is not checked "
                "(neither by the rules that read scripts nor by shellcheck)"
            )
            yield RULE.diagnostic(node.span if node is not None else step.run.span, message)


def _never_posix(context: RepositoryContext, step: Step, shell: str) -> bool:
    """Whether every leg of the step's job gives the expression a program that is not a POSIX shell."""
    if not isinstance(step.owner, Job):
        return False  # a composite action's inputs are the caller's: not known here
    legs = context.valuation.legs(step.owner).legs
    if not legs:
        return False
    for leg in legs:
        for value in leg.possible(shell, step):
            if not isinstance(value, str) or shell_program(value) is None or is_posix_shell(value):
                return False
    return True


RULE = Rule(
    "CC055",
    "unknown-shell",
    "The shell a `run:` script runs with cannot be known, so the script is not checked",
    Severity.INFO,
    __doc__,
    frozenset({FileKind.WORKFLOW, FileKind.ACTION}),
    None,
    check_repository,
    group=RuleGroup.WORKFLOW,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
