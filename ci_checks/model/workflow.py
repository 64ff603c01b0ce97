"""The workflow model: triggers, jobs (normal or reusable-workflow calls) and their steps.

Building is lenient: a part of the wrong shape is left out (the schema rule
reports it) and everything else is still modelled.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from ci_checks.core.diagnostics import Occurrence, Span
from ci_checks.core.source import SourceFile
from ci_checks.model.paths import Selected, get_text, select_text
from ci_checks.model.steps import ActionRef, Step, find_step, matching_steps
from ci_checks.model.values import (
    Entry,
    entries,
    entry,
    mapping,
    occurrences,
    pairs,
    string_list,
    text,
)
from ci_checks.syntax.shell.quoting import is_expression
from ci_checks.syntax.yamlpos import Document, Mapping, Node, Scalar, Sequence


@dataclass(eq=False)
class Input:
    """An input of `workflow_call`, `workflow_dispatch` or a composite action."""

    name: str
    key: Scalar
    node: Node
    type: str | None = None
    required: bool = False
    default: Entry | None = None
    description: str | None = None
    options: list[str] = field(default_factory=list)

    @classmethod
    def build(cls, key: Scalar, node: Node) -> Input:
        item = cls(key.value, key, node)
        body = mapping(node)
        if body is not None:
            item.type = text(body.get("type"))
            required = body.get("required")
            item.required = isinstance(required, Scalar) and required.resolved is True
            item.default = entry(body, "default")
            item.description = text(body.get("description"))
            item.options = [option.value for option in string_list(body.get("options"))]
        return item


@dataclass(eq=False)
class Secret:
    name: str
    key: Scalar
    required: bool = False
    description: str | None = None


@dataclass(eq=False)
class Output:
    name: str
    key: Scalar
    value: Entry | None = None
    description: str | None = None

    @classmethod
    def build(cls, key: Scalar, node: Node) -> Output:
        body = mapping(node)
        if body is None:
            return cls(key.value, key, Entry(key, node))
        return cls(key.value, key, entry(body, "value"), text(body.get("description")))


@dataclass(eq=False)
class Trigger:
    """One event under `on:`, whatever shape `on:` has: `config` is its mapping (branches, paths, types, inputs
    ...), if any, and `node` its value of any shape (the list of `schedule`), None in `on: push` or `on: [push]`."""

    event: str
    key: Scalar
    config: Mapping | None = None
    node: Node | None = None

    def select(self, key_path: str) -> list[Selected]:
        """What a PATH relative to the trigger's value selects: `types`, `[*].cron`, `inputs.*.type`."""
        return select_text(self.node, ("on", self.event), key_path)

    def get(self, key_path: str) -> Selected:
        return get_text(self.node, ("on", self.event), key_path, f"trigger {self.event!r}")


@dataclass(eq=False)
class WorkflowCall:
    inputs: dict[str, Input] = field(default_factory=dict)
    secrets: dict[str, Secret] = field(default_factory=dict)
    outputs: dict[str, Output] = field(default_factory=dict)


@dataclass(eq=False)
class RunDefaults:
    shell: str | None = None
    working_directory: str | None = None

    @classmethod
    def build(cls, node: Node | None) -> RunDefaults:
        defaults = mapping(node)
        run = mapping(defaults.get("run")) if defaults is not None else None
        if run is None:
            return cls()
        return cls(text(run.get("shell")), text(run.get("working-directory")))


@dataclass(eq=False)
class RunsOn:
    """`runs-on:` as labels, a runner group, or an expression chosen at run time."""

    node: Node
    labels: list[str] = field(default_factory=list)
    group: str | None = None
    expression: str | None = None

    @classmethod
    def build(cls, node: Node) -> RunsOn:
        runs_on = cls(node)
        body = mapping(node)
        labels_node = body.get("labels") if body is not None else node
        if body is not None:
            runs_on.group = text(body.get("group"))
        for label in string_list(labels_node):
            if is_expression(label.value) and runs_on.expression is None:
                runs_on.expression = label.value
            else:
                runs_on.labels.append(label.value)
        return runs_on


@dataclass(eq=False)
class Container:
    """A job container or a service container."""

    node: Node
    image: str | None = None
    options: str | None = None
    env: dict[str, Entry] = field(default_factory=dict)
    ports: list[str] = field(default_factory=list)
    volumes: list[str] = field(default_factory=list)
    credentials: dict[str, Entry] = field(default_factory=dict)

    @classmethod
    def build(cls, node: Node) -> Container:
        if isinstance(node, Scalar):
            return cls(node, image=text(node))
        body = mapping(node)
        container = cls(node)
        if body is not None:
            container.image = text(body.get("image"))
            container.options = text(body.get("options"))
            container.env = entries(body.get("env"))
            container.ports = [port.value for port in string_list(body.get("ports"))]
            container.volumes = [volume.value for volume in string_list(body.get("volumes"))]
            container.credentials = entries(body.get("credentials"))
        return container


@dataclass(eq=False)
class Strategy:
    node: Mapping
    matrix: Node | None = None
    fail_fast: Entry | None = None
    max_parallel: Entry | None = None


@dataclass(eq=False)
class Job:
    """A job. `uses` is set for a reusable-workflow call, which has `with`/`secrets` instead of steps."""

    workflow: Workflow
    id: str
    key: Scalar
    node: Mapping
    name: str | None = None
    uses: ActionRef | None = None
    uses_node: Scalar | None = None
    with_: dict[str, Entry] = field(default_factory=dict)
    secrets: dict[str, Entry] = field(default_factory=dict)
    secrets_inherit: bool = False
    runs_on: RunsOn | None = None
    container: Container | None = None
    services: dict[str, Container] = field(default_factory=dict)
    strategy: Strategy | None = None
    needs: list[Scalar] = field(default_factory=list)
    if_: Entry | None = None
    timeout_minutes: Entry | None = None
    continue_on_error: Entry | None = None
    env: dict[str, Entry] = field(default_factory=dict)
    defaults: RunDefaults = field(default_factory=RunDefaults)
    permissions: Node | None = None
    outputs: dict[str, Entry] = field(default_factory=dict)
    environment: Node | None = None
    concurrency: Node | None = None
    steps: list[Step] = field(default_factory=list)

    @property
    def is_call(self) -> bool:
        return self.uses_node is not None

    @property
    def needs_ids(self) -> list[str]:
        """The ids of the jobs this one names in `needs:` (`needs: a` and `needs: [a]` alike)."""
        return [need.value for need in self.needs]

    def transitive_needs(self) -> set[str]:
        """Every job this one waits for: the jobs it needs, the jobs those need, and so on."""
        seen: set[str] = set()
        waiting = list(self.needs_ids)
        while waiting:
            job_id = waiting.pop()
            if job_id in seen:
                continue
            seen.add(job_id)
            needed = self.workflow.jobs.get(job_id)
            if needed is not None:
                waiting.extend(needed.needs_ids)
        return seen

    @property
    def span(self) -> Span:
        return self.key.span

    @property
    def default_shell(self) -> str | None:
        """The shell of a `run:` step that names none: job defaults, workflow defaults, then the runner's."""
        if self.defaults.shell is not None:
            return self.defaults.shell
        if self.workflow.defaults.shell is not None:
            return self.workflow.defaults.shell
        # A runs-on expression is assumed to pick a Linux or macOS runner, where the default is bash.
        if self.runs_on is not None and any("windows" in label.lower() for label in self.runs_on.labels):
            return "pwsh"
        return "bash"

    def step(self, name_or_id: str) -> Step:
        """The step with this name or id; LookupError naming the steps that exist otherwise."""
        return find_step(self.steps, name_or_id, f"job {self.id!r}")

    def steps_matching(self, uses: str | None = None, name: str | None = None, id: str | None = None) -> list[Step]:
        """The steps whose `uses` (`owner/repo[/path]`, or the whole value with `@`), name and id match these globs."""
        return matching_steps(self.steps, uses, name, id)

    def select(self, key_path: str) -> list[Selected]:
        """What a PATH relative to the job selects: `needs`, `strategy.matrix.arch[*]`, `steps[*].uses`."""
        return select_text(self.node, ("jobs", self.id), key_path)

    def get(self, key_path: str) -> Selected:
        return get_text(self.node, ("jobs", self.id), key_path, f"job {self.id!r}")

    def __repr__(self) -> str:
        return f"Job({self.id!r} at {self.key.span.path}:{self.key.span.line}:{self.key.span.column})"

    @property
    def extent(self) -> Span:
        """From the job's key to the end of its body."""
        key, body = self.key.span, self.node.span
        return Span(key.path, key.line, key.column, body.end_line, body.end_column)

    def occurrences(self, text: str) -> list[Occurrence]:
        """Where `text` occurs in the job's YAML, comments included."""
        return occurrences(self.workflow.source, self.extent, text)

    @classmethod
    def build(cls, workflow: Workflow, key: Scalar, node: Mapping) -> Job:
        job = cls(workflow, key.value, key, node)
        job.name = text(node.get("name"))
        uses = node.get("uses")
        if isinstance(uses, Scalar) and uses.value:
            job.uses_node = uses
            parsed = ActionRef.parse(uses.value)
            job.uses = parsed if isinstance(parsed, ActionRef) else None
        job.with_ = entries(node.get("with"))
        secrets = node.get("secrets")
        job.secrets_inherit = isinstance(secrets, Scalar) and secrets.value == "inherit"
        job.secrets = entries(secrets)
        runs_on = node.get("runs-on")
        job.runs_on = RunsOn.build(runs_on) if runs_on is not None else None
        container = node.get("container")
        job.container = Container.build(container) if container is not None else None
        job.services = {name: Container.build(item.value) for name, item in entries(node.get("services")).items()}
        strategy = mapping(node.get("strategy"))
        if strategy is not None:
            job.strategy = Strategy(
                strategy, strategy.get("matrix"), entry(strategy, "fail-fast"), entry(strategy, "max-parallel")
            )
        job.needs = string_list(node.get("needs"))
        job.if_ = entry(node, "if")
        job.timeout_minutes = entry(node, "timeout-minutes")
        job.continue_on_error = entry(node, "continue-on-error")
        job.env = entries(node.get("env"))
        job.defaults = RunDefaults.build(node.get("defaults"))
        job.permissions = node.get("permissions")
        job.outputs = entries(node.get("outputs"))
        job.environment = node.get("environment")
        job.concurrency = node.get("concurrency")
        steps = node.get("steps")
        if isinstance(steps, Sequence):
            job.steps = Step.build_all(job, steps, workflow.source)
        return job


@dataclass(eq=False)
class Workflow:
    path: str
    document: Document
    node: Mapping
    name: str | None = None
    triggers: dict[str, Trigger] = field(default_factory=dict)
    workflow_call: WorkflowCall | None = None
    workflow_dispatch_inputs: dict[str, Input] = field(default_factory=dict)
    env: dict[str, Entry] = field(default_factory=dict)
    permissions: Node | None = None
    concurrency: Node | None = None
    defaults: RunDefaults = field(default_factory=RunDefaults)
    jobs: dict[str, Job] = field(default_factory=dict)

    @property
    def source(self) -> SourceFile:
        return self.document.source

    def job(self, job_id: str) -> Job:
        try:
            return self.jobs[job_id]
        except KeyError:
            raise LookupError(f"{self.path} has no job {job_id!r}; jobs: {list(self.jobs)}") from None

    def steps(self) -> Iterator[Step]:
        for job in self.jobs.values():
            yield from job.steps

    def step(self, name_or_id: str) -> Step:
        """The first step, in any job, with this name or id."""
        return find_step(self.steps(), name_or_id, self.path)

    def occurrences(self, text: str) -> list[Occurrence]:
        """Where `text` occurs in the workflow file, comments included."""
        return occurrences(self.source, None, text)

    def select(self, key_path: str) -> list[Selected]:
        """What a PATH from the workflow's root selects: `jobs.stage-*-gpu-*.needs`, `on.schedule[*].cron`."""
        return select_text(self.node, (), key_path)

    def get(self, key_path: str) -> Selected:
        """The first node a PATH selects; LookupError with the keys that exist where it stops matching."""
        return get_text(self.node, (), key_path, self.path)

    @classmethod
    def from_document(cls, document: Document) -> Workflow | None:
        """The workflow of a usable document whose root is a mapping; None otherwise."""
        root = document.root
        if not document.usable or not isinstance(root, Mapping):
            return None
        workflow = cls(document.path, document, root)
        workflow.name = text(root.get("name"))
        workflow.triggers = _triggers(root.get("on"))
        call = workflow.triggers.get("workflow_call")
        if call is not None:
            workflow.workflow_call = _workflow_call(call.config)
        dispatch = workflow.triggers.get("workflow_dispatch")
        if dispatch is not None and dispatch.config is not None:
            workflow.workflow_dispatch_inputs = {
                key.value: Input.build(key, value) for key, value in pairs(dispatch.config.get("inputs"))
            }
        workflow.env = entries(root.get("env"))
        workflow.permissions = root.get("permissions")
        workflow.concurrency = root.get("concurrency")
        workflow.defaults = RunDefaults.build(root.get("defaults"))
        for key, value in pairs(root.get("jobs")):
            if isinstance(value, Mapping):
                workflow.jobs[key.value] = Job.build(workflow, key, value)
        return workflow


def _triggers(node: Node | None) -> dict[str, Trigger]:
    if isinstance(node, Scalar):
        return {node.value: Trigger(node.value, node)}
    if isinstance(node, Sequence):
        return {item.value: Trigger(item.value, item) for item in node.items if isinstance(item, Scalar)}
    return {key.value: Trigger(key.value, key, mapping(value), _unless_null(value)) for key, value in pairs(node)}


def _unless_null(node: Node) -> Node | None:
    return None if isinstance(node, Scalar) and node.resolved is None else node


def _workflow_call(config: Mapping | None) -> WorkflowCall:
    call = WorkflowCall()
    if config is None:
        return call
    call.inputs = {key.value: Input.build(key, value) for key, value in pairs(config.get("inputs"))}
    for key, value in pairs(config.get("secrets")):
        body = mapping(value)
        required = body.get("required") if body is not None else None
        call.secrets[key.value] = Secret(
            key.value,
            key,
            isinstance(required, Scalar) and required.resolved is True,
            text(body.get("description")) if body is not None else None,
        )
    call.outputs = {key.value: Output.build(key, value) for key, value in pairs(config.get("outputs"))}
    return call
