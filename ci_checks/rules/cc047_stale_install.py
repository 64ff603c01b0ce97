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
`SRC:DST` refspec made, named whole or short (`+refs/heads/x:refs/remotes/origin/x`
makes `origin/x`; `git reset --hard HEAD` checks out no fetched ref); in
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
_MENTIONS = (("fetch",), ("install", "develop"), tuple(_APPLYING))
"""What a script that can hold the mistake says: a fetch, an install and a checkout (of some kind)."""


def check_repository(context: RepositoryContext) -> Iterator[Diagnostic]:
    seen: set[tuple[object, ...]] = set()
    for owned in context.files.flows_of(context.targets, context.covers, _MENTIONS):
        for diagnostic in _flow(owned.flow):
            key = (diagnostic.span, diagnostic.message)
            if key not in seen:
                seen.add(key)
                yield diagnostic


def _flow(flow: Flow) -> Iterator[Diagnostic]:
    operations = flow.git_operations
    installs = [read for read in flow.reads if read.reference.kind == "install"]
    ordered: list[Event | Read] = sorted([*operations, *installs], key=lambda item: item.seq)
    fetched = _fetched_before(ordered)
    checked = _checked_out_after(ordered, set(fetched))
    for install, fetch in fetched.items():
        later = checked.get(install)
        tree = install.reference.place
        own = flow.origin(tree, install.seq, UNSURE).repository_path is not None
        if later is not None and _checks_out(fetch, later, own):
            yield _finding(install, fetch, later)


def _fetched_before(ordered: list[Event | Read]) -> dict[Read, Event]:
    """Each install that comes after a `git fetch` into its tree with no checkout of a ref there since, with the
    latest such fetch (one pass, keeping the pending fetch of each folder)."""
    pending: dict[Place, Event] = {}
    found: dict[Read, Event] = {}
    for item in ordered:
        if isinstance(item, Read):
            fetches = [fetch for folder, fetch in pending.items() if _related(folder, item.reference.place)]
            if fetches:
                found[item] = max(fetches, key=lambda fetch: fetch.seq)
            continue
        operation = item.effect
        if not isinstance(operation, GitOperation) or operation.folder is None:
            continue
        if operation.operation == "fetch":
            pending[operation.folder] = item
        elif _applies(operation):
            for folder in [folder for folder in pending if _related(folder, operation.folder)]:
                del pending[folder]
    return found


def _checked_out_after(ordered: list[Event | Read], installs: set[Read]) -> dict[Read, Event]:
    """For each of these installs, the first git operation after it that checks a ref out in its tree (one pass
    from the end, keeping the next such operation of each folder)."""
    upcoming: dict[Place, Event] = {}
    found: dict[Read, Event] = {}
    for item in reversed(ordered):
        if isinstance(item, Read):
            if item in installs:
                later = [event for folder, event in upcoming.items() if _related(folder, item.reference.place)]
                if later:
                    found[item] = min(later, key=lambda event: event.seq)
            continue
        operation = item.effect
        if isinstance(operation, GitOperation) and operation.folder is not None and _applies(operation):
            upcoming[operation.folder] = item
    return found


def _applies(operation: GitOperation) -> bool:
    """Whether a git operation puts a ref in its tree (`git checkout -f FETCH_HEAD`, not `git reset HEAD`)."""
    if operation.operation not in _APPLYING:
        return False
    return operation.operation == "pull" or (operation.ref is not None and operation.ref not in _NOT_A_FETCHED_REF)


def _related(folder: Place, tree: Place) -> bool:
    """Whether a git operation in `folder` acts on the tree installed from `tree` (one is inside the other)."""
    return tree.within(folder) is not None or folder.within(tree) is not None


def _checks_out(fetch: Event, later: Event, own: bool) -> bool:
    """Whether `later` checks out what `fetch` fetched: `FETCH_HEAD`, or (in a tree that is not the repository's own
    checkout, which a job may install as it is before switching to a fetched branch to publish) the fetched ref,
    `origin/REF`, or the branch a `SRC:DST` refspec made."""
    fetched = fetch.effect.ref if isinstance(fetch.effect, GitOperation) else None
    ref = later.effect.ref if isinstance(later.effect, GitOperation) else None
    if ref == "FETCH_HEAD":
        return True
    if own or ref is None or (isinstance(later.effect, GitOperation) and later.effect.operation == "pull"):
        return False
    if fetched is None:
        return ref.startswith("origin/")
    source, _, destination = fetched.removeprefix("+").partition(":")
    if destination:  # `SRC:DST`: DST, as written or short (`refs/remotes/origin/x` is `origin/x`)
        return ref in (destination, _short_ref(destination))
    return ref in (source, _short_ref(source)) or ref.endswith("/" + _short_ref(source))  # or `origin/REF`


def _short_ref(ref: str) -> str:
    """`refs/heads/x` is `x`, `refs/remotes/origin/x` is `origin/x`, as git resolves a short name."""
    for prefix in ("refs/heads/", "refs/remotes/", "refs/tags/"):
        if ref.startswith(prefix):
            return ref[len(prefix) :]
    return ref


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
