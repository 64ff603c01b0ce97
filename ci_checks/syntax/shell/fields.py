"""Command substitutions that print one field: output that word splitting cannot cut in two, nor globbing expand.

`docker run --group-add $(getent group video | cut -d: -f3)` passes one
number, quoted or not; `rm $(find . -name '*.pyc')` passes as many words as
there are files, and a name with a space in it breaks in two. `one_field`
tells the first kind by the substitution's command tree: one statement, a
simple command or a pipeline whose last command decides, from a short list
of programs and options known to print a single word with no blank and no
`*`, `?` or `[` in it:

- `id -u`, `id -g` (also `-r`, `-n`, one user): a number or a login name;
- `nproc`, and `getconf` of a number (`getconf _NPROCESSORS_ONLN`);
- `date +FORMAT`, a format of numeric conversions with no blank
  (`+%s`, `+%Y%m%d-%H%M%S`);
- `git rev-parse REV` of one revision (a SHA, or a branch name with
  `--abbrev-ref`, which git refuses to contain blanks or glob characters),
  and `git rev-list --count`;
- `wc` counting one thing (`-l`, `-c`, `-w`, `-m`) of its standard input
  (`wc -l < f`, `... | wc -l`), which prints the number alone;
- `whoami`, and `uname` with at most one option;
- `getent group|passwd NAME | cut -d: -fN` of one entry and the field of a
  name or number (1, 3 or 4).

A path (`pwd`, `basename`, `dirname`, `mktemp`, `realpath`), a file's
content (`cat`), a listing (`ls`, `find`, `git diff --name-only`) or
anything else may hold blanks or several words: not one field. An argument
that is neither written out nor double-quoted (`id -u $USER`) may itself
split into several, so a command that has one is not one either.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ci_checks.syntax.shell.patterns import basename
from ci_checks.syntax.shell.tree import Block, Command, Pipeline, Word

_DATE_FORMAT = re.compile(r"\+(%[-_0^#]?[0-9]*[sYymdHMSNjuwVGgCFTDz%]|[A-Za-z0-9._:+-])*\Z")
"""`date`'s `+FORMAT` of numeric conversions (no `%e`, `%k`, `%l`: they pad with a blank) and no blank."""
_DATE_OPTIONS = frozenset({"-u", "--utc", "--universal"})
_DATE_VALUED = frozenset({"-d", "--date"})
_GETCONF_NUMBERS = frozenset(
    {"_NPROCESSORS_ONLN", "_NPROCESSORS_CONF", "NPROCESSORS_ONLN", "NPROCESSORS_CONF", "PAGESIZE", "PAGE_SIZE"}
    | {"LONG_BIT", "ARG_MAX", "CLK_TCK"}
)
_REV_PARSE_OPTIONS = re.compile(r"(--short(=\d+)?|--verify|-q|--quiet|--abbrev-ref|--symbolic-full-name)\Z")
_WC_COUNTS = frozenset({"-l", "-c", "-w", "-m", "--lines", "--bytes", "--chars", "--words"})
_UNAME_OPTIONS = frozenset(
    {"-s", "-r", "-m", "-p", "-i", "-o", "-n", "--kernel-name", "--kernel-release", "--machine", "--nodename"}
    | {"--processor", "--hardware-platform", "--operating-system"}
)
_ID_LONG = {"--user": "u", "--group": "g", "--name": "n", "--real": "r"}
_CUT_OPTIONS = {"-d": "-d", "-f": "-f", "--delimiter=": "-d", "--fields=": "-f"}
"""`cut`'s options this reads, each with the short option it stands for."""
_ENTRY_FIELDS = frozenset({"1", "3", "4"})
"""Fields of a `group` or `passwd` entry that hold a name or a number: the name, the id, the group id (or the
group's members, joined by commas)."""


def one_field(substitution: Block) -> bool:
    """Whether a command substitution surely prints one field (see the module's documentation)."""
    if len(substitution.statements) != 1:
        return False
    statement = substitution.statements[0]
    if isinstance(statement, Command):
        return _prints_one_field(statement)
    if isinstance(statement, Pipeline) and all(isinstance(stage, Command) for stage in statement.stages):
        stages = [stage for stage in statement.stages if isinstance(stage, Command)]
        last = stages[-1]
        if _program(last) == "cut":
            return len(stages) == 2 and _one_entry(stages[0]) and _one_entry_field(last)
        return _prints_one_field(last)
    return False


def _program(command: Command) -> str | None:
    if not command.words or not command.words[0].static:
        return None
    return basename(command.words[0].value)


def _one_argument(word: Word) -> bool:
    """Whether a word is one argument: written out, or double-quoted as a whole."""
    return word.static or (len(word.text) >= 2 and word.text[0] == word.text[-1] == '"')


def _prints_one_field(command: Command) -> bool:
    program = _program(command)
    check = _PROGRAMS.get(program or "")
    arguments = command.words[1:]
    if check is None or not all(_one_argument(word) for word in arguments):
        return False
    return check([word.value for word in arguments])


def _id(arguments: list[str]) -> bool:
    letters: list[str] = []
    operands = 0
    for argument in arguments:
        if argument in _ID_LONG:
            letters.append(_ID_LONG[argument])
        elif argument.startswith("-") and len(argument) > 1 and not argument.startswith("--"):
            letters.extend(argument[1:])
        else:
            operands += 1
    return set(letters) <= set("ugnr") and (letters.count("u") + letters.count("g")) == 1 and operands <= 1


def _nproc(arguments: list[str]) -> bool:
    return all(argument.startswith("--") for argument in arguments)


def _getconf(arguments: list[str]) -> bool:
    return len(arguments) == 1 and arguments[0] in _GETCONF_NUMBERS


def _date(arguments: list[str]) -> bool:
    remaining = iter(arguments)
    formats = 0
    for argument in remaining:
        if argument.startswith("+"):
            if not _DATE_FORMAT.match(argument):  # no `$`: a format read from a variable is not known
                return False
            formats += 1
        elif argument in _DATE_VALUED:
            if next(remaining, None) is None:
                return False
        elif argument not in _DATE_OPTIONS and not argument.startswith("--date="):
            return False
    return formats == 1


def _git(arguments: list[str]) -> bool:
    while len(arguments) >= 2 and arguments[0] == "-C":
        arguments = arguments[2:]
    if not arguments:
        return False
    command, rest = arguments[0], arguments[1:]
    if command == "rev-list":
        return "--count" in rest
    if command != "rev-parse":
        return False
    operands = [argument for argument in rest if not argument.startswith("-")]
    options = [argument for argument in rest if argument.startswith("-")]
    return len(operands) == 1 and all(_REV_PARSE_OPTIONS.match(option) for option in options)


def _wc(arguments: list[str]) -> bool:
    return len(arguments) == 1 and arguments[0] in _WC_COUNTS


def _whoami(arguments: list[str]) -> bool:
    return not arguments


def _uname(arguments: list[str]) -> bool:
    return len(arguments) <= 1 and all(argument in _UNAME_OPTIONS for argument in arguments)


_PROGRAMS: dict[str, Callable[[list[str]], bool]] = {
    "id": _id,
    "nproc": _nproc,
    "getconf": _getconf,
    "date": _date,
    "git": _git,
    "wc": _wc,
    "whoami": _whoami,
    "uname": _uname,
}
"""Each program known to print one field, with what its arguments must be for it to (`wc` reads its standard
input only when it is given no file: a file's name would be printed after the count)."""


def _one_entry(command: Command) -> bool:
    """`getent group NAME` or `getent passwd NAME`: one entry, on one line."""
    arguments = command.words[1:]
    return (
        _program(command) == "getent"
        and len(arguments) == 2
        and arguments[0].static
        and arguments[0].value in ("group", "passwd")
        and _one_argument(arguments[1])
    )


def _one_entry_field(command: Command) -> bool:
    """`cut -d: -fN` (or `-d :`, `-f N`, `--delimiter=:`, `--fields=N`) of one field that holds a name or a number."""
    if not all(word.static for word in command.words[1:]):
        return False
    values: dict[str, str] = {}
    remaining = iter(word.value for word in command.words[1:])
    for argument in remaining:
        option = next((option for option in _CUT_OPTIONS if argument.startswith(option)), None)
        if option is None:
            return False
        if argument.startswith("--"):
            values[_CUT_OPTIONS[option]] = argument[len(option) :]
        else:
            values[option] = argument[2:] or next(remaining, "")
    return values.get("-d") == ":" and values.get("-f") in _ENTRY_FIELDS
