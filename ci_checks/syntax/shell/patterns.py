"""Command patterns: which commands a pattern such as `pip install -e .` names.

A pattern is split like a shell line (quoting removed, `${NAME}` read as
`$NAME`). Its first word is the program, compared with the basename of the
command's program; its other words must appear, in that order, among the
command's arguments, with other arguments allowed before, between and after
them. Before comparing, the wrappers `sudo`, `env` (and its `NAME=value`
words), `time`, `nohup`, `exec`, `command` and `python`/`python3`/`python3.N -m
MODULE` (which makes MODULE the program) are looked through.

So `pip install -e .` matches `pip install -e . --no-deps` and `python -m pip
install -e .`, but not `pip install -e ./python`; and `git apply "$P"` matches
`git apply --check "$P"` too, because `--check` is just one more argument.
Two options make a pattern stricter:

- `without`: none of these words may be among the command's arguments
  (`git apply "$P"` without `--check`, `--reverse`, `-R` is only a real apply);
- `exact`: the arguments are exactly the pattern's, in order, nothing added
  (`git apply "$P"` exactly does not match `git apply --3way "$P"`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ci_checks.syntax.shell.quoting import canonical_word, quote_word, split_words

_PYTHON = re.compile(r"python(3(\.\d+)?)?\Z")
_PLAIN_WRAPPERS = {"time", "nohup", "exec", "command"}
_SUDO_OPTIONS_WITH_VALUE = {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"}


def basename(program: str) -> str:
    return program.rsplit("/", 1)[-1]


def unwrap(argv: list[str]) -> Iterator[list[str]]:
    """The argv itself, then what it runs once each known wrapper is looked through."""
    yield argv
    while argv:
        program = basename(argv[0])
        if program in _PLAIN_WRAPPERS:
            argv = argv[1:]
        elif program == "sudo":
            rest = argv[1:]
            while rest and rest[0].startswith("-"):
                rest = rest[2:] if rest[0] in _SUDO_OPTIONS_WITH_VALUE else rest[1:]
            argv = rest
        elif program == "env":
            rest = argv[1:]
            while rest and (rest[0].startswith("-") or "=" in rest[0]):
                rest = rest[1:]
            argv = rest
        elif _PYTHON.match(program) and len(argv) >= 3 and argv[1] == "-m":
            argv = argv[2:]
        else:
            return
        yield argv


@dataclass(frozen=True)
class CommandPattern:
    words: tuple[str, ...]
    without: frozenset[str] = frozenset()
    exact: bool = False

    @classmethod
    def parse(cls, pattern: str, without: Sequence[str] = (), exact: bool = False) -> CommandPattern:
        """The pattern, or ValueError saying why it is not one."""
        try:
            words = split_words(pattern)
        except ValueError as error:
            raise ValueError(f"invalid command pattern {pattern!r}: {error}") from None
        if not words:
            raise ValueError("a command pattern needs at least a program name")
        excluded: set[str] = set()
        for text in without:
            split = split_words(text) if text.strip() else []
            if len(split) != 1:
                raise ValueError(f"`without` takes single words; {text!r} is not one")
            excluded.add(canonical_word(split[0]))
        return cls(tuple(canonical_word(word) for word in words), frozenset(excluded), exact)

    def __str__(self) -> str:
        return " ".join(quote_word(word) for word in self.words)

    def matches(self, argv: list[str]) -> bool:
        program, *wanted = self.words
        for candidate in unwrap(argv):
            if not candidate or basename(candidate[0]) != program:
                continue
            arguments = [canonical_word(arg) for arg in candidate[1:]]
            if self.without and any(arg in self.without for arg in arguments):
                continue
            if self.exact:
                if arguments == wanted:
                    return True
                continue
            remaining = iter(arguments)
            if all(any(arg == word for arg in remaining) for word in wanted):
                return True
        return False
