"""What a job reads from the repository: files its scripts run or apply, local actions, checkouts.

A `run:` script names repository files in a few well-known ways: `bash x.sh`,
`python tools/y.py`, `./run.sh`, `source env.sh`, `git apply fix.patch`,
`patch -p1 < fix.patch`, `pip install -r requirements.txt`, `docker build -f
docker/Dockerfile .`, and it uses the checked-out tree as a whole with `pip
install -e .` or `make`. `references` finds those in a command tree, each with
the word that names the path and the path relative to the workspace (the
step's `working-directory` and the script's own `cd`s taken into account).

A path built from a variable is skipped, not guessed; `$GITHUB_WORKSPACE/...`
and `${{ github.workspace }}/...` are the workspace, `$GITHUB_ACTION_PATH/...`
and `${{ github.action_path }}/...` a composite action's own folder. After a
`cd` that cannot be followed (into a variable, inside a branch) relative paths
are no longer known and are skipped.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from ci_checks.diagnostics import Span
from ci_checks.model.steps import Step
from ci_checks.model.values import is_expression
from ci_checks.model.workflow import Job
from ci_checks.shell import AndOr, Command, Script, Word

Kind = Literal["script", "patch", "requirements", "dockerfile", "context", "install", "make", "cd"]
Base = Literal["workspace", "action"]

_WORKSPACE = re.compile(r"(\$GITHUB_WORKSPACE|\$\{GITHUB_WORKSPACE\}|\$\{\{\s*github\.workspace\s*\}\})(/|\Z)")
_ACTION_PATH = re.compile(r"(\$GITHUB_ACTION_PATH|\$\{GITHUB_ACTION_PATH\}|\$\{\{\s*github\.action_path\s*\}\})(/|\Z)")
_VARIABLE = re.compile(r"[$`*?\[{~]")
_SHELLS = {"bash", "sh", "zsh", "dash", "ksh"}
_SHELL_VALUE_OPTIONS = {"-o", "-O", "+o", "+O", "--rcfile", "--init-file"}
_PYTHON = re.compile(r"python(\d+(\.\d+)?)?\Z")
_PYTHON_VALUE_OPTIONS = {"-W", "-X", "--check-hash-based-pycs"}
_WRAPPERS = {"time", "nohup", "exec", "command", "builtin"}
_SUDO_VALUE_OPTIONS = {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"}
_DOCKER_FLAGS = {"--no-cache", "--pull", "--push", "--load", "--rm", "--force-rm", "-q", "--quiet", "--squash",
                 "--compress", "--check", "--debug"}  # fmt: skip
_GIT_APPLY_VALUE_OPTIONS = {"--exclude", "--include", "--directory"}
_PIP = {"pip", "pip3"}


VERBS: dict[str, str] = {
    "script": "runs",
    "patch": "applies",
    "requirements": "installs from",
    "dockerfile": "builds",
    "context": "builds from",
    "install": "installs",
    "make": "runs the Makefile in",
    "cd": "enters",
}
"""What a command does with the path it names, for messages: "`bash x.sh` runs `x.sh`"."""


@dataclass(frozen=True)
class Reference:
    """A repository path (or the tree as a whole) that a command reads.

    `path` is relative to `base` and normalised; None for `pip install .`-style
    uses of the whole tree and for `make`; `outside` says the path leaves the
    workspace (`../x`).
    """

    kind: Kind
    path: str | None
    base: Base
    command: Command
    word: Word | None = None
    outside: bool = False

    @property
    def span(self) -> Span:
        return self.word.span if self.word is not None else self.command.span

    @property
    def written(self) -> str:
        return self.word.value if self.word is not None else " ".join(self.command.argv)


def start_directory(step: Step) -> str | None:
    """Where a `run:` step starts, relative to the workspace: its or its job's `working-directory`, or the root.

    None when that is outside the workspace (an absolute path) or an expression that is not the workspace.
    """
    directory = step.working_directory
    if directory is None and isinstance(step.owner, Job):
        directory = step.owner.defaults.working_directory or step.owner.workflow.defaults.working_directory
    if directory is None:
        return ""
    place = _path(directory, "")
    return place[1] if place is not None and place[0] == "workspace" and not place[2] else None


def references(script: Script, start: str | None) -> Iterator[Reference]:
    """The repository paths the commands of `script` read, starting in workspace folder `start` (None: unknown)."""
    cwd = start
    for statement in script.statements:
        commands = list(statement.commands())
        changes = [command for command in commands if command.name in ("cd", "pushd", "popd")]
        sequential = isinstance(statement, Command) or (
            isinstance(statement, AndOr) and all(isinstance(item, Command) for item in statement.items)
        )
        for command in commands:
            if command.name in ("cd", "pushd", "popd"):
                target = _cd_target(command, cwd)
                if target is not None:
                    yield target
                cwd = _after_cd(command, cwd) if sequential else None
                continue
            yield from _command_references(command, cwd)
        if changes and not sequential:
            cwd = None


def _cd_target(command: Command, cwd: str | None) -> Reference | None:
    arguments = [word for word in command.words[1:] if not word.value.startswith("-")]
    if command.name != "cd" or len(arguments) != 1:
        return None
    found = _reference("cd", arguments[0], command, cwd)
    return found if found is not None and found.path not in ("", None) else None


def _after_cd(command: Command, cwd: str | None) -> str | None:
    arguments = [word for word in command.words[1:] if not word.value.startswith("-")]
    if command.name != "cd" or len(arguments) != 1:
        return None
    place = _path(arguments[0].value, cwd)
    return place[1] if place is not None and place[0] == "workspace" and not place[2] else None


def _path(text: str, cwd: str | None) -> tuple[Base, str, bool] | None:
    """(base, normalised path, leaves the workspace) of a path word; None for variables, absolute paths, unknown cwd."""
    for pattern, base in ((_WORKSPACE, "workspace"), (_ACTION_PATH, "action")):
        match = pattern.match(text)
        if match is not None:
            rest = text[match.end() :]
            if _VARIABLE.search(rest) or is_expression(rest):
                return None
            return _normalised(base, "", rest)  # type: ignore[arg-type]
    if not text or _VARIABLE.search(text) or is_expression(text) or text.startswith("/") or cwd is None:
        return None
    return _normalised("workspace", cwd, text)


def _normalised(base: Base, cwd: str, text: str) -> tuple[Base, str, bool]:
    joined = posixpath.normpath(posixpath.join(cwd, text)) if text else posixpath.normpath(cwd or ".")
    outside = joined == ".." or joined.startswith("../")
    return base, "" if joined == "." else joined, outside


def _reference(kind: Kind, word: Word, command: Command, cwd: str | None) -> Reference | None:
    place = _path(word.value, cwd)
    if place is None:
        return None
    base, path, outside = place
    return Reference(kind, path, base, command, word, outside)


def _unwrapped(words: list[Word]) -> list[Word]:
    """The words of what a command runs once `sudo`, `env`, `time` and the like are looked through."""
    while words:
        program = words[0].value.rsplit("/", 1)[-1]
        if program in _WRAPPERS:
            words = words[1:]
        elif program == "sudo":
            rest = words[1:]
            while rest and rest[0].value.startswith("-"):
                rest = rest[2:] if rest[0].value in _SUDO_VALUE_OPTIONS else rest[1:]
            words = rest
        elif program == "env":
            rest = words[1:]
            while rest and (rest[0].value.startswith("-") or "=" in rest[0].value):
                rest = rest[1:]
            words = rest
        elif program == "timeout":
            rest = [word for word in words[1:] if not word.value.startswith("-")]
            words = rest[1:]
        else:
            return words
    return words


def _command_references(command: Command, cwd: str | None) -> Iterator[Reference]:
    words = _unwrapped(command.words)
    if not words or not words[0].static:
        return
    program = words[0].value
    name = program.rsplit("/", 1)[-1]
    arguments = words[1:]
    if "/" in program and not program.startswith("/"):
        found = _reference("script", words[0], command, cwd)
        if found is not None:
            yield found
        return
    if name in _SHELLS:
        yield from _first_operand("script", arguments, _SHELL_VALUE_OPTIONS, command, cwd, inline="c")
    elif _PYTHON.match(name):
        yield from _python(arguments, command, cwd)
    elif name in ("source", ".") and arguments and ("/" in arguments[0].value or "." in arguments[0].value):
        # A bare name (`source activate`) is looked up on PATH first.
        yield from _first_operand("script", arguments, set(), command, cwd)
    elif name == "git":
        yield from _git(arguments, command, cwd)
    elif name == "patch":
        yield from _patch(arguments, command, cwd)
    elif name in ("docker", "podman"):
        yield from _docker(arguments, command, cwd)
    elif name in _PIP:
        yield from _pip(arguments, command, cwd)
    elif name == "uv" and arguments[:1] and arguments[0].value == "pip":
        yield from _pip(arguments[1:], command, cwd)
    elif name in ("make", "gmake"):
        yield from _make(arguments, command, cwd)


def _first_operand(
    kind: Kind, arguments: list[Word], value_options: set[str], command: Command, cwd: str | None, inline: str = ""
) -> Iterator[Reference]:
    """The first argument that is not an option; nothing when an option in `inline` (`bash -c`) comes first.

    For shells (`inline` given), grouped flags that end in `o` take the next word (`-eo pipefail`).
    """
    index = 0
    while index < len(arguments):
        value = arguments[index].value
        if value == "--":
            index += 1
            break
        if value.startswith(("-", "+")) and value not in ("-", "+"):
            if inline and not value.startswith("--") and inline in value[1:]:
                return
            grouped = bool(inline) and not value.startswith("--") and value[-1] in "oO"
            index += 2 if value in value_options or grouped else 1
            continue
        break
    if index < len(arguments):
        found = _reference(kind, arguments[index], command, cwd)
        if found is not None:
            yield found


def _python(arguments: list[Word], command: Command, cwd: str | None) -> Iterator[Reference]:
    index = 0
    while index < len(arguments):
        value = arguments[index].value
        if value.startswith("-c"):
            return
        if value.startswith("-m"):
            module = arguments[index + 1].value if value == "-m" and index + 1 < len(arguments) else value[2:]
            if module == "pip":
                yield from _pip(arguments[index + 2 if value == "-m" else index + 1 :], command, cwd)
            return
        if value.startswith("-") and value != "-":
            index += 2 if value in _PYTHON_VALUE_OPTIONS else 1
            continue
        found = _reference("script", arguments[index], command, cwd)
        if found is not None:
            yield found
        return


def _git(arguments: list[Word], command: Command, cwd: str | None) -> Iterator[Reference]:
    index = 0
    while index < len(arguments) and arguments[index].value.startswith("-"):
        if arguments[index].value in ("-C", "--git-dir", "--work-tree"):
            return  # the command runs elsewhere
        index += 2 if arguments[index].value == "-c" else 1
    if index >= len(arguments) or arguments[index].value not in ("apply", "am"):
        return
    rest = arguments[index + 1 :]
    skip = False
    for word in rest:
        if skip:
            skip = False
            continue
        if word.value.startswith("-"):
            skip = word.value in _GIT_APPLY_VALUE_OPTIONS
            continue
        found = _reference("patch", word, command, cwd)
        if found is not None:
            yield found


def _patch(arguments: list[Word], command: Command, cwd: str | None) -> Iterator[Reference]:
    for index, word in enumerate(arguments):
        value = word.value
        if value in ("-i", "--input") and index + 1 < len(arguments):
            target: Word | None = arguments[index + 1]
        elif value.startswith("--input="):
            target = _suffix_word(word, len("--input="))
        elif value.startswith("-i") and len(value) > 2:
            target = _suffix_word(word, 2)
        else:
            continue
        found = _reference("patch", target, command, cwd) if target is not None else None
        if found is not None:
            yield found
    for redirect in command.redirects:
        if redirect.operator == "<" and redirect.target is not None:
            found = _reference("patch", redirect.target, command, cwd)
            if found is not None:
                yield found


def _docker(arguments: list[Word], command: Command, cwd: str | None) -> Iterator[Reference]:
    values = [word.value for word in arguments]
    if values[:1] == ["build"]:
        rest = arguments[1:]
    elif values[:2] in (["buildx", "build"], ["image", "build"]):
        rest = arguments[2:]
    else:
        return
    positional: list[Word] = []
    index = 0
    while index < len(rest):
        word = rest[index]
        value = word.value
        if value in ("-f", "--file") and index + 1 < len(rest):
            found = _reference("dockerfile", rest[index + 1], command, cwd)
            if found is not None:
                yield found
            index += 2
            continue
        if value.startswith("--file="):
            target = _suffix_word(word, len("--file="))
            found = _reference("dockerfile", target, command, cwd) if target is not None else None
            if found is not None:
                yield found
        elif value.startswith("-") and value != "-":
            takes_value = "=" not in value and value not in _DOCKER_FLAGS and not (len(value) > 2 and value[1] != "-")
            index += 2 if takes_value else 1
            continue
        else:
            positional.append(word)
        index += 1
    if len(positional) == 1 and "://" not in positional[0].value and positional[0].value != "-":
        found = _reference("context", positional[0], command, cwd)
        if found is not None:
            yield found


def _pip(arguments: list[Word], command: Command, cwd: str | None) -> Iterator[Reference]:
    if not arguments or arguments[0].value != "install":
        return
    rest = arguments[1:]
    index = 0
    while index < len(rest):
        word = rest[index]
        value = word.value
        if value in ("-r", "--requirement", "-c", "--constraint") and index + 1 < len(rest):
            found = _reference("requirements", rest[index + 1], command, cwd)
            if found is not None:
                yield found
            index += 2
            continue
        for prefix in ("--requirement=", "--constraint=", "-r", "-c"):
            if value.startswith(prefix) and len(value) > len(prefix):
                target = _suffix_word(word, len(prefix))
                found = _reference("requirements", target, command, cwd) if target is not None else None
                if found is not None:
                    yield found
                break
        else:
            if value in ("-e", "--editable") and index + 1 < len(rest):
                index += 1
                value, word = rest[index].value, rest[index]
            if value == "." or value.startswith(("./", ".[")):
                found = _reference("install", _suffix_word(word, 0, strip_extras=True) or word, command, cwd)
                if found is not None:
                    yield found
        index += 1


def _make(arguments: list[Word], command: Command, cwd: str | None) -> Iterator[Reference]:
    values = [word.value for word in arguments]
    elsewhere = ("-C", "--directory", "-f", "--file", "--makefile")
    if any(value.startswith(elsewhere) for value in values):
        return
    if cwd is not None:
        yield Reference("make", cwd, "workspace", command)


def _suffix_word(word: Word, skip: int, strip_extras: bool = False) -> Word | None:
    """The part of a word after an attached option (`-rreq.txt`, `--input=x`), as a word of its own."""
    value = word.value[skip:]
    if strip_extras and "[" in value:
        value = value[: value.index("[")]
    if not value:
        return None
    start = (
        word.start + (len(word.text) - len(word.value)) // 2 + skip if word.text != word.value else word.start + skip
    )
    return Word(word.locator, start, start + len(value), value, value, word.static)


@dataclass(frozen=True)
class Checkout:
    """An `actions/checkout` step: of this repository (`repository:` absent or `${{ github.repository }}`) or another,
    into `path` (relative to the workspace; "" for the workspace itself)."""

    step: Step
    this_repository: bool
    path: str | None
    """None when it is written with a variable or leaves the workspace."""


_THIS_REPOSITORY = re.compile(
    r"\$\{\{\s*(github\.repository|github\.event\.pull_request\.head\.repo\.full_name)\s*\}\}\Z"
)


def checkout(step: Step) -> Checkout | None:
    if step.uses is None or step.uses.kind != "repository" or step.uses.name.lower() != "actions/checkout":
        return None
    repository = step.with_.get("repository")
    written = repository.text.strip() if repository is not None and repository.text is not None else ""
    this = not written or _THIS_REPOSITORY.match(written) is not None
    path_entry = step.with_.get("path")
    path = path_entry.text.strip() if path_entry is not None and path_entry.text is not None else ""
    place = _path(path, "") if path else ("workspace", "", False)
    known = place is not None and place[0] == "workspace" and not place[2]
    return Checkout(step, this, place[1] if place is not None and known else None)
