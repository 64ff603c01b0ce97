"""`command: PATTERN`: shell commands, wherever they run.

Finds the commands of `run:` scripts (in conditions, loops, pipelines,
functions and nested branches), of Dockerfile `RUN` bodies and of `*.sh`
files; every other Dockerfile instruction is a command named by its keyword
(`COPY docker/x.patch /tmp/`). The first word of the pattern is the program
(compared by basename), its other words must appear in that order among the
command's arguments; quoting does not matter and `sudo`, `env`, `time`,
`nohup`, `exec`, `command` and `python -m` are looked through (see
`ci_checks.syntax.shell.patterns`). `without: [WORDS]` refuses commands that have any
of these words; `exact: true` wants exactly the pattern's arguments.

```yaml
- command: git apply "$PATCH"
  without: [--check, --reverse, -R]
```
matches `git apply "$PATCH"` and `git apply --3way "$PATCH"`, but not the
dry run `git apply --check "$PATCH"`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ci_checks.policy.model import Hit, Item, ItemContext, ItemKind, Scope
from ci_checks.syntax.shell import CommandPattern

PROPERTIES = {
    "command": {"description": "A command pattern: program, then words in order.", "type": "string", "minLength": 1},
    "without": {
        "description": "Words that must not be among the command's arguments.",
        "type": "array",
        "minItems": 1,
        "items": {"type": "string", "minLength": 1},
    },
    "exact": {"description": "The arguments are exactly the pattern's.", "type": "boolean"},
}


class CommandItem(Item):
    def __init__(self, pattern: CommandPattern, description: str, context: ItemContext) -> None:
        super().__init__("command", description)
        self.pattern = pattern

    def find(self, scope: Scope) -> list[Hit]:
        return [Hit(command.span, command.text) for command in scope.commands() if command.matches(self.pattern)]


def _compile(raw: Mapping[str, Any], context: ItemContext) -> Item:
    without = raw.get("without", [])
    exact = bool(raw.get("exact"))
    try:
        pattern = CommandPattern.parse(raw["command"], without, exact)
    except ValueError as error:
        at = "without" if "without" in str(error) and "without" in raw else "command"
        raise context.place.error(str(error), at) from None
    description = f"`{' '.join(raw['command'].split())}`"
    if without:
        description += f" without {', '.join(without)}"
    if exact:
        description += " exactly"
    return CommandItem(pattern, description, context)


ITEM = ItemKind("command", "shell commands matching a pattern", PROPERTIES, _compile, __doc__ or "")
