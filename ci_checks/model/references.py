"""What a command reads: the files its scripts run or apply, the trees it installs, the folders it enters.

A command names a file in a few well-known ways: `bash x.sh`, `python
tools/y.py`, `./run.sh`, `source env.sh`, `git apply fix.patch`, `patch -p1 <
fix.patch`, `pip install -r requirements.txt`, `docker build -f
docker/Dockerfile .`, it uses a tree as a whole with `pip install -e .`,
`python setup.py develop`, `make`, `make install` or `cmake --install build`,
and it mounts a host path with `docker run -v ./data:/data` or `docker run
--mount type=bind,source=...`.
`command_references` finds those in one command, each with the word that names
the path and the place it names, read against a `Scope` (the working directory
and the variables known where the command runs).

A path that cannot be known (a variable without a value, a command
substitution) is skipped, not guessed; `-` and a here-document are standard
input, not a file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from ci_checks.core.diagnostics import Span
from ci_checks.model.files.places import Place, Scope
from ci_checks.syntax.shell import Command, Word

Kind = Literal[
    "script", "patch", "requirements", "dockerfile", "context", "install", "make", "cd", "volume", "bind-mount"
]
MountKind = Literal["volume", "bind-mount"]

SHELLS = {"bash", "sh", "zsh", "dash", "ksh"}
SHELL_VALUE_OPTIONS = {"-o", "-O", "+o", "+O", "--rcfile", "--init-file"}
_PYTHON = re.compile(r"python(\d+(\.\d+)?)?\Z")
_PYTHON_VALUE_OPTIONS = {"-W", "-X", "--check-hash-based-pycs"}
_WRAPPERS = {"time", "nohup", "exec", "command", "builtin"}
_SUDO_VALUE_OPTIONS = {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"}
_DOCKER_FLAGS = {"--no-cache", "--pull", "--push", "--load", "--rm", "--force-rm", "-q", "--quiet", "--squash",
                 "--compress", "--check", "--debug"}  # fmt: skip
_DOCKER_RUN_FLAGS = {"-d", "--detach", "-i", "--interactive", "-t", "--tty", "-P", "--publish-all", "-q", "--quiet",
                     "--rm", "--privileged", "--init", "--read-only", "--no-healthcheck", "--oom-kill-disable",
                     "--sig-proxy", "--disable-content-trust", "--use-api-socket", "--help"}  # fmt: skip
"""The options of `docker run` and `docker create` that take no value; each other one takes the next word, unless
given with `=`."""
_GIT_APPLY_VALUE_OPTIONS = {"--exclude", "--include", "--directory"}
_PIP = {"pip", "pip3"}
_PIP_VALUE_OPTIONS = {"-t", "--target", "--prefix", "--root", "-i", "--index-url", "--extra-index-url", "-f",
                      "--find-links", "--config-settings", "-C", "--platform", "--python-version", "--src",
                      "--cache-dir", "--log", "--trusted-host", "--progress-bar", "--upgrade-strategy", "--no-binary",
                      "--only-binary", "--implementation", "--abi", "--global-option", "--exists-action", "--proxy",
                      "--timeout", "--retries", "--report"}  # fmt: skip
_ARCHIVES = (".whl", ".tar.gz", ".tgz", ".zip", ".tar.bz2", ".egg")
_SETUP_INSTALLS = {"install", "develop"}


VERBS: dict[str, str] = {
    "script": "runs",
    "patch": "applies",
    "requirements": "installs from",
    "dockerfile": "builds",
    "context": "builds from",
    "install": "installs",
    "make": "runs the Makefile in",
    "cd": "enters",
    "volume": "mounts",
    "bind-mount": "mounts",
}
"""What a command does with the path it names, for messages: "`bash x.sh` runs `x.sh`"."""


@dataclass(frozen=True)
class Reference:
    """A place a command reads: a file, or a tree as a whole (`install`, `make`, `cd`, a build `context`).

    `word` is the word that names it; None for what a command uses without naming it (`make` uses the working
    directory).
    """

    kind: Kind
    place: Place
    command: Command
    word: Word | None = None

    @property
    def span(self) -> Span:
        return self.word.span if self.word is not None else self.command.span

    @property
    def written(self) -> str:
        return self.word.value if self.word is not None else " ".join(self.command.argv)


def unwrapped(words: list[Word]) -> list[Word]:
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


def command_references(command: Command, scope: Scope) -> Iterator[Reference]:
    """The places `command` reads, its words read in `scope` (`cd` excluded: the walker of the script follows it)."""
    words = unwrapped(command.words)
    if not words or not words[0].static:
        return
    reader = _Reader(command, scope)
    program = words[0].value
    name = program.rsplit("/", 1)[-1]
    arguments = words[1:]
    if "/" in program and not program.startswith("/"):
        yield from reader.named("script", words[0])
        return
    if name in SHELLS:
        yield from reader.first_operand("script", arguments, SHELL_VALUE_OPTIONS, inline="cs")
    elif _PYTHON.match(name):
        yield from reader.python(arguments)
    elif name in ("source", ".") and arguments and ("/" in arguments[0].value or "." in arguments[0].value):
        # A bare name (`source activate`) is looked up on PATH first.
        yield from reader.first_operand("script", arguments, set())
    elif name == "git":
        yield from reader.git(arguments)
    elif name == "patch":
        yield from reader.patch(arguments)
    elif name in ("docker", "podman"):
        yield from reader.docker(arguments, mounts=name == "docker")
    elif name in _PIP:
        yield from reader.pip(arguments)
    elif name == "uv" and arguments[:1] and arguments[0].value == "pip":
        yield from reader.pip(arguments[1:])
    elif name in ("make", "gmake"):
        yield from reader.make(arguments)
    elif name == "cmake":
        yield from reader.cmake(arguments)


class _Reader:
    """The readers of one command, each naming places in the command's scope."""

    def __init__(self, command: Command, scope: Scope, cwd: Place | None = None) -> None:
        self.command = command
        self.scope = scope
        self.cwd = cwd if cwd is not None else scope.cwd

    def named(self, kind: Kind, word: Word | None) -> Iterator[Reference]:
        if word is None or word.value == "-":
            return  # standard input
        place = self.scope.place(word.value, self.cwd)
        if place is not None:
            yield Reference(kind, place, self.command, word)

    def first_operand(
        self, kind: Kind, arguments: list[Word], value_options: set[str], inline: str = ""
    ) -> Iterator[Reference]:
        """The first argument that is not an option; nothing when an option in `inline` (`bash -c`, `bash -s`)
        comes first.

        For shells (`inline` given), grouped flags that end in `o` take the next word (`-eo pipefail`).
        """
        index = 0
        while index < len(arguments):
            value = arguments[index].value
            if value == "--":
                index += 1
                break
            if value.startswith(("-", "+")) and value not in ("-", "+"):
                if inline and not value.startswith("--") and any(flag in value[1:] for flag in inline):
                    return
                grouped = bool(inline) and not value.startswith("--") and value[-1] in "oO"
                index += 2 if value in value_options or grouped else 1
                continue
            break
        if index < len(arguments):
            yield from self.named(kind, arguments[index])

    def python(self, arguments: list[Word]) -> Iterator[Reference]:
        index = 0
        while index < len(arguments):
            value = arguments[index].value
            if value.startswith("-c"):
                return
            if value.startswith("-m"):
                module = arguments[index + 1].value if value == "-m" and index + 1 < len(arguments) else value[2:]
                if module == "pip":
                    yield from self.pip(arguments[index + 2 if value == "-m" else index + 1 :])
                return
            if value.startswith("-") and value != "-":
                index += 2 if value in _PYTHON_VALUE_OPTIONS else 1
                continue
            yield from self.named("script", arguments[index])
            rest = [word.value for word in arguments[index + 1 :]]
            if arguments[index].value.rsplit("/", 1)[-1] == "setup.py" and _SETUP_INSTALLS & set(rest):
                yield from self.named("install", _folder_word(arguments[index]))
            return

    def git(self, arguments: list[Word]) -> Iterator[Reference]:
        index = 0
        cwd = self.cwd
        while index < len(arguments) and arguments[index].value.startswith("-"):
            value = arguments[index].value
            if value in ("--git-dir", "--work-tree") or value.startswith(("--git-dir=", "--work-tree=")):
                return  # the repository is named apart from the folder: what a path is relative to is not known
            if value == "-C" and index + 1 < len(arguments):
                cwd = self.scope.place(arguments[index + 1].value, cwd)
                if cwd is None:
                    return
            index += 2 if value in ("-c", "-C") else 1
        if index >= len(arguments) or arguments[index].value not in ("apply", "am"):
            return
        reader = _Reader(self.command, self.scope, cwd)
        skip = False
        for word in arguments[index + 1 :]:
            if skip:
                skip = False
                continue
            if word.value.startswith("-"):
                skip = word.value in _GIT_APPLY_VALUE_OPTIONS
                continue
            yield from reader.named("patch", word)

    def patch(self, arguments: list[Word]) -> Iterator[Reference]:
        for index, word in enumerate(arguments):
            value = word.value
            if value in ("-i", "--input") and index + 1 < len(arguments):
                yield from self.named("patch", arguments[index + 1])
            elif value.startswith("--input="):
                yield from self.named("patch", suffix_word(word, len("--input=")))
            elif value.startswith("-i") and len(value) > 2:
                yield from self.named("patch", suffix_word(word, 2))
        for redirect in self.command.redirects:
            if redirect.operator == "<" and redirect.target is not None:
                yield from self.named("patch", redirect.target)

    def docker(self, arguments: list[Word], mounts: bool) -> Iterator[Reference]:
        values = [word.value for word in arguments]
        if values[:1] in (["run"], ["create"]) and mounts:
            for mount in docker_run_mounts(arguments[1:]):
                if mount.word.value.startswith((".", "/", "$", "~")):  # else the name of a volume, no host path
                    yield from self.named(mount.kind, mount.word)
            return
        build = docker_build(arguments)
        if build is None:
            return
        for word in build.files:
            yield from self.named("dockerfile", word)
        if len(build.positional) == 1 and "://" not in build.positional[0].value:
            yield from self.named("context", build.positional[0])

    def pip(self, arguments: list[Word]) -> Iterator[Reference]:
        if not arguments or arguments[0].value != "install":
            return
        rest = arguments[1:]
        index = 0
        while index < len(rest):
            word = rest[index]
            value = word.value
            if value in ("-r", "--requirement", "-c", "--constraint") and index + 1 < len(rest):
                yield from self.named("requirements", rest[index + 1])
                index += 2
                continue
            attached = next(
                (p for p in ("--requirement=", "--constraint=", "-r", "-c") if value.startswith(p) and value != p), None
            )
            if attached is not None:
                yield from self.named("requirements", suffix_word(word, len(attached)))
            elif value in _PIP_VALUE_OPTIONS:
                index += 1
            elif value in ("-e", "--editable") and index + 1 < len(rest):
                index += 1
                yield from self._tree(rest[index], editable=True)
            elif value.startswith("--editable="):
                yield from self._tree(suffix_word(word, len("--editable=")), editable=True)
            elif not value.startswith("-"):
                yield from self._tree(word, editable=False)
            index += 1

    def _tree(self, word: Word | None, editable: bool) -> Iterator[Reference]:
        """`pip install [-e] DIR`: a local tree (`.`, `./x`, `/opt/x`, any non-URL after `-e`), not a package name."""
        if word is None:
            return
        value = word.value
        if "://" in value or value.startswith(("git+", "-")) or value.lower().endswith(_ARCHIVES):
            return
        if editable or value in (".", "..") or value.startswith(("./", "../", "/", ".[", "$", "~")) or "/" in value:
            target = suffix_word(word, 0, strip_extras=True)
            if target is not None and "@" not in target.value:
                yield from self.named("install", target)

    def make(self, arguments: list[Word]) -> Iterator[Reference]:
        values = [word.value for word in arguments]
        elsewhere = ("-C", "--directory", "-f", "--file", "--makefile")
        if any(value.startswith(elsewhere) for value in values) or self.cwd is None:
            return
        yield Reference("make", self.cwd, self.command)
        if "install" in values:
            yield Reference("install", self.cwd, self.command)

    def cmake(self, arguments: list[Word]) -> Iterator[Reference]:
        for index, word in enumerate(arguments[:-1]):
            if word.value == "--install":
                yield from self.named("install", arguments[index + 1])


@dataclass(eq=False)
class BuildWords:
    """The words of a `docker build` command line: the Dockerfiles it names (`-f`), the `--build-arg`s it passes
    (`NAME=value` or `NAME`), its positional words (the context, when there is one), and whether it reads more
    arguments from a file (podman's `--build-arg-file`)."""

    files: list[Word | None]
    arguments: list[Word | None]
    positional: list[Word]
    argument_file: bool = False


def docker_build(arguments: list[Word]) -> BuildWords | None:
    """The words of `docker build`, `docker buildx build` or `docker image build`, given the words after `docker`
    (or `podman`); None for another command."""
    values = [word.value for word in arguments]
    if values[:1] == ["build"]:
        rest = arguments[1:]
    elif values[:2] in (["buildx", "build"], ["image", "build"]):
        rest = arguments[2:]
    else:
        return None
    build = BuildWords([], [], [])
    index = 0
    while index < len(rest):
        word = rest[index]
        value = word.value
        if value in ("-f", "--file", "--build-arg") and index + 1 < len(rest):
            (build.arguments if value == "--build-arg" else build.files).append(rest[index + 1])
            index += 2
            continue
        if value.startswith("--file="):
            build.files.append(suffix_word(word, len("--file=")))
        elif value.startswith("--build-arg="):
            build.arguments.append(suffix_word(word, len("--build-arg=")))
        elif value.startswith("-f") and len(value) > 2:  # `-fDockerfile`, `-f=Dockerfile`, as docker reads them
            build.files.append(suffix_word(word, 3 if value[2] == "=" else 2))
        elif value.startswith("-") and value != "-":
            build.argument_file = build.argument_file or value.startswith("--build-arg-file")
            takes_value = "=" not in value and value not in _DOCKER_FLAGS and not (len(value) > 2 and value[1] != "-")
            index += 2 if takes_value else 1
            continue
        else:
            build.positional.append(word)
        index += 1
    return build


def suffix_word(word: Word, skip: int, strip_extras: bool = False) -> Word | None:
    """The part of a word after an attached option (`-rreq.txt`, `--input=x`), as a word of its own."""
    value = word.value[skip:]
    if strip_extras and "[" in value:
        value = value[: value.index("[")]
    return part_word(word, skip, len(value))


def part_word(word: Word, skip: int, length: int) -> Word | None:
    """The `length` characters of a word's value from `skip` (`./data` of `-v ./data:/data`), as a word of its own;
    None when empty."""
    value = word.value[skip : skip + length]
    if not value:
        return None
    start = (
        word.start + (len(word.text) - len(word.value)) // 2 + skip if word.text != word.value else word.start + skip
    )
    return Word(word.locator, start, start + len(value), value, value, word.static)


@dataclass(frozen=True)
class DockerMount:
    """A host path `docker run` mounts: `volume` for `-v`/`--volume HOST:CONTAINER[:OPTIONS]` (docker makes a
    missing host path an empty folder), `bind-mount` for `--mount type=bind,source=HOST` (a missing one fails the
    run); `word` is the host path, `read_only` says the container may only read it."""

    kind: MountKind
    word: Word
    read_only: bool


def docker_run_mounts(arguments: list[Word]) -> list[DockerMount]:
    """The host paths `docker run` or `docker create` mounts (its `arguments` after the subcommand), in order. The
    words after the image are the container's command; without an image docker runs nothing."""
    found: list[DockerMount] = []
    words = iter(arguments)
    for word in words:
        value = word.value
        if not value.startswith("-"):  # the image
            return found
        if value.startswith(("--volume=", "--mount=")):
            found.extend(_mount_source(value.partition("=")[0], word, value.index("=") + 1))
        elif "=" not in value and not _docker_flags(value):
            following = next(words, None)  # the option's value
            if following is not None and value in ("-v", "--volume", "--mount"):
                found.extend(_mount_source(value, following, 0))
    return []


def _docker_flags(value: str) -> bool:
    """Whether an option of `docker run` takes no value: a flag, or a bundle of short flags (`-dit`)."""
    return value in _DOCKER_RUN_FLAGS or all(f"-{letter}" in _DOCKER_RUN_FLAGS for letter in value[1:])


def _mount_source(option: str, word: Word, skip: int) -> Iterator[DockerMount]:
    """The host path of one volume (`HOST:CONTAINER[:OPTIONS]`) or `--mount` (`type=bind,source=HOST,...`) value."""
    value = word.value[skip:]
    if option != "--mount":
        host_path, _, rest = value.partition(":")
        host = part_word(word, skip, len(host_path))
        if host is not None:
            yield DockerMount("volume", host, "ro" in rest.partition(":")[2].split(","))
        return
    fields: dict[str, tuple[int, str]] = {}
    offset = skip
    for item in value.split(","):
        key, _, field_value = item.partition("=")
        fields[key.strip().lower()] = (offset + len(key) + 1, field_value)
        offset += len(item) + 1
    kind = fields.get("type", (0, "volume"))[1]  # `--mount` mounts a volume unless told otherwise
    source = fields.get("source") or fields.get("src")
    if kind == "bind" and source is not None and '"' not in source[1] and "'" not in source[1]:
        found = part_word(word, source[0], len(source[1]))
        if found is not None:
            yield DockerMount("bind-mount", found, "readonly" in fields or "ro" in fields)


def _folder_word(word: Word) -> Word:
    """`setup.py`'s folder, as a word over `setup.py` (`python x/setup.py develop` installs `x`)."""
    folder = word.value.rsplit("/", 1)[0] if "/" in word.value else "."
    return Word(word.locator, word.start, word.end, word.text, folder or "/", word.static)
