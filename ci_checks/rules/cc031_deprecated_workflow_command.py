"""A `run:` script uses a deprecated or disabled workflow command.

## What it does
Finds `echo` and `printf` commands in `run:` scripts (bash and sh) that
print `::set-output`, `::save-state`, `::set-env` or `::add-path`, wherever
they are: in branches, loops, pipelines and functions. For a plain
`echo "::set-output name=NAME::VALUE"` it offers the replacement.

## Why it matters
`::set-env` and `::add-path` were disabled in 2020 because any process that
prints to the log could inject environment variables; the step fails.
`::set-output` and `::save-state` are deprecated and print warnings on every
run; GitHub has announced their removal. The environment files replace them.

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

from ci_checks.diagnostics import Diagnostic, Edit, Fix, Severity
from ci_checks.loading import LoadedFile
from ci_checks.rule import YAML_KINDS, Rule
from ci_checks.shell import Command

_COMMAND = re.compile(r"::(?P<command>set-output|save-state|set-env|add-path)(?: name=(?P<name>[^:]*))?::")
_FILES = {
    "set-output": "$GITHUB_OUTPUT",
    "save-state": "$GITHUB_STATE",
    "set-env": "$GITHUB_ENV",
    "add-path": "$GITHUB_PATH",
}
_DISABLED = {"set-env", "add-path"}
_ECHO_OPTIONS = re.compile(r"-[neE]+\Z")


def check(file: LoadedFile) -> Iterator[Diagnostic]:
    for step in file.steps:
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
            if name in _DISABLED:
                message = f'`::{name}` is disabled on GitHub runners and fails the step; append to "{target}" instead'
                severity = Severity.ERROR
            else:
                message = f'`::{name}` is deprecated; append `name=value` to "{target}" instead'
                severity = Severity.WARNING
            yield RULE.diagnostic(command.span, message, fix=_fix(file, command, name), severity=severity)


def _fix(file: LoadedFile, command: Command, name: str) -> Fix | None:
    """The rewrite of a plain `echo "::cmd name=N::V"`; None when the command is not that simple."""
    if command.name != "echo" or len(command.words) != 2 or command.redirects or command.assignments:
        return None
    word = command.words[1]
    quote = word.text[0] if word.text[:1] in ("'", '"') else ""
    if quote and not word.text.endswith(quote):
        return None
    inner = word.text[len(quote) : len(word.text) - len(quote)]
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
)
