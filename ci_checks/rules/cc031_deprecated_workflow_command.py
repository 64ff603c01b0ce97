"""A `run:` script uses a deprecated or disabled workflow command.

## What it does
Finds `echo` and `printf` commands in `run:` scripts (bash and sh) that
print `::set-output`, `::save-state`, `::set-env` or `::add-path`, wherever
they are: in branches, loops, pipelines and functions. For a plain
`echo "::set-output name=NAME::VALUE"` (in either quotes, or none, and with
no redirect) it offers the replacement, where the step runs in bash or sh
(the `>> "$GITHUB_OUTPUT"` form is not PowerShell's, so no rewrite is offered
for a step that may run on a Windows runner, as with
`runs-on: ${{ matrix.os }}` over `windows-latest`).

What is said matches the step's context: `::set-env` and `::add-path` fail
the step, unless `ACTIONS_ALLOW_UNSECURE_COMMANDS` is `true` in the step's,
job's or workflow's `env` (or written to `$GITHUB_ENV` by an earlier step of the job or composite action),
where they work and the finding is a security warning instead.

## Why it matters
`::set-env` and `::add-path` were disabled in 2020 because any process that
prints to the log could inject environment variables; the step fails.
Re-enabling them with `ACTIONS_ALLOW_UNSECURE_COMMANDS` brings that injection
back. `::set-output` and `::save-state` are deprecated and print warnings on
every run; GitHub has announced their removal. The environment files replace
them.

## Example
```yaml
- id: version
  run: echo "::set-output name=version::$(git describe --tags)"
```

## Fix
Append to the matching environment file:
```yaml
- id: version
  run: echo "version=$(git describe --tags)" >> "$GITHUB_OUTPUT"
```
`::set-env name=N::V` becomes `echo "N=V" >> "$GITHUB_ENV"`, `::add-path::P`
becomes `echo "P" >> "$GITHUB_PATH"` and `::save-state` writes to
`$GITHUB_STATE`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ci_checks.core.diagnostics import Diagnostic, Edit, Fix, Related, Severity, Span
from ci_checks.model import Action, Job, Step
from ci_checks.model.loading import LoadedFile
from ci_checks.model.valuation.runners import RunnerResolver
from ci_checks.rules.rule import YAML_KINDS, Rule, RuleGroup, RuleStatus
from ci_checks.syntax.shell import Command
from ci_checks.syntax.shell.programs import shell_program

_COMMAND = re.compile(r"::(?P<command>set-output|save-state|set-env|add-path)(?: name=(?P<name>[^:]*))?::")
_NAMED = re.compile("set-output|save-state|set-env|add-path")
_FILES = {
    "set-output": "$GITHUB_OUTPUT",
    "save-state": "$GITHUB_STATE",
    "set-env": "$GITHUB_ENV",
    "add-path": "$GITHUB_PATH",
}
_DISABLED = {"set-env", "add-path"}
_UNSECURE = "ACTIONS_ALLOW_UNSECURE_COMMANDS"
_FIXABLE_SHELLS = {"bash", "sh"}
_ECHO_OPTIONS = re.compile(r"-[neE]+\Z")


def check(file: LoadedFile) -> Iterator[Diagnostic]:
    for step in file.steps:
        if step.run is None or not _NAMED.search(step.run.value):
            continue  # a script that names none of the commands is not parsed for them
        script = step.script
        if script is None:
            continue
        for command in script.commands():
            if command.name not in ("echo", "printf"):
                continue
            arguments = command.words[1:]
            while command.name == "echo" and arguments and _ECHO_OPTIONS.match(arguments[0].value):
                arguments = arguments[1:]
            match = _COMMAND.match(" ".join(word.value for word in arguments))
            if match is None:
                continue
            name = match.group("command")
            target = _FILES[name]
            related: list[Related] = []
            if name in _DISABLED:
                allowed = _unsecure_commands_allowed(step)
                if allowed is not None:
                    related.append(Related(allowed, "ACTIONS_ALLOW_UNSECURE_COMMANDS is set to true here"))
                    message = (
                        f"`::{name}` works here only because ACTIONS_ALLOW_UNSECURE_COMMANDS is true, which lets any "
                        f'process that prints to the log change the job\'s environment; append to "{target}" instead'
                    )
                    severity = Severity.WARNING
                elif isinstance(step.owner, Action):
                    message = (
                        f"`::{name}` is disabled on GitHub runners and fails the step, unless the calling workflow "
                        f'sets ACTIONS_ALLOW_UNSECURE_COMMANDS (which is unsafe); append to "{target}" instead'
                    )
                    severity = Severity.ERROR
                else:
                    message = (
                        f'`::{name}` is disabled on GitHub runners and fails the step; append to "{target}" instead'
                    )
                    severity = Severity.ERROR
            else:
                message = f'`::{name}` is deprecated; append `name=value` to "{target}" instead'
                severity = Severity.WARNING
            fix = _fix(file, command, name) if _runs_in_posix_shell(step) else None
            yield RULE.diagnostic(command.span, message, related, fix=fix, severity=severity)


def _unsecure_commands_allowed(step: Step) -> Span | None:
    """Where ACTIONS_ALLOW_UNSECURE_COMMANDS is set to true for this step, if it is."""
    scopes = [step.env]
    if isinstance(step.owner, Job):
        scopes += [step.owner.env, step.owner.workflow.env]
    for env in scopes:
        entry = env.get(_UNSECURE)
        if entry is not None and str(entry.resolved).lower() == "true":
            return entry.key.span
    for earlier in step.owner.steps[: step.index]:  # a composite action's steps write to the job's `$GITHUB_ENV` too
        for occurrence in earlier.occurrences(f"{_UNSECURE}=true"):
            return occurrence.span
    return None


def _runs_in_posix_shell(step: Step) -> bool:
    """Whether the step certainly runs in bash or sh: by its `shell:`, its defaults, or Linux and macOS runners only."""
    owner = step.owner
    if step.shell is not None or not isinstance(owner, Job):  # a composite action's step with a script has `shell:`
        return shell_program(step.shell) in _FIXABLE_SHELLS
    configured = owner.defaults.shell or owner.workflow.defaults.shell
    if configured is not None:
        return shell_program(configured) in _FIXABLE_SHELLS
    runners = RunnerResolver([owner.workflow]).runners(owner)
    if not runners.complete or not runners.choices:
        return False
    return not any("windows" in label.value.lower() for choice in runners.choices for label in choice.labels)


def _fix(file: LoadedFile, command: Command, name: str) -> Fix | None:
    """The rewrite of a plain `echo "::cmd name=N::V"` (or unquoted: echo joins its words with one space); None when
    the command is not that simple."""
    if command.name != "echo" or len(command.words) < 2 or command.redirects or command.assignments:
        return None
    written_words = [word.text for word in command.words[1:]]
    first = written_words[0]
    quote = first[0] if len(written_words) == 1 and first[:1] in ("'", '"') else ""
    if quote and not first.endswith(quote):
        return None
    inner = first[1:-1] if quote else " ".join(written_words)
    match = _COMMAND.match(inner)
    if match is None or "%" in inner:
        return None
    value = inner[match.end() :]
    line = f"{match.group('name')}={value}" if match.group("name") is not None else value
    span = command.span
    source = file.source
    written = source.text[source.offset(span.line, span.column) : source.offset(span.end_line, span.end_column)]
    if written != command.text:
        return None
    replacement = f'echo {quote}{line}{quote} >> "{_FILES[name]}"'
    return Fix(f"write to {_FILES[name]}", (Edit(span, replacement),))


RULE = Rule(
    "CC031",
    "deprecated-workflow-command",
    "`run:` script uses a deprecated or disabled workflow command",
    Severity.WARNING,
    __doc__,
    YAML_KINDS,
    check,
    group=RuleGroup.WORKFLOW,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
