"""A `.patch` or `.diff` file that nothing in the repository refers to.

## What it does
Lists the repository's `*.patch` and `*.diff` files and looks for what
refers to each:

- a command of a workflow, composite action or Dockerfile that reads it,
  followed through the file model (see `docs/model.md`): `git apply
  /tmp/amd_patch/megatron.patch` reads the file that
  `COPY docker/amd_patch/latest/megatron.patch /tmp/amd_patch/megatron.patch`
  put there, and no other `megatron.patch`; `cd patches && git apply
  *.patch` reads the patches in `patches/`;
- a Dockerfile that copies it, or the folder that holds it (not the whole
  context);
- Python code whose expression evaluates to its path or to a glob anchored
  in a real folder that matches it (`(ROOT / "patches").glob("*.patch")`);
  `glob.glob(f"{name}/*")` names no folder, so no patch; nor does a value
  that would spell more than 4,096 characters, or one evaluated after the
  file's budget of work is spent (`b = a + a` forty times over);
- in shell scripts, Makefiles, CMake, Meson and Bazel files, RPM specs,
  Nix, TOML and JSON files, quilt `series` files and the text of workflows
  and Dockerfiles: a path that ends the same way as the
  patch's own (`sglv0.5.10/megatron.patch`,
  `$GITHUB_WORKSPACE/docker/amd_patch/...`), a glob with a folder that
  matches it (`patches/*.patch`), the folder that holds it
  (`${CMAKE_SOURCE_DIR}/patches/third-party/numactl`), or, for a bare name
  or glob (`fix.patch`, `*.patch`), a patch in the mentioning file's own
  folder;
- in documentation (`*.md`, `*.rst`, `*.txt`): such a path in a command
  that tells a person to apply it, written as code (a fenced or indented
  block, inline code; any line of a plain `.txt`): `git apply
  patches/fix.patch`, `git am`, `patch -p1 < fix.patch`. A person applies
  it. A name in prose (`fix.patch was upstreamed in 2.4`), or in code that
  applies nothing (`ls patches/`), documents the patch and applies nothing:
  it is no reference.

A baseline or report that ci-checks wrote (`baseline write`, `--output`),
told by its content or by the path the run was given, is never a mention:
it lists the orphans themselves.

A `package.json` that uses `patch-package` applies the patches in its
`patches/` folder. A bare name that several patches share (`megatron.patch`) refers to the one
that something else refers to precisely, if any; only otherwise to each of
them. A patch referred to by nothing is reported at its first line.

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

from ci_checks.core import globs
from ci_checks.core.diagnostics import Diagnostic, Severity, Span
from ci_checks.core.own_output import written_by_ci_checks
from ci_checks.core.repository import FileKind, Repository, kind_of
from ci_checks.core.source import SourceFile
from ci_checks.model.files.effects import Write
from ci_checks.model.files.places import CONTEXT, Place
from ci_checks.model.files.repository import UNSURE, RepositoryFiles
from ci_checks.rules.context import RepositoryContext
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus

_PATCH_SUFFIXES = (".patch", ".diff")
_TEXT_KINDS = {FileKind.WORKFLOW, FileKind.ACTION, FileKind.DOCKERFILE, FileKind.SHELL}
_TEXT_NAMES = {"makefile", "gnumakefile", "cmakelists.txt", "series", "meson.build", "build", "build.bazel",
               "workspace", "workspace.bazel", "module.bazel"}  # fmt: skip
_TEXT_SUFFIXES = (".mk", ".cmake", ".bzl", ".spec", ".nix", ".toml", ".json")
_WORD = re.compile(r"[\w./*?${}@+-]+")
"""A run of the characters a path, a glob or a variable in one is written with: each is matched once, so a scan is
linear in the text (a pattern that looks for a `/` inside such a run backtracks through it at each of its
characters, the square of a long run)."""
_PATCH_NAME = re.compile(r"\.(?:patch|diff)(?![\w-])")
_PLACEHOLDER = re.compile(r"\$|\{|\}|~|@")
_READ_KINDS = ("script", "patch", "requirements")
_DOCUMENT_SUFFIXES = (".md", ".markdown", ".rst", ".txt")
_APPLY = re.compile(
    r"(?:^|[;&|(`]|\$\(|\b(?:sudo|xargs|then|do|exec)\b)\s*(?:\$\s+)?"
    r"(?:git(?:\s+-[Cc]\s*\S+)*\s+(?:apply|am)\b|patch(?=\s))"
)
"""A command that applies a patch, at the start of a command: `git apply`, `git -C dir am`, `patch -p1`."""
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_BACKTICKS = re.compile(r"`+")


class _References:
    """What refers to each patch: precise references first, then bare names shared by several patches."""

    def __init__(self, patches: list[str]) -> None:
        self.patches = patches
        self.referenced: set[str] = set()
        self.loose: list[str] = []
        self.named: dict[str, list[str]] = {}
        """The patches by their name: a path that ends like a patch's ends with its name."""
        self.in_folder: dict[str, list[str]] = {}
        """The patches by the name of the folder they are in."""
        self.under: dict[str, list[str]] = {}
        """The patches inside each folder, at any depth."""
        for patch in patches:
            folder, name = posixpath.split(patch)
            self.named.setdefault(name, []).append(patch)
            self.in_folder.setdefault(posixpath.basename(folder), []).append(patch)
            while folder:
                self.under.setdefault(folder, []).append(patch)
                folder = posixpath.dirname(folder)
        self.folders = set(self.in_folder) - {""}

    @property
    def complete(self) -> bool:
        return len(self.referenced) == len(self.patches)

    def path(self, path: str, glob: bool, whole_folder: bool = True) -> None:
        """A repository path (or glob) something reads or copies; a folder refers to every patch in it."""
        if glob:
            pattern = _compiled(path)
            if pattern is not None:
                self.referenced.update(p for p in self.patches if pattern.matches(p) or _in_matched(pattern, p))
            return
        if path in self.named.get(posixpath.basename(path), ()):
            self.referenced.add(path)
        elif whole_folder and path:
            self.referenced.update(self.under.get(path, ()))

    def text(self, mention: str, folder: str) -> None:
        """A path written in the text of a file in repository folder `folder`."""
        parts = _parts(mention)
        if not parts:
            return
        if any(globs.has_wildcard(part) for part in parts):
            if globs.has_wildcard(parts[0]):  # no folder: the mentioning file's own
                self.path(posixpath.join(folder, *parts), glob=True)
            else:
                pattern = _compiled("/".join(parts))
                size = len(parts)
                if pattern is not None:
                    self.referenced.update(p for p in self.patches if pattern.matches("/".join(p.split("/")[-size:])))
            return
        if parts[-1].endswith(_PATCH_SUFFIXES):
            if len(parts) >= 2:
                named = self.named.get(parts[-1], ())
                self.referenced.update(p for p in named if p.split("/")[-len(parts) :] == parts)
            elif posixpath.join(folder, parts[0]) in self.patches:
                self.referenced.add(posixpath.join(folder, parts[0]))
            else:
                self.loose.append(parts[0])
            return
        if parts[-1] not in self.folders:
            return
        if len(parts) >= 2:
            held = self.in_folder.get(parts[-1], ())
            self.referenced.update(p for p in held if posixpath.dirname(p).split("/")[-len(parts) :] == parts)
        else:
            self.holding({posixpath.join(folder, parts[0]), parts[0]})

    def holding(self, folders: set[str]) -> None:
        """The patches directly in these folders."""
        for folder in folders:
            self.referenced.update(
                p for p in self.in_folder.get(posixpath.basename(folder), ()) if posixpath.dirname(p) == folder
            )

    def settle(self) -> None:
        """A bare name refers to the patch of that name something refers to precisely; else to every one."""
        precise = set(self.referenced)
        for name in self.loose:
            named = self.named.get(name, [])
            if not any(patch in precise for patch in named):
                self.referenced.update(named)


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
    references = _References(patches)
    read_words = _modelled(context.files, references)
    for path in repository.files:
        if references.complete:
            return
        if path in context.own_files:
            continue
        if _mentions_as_text(path):
            _text(repository, path, references, read_words.get(path, []))
        elif path.lower().endswith(_DOCUMENT_SUFFIXES):
            _document(repository, path, references)
        elif kind_of(path) is FileKind.PYTHON:
            _python(repository, path, references)
    references.settle()
    for patch in patches:
        if patch in references.referenced:
            continue
        context.load(patch)
        message = (
            f"patch `{patch}` is applied by nothing: no workflow, action, Dockerfile, script, Python, "
            "Makefile or CMake file names it"
        )
        yield RULE.diagnostic(Span.point(patch), message)


def _modelled(files: RepositoryFiles, references: _References) -> dict[str, list[Span]]:
    """Notes what the commands of every flow read or copy; the words they name paths with, by file."""
    words: dict[str, list[Span]] = {}
    for flow in files.flows:
        for read in flow.reads:
            reference = read.reference
            if reference.word is not None:
                words.setdefault(reference.word.span.path, []).append(reference.word.span)
            if reference.kind in _READ_KINDS:
                path = flow.origin(reference.place, read.seq, UNSURE).repository_path
                if path is not None:
                    references.path(path, reference.place.glob, whole_folder=False)
        for event in flow.writes:
            write = event.effect
            copied = write.source if isinstance(write, Write) and write.kind == "copy" else None
            if copied is not None and copied.base != CONTEXT:
                path = flow.origin(copied, event.seq, UNSURE).repository_path
                if path:
                    references.path(path, copied.glob)
    for image in files.all_images:
        if image.context is None:
            continue
        for source in image.sources:
            place = source.place
            if place is not None and place.base == CONTEXT and place.path:
                words.setdefault(source.word.span.path, []).append(source.word.span)
                references.path(posixpath.normpath(posixpath.join(image.context, place.path)), place.glob)
    return words


def _mentions_as_text(path: str) -> bool:
    name = PurePosixPath(path).name.lower()
    if name in _TEXT_NAMES or name.endswith(_TEXT_SUFFIXES):
        return True
    return kind_of(path) in _TEXT_KINDS


def _text(repository: Repository, path: str, references: _References, read: list[Span]) -> None:
    source = repository.read(path)
    text = source.text
    if posixpath.basename(path) == "package.json" and "patch-package" in text:
        references.path(posixpath.join(posixpath.dirname(path), "patches"), glob=False)  # applied on install
    skipped = sorted(_offsets(source, span) for span in read)
    folder = posixpath.dirname(path)
    mentions: list[str] = []
    index = 0  # the first skipped span that may still hold a mention: mentions come in order
    for start, word in _mentions(text):
        while index < len(skipped) and skipped[index][1] <= start:
            index += 1
        if not (index < len(skipped) and skipped[index][0] <= start):
            mentions.append(word)
    if mentions and not written_by_ci_checks(text):
        for mention in dict.fromkeys(mentions):  # a path written again refers to nothing more
            references.text(mention, folder)


def _document(repository: Repository, path: str, references: _References) -> None:
    """The paths in the commands a document tells a person to apply patches with."""
    text = repository.read(path).text
    if "patch" not in text and "git" not in text:
        return  # most documents apply nothing
    commands = [command for command in _code(text, path) if _APPLY.search(command)]
    if not commands or written_by_ci_checks(text):
        return
    folder = posixpath.dirname(path)
    for command in commands:
        for _, mention in _mentions(command):
            references.text(mention, folder)


def _mentions(text: str) -> Iterator[tuple[int, str]]:
    """The words of `text` that name a path (with a `/`) or a patch (`fix.patch`), with their offsets."""
    for word in _WORD.finditer(text):
        found = word.group()
        if "/" in found or _PATCH_NAME.search(found):
            yield word.start(), found


def _code(text: str, path: str) -> Iterator[str]:
    """What a document writes as code, a command line each (continued lines joined): every line of plain text;
    in Markdown, the lines of fenced and indented blocks; in reStructuredText, indented lines (a literal block's,
    a `code-block`'s); in both, inline code."""
    lower = path.lower()
    plain, markdown = lower.endswith(".txt"), lower.endswith((".md", ".markdown"))
    indent = ("    ", "\t") if markdown else (" ", "\t")
    fence: str | None = None
    pending = ""
    for line in text.splitlines():
        opening = _FENCE.match(line) if markdown else None
        if opening is not None and (fence is None or opening.group(1).startswith(fence)):
            fence = opening.group(1) if fence is None else None
            pending = ""
            continue
        if plain or fence is not None or line.startswith(indent):
            pending += line.rstrip()
            if pending.endswith("\\"):
                pending = pending[:-1] + " "
                continue
            yield pending
            pending = ""
        else:
            yield from _inline_code(line)
    if pending:
        yield pending


def _inline_code(line: str) -> Iterator[str]:
    """The code spans of a line: between a run of backticks and the next run of the same length (a run with none
    is text), found in one pass."""
    runs = list(_BACKTICKS.finditer(line))
    closing: list[int | None] = [None] * len(runs)
    after: dict[int, int] = {}
    for index in range(len(runs) - 1, -1, -1):
        length = len(runs[index].group())
        closing[index] = after.get(length)
        after[length] = index
    index = 0
    while index < len(runs):
        end = closing[index]
        if end is None:
            index += 1
            continue
        yield line[runs[index].end() : runs[end].start()]
        index = end + 1


def _offsets(source: SourceFile, span: Span) -> tuple[int, int]:
    return source.offset(span.line, span.column), source.offset(span.end_line, span.end_column)


def _python(repository: Repository, path: str, references: _References) -> None:
    source = repository.read(path)
    text = source.text
    if ".patch" not in text and ".diff" not in text and not any(folder in text for folder in references.folders):
        return
    from ci_checks.model.files.python import path_mentions  # only a checkout with patches needs Python read

    for mention in path_mentions(source, path):
        if mention.anchored:
            if not mention.glob or _anchored_in_a_folder(repository, mention.path):
                references.path(mention.path, mention.glob, whole_folder=False)
                if not mention.glob:
                    references.holding({mention.path})
        elif not (mention.glob and mention.path.rsplit("/", 1)[-1] == "*"):
            references.text(mention.path, posixpath.dirname(path))


def _anchored_in_a_folder(repository: Repository, pattern: str) -> bool:
    """Whether a glob's literal folder part is a real folder other than the repository root, and its last segment
    names some kind of file (a bare `*` lists everything, which names no patch in particular)."""
    folder = Place("repository", pattern, glob=True).literal_folder().path
    return bool(folder) and repository.exists(folder) and pattern.rsplit("/", 1)[-1] not in ("*", "**")


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


def _compiled(pattern: str) -> globs.Glob | None:
    try:
        return globs.compile_glob(pattern)
    except globs.GlobError:
        return None


def _in_matched(pattern: globs.Glob, patch: str) -> bool:
    """Whether a glob matches a folder the patch is in (`COPY patches/* /tmp/` copies folders whole)."""
    folders = patch.split("/")[:-1]
    return any(pattern.matches("/".join(folders[: index + 1])) for index in range(len(folders)))


RULE = Rule(
    "CC042",
    "orphan-patch",
    "A `.patch` or `.diff` file that nothing refers to",
    Severity.WARNING,
    __doc__,
    frozenset({FileKind.TEXT}),
    None,
    check_repository,
    group=RuleGroup.WORKFLOW,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
