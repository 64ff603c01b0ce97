"""Steps, `uses:` references and `run:` scripts, shared by workflows and composite actions."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal, Protocol

from ci_checks.core.diagnostics import Occurrence, Span
from ci_checks.core.globs import Glob, compile_name_glob, compile_ref_glob
from ci_checks.core.source import FileLocator, SourceFile
from ci_checks.model.paths import Selected, get_text, select_text
from ci_checks.model.values import Entry, entries, entry, occurrences, text
from ci_checks.syntax import shell
from ci_checks.syntax.shell import Script
from ci_checks.syntax.shell.programs import is_posix_shell
from ci_checks.syntax.shell.quoting import is_expression
from ci_checks.syntax.yamlpos import Mapping, Node, Scalar, ScalarMap, Sequence

_REPOSITORY_REF = re.compile(
    r"(?P<owner>[A-Za-z0-9_.-]+)/(?P<repo>[A-Za-z0-9_.-]+)(?P<path>/[^@]*)?@(?P<ref>[^@\s]+)\Z"
)


@dataclass(frozen=True)
class ActionRef:
    """A parsed `uses:` value.

    `kind` is "repository" (`owner/repo[/path]@ref`), "local" (`./path`, in the
    workspace, so after a checkout), "self" (`$/path`: this repository at the
    commit that runs, no checkout needed) or "docker" (`docker://image`). For a
    reusable workflow (`jobs.<id>.uses`) "local" and "self" both name a file of
    this repository.
    """

    kind: Literal["repository", "local", "self", "docker"]
    raw: str
    owner: str = ""
    repo: str = ""
    path: str = ""
    ref: str = ""

    @property
    def name(self) -> str:
        """`owner/repo` plus `/path` when there is one: what a `uses` glob is compared with."""
        if self.kind != "repository":
            return self.path
        return f"{self.owner}/{self.repo}" + (f"/{self.path}" if self.path else "")

    @staticmethod
    def parse(value: str) -> ActionRef | str:
        """The reference, or a message saying why `value` is not one."""
        if is_expression(value):
            return "`uses` cannot contain ${{ }} expressions; GitHub resolves it before the run starts"
        if value.startswith("docker://"):
            image = value[len("docker://") :]
            if not image:
                return "`docker://` needs an image name"
            return ActionRef("docker", value, path=image)
        if value.startswith("./"):
            return ActionRef("local", value, path=value[2:].rstrip("/"))
        if value.startswith("$/"):
            path = value[2:].rstrip("/")
            return ActionRef("self", value, path=path) if path else "`$/` needs the path of an action or workflow"
        match = _REPOSITORY_REF.match(value)
        if match is None:
            if "@" not in value:
                return f"{value!r} needs a ref: write `{value}@<tag, branch or commit SHA>`"
            return f"{value!r} is not `owner/repo[/path]@ref`, `./local/path`, `$/path` or `docker://image`"
        path = (match.group("path") or "").strip("/")
        return ActionRef("repository", value, match.group("owner"), match.group("repo"), path, match.group("ref"))


def _listed(node: Node) -> list[str]:
    """The texts of a scalar or of a list of scalars (`wait: a`, `wait: [a, b]`)."""
    items = node.items if isinstance(node, Sequence) else [node]
    return [item.value for item in items if isinstance(item, Scalar)]


class ScalarLocator:
    """Maps offsets in a scalar's value to spans in its file."""

    def __init__(self, source: SourceFile, node: Scalar) -> None:
        self.source = source
        self.node = node
        self._map: ScalarMap | None = None

    @property
    def map(self) -> ScalarMap:
        if self._map is None:
            self._map = ScalarMap(self.source, self.node)
        return self._map

    def span(self, start: int, end: int) -> Span:
        if not self.node.value:
            return self.node.span
        return FileLocator(self.source, self.map.offsets).span(start, end)


def find_step(steps: Iterable[Step], name_or_id: str, where: str) -> Step:
    """The first step whose name or id is `name_or_id`; LookupError naming the steps there otherwise."""
    candidates = list(steps)
    for step in candidates:
        if name_or_id in (step.name, step.id):
            return step
    raise LookupError(f"{where} has no step named {name_or_id!r}; steps: {[s.label for s in candidates]}")


def uses_matches(glob: Glob, ref: ActionRef) -> bool:
    """Whether a `uses` glob names this reference: `owner/repo[/path]` (the whole value when the glob has `@`),
    the path of a local (`./x`) or self-repository (`$/x`) action written with or without that prefix."""
    if glob.text.startswith(("./", "$/")) or "@" in glob.text:
        return glob.matches(ref.raw)
    return glob.matches(ref.name)


def matching_steps(steps: Iterable[Step], uses: str | None, name: str | None, id: str | None) -> list[Step]:
    """The steps whose `uses`, name and id match these globs (of `ci_checks.core.globs`); None matches anything."""
    uses_glob = compile_ref_glob(uses) if uses is not None else None
    name_glob = compile_name_glob(name) if name is not None else None
    id_glob = compile_name_glob(id) if id is not None else None
    found = []
    for step in steps:
        if uses_glob is not None and (step.uses is None or not uses_matches(uses_glob, step.uses)):
            continue
        if name_glob is not None and not name_glob.matches(step.name):
            continue
        if id_glob is not None and not id_glob.matches(step.id):
            continue
        found.append(step)
    return found


class StepOwner(Protocol):
    """What holds steps: a job of a workflow (`model.workflow.Job`) or a composite action (`model.action.Action`).

    Steps name their owner by what they ask of it, so that this module, which both of those import, imports neither.
    """

    steps: list[Step]

    @property
    def default_shell(self) -> str | None:
        """The shell of a `run:` step that names none, when it can be known."""


@dataclass(eq=False)
class Step:
    """A step of a job or of a composite action. `owner` is that job or action."""

    owner: StepOwner
    index: int
    node: Mapping
    source: SourceFile
    id: str | None = None
    name: str | None = None
    uses: ActionRef | None = None
    uses_node: Scalar | None = None
    with_: dict[str, Entry] = field(default_factory=dict)
    run: Scalar | None = None
    shell: str | None = None
    env: dict[str, Entry] = field(default_factory=dict)
    if_: Entry | None = None
    working_directory: str | None = None
    continue_on_error: Entry | None = None
    timeout_minutes: Entry | None = None
    group: int | None = None
    """For a step of a `parallel` group, the index of the group's own step; `index` is then its place in the group."""

    @property
    def span(self) -> Span:
        return self.node.span

    @property
    def label(self) -> str:
        """How people refer to the step: its name, else its id, else what it uses or runs."""
        if self.name:
            return self.name
        if self.id:
            return self.id
        if self.uses is not None:
            return self.uses.raw
        if self.run is not None:
            first = self.run.value.strip().splitlines()
            return f"run: {first[0]}" if first else "run"
        for control in ("wait", "cancel"):
            target = self.node.get(control)
            if target is not None:
                return f"{control}: {', '.join(_listed(target))}"
        if "wait-all" in self.node:
            return "wait-all"
        if "parallel" in self.node:
            return f"parallel group {self.index + 1}"
        return f"step {self.index + 1}"

    def occurrences(self, text: str) -> list[Occurrence]:
        """Where `text` occurs in the step's YAML, comments included."""
        return occurrences(self.source, self.span, text)

    @property
    def place(self) -> tuple[str | int, ...]:
        """Where the step sits in its file: `jobs.ID.steps[N]`, or `runs.steps[N]` in a composite action;
        `...steps[N].parallel[M]` in a `parallel` group."""
        owner_id = getattr(self.owner, "id", None)
        steps: tuple[str | int, ...] = ("jobs", owner_id, "steps") if owner_id is not None else ("runs", "steps")
        if self.group is None:
            return (*steps, self.index)
        return (*steps, self.group, "parallel", self.index)

    def select(self, key_path: str) -> list[Selected]:
        """What a PATH relative to the step selects: `with.persist-credentials`, `env.*`."""
        return select_text(self.node, self.place, key_path)

    def get(self, key_path: str) -> Selected:
        return get_text(self.node, self.place, key_path, f"step {self.label!r}")

    def __repr__(self) -> str:
        return f"Step({self.label!r} at {self.span.path}:{self.span.line}:{self.span.column})"

    @property
    def effective_shell(self) -> str | None:
        """The shell GitHub runs the `run:` script with, or None when it cannot be known statically."""
        if self.shell is not None:
            return self.shell
        return self.owner.default_shell

    @cached_property
    def script(self) -> Script | None:
        """The `run:` script as a command tree; None without `run:` or for a non-POSIX shell."""
        if self.run is None or not is_posix_shell(self.effective_shell):
            return None
        return shell.parse(self.run.value, ScalarLocator(self.source, self.run))

    @classmethod
    def build_all(cls, owner: StepOwner, steps: Sequence, source: SourceFile) -> list[Step]:
        """The steps of a job or composite action in the order they are written: a `parallel` group's own step,
        then the steps it holds."""
        built: list[Step] = []
        for index, item in enumerate(steps.items):
            if not isinstance(item, Mapping):
                continue
            built.append(cls.build(owner, index, item, source))
            group = item.get("parallel")
            if isinstance(group, Sequence):
                for inner, node in enumerate(group.items):
                    if isinstance(node, Mapping):
                        built.append(cls.build(owner, inner, node, source, group=index))
        return built

    @classmethod
    def build(cls, owner: StepOwner, index: int, node: Mapping, source: SourceFile, group: int | None = None) -> Step:
        step = cls(owner, index, node, source, group=group)
        step.id = text(node.get("id"))
        step.name = text(node.get("name"))
        uses = node.get("uses")
        if isinstance(uses, Scalar) and uses.value:
            step.uses_node = uses
            parsed = ActionRef.parse(uses.value)
            step.uses = parsed if isinstance(parsed, ActionRef) else None
        run = node.get("run")
        if isinstance(run, Scalar) and run.resolved is not None:
            step.run = run
        step.shell = text(node.get("shell"))
        step.with_ = entries(node.get("with"))
        step.env = entries(node.get("env"))
        step.if_ = entry(node, "if")
        step.working_directory = text(node.get("working-directory"))
        step.continue_on_error = entry(node, "continue-on-error")
        step.timeout_minutes = entry(node, "timeout-minutes")
        return step
