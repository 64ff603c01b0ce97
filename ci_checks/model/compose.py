"""What a Compose file gives the containers of its services: the GPUs of each vendor, as far as the file says.

`docker compose up` starts containers the way the Compose file describes
them, so whether they see the GPUs is written there: `devices:` (`/dev/kfd`
and `/dev/dri` for ROCm, a CDI `nvidia.com/gpu=all`), `privileged: true`,
`runtime: nvidia`, `gpus:`, or a device reservation under
`deploy.resources.reservations.devices` (`driver: nvidia`, `capabilities:
[gpu]`). A service whose GPU settings hold a variable (`${GPU_DEVICES}`),
come from elsewhere (`extends:`, a YAML merge key) or that the file does not
describe is not known, and is not judged.
"""

from __future__ import annotations

from dataclasses import dataclass

from ci_checks.model.inventory import AMD_DEVICES
from ci_checks.model.values import mapping, string_list
from ci_checks.syntax.yamlpos import Mapping, Node, Scalar, Sequence

COMPOSE_FILES = ("compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml")
"""The files `docker compose` reads in its folder when no `-f` names one, in the order it looks for them."""


@dataclass(frozen=True)
class Service:
    name: str
    key: Scalar
    """Where the service is named in the file."""
    vendors: frozenset[str] | None
    """The GPU vendors whose devices its containers get; None where that cannot be told."""


def services(root: Node | None) -> dict[str, Service]:
    """The services of a Compose file, by name."""
    top = mapping(root)
    body = mapping(top.get("services")) if top is not None else None
    found: dict[str, Service] = {}
    for key, node in body.items() if body is not None else ():
        service = mapping(node)
        found[key.value] = Service(key.value, key, _vendors(service) if service is not None else None)
    return found


_GPU_KEYS = ("devices", "privileged", "runtime", "gpus", "deploy")
"""The settings of a service that decide which GPUs its containers get."""


def _vendors(service: Mapping) -> frozenset[str] | None:
    settings = [node for key in _GPU_KEYS if (node := service.get(key)) is not None]
    if "extends" in service or _merged(service) or any(_variable(node) for node in settings):
        return None
    vendors: set[str] = set()
    privileged = service.get("privileged")
    if isinstance(privileged, Scalar) and privileged.resolved is True:
        vendors |= {"amd", "nvidia"}
    devices = [item.value.split(":", 1)[0] for item in string_list(service.get("devices"))]
    for item in _items(service.get("devices")):
        long_form = mapping(item)
        source = long_form.get("source") if long_form is not None else None
        if isinstance(source, Scalar):
            devices.append(source.value)
    if all(device in devices for device in AMD_DEVICES):
        vendors.add("amd")
    if any(device.startswith("nvidia.com/gpu") for device in devices):
        vendors.add("nvidia")
    runtime = service.get("runtime")
    if (isinstance(runtime, Scalar) and runtime.value == "nvidia") or service.get("gpus") is not None:
        vendors.add("nvidia")
    for device in _reserved(service):
        driver = device.get("driver")
        capabilities = {item.value for item in string_list(device.get("capabilities"))}
        if (isinstance(driver, Scalar) and driver.value == "nvidia") or "gpu" in capabilities:
            vendors.add("nvidia")
    return frozenset(vendors)


def _reserved(service: Mapping) -> list[Mapping]:
    """The devices `deploy.resources.reservations.devices` reserves."""
    node: Node | None = service
    for key in ("deploy", "resources", "reservations", "devices"):
        body = mapping(node)
        node = body.get(key) if body is not None else None
    return [device for item in _items(node) if (device := mapping(item)) is not None]


def _items(node: Node | None) -> list[Node]:
    return node.items if isinstance(node, Sequence) else []


def _merged(service: Mapping) -> bool:
    """Whether the service takes settings from a YAML merge key (`<<: *gpu`), which the file model does not follow."""
    return any(isinstance(key, Scalar) and key.value == "<<" for key, _ in service.pairs)


def _variable(node: Node) -> bool:
    """Whether a setting holds a variable the file alone does not tell (`${GPU_DEVICES}`)."""
    pending: list[Node] = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, Scalar) and "$" in current.value:
            return True
        if isinstance(current, Mapping):
            pending.extend(value for _, value in current.pairs)
        elif isinstance(current, Sequence):
            pending.extend(current.items)
    return False
