"""The one glob dialect of ci-checks, for everything a configuration matches by pattern.

File paths (`where.files`, `where.workflow`, `exclude`, `file:` items), `uses:`
values, step names and ids, job ids, the key segments of a `key:` PATH, Python
names and the names a `parity` rule allows are all globs of this dialect:

- `*` matches any run of characters except the separator;
- `?` matches one character except the separator;
- `[abc]`, `[a-z]` match one character of the set, `[!abc]` one not in it;
- `**` matches any run of characters, separators included; in a file path it
  must be a whole segment (`a/**/b`, `**/x.py`, `docs/**`);
- `\\` makes the next character literal: `\\*`, `\\?`, `\\[`, `\\\\`.

The separator is `/` in file paths and `uses:` values (`actions/*` matches
`actions/checkout`, not `actions/cache/save`). Names have no separator, so there
`*` matches anything (`Test*` matches `Test / unit`). Wherever a glob is written
in a policy, `{literal: TEXT}` matches TEXT exactly instead, for names that hold
`*`, `?` or `[`.

A file-path glob never reaches outside the repository: absolute paths and `..`
segments are refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_SPECIAL = frozenset("*?[\\")


class GlobError(ValueError):
    """Why a glob is not valid; `offset` is the character it goes wrong at."""

    def __init__(self, message: str, offset: int = 0) -> None:
        super().__init__(message)
        self.offset = offset


@dataclass(frozen=True)
class Glob:
    text: str
    pattern: re.Pattern[str]
    literal: str | None = None
    """The exact text matched when the glob has no special character (or was given as a literal)."""

    def matches(self, value: str | None) -> bool:
        if value is None:
            return False
        if self.literal is not None:
            return value == self.literal
        return self.pattern.fullmatch(value) is not None

    def __str__(self) -> str:
        return self.text


PathGlob = Glob
"""A glob compiled for repo-relative file paths (see `compile_glob`)."""


_WILDCARD = re.compile(r"[*?\[]")


def has_wildcard(text: str) -> bool:
    """Whether `text` holds a glob wildcard (`*`, `?` or `[`): the one test of what is a glob, so that a path
    called a glob always has a segment with a wildcard (Place.literal_folder looks for it)."""
    return _WILDCARD.search(text) is not None


def literal(text: str) -> Glob:
    """A pattern that matches `text` exactly, whatever characters it holds."""
    return Glob(text, re.compile(re.escape(text)), text)


def compile_name_glob(text: str) -> Glob:
    """A glob over names (step names and ids, job ids, keys, Python names): no separator."""
    return _compile(text, separator=None)


def compile_ref_glob(text: str) -> Glob:
    """A glob over `uses:` values, where `/` separates owner, repository and path."""
    return _compile(text, separator="/")


def compile_glob(text: str) -> Glob:
    """A glob over repo-relative file paths, or GlobError saying what is wrong with it."""
    if not text:
        raise GlobError("a path glob cannot be empty")
    if text.startswith("/"):
        raise GlobError("a path glob is relative to the repository root; remove the leading '/'")
    body = text.removeprefix("./")
    skipped = len(text) - len(body)
    offset = skipped
    for segment in body.split("/"):
        if segment == "..":
            raise GlobError("a path glob cannot leave the repository ('..')", offset)
        if "**" in segment and segment != "**":
            raise GlobError("'**' must be a whole path segment, as in 'a/**/b'", offset + segment.index("**"))
        offset += len(segment) + 1
    compiled = _compile(body, separator="/", offset=skipped)
    return Glob(text, compiled.pattern, compiled.literal)


def matches_any(globs: Iterable[Glob], value: str | None) -> bool:
    return any(glob.matches(value) for glob in globs)


def _compile(text: str, separator: str | None, offset: int = 0) -> Glob:
    if not any(char in _SPECIAL for char in text):
        return Glob(text, re.compile(re.escape(text)), text)
    one = "." if separator is None else f"[^{re.escape(separator)}]"
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\":
            if i + 1 >= len(text):
                raise GlobError("'\\' at the end escapes nothing; write '\\\\' for a backslash", offset + i)
            out.append(re.escape(text[i + 1]))
            i += 2
            continue
        if char == "*":
            if text.startswith("**", i):
                at_start = i == 0 or text[i - 1] == separator
                at_end = i + 2 == len(text)
                if separator == "/" and at_start and not at_end and text[i + 2] == "/":
                    out.append(r"(?:[^/]+/)*")  # `a/**/b` also matches `a/b`
                    i += 3
                    continue
                out.append(".*")
                i += 2
                continue
            out.append(f"{one}*")
        elif char == "?":
            out.append(one)
        elif char == "[":
            end = text.find("]", i + 2)
            if end < 0:
                raise GlobError("'[' opens a character set that is never closed", offset + i)
            members = text[i + 1 : end]
            negate = members.startswith("!")
            members = members[1:] if negate else members
            escaped = re.escape(members).replace(r"\-", "-")
            try:
                re.compile(f"[{escaped}]")
            except re.error:  # a range that runs backwards, `[z-a]`
                raise GlobError(f"'[{text[i + 1 : end]}]' holds a range that runs backwards", offset + i) from None
            excluded = re.escape(separator) if negate and separator else ""
            out.append(f"[{'^' + excluded if negate else ''}{escaped}]")
            i = end
        else:
            out.append(re.escape(char))
        i += 1
    return Glob(text, re.compile("".join(out), re.DOTALL))


def excluded_by(globs: Iterable[Glob], relative: str) -> bool:
    """Whether a file path or one of its folders matches: `tests/fixtures/*` excludes everything below."""
    parts = relative.split("/")
    candidates = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    return any(glob.matches(candidate) for glob in globs for candidate in candidates)
