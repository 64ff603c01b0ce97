"""The flow of a job or a composite action: its steps, in order, as reads and writes of places.

Each step adds to the job's flow:

- `actions/checkout`: this repository (no `repository:`, or
  `${{ github.repository }}`) or another one, at its `path:`;
- `actions/download-artifact` and `actions/cache`: what they restore, at their
  `path:` (the workspace when none; a glob, `./*` or `**`, stands for every
  place it may match);
- `docker/build-push-action`: an image build (`Build`), with its `file:` and
  `context:`; without `context:` it builds from the repository at the ref (Git
  context), not from the workspace;
- a setup action (`actions/setup-python`, `docker/login-action`...): nothing;
- any other action: it may have written anywhere in the workspace (`opaque`),
  and at each path given in its `with:`;
- a `run:` script: what its commands read and write (`flow.Walker`), starting
  in the step's `working-directory` (or the job's or workflow's default), with
  the `env:` of the workflow, job and step, and what earlier steps appended to
  `$GITHUB_ENV`.

A composite action's flow starts with this repository in the workspace (a
local action runs after the caller's checkout) and its own folder at
`$GITHUB_ACTION_PATH`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ci_checks.core.diagnostics import Span
from ci_checks.model.action import Action
from ci_checks.model.files.effects import Output, Write
from ci_checks.model.files.flow import Flow, Walker
from ci_checks.model.files.places import ACTION, WORKSPACE, Place, Scope, place_of
from ci_checks.model.references import docker_build, unwrapped
from ci_checks.model.steps import Step
from ci_checks.model.values import Entry
from ci_checks.model.workflow import Job
from ci_checks.syntax.shell import Command

HARMLESS_ACTIONS = re.compile(
    r"(actions/(setup-[\w.-]+|github-script|create-github-app-token|labeler|stale|attest-build-provenance"
    r"|upload-artifact|cache/save)"
    r"|[\w.-]+/setup-[\w.-]+|docker/(setup-[\w-]+|login-action|metadata-action)|step-security/harden-runner"
    r"|aws-actions/configure-aws-credentials|google-github-actions/(auth|setup-gcloud)|azure/login"
    r"|[\w.-]+/free-disk-space[\w.-]*|[\w.-]+/maximize-build-space|ilammy/msvc-dev-cmd)\Z",
    re.IGNORECASE,
)
"""Actions that put no file in the workspace that a later step reads by name."""

_BUILD_PUSH = re.compile(r"docker/build-push-action\Z", re.IGNORECASE)
_RESTORES = re.compile(r"actions/(download-artifact|cache|cache/restore)\Z", re.IGNORECASE)
_THIS_REPOSITORY = re.compile(
    r"\$\{\{\s*(github\.repository|github\.event\.pull_request\.head\.repo\.full_name)\s*\}\}\Z"
)
_ARGUMENT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LATER_ARGUMENT = re.compile(r",\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*)=")
_STEP_OUTPUT = re.compile(r"\$\{\{\s*steps\.(?P<step>[\w-]+)\.outputs\.(?P<name>[\w-]+)\s*\}\}\Z")


@dataclass(frozen=True)
class Checkout:
    """An `actions/checkout` step: of this repository or another, into `place` (None: unknown)."""

    step: Step
    this_repository: bool
    place: Place | None


def checkout(step: Step, scope: Scope | None = None) -> Checkout | None:
    if step.uses is None or step.uses.kind != "repository" or step.uses.name.lower() != "actions/checkout":
        return None
    repository = step.with_.get("repository")
    written = repository.text.strip() if repository is not None and repository.text is not None else ""
    this = not written or _THIS_REPOSITORY.match(written) is not None
    path = _with(step, "path")
    place = (scope or Scope(None)).place(path, Place(WORKSPACE)) if path else Place(WORKSPACE)
    if place is not None and (place.base != WORKSPACE or place.outside or place.glob):
        place = None
    return Checkout(step, this, place)


BuildArguments = tuple[tuple[str, str | None], ...]
"""The `--build-arg`s of a build, by name: each with the value it passes (None: one that cannot be known)."""


@dataclass(frozen=True, eq=False)
class Build:
    """A Docker image build at `seq` of a job's flow: the Dockerfiles it may build (empty: unknown) and its
    context (None: unknown). `git_context` says the context is the repository at the ref, not the workspace.
    `arguments` are the build arguments it passes (None: they cannot be read, any `ARG` may be set)."""

    seq: int
    dockerfiles: tuple[Place, ...]
    context: Place | None
    span: Span
    step: Step
    git_context: bool = False
    arguments: BuildArguments | None = ()


@dataclass(eq=False)
class JobFlow(Flow):
    """A job's or a composite action's flow, with the image builds among its steps and its checkouts."""

    builds: list[Build] = field(default_factory=list)
    checkouts: list[Checkout] = field(default_factory=list)
    starts: dict[int, int] = field(default_factory=dict)
    """Where each step (by its index) starts in the flow's sequence."""
    directories: dict[int, Place | None] = field(default_factory=dict)
    """The working directory each `run:` step (by its index) starts in, whatever its shell (None: unknown)."""


def job_flow(job: Job, steps: int | None = None) -> JobFlow:
    """The flow of a job's steps, or of its first `steps` steps."""
    flow = JobFlow()
    env = {**_env(job.workflow.env), **_env(job.env)}
    for step in job.steps[:steps]:
        _step(flow, step, env)
    return flow


def action_flow(action: Action, folder: str) -> JobFlow:
    """The flow of a composite action whose `action.yml` is in repository folder `folder`."""
    flow = JobFlow()
    here = Span.point(action.path)
    flow.note(Write("checkout", Place(WORKSPACE), this_repository=True), here, None, None)
    flow.note(Write("checkout", Place(ACTION), this_repository=True, root=folder), here, None, None)
    env: dict[str, str | None] = {}
    for step in action.steps:
        _step(flow, step, env)
    return flow


def _env(entries: dict[str, Entry]) -> dict[str, str | None]:
    return {name: entry.text for name, entry in entries.items()}


def _with(step: Step, name: str) -> str:
    entry = step.with_.get(name)
    return entry.text.strip() if entry is not None and entry.text is not None else ""


def _step(flow: JobFlow, step: Step, env: dict[str, str | None]) -> None:
    flow.starts[step.index] = flow.next_seq()
    scope = Scope(Place(WORKSPACE), {**env, **_env(step.env)})
    if step.uses is not None:
        _action(flow, step, scope)
        return
    if step.run is None:
        return
    directory = _working_directory(step)
    if directory is not None:
        expanded = scope.expand(directory)
        scope.cwd = place_of(expanded, Place(WORKSPACE)) if expanded is not None else None
    flow.directories[step.index] = scope.cwd
    script = step.script
    if script is None:
        return
    first_read, first_event = len(flow.reads), len(flow.events)
    Walker(flow, step).script(script, scope)
    _builds_of_commands(flow, step, first_read)
    for event in flow.events[first_event:]:
        if isinstance(event.effect, Output) and event.effect.to_env:
            env[event.effect.name] = scope.expand(event.effect.value)


def _working_directory(step: Step) -> str | None:
    """The `working-directory` a `run:` step starts in as written: its own, else its job's default, else its
    workflow's (a composite action has no defaults); None for the workspace."""
    directory = step.working_directory
    if directory is None and isinstance(step.owner, Job):
        directory = step.owner.defaults.working_directory or step.owner.workflow.defaults.working_directory
    return directory


def _action(flow: JobFlow, step: Step, scope: Scope) -> None:
    """What a `uses:` step puts in the workspace."""
    span = step.uses_node.span if step.uses_node is not None else step.span
    found = checkout(step, scope)
    name = step.uses.name if step.uses is not None and step.uses.kind == "repository" else None
    if found is not None:
        flow.checkouts.append(found)
        flow.note(Write("checkout", found.place, this_repository=found.this_repository), span, None, step)
    elif name is None or HARMLESS_ACTIONS.match(name):
        return  # a local action runs after the checkout it needs; a setup action writes nothing read by name
    elif _RESTORES.match(name):
        paths = [line.strip() for line in _with(step, "path").splitlines() if not line.strip().startswith("!")]
        for path in paths or ["."]:
            flow.note(Write("download", scope.where(path)), span, None, step)
    elif _BUILD_PUSH.match(name):
        _build_push(flow, step, scope, span)
    else:
        flow.note(Write("opaque", Place(WORKSPACE)), span, None, step)
        for entry in step.with_.values():
            for line in (entry.text or "").split():
                place = scope.place(line) if "/" in line or line.startswith(".") else None
                if place is not None and place.path:
                    flow.note(Write("named", place), entry.span, None, step)


def _build_push(flow: JobFlow, step: Step, scope: Scope, span: Span) -> None:
    context_text = _with(step, "context")
    context = _candidates(flow, context_text, scope) if context_text else [Place(WORKSPACE)]
    file_text = _with(step, "file")
    seq = flow.next_seq()
    arguments = _build_push_arguments(step)
    contexts: list[Place | None] = [*context] if context else [None]
    for place in contexts:
        if file_text:
            dockerfiles = _candidates(flow, file_text, scope)
        else:
            dockerfiles = [place.joined("Dockerfile")] if place is not None else []
        flow.builds.append(Build(seq, tuple(dockerfiles), place, span, step, not context_text, arguments))


def _candidates(flow: JobFlow, text: str, scope: Scope) -> list[Place]:
    """The places a `with:` value may name: a step's output stands for every value that step writes to it."""
    match = _STEP_OUTPUT.match(text)
    values = flow.outputs.get(match.group("step"), {}).get(match.group("name"), []) if match else [text]
    places = [scope.place(value) for value in values]
    return [place for place in places if place is not None]


def _builds_of_commands(flow: JobFlow, step: Step, first_read: int) -> None:
    """`docker build [-f FILE] CONTEXT`: the builds among the commands a step's script ran."""
    by_command: dict[int, tuple[Command, int, list[Place], list[Place]]] = {}
    for read in flow.reads[first_read:]:
        kind = read.reference.kind
        if kind not in ("dockerfile", "context"):
            continue
        command = read.reference.command
        _, _, files, contexts = by_command.setdefault(id(command), (command, read.seq, [], []))
        (files if kind == "dockerfile" else contexts).append(read.reference.place)
    for command, seq, files, contexts in by_command.values():
        context = contexts[0] if contexts else None
        names_file = any(word.startswith(("-f", "--file")) for word in command.argv)
        dockerfiles = files if names_file else ([context.joined("Dockerfile")] if context is not None else [])
        flow.builds.append(Build(seq, tuple(dockerfiles), context, command.span, step, False, _passed(command)))


def _passed(command: Command) -> BuildArguments | None:
    """The `--build-arg`s of a `docker build` command line: a value is known when it is written as it is
    (`NAME=docker/patches`); `NAME` alone passes the variable of the environment. None when more words may hide
    arguments (`docker build $ARGS .`, `"${ARGS[@]}"`, a word that is not `NAME[=value]`, an arguments file)."""
    words = unwrapped(command.words)
    build = docker_build(words[1:]) if words else None
    if build is None or build.argument_file or len(build.positional) > 1:
        return None
    passed: dict[str, str | None] = {}
    for word in build.arguments:
        name, equals, value = word.value.partition("=") if word is not None else ("", "", "")
        if word is None or _ARGUMENT_NAME.fullmatch(name) is None:
            return None
        passed[name] = value if equals and word.static and "$" not in value else None
    return tuple(sorted(passed.items()))


def _build_push_arguments(step: Step) -> BuildArguments | None:
    """The `build-args:` of `docker/build-push-action`, a `NAME=value` a line: a value with an expression or a
    quote is not known, nor are values of a line with a comma (older versions of the action split lines at
    commas). None when a line is not `NAME[=value]` (`${{ steps.args.outputs.list }}`: any name)."""
    entry = step.with_.get("build-args")
    if entry is None:
        return ()
    if entry.text is None:
        return None
    passed: dict[str, str | None] = {}
    for line in filter(None, (line.strip() for line in entry.text.splitlines())):
        name, equals, value = line.partition("=")
        if _ARGUMENT_NAME.fullmatch(name) is None:
            return None
        known = bool(equals) and "," not in line and not any(mark in value for mark in "$\"'")
        passed[name] = value if known else None
        for other in _LATER_ARGUMENT.finditer(line):
            passed[other.group("name")] = None
    return tuple(sorted(passed.items()))
