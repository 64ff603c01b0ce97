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

Each path through the script is followed on its own: the arms of `if`/`elif`/
`else` and `case`, a loop's body and the commands after `&&` and `||`, which
may or may not run. An install is reported when one path runs the fetch, the
install and the checkout in that order with no checkout of a ref between
the fetch and the install: a checkout in the `then` arm does not hide an
install before the checkout in the `else` arm, and an install in one arm
with the checkout in the other is no mistake.

A clone fetches every ref and checks out one branch: `git clone URL dir &&
pip install -e dir && git -C dir checkout "$REF"` (or `switch`, `reset
--hard REF`) installs the clone's branch, not `REF`, and is reported; a
later checkout of the branch the clone checked out (`git clone -b v1`, then
`git checkout v1`; `main` or `master` after a clone without `--branch`), of
`HEAD`, `.` or `-`, of paths (`git checkout REF -- f`), or in a repository
inside the clone is not.

The folder is followed through `working-directory:`, `cd` (`cd /opt/x &&
...`), `git -C`, steps and `RUN` instructions, and into the scripts
commands run from their arguments (`bash -lc "..."`, `sh -c`, `sudo bash
-c`, `su -c`) and the commands `docker exec NAME ...` runs in a container,
whose folders are the container's (the same name in later steps is the same
container). An install after a fetch that nothing checks out later is not
reported: a fetch of tags for versioning installs the tree it means to. The
later checkout must be of what was fetched: `FETCH_HEAD`, the fetched ref,
`origin/REF`, or the branch a `SRC:DST` refspec made, named whole or short
(`+refs/heads/x:refs/remotes/origin/x` makes `origin/x`; `git reset --hard
HEAD` checks out no fetched ref); in the repository's own checkout, only
`FETCH_HEAD` counts, since a job may install its own tree before switching
to a fetched branch to publish to it.

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

from collections.abc import Callable, Iterator

from ci_checks.core.diagnostics import Diagnostic, Related, Severity
from ci_checks.core.repository import FileKind
from ci_checks.model.files.effects import GitOperation
from ci_checks.model.files.flow import Arm, Event, Flow, Read
from ci_checks.model.files.places import CONTAINER, WORKSPACE, Place
from ci_checks.model.files.repository import UNSURE
from ci_checks.rules.context import RepositoryContext
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus

_APPLYING = {"checkout", "switch", "reset", "merge", "rebase", "cherry-pick", "pull"}
"""Git subcommands that put a ref in the tree, when given one."""
_NOT_A_FETCHED_REF = {"HEAD", ".", "-"}
_DEFAULT_BRANCHES = {"main", "master"}
"""What a clone without `--branch` most likely checked out already."""
_MENTIONS = (("fetch", "clone"), ("install", "develop"), tuple(_APPLYING))
"""What a script that can hold the mistake says: a fetch or clone, an install and a checkout (of some kind)."""
_MAX_FOLDERS = 32
_MAX_KEPT = 8
"""How many folders a path keeps git operations of, and how many operations of one folder paths that meet keep
(the latest fetches, the earliest checkouts): bounds on the work of a script of many branches."""

_Item = Event | Read
_Trees = dict[Place, frozenset[Event]]
"""What the paths that reach a point of a script hold for each folder: the fetches pending there (each path's
latest since its last checkout), or the checkouts to come (each path's next)."""


def check_repository(context: RepositoryContext) -> Iterator[Diagnostic]:
    seen: set[tuple[object, ...]] = set()
    for owned in context.files.flows_of(context.targets, context.covers, _MENTIONS):
        for diagnostic in _flow(owned.flow):
            key = (diagnostic.span, diagnostic.message)
            if key not in seen:
                seen.add(key)
                yield diagnostic


def _flow(flow: Flow) -> Iterator[Diagnostic]:
    operations = [event for event in flow.git_operations if _operation(event).folder is not None]
    installs = [read for read in flow.reads if read.reference.kind == "install"]
    ordered: list[_Item] = sorted([*operations, *installs], key=lambda item: item.seq)
    fetched = _along_paths(ordered, flow.ways, _fetching, latest=True)
    checked = _along_paths(ordered[::-1], flow.ways, _checking, latest=False)
    for install in installs:
        fetches = sorted(fetched.get(install, ()), key=lambda event: -event.seq)
        later = sorted(checked.get(install, ()), key=lambda event: event.seq)
        if not fetches or not later:
            continue
        tree = install.reference.place
        own = flow.origin(tree, install.seq, UNSURE).repository_path is not None
        pair = next(((f, c) for f in fetches for c in later if _checks_out(f, c, own, tree)), None)
        if pair is not None:
            yield _finding(install, *pair)


def _operation(event: Event) -> GitOperation:
    assert isinstance(event.effect, GitOperation)  # only git operations are passed along
    return event.effect


def _fetching(trees: _Trees, item: _Item, found: dict[Read, frozenset[Event]]) -> _Trees:
    """Forward: each install gets the fetches pending in its tree; a fetch or clone is pending in its folder until a
    checkout of a ref there or in a folder it is inside."""
    if isinstance(item, Read):
        tree = item.reference.place
        pending = [
            fetch
            for folder, fetches in trees.items()
            if _related(folder, tree)
            for fetch in fetches
            if _operation(fetch).operation != "clone" or tree.within(folder) is not None
        ]
        if pending:
            found[item] = frozenset(pending)
        return trees
    operation = _operation(item)
    folder = operation.folder
    assert folder is not None
    if operation.operation in ("fetch", "clone"):
        return _bounded({**trees, folder: frozenset({item})})
    if _applies(operation):
        return {pending: fetches for pending, fetches in trees.items() if not _related(pending, folder)}
    return trees


def _checking(trees: _Trees, item: _Item, found: dict[Read, frozenset[Event]]) -> _Trees:
    """Backward: each install gets the first checkouts of a ref after it in its tree."""
    if isinstance(item, Read):
        tree = item.reference.place
        later = [event for folder, events in trees.items() if _related(folder, tree) for event in events]
        if later:
            found[item] = frozenset(later)
        return trees
    operation = _operation(item)
    if operation.folder is not None and _applies(operation):
        return _bounded({**trees, operation.folder: frozenset({item})})
    return trees


class _Construct:
    """A branching construct the items passed along are inside: what the paths held where it starts, where its arms
    passed so far ended, and which arms were seen (the arms not seen pass what they start with)."""

    def __init__(self, arm: Arm, start: _Trees) -> None:
        self.construct, self.arm = arm
        self.start = start
        self.ends: list[_Trees] = []
        self.seen = {self.arm}

    def switch(self, trees: _Trees, arm: int) -> _Trees:
        self.ends.append(trees)
        self.arm = arm
        self.seen.add(arm)
        return self.start

    def close(self, trees: _Trees, ways: dict[int, int], latest: bool) -> _Trees:
        ends = [*self.ends, trees]
        if len(self.seen) < ways.get(self.construct, len(self.seen) + 1):
            ends.append(self.start)
        return _joined(ends, latest)


Step = Callable[[_Trees, _Item, dict[Read, frozenset[Event]]], _Trees]


def _along_paths(items: list[_Item], ways: dict[int, int], step: Step, latest: bool) -> dict[Read, frozenset[Event]]:
    """Passes what each path holds along the items (in order, or reversed): an arm starts from what the paths held
    where its construct starts, and after the construct the paths of each way through it meet. One pass, each item
    stepped once."""
    found: dict[Read, frozenset[Event]] = {}
    open_constructs: list[_Construct] = []
    trees: _Trees = {}
    for item in items:
        arms = item.arms
        shared = min(len(open_constructs), len(arms))
        depth = 0
        while depth < shared and (open_constructs[depth].construct, open_constructs[depth].arm) == arms[depth]:
            depth += 1
        switching = depth < shared and open_constructs[depth].construct == arms[depth][0]  # another arm of it
        while len(open_constructs) > depth + switching:
            trees = open_constructs.pop().close(trees, ways, latest)
        if switching:
            trees = open_constructs[depth].switch(trees, arms[depth][1])
            depth += 1
        open_constructs.extend(_Construct(arm, trees) for arm in arms[depth:])
        trees = step(trees, item, found)
    return found


def _joined(ends: list[_Trees], latest: bool) -> _Trees:
    """What the paths that meet hold together: for each folder, the operations of any of them."""
    joined: dict[Place, set[Event]] = {}
    for trees in ends:
        for folder, events in trees.items():
            joined.setdefault(folder, set()).update(events)
    kept = {
        folder: frozenset(sorted(events, key=lambda event: -event.seq if latest else event.seq)[:_MAX_KEPT])
        for folder, events in joined.items()
    }
    return _bounded(kept)


def _bounded(trees: _Trees) -> _Trees:
    return trees if len(trees) <= _MAX_FOLDERS else dict(list(trees.items())[-_MAX_FOLDERS:])


def _applies(operation: GitOperation) -> bool:
    """Whether a git operation puts a ref in its tree (`git checkout -f FETCH_HEAD`, not `git reset HEAD`)."""
    if operation.operation not in _APPLYING:
        return False
    return operation.operation == "pull" or (operation.ref is not None and operation.ref not in _NOT_A_FETCHED_REF)


def _related(folder: Place, tree: Place) -> bool:
    """Whether a git operation in `folder` acts on the tree installed from `tree` (one is inside the other)."""
    return tree.within(folder) is not None or folder.within(tree) is not None


def _checks_out(fetch: Event, later: Event, own: bool, tree: Place) -> bool:
    """Whether `later` checks out what `fetch` fetched: `FETCH_HEAD`, or (in a tree that is not the repository's own
    checkout, which a job may install as it is before switching to a fetched branch to publish) the fetched ref,
    `origin/REF`, or the branch a `SRC:DST` refspec made. After a clone, a ref other than the one it checked out,
    in the clone's repository (a folder the installed tree is in)."""
    fetching, checking = _operation(fetch), _operation(later)
    fetched, ref = fetching.ref, checking.ref
    if fetching.operation == "clone":
        return _switches_clone(fetching, checking, tree)
    if ref == "FETCH_HEAD":
        return True
    if own or ref is None or checking.operation == "pull":
        return False
    if fetched is None:
        return ref.startswith("origin/")
    source, _, destination = fetched.removeprefix("+").partition(":")
    if destination:  # `SRC:DST`: DST, as written or short (`refs/remotes/origin/x` is `origin/x`)
        return ref in (destination, _short_ref(destination))
    return ref in (source, _short_ref(source)) or ref.endswith("/" + _short_ref(source))  # or `origin/REF`


def _switches_clone(clone: GitOperation, checking: GitOperation, tree: Place) -> bool:
    """Whether a checkout after a clone's install puts another ref than the clone's in the installed tree."""
    cloned, folder, ref = clone.folder, checking.folder, checking.ref
    if ref is None or checking.paths or checking.operation == "pull" or cloned is None or folder is None:
        return False
    if folder.within(cloned) is None or tree.within(folder) is None:
        return False  # another repository inside the clone (`cd third_party/x && git checkout v2`)
    short = _short_ref(ref).removeprefix("origin/")
    return short != clone.ref if clone.ref is not None else short not in _DEFAULT_BRANCHES


def _short_ref(ref: str) -> str:
    """`refs/heads/x` is `x`, `refs/remotes/origin/x` is `origin/x`, as git resolves a short name."""
    for prefix in ("refs/heads/", "refs/remotes/", "refs/tags/"):
        if ref.startswith(prefix):
            return ref[len(prefix) :]
    return ref


def _finding(install: Read, fetch: Event, checkout: Event) -> Diagnostic:
    reference = install.reference
    fetched = _command(fetch)
    checked = _command(checkout)
    cloned = _operation(fetch).operation == "clone"
    before = "the branch the clone checked out" if cloned else "the tree as it was before the fetch"
    first = "the ref" if cloned else "the fetched ref"
    message = (
        f"`{_short(' '.join(reference.command.argv))}` installs the tree in {_shown(reference.place)} after "
        f"`{fetched}` and before `{checked}`: it installs {before}; check {first} out first"
    )
    related = [
        Related(fetch.span, f"`{fetched}` clones the tree here" if cloned else f"`{fetched}` fetches the ref here"),
        Related(checkout.span, f"`{checked}` checks {'another ref' if cloned else 'it'} out only here"),
    ]
    return RULE.diagnostic(reference.span, message, related)


def _shown(place: Place) -> str:
    if place.base.startswith(CONTAINER):
        name = place.base[len(CONTAINER) :]
        return f"`/{place.path}` in {'a container' if name.startswith('?') else f'container `{name}`'}"
    return f"`{place}`" if place.path or place.base != WORKSPACE else "the workspace"


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
    group=RuleGroup.WORKFLOW,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
