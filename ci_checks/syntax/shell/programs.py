"""The program a `shell:` value runs: a step's `shell:`, a Dockerfile's `SHELL`, read as the runner starts it."""

from __future__ import annotations

import re

from ci_checks.syntax.shell.quoting import is_expression

_POSIX_SHELLS = {"bash", "sh", "dash", "ksh", "zsh"}
"""The shells whose scripts are parsed and checked: GitHub's `bash` and `sh`, and the custom shells that read the
same grammar."""

_WRAPPERS: dict[str, frozenset[str]] = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "nohup": frozenset(),
    "stdbuf": frozenset({"-i", "--input", "-o", "--output", "-e", "--error"}),
    "sudo": frozenset(
        {"-u", "--user", "-g", "--group", "-C", "--close-from", "-D", "--chdir", "-h", "--host", "-p", "--prompt"}
        | {"-r", "--role", "-t", "--type", "-T", "--command-timeout", "-U", "--other-user"}
    ),
}
"""Programs that run the command after their options, each with the options that take the next word as their
value (`sudo -u ci bash {0}` runs bash)."""
_FLAGS: dict[str, frozenset[str]] = {
    "env": frozenset({"-i", "--ignore-environment", "-0", "--null", "-v", "--debug"}),
    "nice": frozenset(),
    "nohup": frozenset(),
    "stdbuf": frozenset(),
    "sudo": frozenset({"-E", "--preserve-env", "-H", "--set-home", "-n", "--non-interactive", "-P", "-S", "--stdin"})
    | frozenset({"-A", "--askpass", "-b", "--background", "-k", "--reset-timestamp", "-B", "--bell"}),
}
"""The options of each wrapper that take no value; any other option leaves the program unknown."""
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_NICENESS = re.compile(r"-[0-9]+\Z")
_ATTACHED = re.compile(r"(-[A-Za-z])(.+)\Z")
_MAX_WRAPPERS = 8
"""How many wrappers in a row are followed; a longer chain leaves the program unknown."""


def shell_program(shell_value: str | None) -> str | None:
    """The program a `shell:` value runs, as the runner starts it: `bash` for `bash -eo pipefail {0}`,
    `/usr/bin/env bash -e {0}`, `sudo -E bash {0}` or `nice -n 5 bash {0}`; None where it cannot be known (an
    expression, an option of a wrapper that is not known, no program after the wrapper, a quoted word)."""
    if shell_value is None or is_expression(shell_value):
        return None
    words = shell_value.split()
    for _ in range(_MAX_WRAPPERS):
        if not words:
            return None
        program = words[0].rsplit("/", 1)[-1]
        if '"' in program or "'" in program:
            return None  # quoted words the runner's argument parsing would join
        if program not in _WRAPPERS:
            return program
        rest = _unwrapped(program, words[1:])
        if rest is None:
            return None
        words = rest
    return None


def _unwrapped(wrapper: str, words: list[str]) -> list[str] | None:
    """The words after a wrapper's options and assignments: the command it runs; None for an option not known."""
    index = 0
    while index < len(words):
        word = words[index]
        if word == "--":
            return words[index + 1 :]
        if not word.startswith("-") or word == "-":
            if wrapper == "env" and _ASSIGNMENT.match(word):
                index += 1
                continue
            return words[index:]
        if wrapper == "env" and word in ("-S", "--split-string"):
            return words[index + 1 :]  # env splits the string into the command's words
        if word in _WRAPPERS[wrapper]:
            index += 2
        elif _one_word(wrapper, word):
            index += 1
        else:
            return None
    return None


def _one_word(wrapper: str, option: str) -> bool:
    """Whether an option of the wrapper is known and whole in one word: a flag, `--name=value`, `-oL`, nice's `-10`."""
    known = _WRAPPERS[wrapper] | _FLAGS[wrapper]
    if option in _FLAGS[wrapper] or (option.startswith("--") and option.split("=", 1)[0] in known):
        return True
    if wrapper == "nice" and _NICENESS.match(option):
        return True
    attached = _ATTACHED.match(option)
    return attached is not None and attached.group(1) in _WRAPPERS[wrapper]


def is_posix_shell(shell_value: str | None) -> bool:
    return shell_program(shell_value) in _POSIX_SHELLS
