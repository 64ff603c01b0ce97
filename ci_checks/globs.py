"""Repo-relative path globs, as policy files write them.

`*` matches any characters but `/`, `?` one character but `/`, `[abc]` and
`[!abc]` one character of a set, and a whole `**` segment any number of
folders (none included): `docker/Dockerfile*`, `.github/workflows/*.yml`,
`**/*.py`. A glob never reaches outside the repository: absolute paths and `..`
segments are refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


class GlobError(ValueError):
    """Why a glob is not valid; `offset` is the character it goes wrong at."""

    def __init__(self, message: str, offset: int = 0) -> None:
        super().__init__(message)
        self.offset = offset


@dataclass(frozen=True)
class PathGlob:
    text: str
    pattern: re.Pattern[str]

    def matches(self, relative: str) -> bool:
        return self.pattern.fullmatch(relative) is not None

    def __str__(self) -> str:
        return self.text


def compile_glob(text: str) -> PathGlob:
    """The glob, or GlobError saying what is wrong with it."""
    if not text:
        raise GlobError("a path glob cannot be empty")
    if text.startswith("/"):
        raise GlobError("a path glob is relative to the repository root; remove the leading '/'")
    body = text.removeprefix("./")
    skipped = len(text) - len(body)
    parts: list[str] = []
    offset = skipped
    segments = body.split("/")
    for index, segment in enumerate(segments):
        if segment == "..":
            raise GlobError("a path glob cannot leave the repository ('..')", offset)
        last = index == len(segments) - 1
        if segment == "**":
            parts.append(".*" if last else "(?:[^/]+/)*")
        else:
            if "**" in segment:
                raise GlobError("'**' must be a whole path segment, as in 'a/**/b'", offset + segment.index("**"))
            parts.append(_segment(segment, offset) + ("" if last else "/"))
        offset += len(segment) + 1
    return PathGlob(text, re.compile("".join(parts)))


def _segment(segment: str, offset: int) -> str:
    out: list[str] = []
    i = 0
    while i < len(segment):
        char = segment[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = segment.find("]", i + 2)
            if end < 0:
                raise GlobError("'[' opens a character set that is never closed", offset + i)
            members = segment[i + 1 : end]
            negate = members.startswith("!")
            members = members[1:] if negate else members
            escaped = re.escape(members).replace(r"\-", "-")
            out.append(f"[{'^/' if negate else ''}{escaped}]")
            i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)
