"""Finding the repository root and the files ci-checks reads in it.

Nothing outside the root is read: symbolic links are followed only when they
resolve inside it, and directories are never entered through a link.
"""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path, PurePosixPath

from ci_checks import source
from ci_checks.globs import Glob, compile_glob, excluded_by
from ci_checks.source import ProblemKind, SourceFile, SourceProblem

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


@dataclass(eq=False)
class Repository:
    root: Path
    exclude: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.root = Path(_absolute(self.root))

    @cached_property
    def real_root(self) -> Path:
        return self.root.resolve()

    @classmethod
    def discover(cls, start: Path) -> Repository:
        return cls(find_root(start))

    def relative(self, path: Path) -> str:
        """The repo-relative POSIX path of a path inside the root, as written (links not resolved)."""
        return Path(_absolute(path)).relative_to(self.root).as_posix()

    def excluded(self, relative: str) -> bool:
        """Whether an `exclude` glob matches the path or one of its folders."""
        return excluded_by(_compiled(tuple(self.exclude)), relative)

    @cached_property
    def files(self) -> list[str]:
        """Every regular file, repo-relative and sorted; `.git`, hidden and vendored folders are skipped.

        `.github` is the one hidden folder that is read.
        """
        found: list[str] = []
        for folder, dirs, names in os.walk(self.root):
            dirs[:] = sorted(d for d in dirs if _walkable(d))
            base = Path(folder)
            for name in names:
                relative = (base / name).relative_to(self.root).as_posix()
                found.append(relative)
        return sorted(found)

    @cached_property
    def workflows(self) -> list[str]:
        """`.github/workflows/*.yml|yaml`: GitHub reads no subfolders there."""
        folder = self.root / WORKFLOW_DIR
        if not folder.is_dir() or folder.is_symlink():
            return []
        return sorted(
            f"{WORKFLOW_DIR}/{entry.name}"
            for entry in os.scandir(folder)
            if entry.name.endswith(_YAML_SUFFIXES) and not self.excluded(f"{WORKFLOW_DIR}/{entry.name}")
        )

    @cached_property
    def actions(self) -> list[str]:
        return [f for f in self.files if PurePosixPath(f).name in _ACTION_NAMES and not self.excluded(f)]

    @cached_property
    def dockerfiles(self) -> list[str]:
        return [f for f in self.files if is_dockerfile(PurePosixPath(f).name) and not self.excluded(f)]

    def exists(self, relative: str) -> bool:
        """Whether a repo-relative path names a file or folder inside the root (`uses: ./x`, `COPY x`)."""
        target = self.resolve(relative)
        return target is not None and target.exists()

    def resolve(self, relative: str) -> Path | None:
        """The real path of a repo-relative path, or None when it lies outside the repository."""
        try:
            candidate = (self.root / relative).resolve()
        except (OSError, RuntimeError):  # a loop of symbolic links
            return None
        if candidate == self.real_root or self.real_root in candidate.parents:
            return candidate
        return None

    def read(self, relative: str, max_bytes: int = source.DEFAULT_MAX_BYTES) -> SourceFile:
        real = self.resolve(relative)
        if real is None:
            problem = SourceProblem(ProblemKind.UNREADABLE, "symbolic link points outside the repository; not read")
            return SourceFile(relative, "", problem)
        return source.read(relative, real, max_bytes)


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


def _walkable(name: str) -> bool:
    if name == ".github":
        return True
    return not name.startswith(".") and name not in _SKIPPED_DIRS
