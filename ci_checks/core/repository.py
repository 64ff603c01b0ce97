"""Finding the repository root and the files ci-checks reads in it.

Nothing outside the root is read: symbolic links are followed only when they
resolve inside it, and directories are never entered through a link (a linked
folder is listed as an entry of its own, which reads as a problem, so that it
is reported rather than skipped). Configuration files are stricter still
(`read_regular`): only a regular file reached through no link at all is read.

A repository may be given `documents`: the content of some of its files as an
editor holds them or standard input gave them, read instead of the disk's
(and listed where the disk has no such file yet), exactly as the bytes of a
file would be read.
"""

from __future__ import annotations

import enum
import errno
import os
import posixpath
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cache, cached_property
from pathlib import Path, PurePosixPath
from types import MappingProxyType

from ci_checks.core import source
from ci_checks.core.globs import Glob, compile_glob, excluded_by
from ci_checks.core.source import ProblemKind, SourceFile, SourceProblem

WORKFLOW_DIR = ".github/workflows"
_YAML_SUFFIXES = (".yml", ".yaml")
_ACTION_NAMES = ("action.yml", "action.yaml")
# Vendored code and build output: their action.yml files and Dockerfiles are not this repository's.
_SKIPPED_DIRS = {
    "node_modules",
    "vendor",
    "third_party",
    "third-party",
    "thirdparty",
    "3rdparty",
    "site-packages",
    "__pycache__",
    "venv",
    "build",
    "dist",
}


class FileKind(enum.Enum):
    WORKFLOW = "workflow"
    ACTION = "action"
    DOCKERFILE = "dockerfile"
    PYTHON = "python"
    SHELL = "shell"
    TEXT = "text"


def is_dockerfile(name: str) -> bool:
    lower = name.lower()
    return lower == "dockerfile" or lower.startswith("dockerfile.") or lower.endswith(".dockerfile")


def kind_of(relative: str) -> FileKind:
    """What a file is, judged from its repo-relative path alone: any other YAML file is read as a workflow."""
    name = PurePosixPath(relative).name
    if name in _ACTION_NAMES:
        return FileKind.ACTION
    if is_dockerfile(name):
        return FileKind.DOCKERFILE
    if name.endswith(_YAML_SUFFIXES):
        return FileKind.WORKFLOW
    if name.endswith(".py"):
        return FileKind.PYTHON
    if name.endswith((".sh", ".bash")):
        return FileKind.SHELL
    return FileKind.TEXT


def find_root(start: Path) -> Path:
    """The repository that contains `start`: the nearest folder with `.git` or a `.github` folder.

    The nearest wins, so a vendored project or a fixture folder with its own
    `.github` inside another repository is a repository of its own. Without
    either, a folder is its own root and a file's folder is its root.
    """
    start = Path(_absolute(start))
    folder = start if start.is_dir() else start.parent
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists() or (candidate / ".github").is_dir():
            return candidate
    return folder


@dataclass(frozen=True, eq=False)
class Repository:
    """A repository's files as ci-checks reads them: fixed when made, so that every listing honours the same
    `exclude` and `documents` (another set of either is another `Repository`: `with_exclude`, `with_documents`)."""

    root: Path
    exclude: tuple[str, ...] = field(default=(), kw_only=True)
    """Globs of the paths no listing gives (the configuration's `exclude`)."""
    documents: Mapping[str, bytes] = field(default_factory=dict, kw_only=True, repr=False)
    """Files' content by repo-relative path, read instead of what the disk holds there (see the module)."""

    def __post_init__(self) -> None:
        # Set through object's own: the instance is frozen, and is made to hold only its own copies.
        object.__setattr__(self, "root", Path(_absolute(self.root)))
        object.__setattr__(self, "exclude", tuple(self.exclude))
        object.__setattr__(self, "documents", MappingProxyType(dict(self.documents)))

    def with_exclude(self, exclude: Iterable[str]) -> Repository:
        """The repository with other exclusions, its files listed again when asked."""
        return replace(self, exclude=tuple(exclude))

    def with_documents(self, documents: Mapping[str, bytes]) -> Repository:
        """The repository with other documents. When they name the same files as before (only their content
        changed) the listings already made are kept, as the editor's every keystroke would otherwise walk the
        folders again; else the files are listed again when asked."""
        changed = replace(self, documents=documents)
        if changed.documents.keys() == self.documents.keys():
            made = {name: self.__dict__[name] for name in _LISTINGS if name in self.__dict__}
            changed.__dict__.update(made)
        return changed

    def _note(self, question: tuple[str | int, ...], answer: object) -> None:
        """Told each question asked of the file system and its answer: a run whose result is kept notes them
        (`ci_checks.engine.journal`)."""

    @property
    def real_root(self) -> Path:
        self._note(("real_root",), self._real_root)
        return self._real_root

    @cached_property
    def _real_root(self) -> Path:
        return self.root.resolve()

    @property
    def in_checkout(self) -> bool:
        """Whether the root is in a git checkout: it or a folder above it holds `.git`."""
        root = self.root
        found = any((folder / ".git").exists() for folder in (root, *root.parents))
        self._note(("in_checkout",), found)
        return found

    @classmethod
    def discover(cls, start: Path) -> Repository:
        return cls(find_root(start))

    def relative(self, path: Path) -> str:
        """The repo-relative POSIX path of a path inside the root, as written (links not resolved)."""
        return Path(_absolute(path)).relative_to(self.root).as_posix()

    def relative_paths(self, paths: Iterable[Path]) -> frozenset[str]:
        """The repo-relative POSIX paths of those of `paths` that lie inside the root, as written."""
        found = set()
        for path in paths:
            try:
                found.add(self.relative(path))
            except ValueError:
                continue  # outside the repository
        return frozenset(found)

    def excluded(self, relative: str) -> bool:
        """Whether an `exclude` glob matches the path or one of its folders."""
        return excluded_by(_compiled(self.exclude), relative)

    @property
    def files(self) -> list[str]:
        """Every file, repo-relative and sorted; `.git`, hidden and vendored folders are skipped.

        `.github` is the one hidden folder that is read. A symbolic link to a
        folder is listed itself (it reads as a problem: folders are not entered
        through links), as is anything else that is not a regular file.
        """
        self._note(("walk",), self._walk)
        return self._walk[0]

    @property
    def linked_folders(self) -> frozenset[str]:
        """The entries of `files` that are symbolic links to folders, whose files are not listed."""
        self._note(("walk",), self._walk)
        return self._walk[1]

    @cached_property
    def _walk(self) -> tuple[list[str], frozenset[str]]:
        found: list[str] = []
        linked: set[str] = set()
        for folder, dirs, names in os.walk(self.root):
            base = Path(folder)
            walkable = sorted(d for d in dirs if _walkable(d))
            links = [d for d in walkable if (base / d).is_symlink()]
            dirs[:] = [d for d in walkable if d not in links]
            for name in [*names, *links]:
                found.append((base / name).relative_to(self.root).as_posix())
            linked.update((base / name).relative_to(self.root).as_posix() for name in links)
        found.extend(relative for relative in self.documents if walked(relative) and relative not in found)
        return sorted(found), frozenset(linked)

    @property
    def workflows(self) -> list[str]:
        """`.github/workflows/*.yml|yaml`: GitHub reads no subfolders there.

        When `.github` or `.github/workflows` is a link or not a folder, the folder itself is the one entry, which
        reads as that problem, so that a repository whose workflows cannot be read is not reported clean.
        """
        self._note(("workflows",), self._workflows)
        return self._workflows

    @cached_property
    def _workflows(self) -> list[str]:
        folder = self.root / WORKFLOW_DIR
        given = {
            relative
            for relative in self.documents
            if posixpath.dirname(relative) == WORKFLOW_DIR and relative.endswith(_YAML_SUFFIXES)
        }
        if not os.path.lexists(folder):
            return sorted(relative for relative in given if not self.excluded(relative))
        if Path(os.path.realpath(folder)) != self.real_root / WORKFLOW_DIR or not folder.is_dir():
            return [WORKFLOW_DIR]
        found = given | {f"{WORKFLOW_DIR}/{entry.name}" for entry in os.scandir(folder)}
        return sorted(
            relative for relative in found if relative.endswith(_YAML_SUFFIXES) and not self.excluded(relative)
        )

    @cached_property
    def actions(self) -> list[str]:
        return [f for f in self.files if PurePosixPath(f).name in _ACTION_NAMES and not self.excluded(f)]

    @cached_property
    def dockerfiles(self) -> list[str]:
        return [f for f in self.files if is_dockerfile(PurePosixPath(f).name) and not self.excluded(f)]

    def exists(self, relative: str) -> bool:
        """Whether a repo-relative path names a file or folder inside the root (`uses: ./x`, `COPY x`)."""
        return isinstance(self.locate(relative), Path)

    def resolve(self, relative: str) -> Path | None:
        """The real path of a repo-relative path (which may not exist), or None when it lies outside the repository."""
        if refused(relative):  # names no file: the folders before it are not followed either
            normal = posixpath.normpath(relative)
            lexical = None if normal == ".." or normal.startswith("../") else self.real_root / normal
            self._note(("resolve", relative), lexical)
            return lexical
        try:
            candidate = (self.root / relative).resolve()
        except (OSError, RuntimeError):  # a loop of symbolic links
            candidate = None
        found = candidate if candidate is not None and self.inside(candidate) else None
        self._note(("resolve", relative), found)
        return found

    def inside(self, path: str | os.PathLike[str]) -> bool:
        """Whether a real (resolved) path is the root or lies under it."""
        candidate = Path(path)
        return candidate == self.real_root or self.real_root in candidate.parents

    def locate(self, relative: str) -> Path | str:
        """The real path of a repo-relative path that exists inside the repository, else why it cannot be read."""
        found = self._locate(relative)
        self._note(("locate", relative), found)
        return found

    def _locate(self, relative: str) -> Path | str:
        if relative in self.documents:
            return self.real_root / relative
        if refused(relative):
            return REFUSED
        written = self.root / relative
        try:
            real = Path(os.path.realpath(written, strict=True))
        except OSError as error:
            if error.errno == errno.ELOOP:
                return "symbolic link loop (the link leads back to itself); not read"
            if not os.path.lexists(written):
                return "no such file"
            if not self.inside(os.path.realpath(written)):
                return OUTSIDE
            return "symbolic link to a file that does not exist; not read"
        return real if self.inside(real) else OUTSIDE

    def escapes(self, relative: str) -> str | None:
        """Why a path written in a checked file as repo-relative (a local `uses:`) reaches outside the repository
        (by `..`, an absolute path or a symbolic link, its own or its `action.yml`'s), or None when it does not."""
        normal = posixpath.normpath(relative) if relative else "."
        if posixpath.isabs(relative) or normal == ".." or normal.startswith("../"):
            return "leaves the repository"
        found = self.locate(relative)
        if found == OUTSIDE:
            return "leads outside the repository through a symbolic link"
        if isinstance(found, Path) and found.is_dir():
            for name in _ACTION_NAMES:
                if self.locate(f"{relative}/{name}") == OUTSIDE:
                    return f"has an {name} that is a symbolic link pointing outside the repository"
        return None

    def read(self, relative: str, max_bytes: int = source.DEFAULT_MAX_BYTES) -> SourceFile:
        found = self._read(relative, max_bytes)
        self._note(("read", relative, max_bytes), found)
        return found

    def _read(self, relative: str, max_bytes: int) -> SourceFile:
        if relative in self.documents:
            return source.given(relative, self.documents[relative], max_bytes)
        real = self.locate(relative)
        if isinstance(real, str):
            return SourceFile(relative, "", SourceProblem(ProblemKind.UNREADABLE, real))
        if real.is_dir():
            linked = (self.root / relative).is_symlink()
            reason = f"symbolic link to a folder; {_NOT_ENTERED}" if linked else "a folder, not a file"
            return SourceFile(relative, "", SourceProblem(ProblemKind.UNREADABLE, reason))
        return source.read(relative, real, max_bytes)

    def read_regular(self, relative: str, max_bytes: int = source.DEFAULT_MAX_BYTES) -> SourceFile | None:
        """A file that configures a check: None when nothing is there; a problem unless it is a regular file inside
        the repository reached through no symbolic link (a pull request could point it anywhere)."""
        found = self._read_regular(relative, max_bytes)
        self._note(("read_regular", relative, max_bytes), found)
        return found

    def _read_regular(self, relative: str, max_bytes: int) -> SourceFile | None:
        if relative in self.documents:
            return source.given(relative, self.documents[relative], max_bytes)
        written = self.root / relative
        if not os.path.lexists(written):
            return None
        if written.is_symlink() or Path(os.path.realpath(written)) != self.real_root / relative:
            located = self.locate(relative)
            reason = located if isinstance(located, str) else "symbolic link; not read"
            if reason in (OUTSIDE, "symbolic link; not read"):
                reason = reason.replace(
                    "; not read", "; configuration is read only from regular files, not through links"
                )
            return SourceFile(relative, "", SourceProblem(ProblemKind.UNREADABLE, reason))
        try:
            mode = os.lstat(written).st_mode
        except OSError as error:
            return SourceFile(relative, "", SourceProblem(ProblemKind.UNREADABLE, f"cannot read: {error.strerror}"))
        if not stat.S_ISREG(mode):
            problem = SourceProblem(
                ProblemKind.UNREADABLE, f"{source.kind_of_mode(mode)}, not a regular file; not read"
            )
            return SourceFile(relative, "", problem)
        return source.read(relative, written, max_bytes, follow_links=False)


def refused(relative: str) -> bool:
    """Whether a path holds a byte no file system accepts in a name (NUL, which a workflow can write as `\\u0000`):
    it names no file, and the operating system refuses to be asked about it."""
    return "\0" in relative


_LISTINGS = ("_real_root", "_walk", "_workflows", "actions", "dockerfiles")
"""What a repository keeps once it has looked (`cached_property`): the folders' listings, the root's real path."""

REFUSED = "a name with a NUL byte, which no file system accepts; not read"
OUTSIDE = "symbolic link points outside the repository; not read"
_NOT_ENTERED = "folders are not entered through links, so nothing under it is checked"


@cache
def _compiled(patterns: tuple[str, ...]) -> tuple[Glob, ...]:
    # The configuration has checked each pattern; one that is not a glob here matches nothing.
    compiled = []
    for pattern in patterns:
        try:
            compiled.append(compile_glob(pattern))
        except ValueError:
            continue
    return tuple(compiled)


def _absolute(path: str | os.PathLike[str]) -> str:
    """An absolute, normalised path with its symbolic links kept as written (unlike `Path.resolve`)."""
    return os.path.abspath(path)  # noqa: PTH100


def walked(relative: str) -> bool:
    """Whether the walk of `Repository.files` reaches a repo-relative path: under no hidden folder but `.github`,
    and no vendored one."""
    return all(_walkable(name) for name in PurePosixPath(relative).parts[:-1])


def _walkable(name: str) -> bool:
    if name == ".github":
        return True
    return not name.startswith(".") and name not in _SKIPPED_DIRS
