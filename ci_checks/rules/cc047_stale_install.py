"""A tree is installed after `git fetch` into it and before the fetched ref is checked out there.

## What it does
Follows, in each job, composite action and Dockerfile stage, what every
command does to the git tree in each folder (see `docs/model.md`): `git
fetch` brings a ref into the folder's repository, and `git checkout`,
`switch`, `reset`, `merge`, `rebase`, `cherry-pick` or `pull` of a ref puts
it in the tree. An install of that tree (`pip install -e .`, `pip install
.`, `pip install -e python`, `python setup.py develop|install`, `make
install`, `cmake --install build`) that comes after the fetch and before the
checkout is reported, with both.

The folder is followed through `working-directory:`, `cd` (`cd /opt/x &&
...`), `git -C`, steps and `RUN` instructions. An install after a fetch that
nothing checks out later is not reported: a fetch of tags for versioning
installs the tree it means to. The later checkout must be of what was
fetched: `FETCH_HEAD`, the fetched ref, `origin/REF`, or the branch a
`SRC:DST` refspec made (`git reset --hard HEAD` checks out no fetched ref); in
the repository's own checkout, only `FETCH_HEAD` counts, since a job may
install its own tree before switching to a fetched branch to publish to it.

## Why it matters
The install puts the tree as it was before the fetch into the environment:
the job then tests the image's old copy of the dependency while its log
says it fetched the pull request's ref. Nothing fails; the override is
silently ignored.

## Example
```yaml
- run: |
    cd /opt/Megatron-LM
    git fetch origin "$MEGATRON_PR"
    pip install -e . --no-deps
    git checkout -f FETCH_HEAD
```

## Fix
Check the fetched ref out before installing the tree:
`git fetch origin "$PR" && git checkout -f FETCH_HEAD && pip install -e .`.
"""

from __future__ import annotations

from collections.abc import Iterator

from ci_checks.context import RepositoryContext
from ci_checks.diagnostics import Diagnostic, Related, Severity
from ci_checks.model.files.effects import GitOperation
from ci_checks.model.files.flow import Event, Flow, Read
from ci_checks.model.files.places import WORKSPACE, Place
from ci_checks.model.files.repository import UNSURE
from ci_checks.repository import FileKind
from ci_checks.rule import Rule

_APPLYING = {"checkout", "switch", "reset", "merge", "rebase", "cherry-pick", "pull"}
"""Git subcommands that put a ref in the tree, when given one."""
_NOT_A_FETCHED_REF = {"HEAD", ".", "-"}


def check_repository(context: RepositoryContext) -> Iterator[Diagnostic]:
    seen: set[tuple[object, ...]] = set()
    for owned in context.files.flows_of(context.targets, context.covers, mentioning=("fetch",)):
        for diagnostic in _flow(owned.flow):
            key = (diagnostic.span, diagnostic.message)
            if key not in seen:
                seen.add(key)
                yield diagnostic


def _flow(flow: Flow) -> Iterator[Diagnostic]:
    operations = flow.git_operations
    for read in flow.reads:
        if read.reference.kind != "install":
            continue
        fetch = _pending_fetch(operations, read)
        if fetch is None:
            continue
        tree = read.reference.place
        later = next((event for event in operations if event.seq > read.seq and _applies(event, tree)), None)
        own = flow.origin(tree, read.seq, UNSURE).repository_path is not None
        if later is not None and _checks_out(fetch, later, own):
            yield _finding(read, fetch, later)


def _pending_fetch(operations: list[Event], install: Read) -> Event | None:
    """The latest `git fetch` into the installed tree before the install, unless a checkout came since."""
    pending: Event | None = None
    for event in operations:
        if event.seq >= install.seq or not _same_tree(event, install.reference.place):
            continue
        operation = event.effect
        if isinstance(operation, GitOperation) and operation.operation == "fetch":
            pending = event
        elif _applies(event, install.reference.place):
            pending = None
    return pending


def _applies(event: Event, tree: Place) -> bool:
    """Whether a git operation in the tree puts a ref in it (`git checkout -f FETCH_HEAD`, not `git reset HEAD`)."""
    operation = event.effect
    if not isinstance(operation, GitOperation) or operation.operation not in _APPLYING:
        return False
    if operation.operation != "pull" and (operation.ref is None or operation.ref in _NOT_A_FETCHED_REF):
        return False
    return _same_tree(event, tree)


def _checks_out(fetch: Event, later: Event, own: bool) -> bool:
    """Whether `later` checks out what `fetch` fetched: `FETCH_HEAD`, or (in a tree that is not the repository's own
    checkout, which a job may install as it is before switching to a fetched branch to publish) the fetched ref,
    `origin/REF`, or the local branch a `SRC:DST` refspec made."""
    fetched = fetch.effect.ref if isinstance(fetch.effect, GitOperation) else None
    ref = later.effect.ref if isinstance(later.effect, GitOperation) else None
    if ref == "FETCH_HEAD":
        return True
    if own or ref is None or (isinstance(later.effect, GitOperation) and later.effect.operation == "pull"):
        return False
    if fetched is None:
        return ref.startswith("origin/")
    return ref in (fetched, fetched.rsplit(":", 1)[-1]) or ref.endswith("/" + fetched)


def _same_tree(event: Event, tree: Place) -> bool:
    folder = event.effect.folder if isinstance(event.effect, GitOperation) else None
    return folder is not None and (tree.within(folder) is not None or folder.within(tree) is not None)


def _finding(install: Read, fetch: Event, checkout: Event) -> Diagnostic:
    reference = install.reference
    place = reference.place
    shown = f"`{place}`" if place.path or place.base != WORKSPACE else "the workspace"
    fetched = _command(fetch)
    checked = _command(checkout)
    message = (
        f"`{_short(' '.join(reference.command.argv))}` installs the tree in {shown} after `{fetched}` and before "
        f"`{checked}`: it installs the tree as it was before the fetch; check the fetched ref out first"
    )
    related = [
        Related(fetch.span, f"`{fetched}` fetches the ref here"),
        Related(checkout.span, f"`{checked}` checks it out only here"),
    ]
    return RULE.diagnostic(reference.span, message, related)


def _command(event: Event) -> str:
    return _short(" ".join(event.command.argv)) if event.command is not None else "git"


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


RULE = Rule(
    "CC047",
    "stale-install",
    "A tree is installed between `git fetch` and the checkout of the fetched ref",
    Severity.ERROR,
    __doc__,
    frozenset({FileKind.WORKFLOW, FileKind.ACTION, FileKind.DOCKERFILE}),
    None,
    check_repository,
)
