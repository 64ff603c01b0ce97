"""A container on a GPU runner is started without access to the GPUs.

## What it does
For jobs whose runner is an AMD GPU machine or an NVIDIA one, checks that
containers get the GPUs. The vendor comes from the configuration's
`runners:` inventory (`vendor: amd`, `vendor: nvidia`), and with no entry
there, from what the repository says of the machine: the containers of the
other jobs on the same labels (`--device=/dev/kfd` is AMD, `--gpus` NVIDIA),
else the label names read word by word (`mi300x`, `gfx942`, `linux-mi355-gpu-8`
are AMD; `h100`, `nvidia-a100-8gpu`, `l40s`, `4gpu` NVIDIA; `amd`, `rocm`,
`nvidia`, `cuda`, `cu124` beside a GPU or `self-hosted`). Labels that name
another accelerator (`intel`, `xpu`, `gaudi2`) are left alone.

- the job's `container:` must have `--device=/dev/kfd` and
  `--device=/dev/dri` in `options:` on AMD (or `--privileged`), and
  `--gpus` on NVIDIA (or `--runtime=nvidia`, or a CDI `--device
  nvidia.com/gpu=...`);
- so must every `docker run` (and `podman run`, `docker container run`,
  `docker create`) in the job's `run:` scripts, also one run through `sudo`,
  `env` or `time`, or inside `$(...)` (`nvidia-docker run` gives the GPUs
  itself);
- so must each service that `docker compose up|run|create` (or
  `docker-compose`) starts, as its Compose file in the repository describes it
  (`-f FILE`, else `compose.yaml` and the other default names in the step's
  working directory): `devices:` with `/dev/kfd` and `/dev/dri`, or
  `privileged: true`, on AMD; `gpus:`, `runtime: nvidia` or a device
  reservation (`deploy.resources.reservations.devices` with `driver: nvidia`
  or `capabilities: [gpu]`) on NVIDIA. A service whose GPU settings hold a
  variable or come from `extends:` or a merge key, a file named from a folder
  a `cd` left, or several files merged, are not followed;
- so must those of the local composite actions the job's steps use, judged
  with the inputs each step passes (`devices: --device=/dev/dri`) or the
  action's defaults.

Each leg of the job is judged for itself (each matrix combination, each
caller's inputs, each event; see the value model in `docs/model.md`): the
runner, the container's `options:` and the `docker run` words are evaluated
there, with the job's and step's `env:`, the script's own variables
(`OPTS="--device=/dev/kfd"`, `${DOCKER_ARGS:-}`, a `for` loop's words, a
sourced repository script) and `${{ }}` expressions; the message names the
leg's values it read (`matrix.runner` = `linux-mi300-gpu-1`). A word whose
value cannot be known in the leg (a command's output, a step output written
by a program, `vars.*`) may hold the devices: where such a word stands among
the options, the command is not judged; the image (a variable or expression
named for one: `"$IMAGE"`, `${{ matrix.docker_image }}`) and the values of
options (`-v "$(pwd):/w"`) are not options. A leg that never runs (`if: false`, a
skipped need) and a step whose `if:` is false there are passed over; so is a
variable that may hold the devices on one path (`if rocminfo; then
DEV=--device=/dev/kfd; fi`). Runners are found as for
`unknown-runner-label`. Workflows with no `on:` never run and are not
judged.

## Why it matters
Without the devices the container sees no GPU: ROCm reports no agents,
`torch.cuda.is_available()` is False, and the tests either fail after the
whole setup or, worse, pass on the CPU.

## Example
```yaml
runs-on: [self-hosted, amd, mi300x]
container:
  image: rocm/pytorch:latest
  options: --ipc=host --shm-size=16g
```

## Fix
AMD: `options: --device=/dev/kfd --device=/dev/dri --group-add video`;
NVIDIA: `options: --gpus all`.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import product

from ci_checks.core.diagnostics import Diagnostic, Related, Severity, Span
from ci_checks.core.repository import FileKind
from ci_checks.model import Action, Step
from ci_checks.model.compose import COMPOSE_FILES, services
from ci_checks.model.evaluation import as_text
from ci_checks.model.inventory import has_gpus
from ci_checks.model.references import unwrapped
from ci_checks.model.runners import RunnerChoice
from ci_checks.model.valuation import Leg
from ci_checks.model.valuation.runners import runners
from ci_checks.model.valuation.shell import Env, Expression, word_values
from ci_checks.rules.context import RepositoryContext
from ci_checks.rules.rule import Rule, RuleGroup, RuleStatus
from ci_checks.syntax import yamlpos
from ci_checks.syntax.shell import Command, Word
from ci_checks.syntax.yamlpos import Mapping, Node, Scalar, Sequence

_WANTED = {
    "amd": "`--device=/dev/kfd` and `--device=/dev/dri`",
    "nvidia": "`--gpus`",
}
_SEES = {"amd": "ROCm sees no GPU inside it", "nvidia": "CUDA sees no GPU inside it"}
_NAMES = {"amd": "an AMD GPU runner", "nvidia": "an NVIDIA GPU runner"}
_VALUE_OPTIONS = frozenset({
    "-a", "--attach", "--add-host", "--annotation", "--blkio-weight", "--blkio-weight-device", "--cap-add",
    "--cap-drop", "--cgroup-parent", "--cgroupns", "--cidfile", "--cpu-period", "--cpu-quota", "--cpu-rt-period",
    "--cpu-rt-runtime", "-c", "--cpu-shares", "--cpus", "--cpuset-cpus", "--cpuset-mems", "--detach-keys", "--device",
    "--device-cgroup-rule", "--device-read-bps", "--device-read-iops", "--device-write-bps", "--device-write-iops",
    "--dns", "--dns-option", "--dns-search", "--domainname", "--entrypoint", "-e", "--env", "--env-file", "--expose",
    "--gpus", "--group-add", "--health-cmd", "--health-interval", "--health-retries", "--health-start-period",
    "--health-start-interval", "--health-timeout", "-h", "--hostname", "--ip", "--ip6", "--ipc", "--isolation",
    "--kernel-memory", "-l", "--label", "--label-file", "--link", "--link-local-ip", "--log-driver", "--log-opt",
    "--mac-address", "-m", "--memory", "--memory-reservation", "--memory-swap", "--memory-swappiness", "--mount",
    "--name", "--network", "--net", "--network-alias", "--oom-score-adj", "--pid", "--pids-limit", "--platform", "-p",
    "--publish", "--pull", "--restart", "--runtime", "--security-opt", "--shm-size", "--stop-signal",
    "--stop-timeout", "--storage-opt", "--sysctl", "--tmpfs", "--ulimit", "-u", "--user", "--userns", "--uts", "-v",
    "--volume", "--volume-driver", "--volumes-from", "-w", "--workdir", "--hooks-dir", "--cgroup-conf",
    "--chrootdirs", "--secret", "--userns-gid-map", "--userns-uid-map", "--uidmap", "--gidmap", "--subuidname",
    "--subgidname", "--requires", "--pod", "--pod-id-file", "--preserve-fds", "--sdnotify", "--seccomp-policy",
    "--timezone", "--umask", "--variant", "--arch", "--os", "--personality", "--passwd-entry", "--group-entry",
    "--init-path", "--log-level", "--rdt-class", "--decryption-key", "--image-volume", "--pidfile"
})  # fmt: skip
"""`docker run` and `podman run` options that take a value (the next word, unless written `--opt=value`)."""
_SHORT_VALUES = frozenset("acehlmpuvw")
_IMAGE_NAME = re.compile(r"image|img|tag|container|uri", re.IGNORECASE)
_NAME = re.compile(r"(?:\$\{\{\s*(?P<expression>[^}]*?)\s*\}\}|\$\{?(?P<variable>[A-Za-z_][A-Za-z0-9_]*))")
_MAX_ARGVS = 64


def check_repository(context: RepositoryContext) -> Iterator[Diagnostic]:
    if not context.runners:
        return
    valuation = context.valuation
    for workflow in context.target_workflows:
        if not workflow.triggers:
            continue  # a workflow with no `on:` never runs
        for job in workflow.jobs.values():
            if job.is_call or not any(
                choice.vendor(context.runners) is not None
                for choice in context.resolver.runners(job, running=False).choices
            ):
                continue  # no leg of it asks for a GPU runner
            reported: set[tuple[Span, str]] = set()
            for leg in valuation.legs(job).legs:
                vendors: dict[str, RunnerChoice] = {}
                for choice in runners(leg).choices:
                    vendor = choice.vendor(context.runners)
                    if vendor is not None:
                        vendors.setdefault(vendor, choice)
                if not vendors or valuation.runs(leg) is False:
                    continue  # (a leg on no GPU runner is not judged, whether it runs or not)
                for vendor, choice in vendors.items():
                    for finding in [
                        *_container(leg, vendor, choice, context),
                        *_docker_runs(leg, vendor, choice, context),
                    ]:
                        key = (finding.span, vendor)
                        if key not in reported:
                            reported.add(key)
                            yield finding


def _leg_shown(leg: Leg, *texts: str, step: Step | None = None) -> str:
    """The values of the leg that the runner and these texts read, for the message: " (`matrix.gpu` = `b200`)"."""
    runs_on = leg.job.runs_on
    runs_on_text = _text_of(runs_on.node) if runs_on is not None else ""
    described = leg.describe(runs_on_text, *texts, step=step)
    return f" ({described})" if described else ""


def _text_of(node: Node) -> str:
    """The text of a value's scalars, for the names of the values it reads."""
    if isinstance(node, Scalar):
        return node.value
    if isinstance(node, Mapping):
        return " ".join(_text_of(value) for _, value in node.items())
    if isinstance(node, Sequence):
        return " ".join(_text_of(item) for item in node.items)
    return ""


def _container(leg: Leg, vendor: str, choice: RunnerChoice, context: RepositoryContext) -> Iterator[Diagnostic]:
    job = leg.job
    container = job.container
    if container is None:
        return
    node = container.node
    image_text = container.image or ""
    images = leg.possible(image_text) if image_text else ("",)
    if all(as_text(image) == "" for image in images):
        return  # no image: GitHub runs the job on the runner itself
    options_text = container.options or ""
    options = [as_text(value) for value in leg.possible(options_text)]
    if any(not isinstance(value, str) or has_gpus(vendor, value.split()) for value in options):
        return  # the devices are given, or may be by an option not known here
    options_node = node.get("options") if isinstance(node, Mapping) else None
    image_key = node.key_node("image") if isinstance(node, Mapping) else None
    span = options_node.span if options_node is not None else image_key.span if image_key is not None else node.span
    where = "its `options:`" if options_node is not None else "`options:`"
    message = (
        f"the container of job '{job.id}'{_leg_shown(leg, image_text, options_text)} runs on {_NAMES[vendor]} "
        f"(`{', '.join(choice.values)}`) without {_WANTED[vendor]} in {where}; {_SEES[vendor]}"
    )
    yield RULE.diagnostic(span, message, choice.related(context.runners, machine=True))


def _docker_runs(
    leg: Leg,
    vendor: str,
    choice: RunnerChoice,
    context: RepositoryContext,
    steps: list[Step] | None = None,
    where: str = "",
    depth: int = 0,
) -> Iterator[Diagnostic]:
    """The containers the `run:` steps of a leg start, and those of the local composite actions its steps use (in
    the leg the action runs in, its inputs those the step passes)."""
    job = leg.job
    where = where or f"job '{job.id}'"
    for step in job.steps if steps is None else steps:
        if context.valuation.step_runs(leg, step) is False:
            continue
        action = _composite(step, context) if depth < _MAX_ACTIONS_DEEP else None
        if action is not None:
            used = f"action `{action.path}` used by job '{job.id}'"
            inner = context.valuation.action_leg(leg, step, action)
            yield from _docker_runs(inner, vendor, choice, context, action.steps, used, depth + 1)
            continue
        if step.run is None or ("docker" not in step.run.value and "podman" not in step.run.value):
            continue  # no container is started by a script that names neither program
        script = step.script
        if script is None:
            continue
        values = leg.shell(step)
        expression = leg.expression(step)
        moved = False
        for command in script.commands():
            moved = moved or command.name in ("cd", "pushd", "popd")
            env = values.before(command) if values is not None else {}
            started = _container_run(command)
            if started is None:
                if not moved:  # a Compose file named relative to a folder a `cd` left is not followed
                    yield from _compose(leg, step, command, env, expression, vendor, choice, context, where)
                continue
            shown, words = started
            if _may_have_gpus(vendor, words, env, expression):
                continue
            leg_shown = _leg_shown(leg, command.text, step=step)
            message = (
                f"`{shown}` in {where}{leg_shown} starts a container on {_NAMES[vendor]} without "
                f"{_WANTED[vendor]}; {_SEES[vendor]}"
            )
            related = [*choice.related(context.runners, machine=True), *_passed(leg, command.text, step)]
            yield RULE.diagnostic(command.span, message, list(dict.fromkeys(related)))


def _passed(leg: Leg, text: str, step: Step) -> list[Related]:
    """Where the values of the leg a command reads were passed in (a caller's `with:`, a step's for its action)."""
    return [note for binding in leg.reads(text, step=step) for note in binding.via]


_MAX_ACTIONS_DEEP = 3
"""How many local composite actions deep the steps a job runs are followed."""


def _composite(step: Step, context: RepositoryContext) -> Action | None:
    """The local composite action a step uses (`uses: ./.github/actions/x`), if the repository has it."""
    if step.uses is None or step.uses.kind != "local" or context.repository.escapes(step.uses.path) is not None:
        return None
    folder = posixpath.normpath(step.uses.path)
    for name in ("action.yml", "action.yaml"):
        path = posixpath.join(folder, name)
        if context.repository.exists(path):
            action = context.workspace.load(path).action
            return action if action is not None and action.is_composite else None
    return None


def _compose(
    leg: Leg,
    step: Step,
    command: Command,
    env: Env,
    expression: Expression,
    vendor: str,
    choice: RunnerChoice,
    context: RepositoryContext,
    where: str,
) -> Iterator[Diagnostic]:
    """`docker compose up|run|create`: each service it starts whose Compose file gives its containers no GPUs."""
    started = _compose_command(command, env, expression)
    if started is None:
        return
    shown, files, named = started
    folder = posixpath.normpath(step.working_directory or leg.job.defaults.working_directory or ".")
    paths = [posixpath.normpath(posixpath.join(folder, file)) for file in files]
    if not paths:
        defaults = (posixpath.normpath(posixpath.join(folder, name)) for name in COMPOSE_FILES)
        paths = [next((path for path in defaults if context.repository.exists(path)), "")]
    if len(paths) != 1 or not paths[0] or paths[0].startswith(("../", "/")) or not context.repository.exists(paths[0]):
        return  # several files merge, or one not in the repository: not followed
    loaded = context.load(paths[0])
    document = yamlpos.parse(loaded.source) if loaded.readable else None
    found = services(document.root) if document is not None and document.usable else {}
    judged = [found.get(name) for name in named] if named else list(found.values())
    for service in judged:
        if service is None or service.vendors is None or vendor in service.vendors:
            continue
        leg_shown = _leg_shown(leg, command.text, step=step)
        message = (
            f"`{shown}` in {where}{leg_shown} starts service `{service.name}` of `{paths[0]}` on "
            f"{_NAMES[vendor]}, whose Compose file gives it no {_COMPOSE_WANTED[vendor]}; {_SEES[vendor]}"
        )
        related = [
            Related(service.key.span, f"service `{service.name}`"),
            *choice.related(context.runners, machine=True),
        ]
        yield RULE.diagnostic(command.span, message, related)


_COMPOSE_WANTED = {
    "amd": "`/dev/kfd` and `/dev/dri` in `devices:` (nor `privileged: true`)",
    "nvidia": "GPU (`gpus:`, `runtime: nvidia`, or a device reservation with `driver: nvidia`)",
}
_COMPOSE_VALUE_OPTIONS = frozenset({"-f", "--file", "-p", "--project-name", "--profile", "--env-file", "--ansi",
                                    "--progress", "--parallel"})  # fmt: skip
_COMPOSE_STARTS = frozenset({"up", "run", "create"})
_START_VALUE_OPTIONS = frozenset({"--scale", "--exit-code-from", "-t", "--timeout", "--pull", "--attach",
                                  "--no-attach", "--wait-timeout", "-e", "--env", "-v", "--volume", "-w", "--workdir",
                                  "-u", "--user", "--entrypoint", "--name", "-l", "--label", "-p", "--publish",
                                  "--cap-add", "--cap-drop"})  # fmt: skip


def _compose_command(command: Command, env: Env, expression: Expression) -> tuple[str, list[str], list[str]] | None:
    """`docker compose [-f FILE]... up|run|create [SERVICE]...` (or `docker-compose`) with every word known: how it
    is written, the files it names and the services it starts (none: all); None for any other command, or one that
    sets its folder (`--project-directory`) or gives a container GPUs itself (`run --gpus`)."""
    words = unwrapped(command.words)
    program = posixpath.basename(words[0].value) if words else ""
    if program in ("docker", "podman") and len(words) > 1 and words[1].value == "compose":
        shown, rest = f"{words[0].value} compose", words[2:]
    elif program in ("docker-compose", "podman-compose"):
        shown, rest = words[0].value, words[1:]
    else:
        return None
    argv: list[str] = []
    for word in rest:
        found = word_values(word, env, expression)
        if found is None or len(found) != 1:
            return None
        argv.extend(found[0])
    files: list[str] = []
    index = 0
    while index < len(argv) and argv[index].startswith("-"):
        option, _, attached = argv[index].partition("=")
        if option == "--project-directory":
            return None
        if option in ("-f", "--file"):
            files.append(attached or (argv[index + 1] if index + 1 < len(argv) else ""))
        index += 1 if attached or option not in _COMPOSE_VALUE_OPTIONS else 2
    if index >= len(argv) or argv[index] not in _COMPOSE_STARTS:
        return None
    subcommand, arguments = argv[index], argv[index + 1 :]
    named: list[str] = []
    position = 0
    while position < len(arguments):
        argument = arguments[position]
        if argument.startswith(("--gpus", "--device", "--privileged")):
            return None
        if argument.startswith("-"):
            position += 2 if argument in _START_VALUE_OPTIONS else 1
            continue
        named.append(argument)
        if subcommand == "run":
            break  # the rest is the command run in it
        position += 1
    return f"{shown} {subcommand}", files, named


@dataclass(frozen=True)
class _Unknown:
    """An argv word whose value is not known in the leg, and the variable or expression it is named by."""

    name: str


_Arg = str | _Unknown


def _may_have_gpus(vendor: str, words: list[Word], env: Env, expression: Expression) -> bool:
    """Whether any way the words may expand gives the container the GPUs, or cannot be told to."""
    alternatives: list[list[list[_Arg]]] = []
    for word in words:
        values = word_values(word, env, expression)
        if values is None:
            alternatives.append([[_Unknown(_named(word.value))]])
        else:
            alternatives.append([list(fields) for fields in values])
    for count, combination in enumerate(product(*alternatives)):
        if count >= _MAX_ARGVS:
            return True  # more ways than are followed: not judged
        options = _options([arg for fields in combination for arg in fields])
        if options is None or has_gpus(vendor, options):
            return True
    return False


def _named(text: str) -> str:
    match = _NAME.search(text)
    if match is None:
        return ""
    return (match.group("expression") or match.group("variable") or "").rsplit(".", 1)[-1]


def _options(arguments: list[_Arg]) -> list[str] | None:
    """The options of `docker run` before its image (values included); None where a word that is not known may be
    options (an image named for one is the image)."""
    found: list[str] = []
    index = 0
    while index < len(arguments):
        argument = arguments[index]
        if isinstance(argument, _Unknown):
            return found if _IMAGE_NAME.search(argument.name) else None  # the image, or what may be options
        if argument == "--" or not argument.startswith("-") or argument == "-":
            return found
        found.append(argument)
        takes_value = "=" not in argument and (
            argument in _VALUE_OPTIONS
            or (not argument.startswith("--") and len(argument) > 1 and argument[-1] in _SHORT_VALUES)
        )
        if takes_value and index + 1 < len(arguments):
            value = arguments[index + 1]
            found.append(value if isinstance(value, str) else "")
            index += 1
        index += 1
    return found


def _container_run(command: Command) -> tuple[str, list[Word]] | None:
    """`docker run`, `podman run`, `docker container run` or `docker create` (also through `sudo`, `time` and the
    like), as written, and its argument words; None for any other command."""
    words = unwrapped(command.words)
    argv = [word.value for word in words]
    if not argv or posixpath.basename(argv[0]) not in ("docker", "podman"):
        return None
    if argv[1:2] in (["run"], ["create"]):
        return f"{argv[0]} {argv[1]}", words[2:]
    if argv[1:3] in (["container", "run"], ["container", "create"]):
        return f"{argv[0]} container {argv[2]}", words[3:]
    return None


RULE = Rule(
    "CC046",
    "gpu-container-devices",
    "A container on a GPU runner is started without access to the GPUs",
    Severity.ERROR,
    __doc__,
    frozenset({FileKind.WORKFLOW}),
    None,
    check_repository,
    group=RuleGroup.WORKFLOW,
    status=RuleStatus.STABLE,
    since="0.1.0",
)
