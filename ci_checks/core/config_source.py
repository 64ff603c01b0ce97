"""Where configuration is read from: the work tree, or the git objects of a trusted ref (`--config-ref`).

A pull request can edit `.github/ci-checks.yml`, `.github/actionlint.yaml`
and `.github/zizmor.yml` along with the workflows they judge. With
`--config-ref origin/main` (or `HEAD^1`, the base side of the merge commit
GitHub checks out for a pull request) those files are read from that commit
instead, so a pull request is judged by the rules of its base branch.

Either way only regular files are read: a symbolic link, a folder, a FIFO or
a submodule in a configuration file's place is a problem, never followed.

git runs as a subprocess on a private, empty git folder that borrows the
repository's objects (`objects/info/alternates`) and a copy of its refs, with
no system or user configuration: the checked repository's own `.git/config`
and hooks are never read, so nothing in them (a `core.fsmonitor` command, an
alias, a hook) can run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ci_checks.core import source
from ci_checks.core.repository import Repository
from ci_checks.core.source import ProblemKind, SourceFile, SourceProblem

_GIT_TIMEOUT_S = 60.0
_OBJECT_ID = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?\Z")
_REGULAR_MODES = ("100644", "100755")
_MODE_NAMES = {"120000": "a symbolic link", "040000": "a folder", "160000": "a submodule"}


class ConfigSourceError(Exception):
    """The configuration cannot be read from where it was asked for (exit code 2); the message says why."""


class ConfigSource(Protocol):
    description: str
    """How messages name where the files come from: `the work tree`, `origin/main`."""

    def read(self, relative: str, max_bytes: int = source.DEFAULT_MAX_BYTES) -> SourceFile | None:
        """The file at a repo-relative path; None when there is none, a problem when it is not a regular file."""
        ...

    def close(self) -> None:
        """Remove what reading left behind."""
        ...


@dataclass
class WorkTree:
    repository: Repository
    description: str = "the work tree"

    def read(self, relative: str, max_bytes: int = source.DEFAULT_MAX_BYTES) -> SourceFile | None:
        return self.repository.read_regular(relative, max_bytes)

    def close(self) -> None:
        return None


@dataclass
class GitRef:
    """The files of one commit of the git repository at `root`, named by `ref` (a branch, tag, `HEAD^1`, an id)."""

    root: Path
    ref: str
    description: str = ""
    option: str = "--config-ref"
    """The option that named the ref, as errors name it (`--new-since` reads a base commit the same way)."""
    _commit: str | None = field(default=None, init=False, repr=False)
    _folder: Path | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.description = self.description or self.ref
        if not self.ref or self.ref.startswith("-") or any(char in self.ref for char in "\0\n\r"):
            raise ConfigSourceError(f"{self.option} {self.ref!r} is not a git revision")

    def read(self, relative: str, max_bytes: int = source.DEFAULT_MAX_BYTES) -> SourceFile | None:
        listing = self._git("ls-tree", "-z", "--full-tree", self.commit, "--", relative).decode("utf-8", "replace")
        entry = next((item for item in listing.split("\0") if item.endswith(f"\t{relative}")), None)
        if entry is None:
            return None
        mode, _, object_id = entry.split("\t", 1)[0].split(" ")
        if mode not in _REGULAR_MODES:
            what = _MODE_NAMES.get(mode, "not a regular file")
            return _problem(relative, f"{what} in {self.ref}; configuration is read only from regular files")
        size = int(self._git("cat-file", "-s", object_id))
        if size > max_bytes:
            return _problem(relative, f"larger than the {source.format_size(max_bytes)} limit in {self.ref}")
        return source.decode(relative, self._git("cat-file", "blob", object_id))

    def tree(self) -> list[TreeEntry]:
        """Every entry of the commit's tree, recursively: files, links and submodules (`git ls-tree -r -l`)."""
        listing = self._git("ls-tree", "-r", "-z", "-l", "--full-tree", self.commit)
        entries = []
        for item in listing.split(b"\0"):
            if not item:
                continue
            head, _, path = item.partition(b"\t")
            mode, _, object_id, size = head.decode("ascii", "replace").split(maxsplit=3)
            relative = path.decode("utf-8", "surrogateescape")
            entries.append(TreeEntry(mode, object_id, int(size) if size.isdecimal() else 0, relative))
        return entries

    def blobs(self, object_ids: list[str]) -> list[bytes]:
        """The contents of blobs, in the order asked (`git cat-file --batch`, one process for all)."""
        if not object_ids:
            return []
        output = self._git("cat-file", "--batch", data="".join(f"{oid}\n" for oid in object_ids).encode("ascii"))
        contents = []
        position = 0
        for object_id in object_ids:
            end = output.index(b"\n", position)
            header = output[position:end].split()
            if len(header) != 3 or header[1] != b"blob":
                raise ConfigSourceError(f"{self.option} {self.ref!r}: git has no blob {object_id}")
            size = int(header[2])
            contents.append(output[end + 1 : end + 1 + size])
            position = end + 1 + size + 1
        return contents

    @property
    def commit(self) -> str:
        if self._commit is None:
            output = self._git(
                "rev-parse", "--verify", "--quiet", "--end-of-options", f"{self.ref}^{{commit}}", check=False
            )
            commit = output.decode("ascii", "replace").strip()
            if not _OBJECT_ID.match(commit):
                raise ConfigSourceError(f"{self.option} {self.ref!r} names no commit of the repository at {self.root}")
            self._commit = commit
        return self._commit

    def close(self) -> None:
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None

    def _git(self, *arguments: str, check: bool = True, data: bytes | None = None) -> bytes:
        folder = self._private_folder()
        git = shutil.which("git", path=os.pathsep.join(_absolute_path_entries()))
        if git is None:
            raise ConfigSourceError(f"{self.option} needs git, which is not on PATH")
        try:
            finished = subprocess.run(
                [git, *arguments],
                cwd=folder,
                env=_git_environment(folder),
                input=data if data is not None else b"",
                capture_output=True,
                timeout=_GIT_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise ConfigSourceError(f"{self.option} {self.ref!r}: git could not be run ({error})") from None
        if check and finished.returncode != 0:
            reason = finished.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no reason given"]
            raise ConfigSourceError(f"{self.option} {self.ref!r}: git failed: {reason[0][:200]}")
        return finished.stdout

    def _private_folder(self) -> Path:
        """A bare git folder of our own: the repository's objects as alternates, a copy of its refs, nothing else."""
        if self._folder is not None:
            return self._folder
        git_dir, common_dir = _git_dirs(self.root, self.option)
        folder = Path(tempfile.mkdtemp(prefix="ci-checks-git-"))
        try:
            (folder / "objects" / "info").mkdir(parents=True)
            (folder / "objects" / "info" / "alternates").write_text(f"{common_dir / 'objects'}\n", encoding="utf-8")
            (folder / "config").write_text("[core]\n\trepositoryformatversion = 0\n\tbare = true\n", encoding="utf-8")
            if (common_dir / "refs").is_dir():
                shutil.copytree(common_dir / "refs", folder / "refs", symlinks=True)
            else:
                (folder / "refs").mkdir()
            for name, origin in (("HEAD", git_dir), ("packed-refs", common_dir), ("shallow", common_dir)):
                if (origin / name).is_file():
                    shutil.copyfile(origin / name, folder / name)
            if not (folder / "HEAD").is_file():
                (folder / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
        except OSError as error:
            shutil.rmtree(folder, ignore_errors=True)
            raise ConfigSourceError(f"{self.option} {self.ref!r}: cannot read the git repository: {error}") from None
        self._folder = folder
        return folder


@dataclass(frozen=True)
class TreeEntry:
    """One entry of a commit's tree: its mode (`100644`, `120000` a link, `160000` a submodule), object, size."""

    mode: str
    object_id: str
    size: int
    path: str

    @property
    def regular(self) -> bool:
        return self.mode in _REGULAR_MODES


def _problem(relative: str, message: str) -> SourceFile:
    return SourceFile(relative, "", SourceProblem(ProblemKind.UNREADABLE, message))


def _git_dirs(root: Path, option: str) -> tuple[Path, Path]:
    """The git folder of the work tree at `root` and the common folder that holds its objects and refs."""
    marker = root / ".git"
    if marker.is_dir():
        git_dir = marker
    elif marker.is_file():
        text = marker.read_text(encoding="utf-8", errors="replace").strip()
        if not text.startswith("gitdir:"):
            raise ConfigSourceError(f"{option}: {marker} is not a git folder or a `gitdir:` file")
        git_dir = (root / text.removeprefix("gitdir:").strip()).resolve()
    else:
        raise ConfigSourceError(f"{option} needs a git repository; {root} has no .git")
    common = git_dir / "commondir"
    if common.is_file():
        return git_dir, (git_dir / common.read_text(encoding="utf-8").strip()).resolve()
    return git_dir, git_dir


def _absolute_path_entries() -> list[str]:
    return [entry for entry in os.environ.get("PATH", "").split(os.pathsep) if Path(entry).is_absolute()]


def _git_environment(folder: Path) -> dict[str, str]:
    """No configuration but our own folder's, no prompts, no replacement objects, no inherited `GIT_*` overrides."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    environment.update(
        {
            "GIT_DIR": str(folder),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_NO_REPLACE_OBJECTS": "1",
            "GIT_OPTIONAL_LOCKS": "0",
            "HOME": str(folder),
            "XDG_CONFIG_HOME": str(folder),
            "LC_ALL": "C",
        }
    )
    return environment


def open_source(repository: Repository, ref: str | None) -> ConfigSource:
    """The work tree of `repository`, or the commit `ref` names in its git repository."""
    return GitRef(repository.root, ref) if ref is not None else WorkTree(repository)
