"""A `.patch` or `.diff` file that nothing in the repository refers to.

## What it does
Lists the repository's `*.patch` and `*.diff` files and looks for a mention
of each in the files that could apply it: workflows and composite actions,
Dockerfiles, shell scripts, Python, Makefiles, CMake files and quilt `series`
files. A mention counts when it names the patch by a path that ends the
same way as the patch's own (`megatron.patch` for any patch of that name,
`sglv0.5.10/megatron.patch`, `$GITHUB_WORKSPACE/docker/amd_patch/...`), by a
glob that matches it (`patches/*.patch`), or when a Dockerfile copies the
folder that holds it (not the whole context). A patch mentioned nowhere is reported at its first
line.

Only a checkout is judged (a root with `.git`, or inside a folder with
one): in a copy of the workflows alone, what applies a patch may simply be
missing.

## Why it matters
A patch that nothing applies is either dead, or a copy that someone will
update in vain while the build applies another one. After a fix removes the
patch that stopped applying, a duplicate left behind in another folder keeps
the confusion alive.

## Example
```
docker/amd_patch/latest/megatron.patch       # applied by Dockerfile.rocm
docker/amd_patch/sglv0.5.10/megatron.patch   # a copy nothing applies
```

## Fix
Delete the patch, or apply it where it is meant to be applied.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from pathlib import PurePosixPath

from ci_checks import globs
from ci_checks.context import RepositoryContext
from ci_checks.diagnostics import Diagnostic, Severity, Span
from ci_checks.repository import FileKind, Repository, kind_of
from ci_checks.rule import Rule

_PATCH_SUFFIXES = (".patch", ".diff")
_MENTIONING_KINDS = {FileKind.WORKFLOW, FileKind.ACTION, FileKind.DOCKERFILE, FileKind.SHELL, FileKind.PYTHON}
_MENTIONING_NAMES = {"makefile", "gnumakefile", "cmakelists.txt", "series"}
_MENTIONING_SUFFIXES = (".mk", ".cmake")
_MENTION = re.compile(r"[\w./*?${}@+-]*\.(?:patch|diff)(?![\w-])|[\w./${}@+-]+/\*")
_PLACEHOLDER = re.compile(r"\$|\{|\}|~|@")


def check_repository(context: RepositoryContext) -> Iterator[Diagnostic]:
    if not context.whole_checkout:
        return
    repository = context.repository
    patches = [
        path
        for path in repository.files
        if path.endswith(_PATCH_SUFFIXES) and context.covers(path) and not repository.excluded(path)
    ]
    if not patches:
        return
    unreferenced = {path: path.split("/") for path in patches}
    copied_folders: list[str] = []
    for path in repository.files:
        if not unreferenced:
            return
        if not _may_mention(path):
            continue
        text = repository.read(path).text
        if not text:
            continue
        if kind_of(path) is FileKind.DOCKERFILE:
            copied_folders.extend(_copied_folders(repository, context, path))
        for mention in _MENTION.finditer(text):
            parts = _parts(mention.group())
            if parts:
                for patch in [p for p, patch_parts in unreferenced.items() if _names(parts, patch_parts)]:
                    del unreferenced[patch]
    for patch in sorted(unreferenced):
        if any(patch.startswith(folder + "/") for folder in copied_folders):
            continue
        context.load(patch)
        message = (
            f"patch `{patch}` is applied by nothing: no workflow, action, Dockerfile, script, Python, "
            "Makefile or CMake file names it"
        )
        yield RULE.diagnostic(Span.point(patch), message)


def _may_mention(path: str) -> bool:
    name = PurePosixPath(path).name.lower()
    if name in _MENTIONING_NAMES or name.endswith(_MENTIONING_SUFFIXES):
        return True
    return kind_of(path) in _MENTIONING_KINDS


def _parts(mention: str) -> list[str]:
    """The path segments of a mention that can be compared: after the last variable, `..`, `~` or leading `/`."""
    segments = [segment for segment in mention.split("/") if segment not in ("", ".")]
    kept: list[str] = []
    for segment in segments:
        if segment == ".." or _PLACEHOLDER.search(segment):
            kept = []
        else:
            kept.append(segment)
    return kept


def _names(mention: list[str], patch: list[str]) -> bool:
    """Whether a mention's segments and a patch's path end the same way (the shorter one ends the longer one)."""
    if any(char in segment for segment in mention for char in "*?["):
        if len(mention) > len(patch):
            return False
        try:
            pattern = globs.compile_glob("/".join(mention))
        except globs.GlobError:
            return False
        return pattern.matches("/".join(patch[-len(mention) :]))
    shorter = min(len(mention), len(patch))
    return mention[-shorter:] == patch[-shorter:]


def _copied_folders(repository: Repository, context: RepositoryContext, path: str) -> Iterator[str]:
    """Folders a Dockerfile copies whole (`COPY docker/patches /tmp/patches`), relative to the root or its folder."""
    parsed = context.load(path).dockerfile
    if parsed is None:
        return
    folder = posixpath.dirname(path)
    for command in parsed.commands():
        words = command.words
        if not words or words[0].value not in ("COPY", "ADD"):
            continue
        for word in words[1:-1]:
            if word.value.startswith("--") or _PLACEHOLDER.search(word.value):
                continue
            for base in ("", folder):
                candidate = posixpath.normpath(posixpath.join(base, word.value))
                target = repository.resolve(candidate)
                if target is not None and target.is_dir() and candidate != ".":
                    yield candidate  # the whole context (`COPY . /app`) names no patch in particular


RULE = Rule(
    "CC042",
    "orphan-patch",
    "A `.patch` or `.diff` file that nothing refers to",
    Severity.WARNING,
    __doc__,
    frozenset({FileKind.TEXT}),
    None,
    check_repository,
)
