"""Dockerfiles as instructions, with `RUN` bodies parsed like `run:` scripts.

What Docker's own parser does is followed: a `# escape=` directive at the top,
comment lines removed even inside continued instructions, continuation by the
escape character at the end of a line, and here-documents (`RUN <<EOF`).

Every instruction becomes commands for the command matcher: a `RUN` body is
parsed with tree-sitter-bash (unless `SHELL` switched to a shell that is not
POSIX), an exec-form `RUN ["a", "b"]` is one command, and every other
instruction is one command whose program is its keyword: `COPY src /dst`
matches the pattern `COPY src`, with its flags (`--from=build`) kept as words.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property

from ci_checks.core.diagnostics import Span
from ci_checks.core.source import FileLocator, SourceFile
from ci_checks.syntax import shell
from ci_checks.syntax.shell import Command, Word
from ci_checks.syntax.shell.programs import is_posix_shell

_DIRECTIVE = re.compile(r"#\s*escape\s*=\s*(?P<char>\S)\s*\Z", re.IGNORECASE)
_KEYWORD = re.compile(r"[A-Za-z]+")
_HEREDOC = re.compile(r"<<(?P<strip>-?)(?P<quote>[\"']?)(?P<marker>[A-Za-z_][A-Za-z0-9_]*)(?P=quote)")
_FLAG = re.compile(r"--[a-z-]+(=\S*)?")
_WORD = re.compile(r"\S+")


@dataclass(eq=False)
class Heredoc:
    marker: str
    body: str
    offsets: list[int]


@dataclass(eq=False)
class Instruction:
    """One instruction. `arguments` is its text after the keyword, continuations and comment lines removed;
    `offsets` gives the file offset of each of its characters."""

    keyword: str
    span: Span
    keyword_span: Span
    arguments: str
    offsets: list[int]
    heredocs: list[Heredoc] = field(default_factory=list)
    shell_program: str | None = "sh"


@dataclass(eq=False)
class Dockerfile:
    source: SourceFile
    instructions: list[Instruction]

    @cached_property
    def scripts(self) -> list[shell.Script]:
        """The shell scripts of the `RUN` instructions, in order."""
        return [script for commands in self._parts for script in commands if isinstance(script, shell.Script)]

    def commands(self) -> Iterator[Command]:
        """Every command: those of `RUN` bodies, and each other instruction as a command named by its keyword."""
        for parts in self._parts:
            for part in parts:
                yield from part.commands()

    def instruction_parts(self) -> Iterator[tuple[Instruction, list[Command | shell.Script]]]:
        """Each instruction with what it runs: its `RUN` script or exec-form command, or itself as one command."""
        return zip(self.instructions, self._parts, strict=True)

    @cached_property
    def _parts(self) -> list[list[Command | shell.Script]]:
        return [_commands_of(self.source, instruction) for instruction in self.instructions]


def parse(source: SourceFile) -> Dockerfile:
    text = source.text
    lines = _lines(text)
    escape = "\\"
    index = 0
    while index < len(lines):  # parser directives come first, before any other line
        start, end = lines[index]
        match = _DIRECTIVE.match(text[start:end])
        if match is None:
            break
        escape = match.group("char")
        index += 1
    instructions: list[Instruction] = []
    shell_program: str | None = "sh"
    while index < len(lines):
        start, end = lines[index]
        stripped = text[start:end].lstrip()
        if not stripped or stripped.startswith("#"):
            index += 1
            continue
        instruction, index = _instruction(source, lines, index, escape, shell_program)
        if instruction.keyword == "SHELL":
            shell_program = _shell_of(instruction.arguments)
        instructions.append(instruction)
    return Dockerfile(source, instructions)


def _lines(text: str) -> list[tuple[int, int]]:
    lines = []
    start = 0
    while start <= len(text):
        end = text.find("\n", start)
        if end < 0:
            if start < len(text):
                lines.append((start, len(text)))
            break
        lines.append((start, end))
        start = end + 1
    return lines


def _instruction(
    source: SourceFile, lines: list[tuple[int, int]], index: int, escape: str, shell_program: str | None
) -> tuple[Instruction, int]:
    text = source.text
    first_start, first_end = lines[index]
    indent = len(text[first_start:first_end]) - len(text[first_start:first_end].lstrip())
    keyword_match = _KEYWORD.match(text, first_start + indent)
    keyword_end = keyword_match.end() if keyword_match else first_start + indent
    keyword = text[first_start + indent : keyword_end].upper()
    chars: list[str] = []
    offsets: list[int] = []
    position = keyword_end
    line_end = first_end
    last_line = index
    while True:
        body = text[position:line_end]
        trimmed = body.rstrip(" \t")
        continued = trimmed.endswith(escape) and index + 1 < len(lines)
        if continued:
            trimmed = trimmed[: -len(escape)]
        chars.extend(trimmed)
        offsets.extend(range(position, position + len(trimmed)))
        last_line = index
        if not continued:
            break
        index += 1
        while index < len(lines) and text[lines[index][0] : lines[index][1]].lstrip().startswith("#"):
            index += 1  # comment lines inside a continued instruction are dropped, as Docker does
        if index >= len(lines):
            break
        position, line_end = lines[index]
    index = last_line + 1
    arguments = "".join(chars)
    leading = len(arguments) - len(arguments.lstrip())
    arguments, offsets = arguments[leading:], offsets[leading:]
    heredocs: list[Heredoc] = []
    for match in _HEREDOC.finditer(arguments):
        heredoc, index = _heredoc(text, lines, index, match.group("marker"), bool(match.group("strip")))
        heredocs.append(heredoc)
    end_offset = lines[index - 1][1]
    instruction = Instruction(
        keyword,
        source.span(first_start + indent, end_offset),
        source.span(first_start + indent, keyword_end),
        arguments,
        offsets,
        heredocs,
        shell_program,
    )
    return instruction, index


def _heredoc(text: str, lines: list[tuple[int, int]], index: int, marker: str, strip: bool) -> tuple[Heredoc, int]:
    chars: list[str] = []
    offsets: list[int] = []
    while index < len(lines):
        start, end = lines[index]
        index += 1
        line = text[start:end]
        if (line.lstrip("\t") if strip else line) == marker:
            break
        skipped = len(line) - len(line.lstrip("\t")) if strip else 0
        chars.extend(line[skipped:] + "\n")
        offsets.extend(range(start + skipped, end + 1))
    return Heredoc(marker, "".join(chars), offsets), index


def _shell_of(arguments: str) -> str | None:
    try:
        words = json.loads(arguments)
    except (json.JSONDecodeError, RecursionError):  # `SHELL [[[[...`: not the JSON array of the exec form
        return None
    if isinstance(words, list) and words and isinstance(words[0], str):
        return " ".join(str(word) for word in words)
    return None


def flags_end(arguments: str) -> int:
    """Where the arguments start after leading `--mount=...`-style flags."""
    end = 0
    while True:
        match = _FLAG.match(arguments, end)
        if match is None:
            return end
        end = match.end()
        while end < len(arguments) and arguments[end] in " \t":
            end += 1


def _commands_of(source: SourceFile, instruction: Instruction) -> list[Command | shell.Script]:
    locator = FileLocator(source, instruction.offsets)
    arguments = instruction.arguments
    start = flags_end(arguments)
    exec_words = _json_words(arguments, start, locator)
    if instruction.keyword != "RUN":
        keyword = Word(_FixedLocator(instruction.keyword_span), 0, 0, instruction.keyword, instruction.keyword, True)
        words = _plain_words(arguments, 0, start, locator)
        words += exec_words if exec_words is not None else _plain_words(arguments, start, len(arguments), locator)
        text = f"{instruction.keyword} {arguments}"
        return [Command(_FixedLocator(instruction.span), 0, 0, [keyword, *words], text=text)]
    if exec_words is not None:
        return [Command(locator, start, len(arguments), exec_words, text=arguments[start:])] if exec_words else []
    if not is_posix_shell(instruction.shell_program):
        return []
    body = arguments[start:]
    if instruction.heredocs and _HEREDOC.fullmatch(body.strip()):
        heredoc = instruction.heredocs[0]  # `RUN <<EOF`: the here-document is the script
        return [shell.parse(heredoc.body, FileLocator(source, heredoc.offsets))]
    return [shell.parse(body, FileLocator(source, instruction.offsets[start:]))]


def _plain_words(arguments: str, start: int, end: int, locator: FileLocator) -> list[Word]:
    return [
        Word(locator, m.start(), m.end(), m.group(), m.group(), True) for m in _WORD.finditer(arguments, start, end)
    ]


def _json_words(arguments: str, start: int, locator: FileLocator) -> list[Word] | None:
    """The words of an exec-form `["a", "b"]` starting at `start`; None when it is not one."""
    body = arguments[start:]
    if not body.startswith("["):
        return None
    try:
        values = json.loads(body)
    except (json.JSONDecodeError, RecursionError):  # `RUN [[[[...` nested past the parser's depth is shell, not JSON
        return None
    if not isinstance(values, list) or not all(isinstance(value, str) for value in values):
        return None
    words = []
    cursor = start + 1
    for value in values:
        first = arguments.find('"', cursor)
        end = _string_end(arguments, first)
        words.append(Word(locator, first, end, arguments[first:end], value, True))
        cursor = end
    return words


def _string_end(text: str, start: int) -> int:
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == '"':
            return i + 1
        i += 1
    return len(text)


class _FixedLocator:
    """Every offset maps to one span: an instruction's keyword, or the whole instruction."""

    def __init__(self, span: Span) -> None:
        self._span = span

    def span(self, start: int, end: int) -> Span:
        return self._span
