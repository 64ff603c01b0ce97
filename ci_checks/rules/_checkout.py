"""What rules share that judge a workspace path against this repository's checkout (CC051, CC053).

A path is judged missing only when this repository's checkout put it there (`Flow.origin` says so: nothing
since may have made it), the repository has no file or folder there in any case of its letters (a runner with a
case-insensitive file system finds it), it is in no git submodule, the checkout is of the tree that is checked
(no `ref:` but the run's own commit: a branch or an input may hold another tree; no `clean: false`, which keeps
what an earlier run left), and no earlier step names the part of it the repository lacks: a script, a local
action or a repository script it runs may make it in a way the file model does not follow (`python tools/gen.py`
writing `generated/`).
"""

from __future__ import annotations

import difflib
import posixpath
import re
from dataclasses import dataclass

from ci_checks.core.repository import Repository
from ci_checks.model.files.flow import Flow, Origin
from ci_checks.model.files.repository import RepositoryFiles
from ci_checks.model.steps import Step

_MAX_TEXTS = 64
"""How many repository scripts the earlier steps run are read for the path's names: past that, it is taken as
made."""
_OWN_REF = re.compile(
    r"\s*(\$\{\{\s*(github\.(sha|ref|ref_name|head_ref)|github\.event\.pull_request\.head\.(sha|ref)"
    r"|github\.event\.after)\s*\}\}\s*)?\Z"
)
"""A `ref:` that checks out the commit the run is for (or none): the tree that is checked. Any other (`gh-pages`,
`${{ inputs.release }}`) may hold another tree."""


@dataclass(frozen=True)
class Lacking:
    """A path this repository's checkout put in the workspace that the repository does not have."""

    path: str
    """Its repository path."""
    names: tuple[str, ...]
    """The names of its path from the first one the repository lacks: what a step that makes it would name."""
    suggestion: str
    """` (did you mean ...?)` for a close name beside it, or nothing."""


def lacking(files: RepositoryFiles, origin: Origin, folders_only: bool = False) -> Lacking | None:
    """The path a place is when this repository's checkout put it there and the repository lacks it; None when it
    has it, when something else put the place there, or when what the checkout holds cannot be known."""
    write = origin.write
    path = origin.repository_path
    if origin.kind != "checkout" or write is None or path is None or files.in_submodule(path):
        return None
    inputs = write.step.with_ if write.step is not None else {}
    ref, clean = inputs.get("ref"), inputs.get("clean")
    if ref is not None and not _OWN_REF.match(ref.text or ""):
        return None
    if clean is not None and (clean.text or "").strip().lower() == "false":
        return None
    repository = files.repository
    if repository.resolve(path) is None or repository.exists(path) or _in_any_case(repository, path):
        return None
    names = path.split("/")
    first = next(index for index in range(len(names)) if not repository.exists("/".join(names[: index + 1])))
    return Lacking(path, tuple(names[first:]), close_name(repository, path, folders_only))


def mentioned(files: RepositoryFiles, steps: list[Step], flow: Flow, before: int, lacking: Lacking) -> bool:
    """Whether one of these earlier steps may have made the path in a way the file model does not follow: its
    script, a local action it runs, or a repository script or Makefile it runs (before `before` in `flow`) names
    a part of the path the repository lacks."""
    texts: list[str] = []
    for step in steps:
        if step.run is not None:
            texts.append(step.run.value)
        elif step.uses is not None and step.uses.kind == "local":
            folder = posixpath.normpath(step.uses.path)
            texts.extend(_text(files, posixpath.join(folder, name)) for name in ("action.yml", "action.yaml"))
    scripts = [read for read in flow.reads if read.seq < before and read.reference.kind in ("script", "make")]
    if len(scripts) > _MAX_TEXTS:
        return True
    for read in scripts:
        path = flow.origin(read.reference.place, read.seq).repository_path
        if path is not None:
            texts.append(_text(files, posixpath.join(path, "Makefile") if read.reference.kind == "make" else path))
    return any(name in text for name in lacking.names for text in texts)


def _text(files: RepositoryFiles, path: str) -> str:
    return files.repository.read(posixpath.normpath(path)).text


def _in_any_case(repository: Repository, path: str) -> bool:
    folded = path.casefold()
    return any(file.casefold() == folded or file.casefold().startswith(folded + "/") for file in repository.files)


def close_name(repository: Repository, path: str, folders_only: bool = False) -> str:
    """A file or folder (or only a folder) of a close name in the same folder: the likely new name of a renamed
    one."""
    parent, name = posixpath.split(path)
    prefix = parent + "/" if parent else ""
    names = {
        rest.split("/", 1)[0]
        for file in repository.files
        if file.startswith(prefix) and ("/" in (rest := file[len(prefix) :]) or not folders_only)
    }
    close = difflib.get_close_matches(name, sorted(names), n=1, cutoff=0.8)
    return f" (did you mean `{posixpath.join(parent, close[0])}`?)" if close else ""
