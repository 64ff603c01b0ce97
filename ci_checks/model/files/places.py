"""Places on a runner's or an image's file system, and how a word of a script names one.

A `Place` is a path below a base: the job's workspace (`$GITHUB_WORKSPACE`,
`${{ github.workspace }}`), a composite action's own folder
(`$GITHUB_ACTION_PATH`), the file system's root (`/opt/x`), the home folder
(`~`, `$HOME`), the runner's temporary folder (`$RUNNER_TEMP`), a Docker build
context, another stage of a Dockerfile, or the file system of a container a
job runs commands in with `docker exec` (its absolute paths are the
container's, not the runner's). `Scope.place` reads a word into a place: it
substitutes the variables it knows (the `env:` values of the workflow, job
and step, the script's own assignments), follows the working directory, and
gives None for whatever it cannot know (a variable it has no value for, a
command substitution, an expression). Nothing is guessed.
"""

from __future__ import annotations

import enum
import posixpath
import re
from dataclasses import dataclass, field
from typing import Literal

from ci_checks.core import globs

WORKSPACE = "workspace"
ACTION = "action"
ROOT = "root"
HOME = "home"
TEMP = "temp"
CONTEXT = "context"
STAGE = "stage:"
"""The prefix of a Dockerfile stage's base: `stage:build` is the root of the stage named `build`."""
CONTAINER = "container:"
"""The prefix of the root of a container's file system that `docker exec NAME` runs commands in: `container:NAME`
(`container:?N` for the Nth container whose name cannot be known, a place of its own)."""

_BASE_TOKENS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(rf"(?:{pattern})(?=/|\Z)"), base)
    for pattern, base in (
        (r"\$GITHUB_WORKSPACE|\$\{GITHUB_WORKSPACE\}|\$\{\{\s*github\.workspace\s*\}\}", WORKSPACE),
        (r"\$GITHUB_ACTION_PATH|\$\{GITHUB_ACTION_PATH\}|\$\{\{\s*github\.action_path\s*\}\}", ACTION),
        (r"\$RUNNER_TEMP|\$\{RUNNER_TEMP\}|\$\{\{\s*runner\.temp\s*\}\}", TEMP),
        (r"\$HOME|\$\{HOME\}|~", HOME),
    )
)
_WRITTEN_BASE = {WORKSPACE: "$GITHUB_WORKSPACE", ACTION: "$GITHUB_ACTION_PATH", TEMP: "$RUNNER_TEMP", HOME: "$HOME"}
_VARIABLE = re.compile(r"\$(?:\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)\}|(?P<plain>[A-Za-z_][A-Za-z0-9_]*))")
_ENV_EXPRESSION = re.compile(r"\$\{\{\s*env\.(?P<name>[A-Za-z_][A-Za-z0-9_-]*)\s*\}\}")
_CWD = re.compile(r"\$PWD(?![A-Za-z0-9_])|\$\{PWD\}|\$\(pwd\)|`pwd`")
_UNKNOWN = re.compile(r"[$`]|\$\{\{|\{[^}]*,")
_MAX_SUBSTITUTIONS = 8
_MAX_EXPANDED = 4096
"""The longest text a word expands to: `a=$a$a` over and over makes no path that long."""
MAX_PATH = 4096
"""The longest path a place is followed to (Linux's PATH_MAX): no command opens a longer one."""
MAX_DEPTH = 64
"""The most folders deep a place is followed: a chain of `cd a/b` thousands long makes the working directory unknown
past this depth, so that each read and write looks at a bounded number of folders holding it."""


@dataclass(frozen=True, slots=True)
class Place:
    """A path below `base`, normalised; "" is the base itself, and a path starting with `../` leaves it.

    `glob` says the path holds `*`, `?` or `[`: it names every path that matches.
    """

    base: str
    path: str = ""
    glob: bool = False

    @property
    def outside(self) -> bool:
        return self.path == ".." or self.path.startswith("../")

    def joined(self, relative: str) -> Place:
        path = _normalised(self.base, posixpath.join(self.path, relative))
        return Place(self.base, path, self.glob or globs.has_wildcard(relative))

    def within(self, folder: Place) -> str | None:
        """This place's path relative to `folder` ("" for the folder itself); None when it is not inside it."""
        if folder.base != self.base:
            return None
        if not folder.path:
            return None if self.outside else self.path
        if self.path == folder.path:
            return ""
        prefix = folder.path + "/"
        return self.path[len(prefix) :] if self.path.startswith(prefix) else None

    def literal_folder(self) -> Place:
        """For a glob, the folder its first wildcard segment is in; the place itself otherwise."""
        if not self.glob:
            return self
        segments = self.path.split("/")
        literal = next(index for index, segment in enumerate(segments) if globs.has_wildcard(segment))
        return Place(self.base, "/".join(segments[:literal]))

    def __str__(self) -> str:
        if self.base == ROOT:
            return "/" + self.path
        if self.base in (WORKSPACE, CONTEXT):
            return self.path or "."
        head = _WRITTEN_BASE.get(self.base, self.base)
        return f"{head}/{self.path}" if self.path else head


def is_root(base: str) -> bool:
    """Whether a base is the root of a file system: the runner's or an image's, or a container's."""
    return base == ROOT or base.startswith(CONTAINER)


def _normalised(base: str, path: str) -> str:
    joined = posixpath.normpath(path) if path else "."
    if is_root(base) and joined.startswith(".."):
        joined = posixpath.normpath("/" + joined).lstrip("/") or "."  # `/..` is `/`
    return "" if joined == "." else joined


def written(place: Place) -> str:
    """The place as a shell word that reads back as the same place (`$GITHUB_WORKSPACE/x`, `/opt/x`)."""
    if place.base == ROOT:
        return "/" + place.path
    head = _WRITTEN_BASE.get(place.base)
    if head is None:
        return "$" + place.base.replace(":", "_").upper()  # a base no script can name: reads back as unknown
    return f"{head}/{place.path}" if place.path else head


class _Folder(enum.Enum):
    OWN = "the scope's own working directory"


OWN = _Folder.OWN
"""`cwd` of `Scope.place` and `Scope.where` when a word is read where the scope is: None there means a folder that
cannot be known (`git -C $X clone ...`), where a relative path names no place."""


@dataclass
class Scope:
    """What a word is read against: the working directory (None: unknown), the variables known there, and the base
    of absolute paths (`root`: the runner's or image's file system, or a container's).

    A variable mapped to None is known to be unknown (assigned from something that cannot be read), which hides
    a value of the same name from an outer scope. In a container, the runner's folders (`$GITHUB_WORKSPACE`,
    `$HOME`, `$RUNNER_TEMP`) name no known place.
    """

    cwd: Place | None
    variables: dict[str, str | None] = field(default_factory=dict)
    root: str = ROOT

    def copy(self) -> Scope:
        return Scope(self.cwd, dict(self.variables), self.root)

    def _value(self, match: re.Match[str]) -> str:
        name = match.group(match.lastgroup or 0)
        known = self.variables.get(name)
        return match.group(0) if known is None else known

    def place(self, text: str, cwd: Place | Literal[_Folder.OWN] | None = OWN) -> Place | None:
        """The place a word names, relative to `cwd` (by default the scope's own; None: a folder that cannot be
        known); None when it cannot be known."""
        expanded = self.expand(text)
        if expanded is None:
            return None
        return place_of(expanded, self.cwd if cwd is OWN else cwd, self.root)

    def where(self, text: str, cwd: Place | Literal[_Folder.OWN] | None = OWN) -> Place | None:
        """Where a command that writes to the place a word names may have written: that place, or when part of it
        cannot be known, the deepest folder that can (`/tmp/${ARCHIVE}` is somewhere in `/tmp`); None when no
        folder of it can be known."""
        found = self.place(text, cwd)
        if found is not None:
            return found
        expanded = self.expand(text)
        if expanded is None:
            return None
        base = next((m.end() for pattern, _ in _BASE_TOKENS if (m := pattern.match(expanded)) is not None), 0)
        unknown = _UNKNOWN.search(expanded, base)
        if unknown is None or "/" not in expanded[base : unknown.start()]:
            return None
        folder = self.place(expanded[: unknown.start()].rsplit("/", 1)[0] or "/", cwd)
        return folder if folder is not None and (folder.path or not is_root(folder.base)) else None

    def expand(self, text: str) -> str | None:
        """The text with the variables this scope knows substituted; None when one it does not know remains
        in a part that is not a base (`$GITHUB_WORKSPACE`, `$HOME` and the like stay for `place_of`)."""
        cwd = self.cwd
        if cwd is not None and _CWD.search(text):
            here = "/" + cwd.path if cwd.base == self.root else written(cwd)  # a container's folder, as it names it
            text = _CWD.sub(lambda _: here, text)
        for _ in range(_MAX_SUBSTITUTIONS):
            substituted = self._substituted(self._substituted(text, _VARIABLE), _ENV_EXPRESSION)
            if substituted is None:
                return None  # `a=$a$a` over and over: no path is that long
            if substituted == text:
                break
            text = substituted
        return text

    def _substituted(self, text: str | None, pattern: re.Pattern[str]) -> str | None:
        """The text with the variables `pattern` finds substituted; None as soon as it grows past `_MAX_EXPANDED`
        (a word of a thousand `$A` is not built to its end)."""
        if text is None:
            return None
        pieces: list[str] = []
        length = 0
        cursor = 0
        for match in pattern.finditer(text):
            value = self._value(match)
            length += match.start() - cursor + len(value)
            if length > _MAX_EXPANDED:
                return None
            pieces += (text[cursor : match.start()], value)
            cursor = match.end()
        if not pieces:
            return text  # nothing to substitute: a long word of no variable is kept as written
        pieces.append(text[cursor:])
        return None if length + len(text) - cursor > _MAX_EXPANDED else "".join(pieces)


def place_of(text: str, cwd: Place | None, root: str = ROOT) -> Place | None:
    """The place an expanded word names, its absolute paths below `root`; None for what cannot be known: a
    variable or expression left in it, a relative path where the working directory is unknown, an empty word, a
    URL, a runner's folder named in a container."""
    if not text or "://" in text:
        return None
    base: str | None = None
    rest = text
    for pattern, name in _BASE_TOKENS:
        match = pattern.match(text)
        if match is not None:
            if root != ROOT:
                return None  # the runner's folder, or the container's own home: neither is known there
            base, rest = name, text[match.end() :].lstrip("/")
            break
    if _UNKNOWN.search(rest) or (base is None and rest.startswith("~")):
        return None  # a variable left, or `~user`
    glob = globs.has_wildcard(rest)
    if base is None:
        if rest.startswith("/"):
            base, rest = root, rest.lstrip("/")
        elif cwd is None:
            return None
        else:
            base, rest = cwd.base, posixpath.join(cwd.path, rest)
    path = _normalised(base, rest)
    if len(path) > MAX_PATH or path.count("/") >= MAX_DEPTH:
        return None  # deeper than any file a command opens (`cd a/b` thousands of times)
    return Place(base, path, glob)
