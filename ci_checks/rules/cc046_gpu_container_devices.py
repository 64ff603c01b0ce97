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
- so must every `docker run` (and `podman run`, `docker container run`) in
  the job's `run:` scripts, also one run through `sudo`, `env` or `time`
  (`nvidia-docker run` gives the GPUs itself).

Options written with an expression or a variable (`${{ matrix.docker_opts }}`,
`$DOCKER_ARGS`) may hold the devices and are not judged. Runners are found
as for `unknown-runner-label`, through matrices and reusable workflows.
Workflows with no `on:` never run and are not judged.

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
from collections.abc import Iterator

from ci_checks.context import RepositoryContext
from ci_checks.diagnostics import Diagnostic, Severity
from ci_checks.model import Job
from ci_checks.model.inventory import has_gpus
from ci_checks.model.references import unwrapped
from ci_checks.model.runners import RunnerChoice
from ci_checks.model.values import is_expression
from ci_checks.repository import FileKind
from ci_checks.rule import Rule
from ci_checks.shell import Command
from ci_checks.yamlpos import Mapping

_WANTED = {
    "amd": "`--device=/dev/kfd` and `--device=/dev/dri`",
    "nvidia": "`--gpus`",
}
_SEES = {"amd": "ROCm sees no GPU inside it", "nvidia": "CUDA sees no GPU inside it"}
_NAMES = {"amd": "an AMD GPU runner", "nvidia": "an NVIDIA GPU runner"}


def check_repository(context: RepositoryContext) -> Iterator[Diagnostic]:
    if not context.runners:
        return
    for workflow in context.target_workflows:
        if not workflow.triggers:
            continue  # a workflow with no `on:` never runs
        for job in workflow.jobs.values():
            if job.is_call:
                continue
            vendors: dict[str, RunnerChoice] = {}
            for choice in context.resolver.runners(job).choices:
                vendor = choice.vendor(context.runners)
                if vendor is not None:
                    vendors.setdefault(vendor, choice)
            for vendor, choice in vendors.items():
                yield from _container(job, vendor, choice, context)
                yield from _docker_runs(job, vendor, choice, context)


def _container(job: Job, vendor: str, choice: RunnerChoice, context: RepositoryContext) -> Iterator[Diagnostic]:
    container = job.container
    if container is None or not container.image:
        return
    options = container.options or ""
    if is_expression(options) or has_gpus(vendor, options.split()):
        return
    node = container.node
    options_node = node.get("options") if isinstance(node, Mapping) else None
    image_key = node.key_node("image") if isinstance(node, Mapping) else None
    span = options_node.span if options_node is not None else image_key.span if image_key is not None else node.span
    entry = options_node
    where = "its `options:`" if entry is not None else "`options:`"
    message = (
        f"the container of job '{job.id}' runs on {_NAMES[vendor]} (`{', '.join(choice.values)}`) without "
        f"{_WANTED[vendor]} in {where}; {_SEES[vendor]}"
    )
    yield RULE.diagnostic(span, message, choice.related(context.runners, machine=True))


def _docker_runs(job: Job, vendor: str, choice: RunnerChoice, context: RepositoryContext) -> Iterator[Diagnostic]:
    for step in job.steps:
        if step.run is None or ("docker" not in step.run.value and "podman" not in step.run.value):
            continue  # no container is started by a script that names neither program
        script = step.script
        if script is None:
            continue
        for command in script.commands():
            started = _container_run(command)
            if started is None or not all(word.static for word in command.words):
                continue
            shown, arguments = started
            if has_gpus(vendor, arguments):
                continue
            message = (
                f"`{shown}` in job '{job.id}' starts a container on {_NAMES[vendor]} without "
                f"{_WANTED[vendor]}; {_SEES[vendor]}"
            )
            yield RULE.diagnostic(command.span, message, choice.related(context.runners, machine=True))


def _container_run(command: Command) -> tuple[str, list[str]] | None:
    """`docker run`, `podman run` or `docker container run` (also through `sudo`, `time` and the like), as written,
    and its arguments; None for any other command."""
    argv = [word.value for word in unwrapped(command.words)]
    if not argv or posixpath.basename(argv[0]) not in ("docker", "podman"):
        return None
    if argv[1:2] == ["run"]:
        return f"{argv[0]} run", argv[2:]
    if argv[1:3] == ["container", "run"]:
        return f"{argv[0]} container run", argv[3:]
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
)
