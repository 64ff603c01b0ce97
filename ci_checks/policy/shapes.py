"""The keys workflows, jobs, steps, triggers and composite actions can have, to refuse PATHs that select nothing.

A PATH such as `jobs.*.step` can never select anything in any workflow (a job
has `steps`), so it is a mistake in the policy, reported where it is written
with the keys that exist there. Mappings whose keys are the user's own (`env`,
`with`, `jobs`, `inputs`, `matrix`, `services`, `permissions`) accept any key.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field

from ci_checks.model.paths import KeyPath, PathError, Segment


@dataclass(frozen=True)
class Leaf:
    """A single value."""

    label: str = "a value"


@dataclass(frozen=True)
class Anything:
    """The user's own structure: any key, any list."""


@dataclass(frozen=True)
class Keys:
    label: str
    keys: Mapping[str, Shape] = field(default_factory=dict)
    other: Shape | None = None
    """The shape of the value of any key not in `keys`; None when only `keys` exist."""


@dataclass(frozen=True)
class Items:
    item: Shape


@dataclass(frozen=True)
class Either:
    shapes: tuple[Shape, ...]


Shape = Leaf | Anything | Keys | Items | Either

LEAF = Leaf()
ANYTHING = Anything()


def _one_or_many(item: Shape = LEAF) -> Shape:
    return Either((item, Items(item)))


def _free(label: str, value: Shape = LEAF, scalar_too: bool = True) -> Shape:
    mapping = Keys(label, other=value)
    return Either((LEAF, mapping)) if scalar_too else mapping


def _leaves(label: str, *names: str, **shapes: Shape) -> Keys:
    keys: dict[str, Shape] = dict.fromkeys(names, LEAF)
    keys.update({name.replace("_", "-"): shape for name, shape in shapes.items()})
    return Keys(label, keys)


_INPUT = _leaves("an input", "description", "required", "type", "default", "deprecationMessage", options=Items(LEAF))
_SECRET = _leaves("a secret", "description", "required")
_OUTPUT = _leaves("an output", "description", "value")
_FILTERS = ("branches", "branches-ignore", "tags", "tags-ignore", "paths", "paths-ignore")
_PUSH = Keys("a push trigger", {name: _one_or_many() for name in _FILTERS})
_PULL_REQUEST = Keys(
    "a pull request trigger",
    {name: _one_or_many() for name in ("types", "branches", "branches-ignore", "paths", "paths-ignore")},
)
_TYPES = Keys("a trigger", {"types": _one_or_many()})
TRIGGERS: dict[str, Shape] = dict.fromkeys(
    (
        "branch_protection_rule",
        "check_run",
        "check_suite",
        "create",
        "delete",
        "deployment",
        "deployment_status",
        "discussion",
        "discussion_comment",
        "fork",
        "gollum",
        "image_version",
        "issue_comment",
        "issues",
        "label",
        "merge_group",
        "milestone",
        "page_build",
        "project",
        "project_card",
        "project_column",
        "public",
        "pull_request_review",
        "pull_request_review_comment",
        "registry_package",
        "release",
        "repository_dispatch",
        "status",
        "watch",
    ),
    _TYPES,
)
TRIGGERS |= {
    "push": _PUSH,
    "pull_request": _PULL_REQUEST,
    "pull_request_target": _PULL_REQUEST,
    "schedule": Items(_leaves("a schedule", "cron", "timezone")),
    "workflow_dispatch": Keys("a workflow_dispatch trigger", {"inputs": Keys("inputs", other=_INPUT)}),
    "workflow_call": Keys(
        "a workflow_call trigger",
        {
            "inputs": Keys("inputs", other=_INPUT),
            "outputs": Keys("outputs", other=_OUTPUT),
            "secrets": Keys("secrets", other=_SECRET),
        },
    ),
    "workflow_run": Keys(
        "a workflow_run trigger",
        {name: _one_or_many() for name in ("workflows", "types", "branches", "branches-ignore")},
    ),
}
_ENV = _free("env")
_PERMISSIONS = _free("permissions")
_DEFAULTS = Keys("defaults", {"run": _leaves("defaults.run", "shell", "working-directory")})
_CONCURRENCY = Either((LEAF, _leaves("concurrency", "group", "cancel-in-progress", "queue")))
_CONTAINER = Either(
    (
        LEAF,
        Keys(
            "a container",
            {
                "image": LEAF,
                "options": LEAF,
                "env": _ENV,
                "ports": Items(LEAF),
                "volumes": Items(LEAF),
                "credentials": _leaves("credentials", "username", "password"),
            },
        ),
    )
)
_STEP_KEYS: dict[str, Shape] = (
    dict.fromkeys(("id", "if", "name", "uses", "run", "working-directory", "shell"), LEAF)
    | {"with": _free("with"), "env": _ENV}
    | dict.fromkeys(("continue-on-error", "timeout-minutes", "background", "wait-all", "cancel"), LEAF)
    | {"wait": _one_or_many()}
)
STEP = Keys("a step", _STEP_KEYS)
_STEP_KEYS["parallel"] = Items(STEP)  # a group of steps that run side by side
JOB = Keys(
    "a job",
    {
        "name": LEAF,
        "cancel-timeout-minutes": LEAF,
        "needs": _one_or_many(),
        "permissions": _PERMISSIONS,
        "runs-on": Either((LEAF, Items(LEAF), Keys("runs-on", {"group": LEAF, "labels": _one_or_many()}))),
        "environment": Either((LEAF, _leaves("an environment", "name", "url"))),
        "concurrency": _CONCURRENCY,
        "outputs": _free("outputs", scalar_too=False),
        "env": _ENV,
        "defaults": _DEFAULTS,
        "if": LEAF,
        "steps": Items(STEP),
        "timeout-minutes": LEAF,
        "strategy": Keys(
            "a strategy",
            {"matrix": Either((LEAF, Keys("a matrix", other=ANYTHING))), "fail-fast": LEAF, "max-parallel": LEAF},
        ),
        "continue-on-error": LEAF,
        "container": _CONTAINER,
        "services": Keys("services", other=_CONTAINER),
        "uses": LEAF,
        "with": _free("with"),
        "secrets": _free("secrets"),
        "snapshot": ANYTHING,
    },
)
EVENTS = Either((LEAF, Items(LEAF), Keys("on", dict(TRIGGERS))))
WORKFLOW = Keys(
    "a workflow",
    {
        "name": LEAF,
        "description": LEAF,
        "run-name": LEAF,
        "on": EVENTS,
        "permissions": _PERMISSIONS,
        "env": _ENV,
        "defaults": _DEFAULTS,
        "concurrency": _CONCURRENCY,
        "jobs": Keys("jobs", other=JOB),
    },
)
ACTION = Keys(
    "a composite action",
    {
        "name": LEAF,
        "author": LEAF,
        "description": LEAF,
        "inputs": Keys("inputs", other=_leaves("an input", "description", "required", "default", "deprecationMessage")),
        "outputs": Keys("outputs", other=_OUTPUT),
        "runs": Keys(
            "runs",
            dict.fromkeys(("using", "main", "pre", "post", "pre-if", "post-if", "image", "entrypoint"), LEAF)
            | {"pre-entrypoint": LEAF, "post-entrypoint": LEAF, "args": Items(LEAF), "env": _ENV}
            | {"steps": Items(STEP)},
        ),
        "branding": _leaves("branding", "icon", "color"),
    },
)


def check(key_path: KeyPath, roots: tuple[Shape, ...]) -> None:
    """PathError, at the segment, when `key_path` selects nothing under every one of `roots`."""
    current: list[Shape] = list(roots)
    walked = ""
    for segment in key_path.segments:
        following = [shape for here in _flatten(current) for shape in _follow(here, segment)]
        if not following:
            raise PathError(
                _why_not(f"`{walked}`" if walked else "the scope", _flatten(current), segment), segment.offset
            )
        current = following
        walked = key_path.text[: segment.offset + len(segment.text)]


def names_a_setting(key_path: KeyPath, index: int, roots: tuple[Shape, ...]) -> bool:
    """Whether segment `index` of the PATH is a key GitHub defines there (`continue-on-error`, `branches`),
    as opposed to one of the repository's own names (a job id, an input, a variable): a setting that is
    absent is a state, a name that matches nothing is a PATH that has drifted."""
    current: list[Shape] = list(roots)
    for segment in key_path.segments[:index]:
        current = [shape for here in _flatten(current) for shape in _follow(here, segment)]
    segment = key_path.segments[index]
    if segment.kind != "key" or segment.glob is None or segment.glob.literal is None:
        return False
    return any(isinstance(shape, Keys) and segment.glob.literal in shape.keys for shape in _flatten(current))


def _flatten(shapes: list[Shape]) -> list[Shape]:
    flat: list[Shape] = []
    for shape in shapes:
        flat.extend(_flatten(list(shape.shapes)) if isinstance(shape, Either) else [shape])
    return flat


def _follow(shape: Shape, segment: Segment) -> list[Shape]:
    if isinstance(shape, Anything):
        return [ANYTHING]
    if segment.kind == "deep":
        return _below(shape)
    if segment.kind == "key":
        if not isinstance(shape, Keys):
            return []
        assert segment.glob is not None
        found = [value for name, value in shape.keys.items() if segment.glob.matches(name)]
        if shape.other is not None and (segment.glob.literal is None or segment.glob.literal not in shape.keys):
            found.append(shape.other)
        return found
    if isinstance(shape, Items):
        return [shape.item]
    return [shape] if isinstance(shape, Leaf) else []  # a single value reads as a one-element list


def _below(shape: Shape) -> list[Shape]:
    """The shape and every shape under it, each once (a step's `parallel` holds steps)."""
    found: dict[int, Shape] = {}
    pending = [shape]
    while pending:
        here = pending.pop()
        if id(here) in found:
            continue
        found[id(here)] = here
        if isinstance(here, Either):
            pending.extend(here.shapes)
        elif isinstance(here, Keys):
            pending.extend(here.keys.values())
            pending.extend([here.other] if here.other is not None else [])
        elif isinstance(here, Items):
            pending.append(here.item)
    return [here for here in found.values() if not isinstance(here, Either)]


def _why_not(walked_shown: str, shapes: list[Shape], segment: Segment) -> str:
    mappings = [shape for shape in shapes if isinstance(shape, Keys)]
    if segment.kind == "key" and mappings:
        known = sorted({name for shape in mappings for name in shape.keys})
        close = difflib.get_close_matches(segment.text, known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        labels = " or ".join(sorted({shape.label for shape in mappings}))
        return f"{labels} has no key {segment.text!r}{hint}; keys there: {', '.join(known)}"
    if segment.kind == "key":
        return f"{walked_shown} is a single value or a list; it has no key {segment.text!r}"
    return f"{walked_shown} is a mapping, not a list; {segment.text} selects nothing there"
