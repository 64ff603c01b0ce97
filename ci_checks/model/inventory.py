"""The runner inventory a repository implies, for when its configuration names none (or only some runners).

GitHub-hosted labels (`ubuntu-24.04`, `windows-latest`, `macos-14`) and the
labels every self-hosted runner has (`self-hosted`, `linux`, `x64`) are known;
any other label a job asks for names a runner of the repository's own. Each
set of labels a job may ask for (followed through matrices and reusable
workflows, see `RunnerResolver`) is one kind of machine, and what it is comes
from what the repository says about it:

- self-hosted: `self-hosted` beside the labels, one of its labels written
  beside `self-hosted` elsewhere, or declared in `.github/actionlint.yaml`
  (`self-hosted-runner.labels`); a machine with GPUs is self-hosted too;
- GPU vendor: the containers of the jobs that run on it (`--device=/dev/kfd`
  or `/dev/dri` is AMD, `--gpus` or `--runtime=nvidia` NVIDIA), else its label
  names read word by word (`linux-mi300x-gpu-8`, `gfx90a`, `rocm-6.2`,
  `nvidia-h100-8gpu`, `cu124`, `v100`, `l40s`). A GPU model (`mi300x`,
  `gfx942`, `h100`, `a100`, `b200`) or the word `gpu` says the machine has
  GPUs; a vendor's name alone (`amd`, `rocm`, `nvidia`, `cuda`, `cu124`) says
  whose, beside a GPU or `self-hosted` (`aws-linux-scale-rocm-prod` builds for
  ROCm; nothing says it has a GPU). `gpu` with no vendor named is NVIDIA.

A label one job asks for, one edit from a label other jobs ask for (`mi300`
beside `mi300x`), is taken for a typo (`Inference.typos`), not for a runner:
the labels around it are where runners are, and the rules say so.
Two labels that differ only in a number (`h100`/`h200`, `cpu-4`/`cpu-8`,
`a2b1`/`a2b3`) name different machines, as do labels whose words name two GPU
vendors or classes of machine (`linux-gpu-8`/`linux-cpu-8`), and two GPU
models that exist (`mi300x`/`mi300a`); a label the repository declares to
actionlint is no typo. Labels that look like a GitHub-hosted
one (`ubuntu-…`, `windows-…`, `macos-…`) are left to actionlint, which knows
GitHub's list, unless the repository says they are self-hosted.

An explicit `runners:` inventory wins entry by entry (`merged`): an inferred
machine whose labels a configured runner carries is that runner.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from ci_checks.core.diagnostics import Span
from ci_checks.model.runners import GENERIC_LABELS, Label, Runner, RunnerInventory, is_github_hosted
from ci_checks.model.valuation.runners import RunnerResolver
from ci_checks.model.workflow import Job, Workflow

_WORDS = re.compile(r"[-_.:/\s]+")
_COUNT = re.compile(r"\A\d+x(?=[a-z])|(?<=[a-z0-9])(?<!\Agf)x\d+\Z")
"""A count before or after a GPU model: `8xh100`, `h100x8` (not the `x942` of `gfx942`)."""
_AMD_NAME = re.compile(r"(amd|rocm\d*)\Z")
_AMD_MODEL = re.compile(r"(mi\d{2,3}[a-z]?|gfx\d{2,4}[a-z]?|navi\d*|instinct|radeon)\Z")
_NVIDIA_NAME = re.compile(r"(nvidia|cuda\d*|cu\d{2,3})\Z")
_NVIDIA_MODEL = re.compile(
    r"(g?h\d{2,3}|gb\d{3}|b\d{3}|a\d{2,4}g?|[vp]100|p40|k80|t4|l4|l\d{2}s?|rtx\w*|dgx\w*|tesla|sm\d{2,3}a?)\Z"
)
_GPU_WORD = re.compile(r"(\d*(multi)?gpus?\d*)\Z")
_CPU_WORD = re.compile(r"(\d*v?cpus?\d*)\Z")
_OTHER_ACCELERATOR = re.compile(r"(intel|xpu|hpu|gaudi\d*|habana|ascend|npu|tpu(v\d+)?|trainium|inferentia)\Z")
"""Accelerators other than AMD's and NVIDIA's GPUs (Intel's `/dev/dri` GPUs among them): no vendor is guessed."""
_HOSTED_LOOKING = re.compile(r"(ubuntu|windows|macos)-", re.IGNORECASE)
_NUMBERS = re.compile(r"\d+")

AMD_DEVICES = ("/dev/kfd", "/dev/dri")
KNOWN_MODELS = frozenset(
    {
        "mi25",
        "mi50",
        "mi60",
        "mi100",
        "mi200",
        "mi210",
        "mi250",
        "mi250x",
        "mi300",
        "mi300a",
        "mi300x",
        "mi308x",
        "mi325",
        "mi325x",
        "mi350",
        "mi350x",
        "mi355",
        "mi355x",
        "gfx900",
        "gfx906",
        "gfx908",
        "gfx90a",
        "gfx940",
        "gfx941",
        "gfx942",
        "gfx950",
        "gfx1030",
        "gfx1100",
        "gfx1101",
        "gfx1102",
        "gfx1150",
        "gfx1151",
        "gfx1200",
        "gfx1201",
        "h20",
        "h100",
        "h200",
        "h800",
        "gh200",
        "gb200",
        "gb300",
        "b100",
        "b200",
        "b300",
        "a10",
        "a10g",
        "a16",
        "a30",
        "a40",
        "a100",
        "a800",
        "a2000",
        "a4000",
        "a5000",
        "a6000",
        "l4",
        "l20",
        "l40",
        "l40s",
        "t4",
        "v100",
        "p100",
        "p40",
        "k80",
    }
)
"""GPU models as labels name them, to tell a mistyped number (`mi305`) from another machine (`h200` beside
`h100`)."""


def has_gpus(vendor: str, words: list[str]) -> bool:
    """Whether `docker run` options (or a container's `options:`) give the container the vendor's GPUs."""
    joined = " ".join(words)
    if vendor == "amd":
        if "--privileged" in words:
            return True
        return all(re.search(rf"--device[= ]{re.escape(device)}", joined) for device in AMD_DEVICES)
    return bool(re.search(r"--gpus(=| )|--runtime[= ]nvidia|--device[= ]nvidia\.com/gpu", joined))


def mapped_vendors(text: str) -> set[str]:
    """The vendors whose GPU devices a container's options or a script map: any one AMD device is enough."""
    found = set()
    if any(device in text for device in AMD_DEVICES):
        found.add("amd")
    if re.search(r"--gpus\b|--runtime[= ]nvidia|nvidia\.com/gpu", text):
        found.add("nvidia")
    return found


@dataclass(frozen=True)
class NameReading:
    """What a label's words say: the vendors they name and whether one of them is a GPU (a model or `gpu`)."""

    vendors: frozenset[str]
    gpu: bool
    other: bool
    """Whether a word names another kind of accelerator (Intel, Gaudi, Ascend, TPU)."""
    telling: bool
    """Whether any word says something (the label is then the one to point at)."""
    cpu: bool = False
    """Whether a word says CPUs (`cpu`, `cpu16`, `8vcpu`): with no GPU word, a machine without accelerators."""

    @property
    def machine_class(self) -> str | None:
        """What kind of machine the words say: another accelerator, GPUs, CPUs alone, or nothing said."""
        if self.other:
            return "other accelerator"
        if self.gpu:
            return "gpu"
        return "cpu" if self.cpu else None


def read_name(label: str) -> NameReading:
    """`linux-mi300x-gpu-8` → AMD with GPUs; `cu124` → NVIDIA by name; `linux-amd64-cpu16` → nothing."""
    vendors: set[str] = set()
    gpu = other = cpu = False
    for word in _WORDS.split(label.lower()):
        word = _COUNT.sub("", word)
        if _AMD_MODEL.match(word):
            vendors.add("amd")
            gpu = True
        elif _NVIDIA_MODEL.match(word):
            vendors.add("nvidia")
            gpu = True
        elif _AMD_NAME.match(word):
            vendors.add("amd")
        elif _NVIDIA_NAME.match(word):
            vendors.add("nvidia")
        elif _GPU_WORD.match(word):
            gpu = True
        elif _OTHER_ACCELERATOR.match(word):
            other = True
        elif _CPU_WORD.match(word):
            cpu = True
    return NameReading(frozenset(vendors), gpu, other, bool(vendors) or gpu, cpu)


def same_machine_class(label: str, other: str) -> bool:
    """Whether two labels may name the same kind of machine: neither names a GPU vendor, or a class of machine (GPUs,
    CPUs alone, another accelerator), that the other's words contradict. `linux-mi300x-8` and `linux-h100-8`,
    `linux-gpu-8` and `linux-cpu-8` are two machines; `h1000` says nothing, so it may be `h100`."""
    first, second = read_name(label), read_name(other)
    if first.vendors and second.vendors and first.vendors.isdisjoint(second.vendors):
        return False
    classes = {first.machine_class, second.machine_class} - {None}
    return len(classes) < 2


def other_model(label: str, other: str) -> bool:
    """Whether both labels name GPU models that exist, and none of one's is one of the other's or its family's
    (`mi300` of `mi300x`): `linux-mi250-8` and `linux-mi300x-8`, `h100` and `h200` are two machines."""
    mine, theirs = _models(label), _models(other)
    return bool(mine and theirs) and not any(a.startswith(b) or b.startswith(a) for a in mine for b in theirs)


def _models(label: str) -> set[str]:
    return {word for word in (_COUNT.sub("", word) for word in _WORDS.split(label.lower())) if word in KNOWN_MODELS}


def one_edit_apart(first: str, second: str) -> bool:
    """One character added, removed or changed, or two neighbours swapped."""
    if first == second or abs(len(first) - len(second)) > 1:
        return False
    if len(first) == len(second):
        differ = [index for index, (a, b) in enumerate(zip(first, second, strict=True)) if a != b]
        return len(differ) == 1 or (
            len(differ) == 2
            and differ[1] == differ[0] + 1
            and (first[differ[0]], first[differ[1]]) == (second[differ[1]], second[differ[0]])
        )
    shorter, longer = sorted((first, second), key=len)
    return any(longer[:index] + longer[index + 1 :] == shorter for index in range(len(longer)))


def mistyped(label: str, meant: str) -> bool:
    """Whether `label` reads as a typo of `meant`: one edit apart, and not two machines: of another vendor or class
    (`same_machine_class`), two GPU models that exist and differ in a letter (`mi300x`/`mi300a`), or labels that
    differ in a number (`h100`/`h200`, `cpu-4`/`cpu-8`, `a2b1`/`a2b3`) unless only `meant`'s number makes a GPU
    model that exists (`mi305` for `mi350`, `h1000` for `h100`). A family's name beside one of its models
    (`mi300` beside `mi300x`) is still a typo."""
    if not one_edit_apart(label, meant) or not same_machine_class(label, meant):
        return False
    words = list(zip(_WORDS.split(label), _WORDS.split(meant), strict=False))
    if any(a != b and len(a) == len(b) and _model_word(a) and _model_word(b) for a, b in words):
        return False
    if _NUMBERS.sub("#", label) != _NUMBERS.sub("#", meant):
        return True
    return any(a != b and _model_word(b) and not _model_word(a) for a, b in words)


def _model_word(word: str) -> bool:
    return _COUNT.sub("", word) in KNOWN_MODELS


def _plausible(label: str) -> int:
    """How much a label reads as a runner's: a GPU model that exists (or a whole label of those), words that say
    something (`4gpu`, `nvidia`), or nothing."""
    if any(_model_word(word) for word in _WORDS.split(label)):
        return 2
    return 1 if read_name(label).telling else 0


@dataclass(frozen=True)
class Typo:
    """A label one job asks for, one edit from `meant`: a label `askers` other jobs ask for (written at
    `elsewhere`), or (with none) one every self-hosted runner has or `.github/actionlint.yaml` declares."""

    label: Label
    meant: str
    elsewhere: tuple[Span, ...] = ()
    askers: int = 0
    """How many other jobs (or calls) ask for `meant`."""


_Ask = tuple[str, str, tuple[str, ...]]
"""One job's ask for a label: its workflow, its id, and the calls the label came through."""


@dataclass
class _Machine:
    """One set of labels jobs ask for, and what those jobs say about it."""

    labels: tuple[Label, ...]
    devices: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class Inference:
    inventory: RunnerInventory
    typos: dict[tuple[Span, str], Typo]
    """By where the mistyped label is written and its value."""


def infer(workflows: Iterable[Workflow], resolver: RunnerResolver, declared: Iterable[str] = ()) -> Inference:
    """The inventory the workflows imply (see the module's documentation); `declared` are actionlint's labels."""
    declared = tuple(label.lower() for label in declared)
    asks: dict[str, dict[_Ask, Label]] = {}
    machines: dict[frozenset[str], _Machine] = {}
    for workflow in workflows:
        for job in workflow.jobs.values():
            devices = _devices(job)  # (a call asks for the runner it passes to another repository's workflow, if any)
            for choice in resolver.runners(job, running=False).choices:
                for label in choice.labels:
                    ask = (workflow.path, job.id, tuple(related.message for related in label.via))
                    asks.setdefault(label.value.lower(), {}).setdefault(ask, label)
                key = frozenset(label.value.lower() for label in choice.labels)
                machines.setdefault(key, _Machine(choice.labels)).devices.update(devices)
    patterns = tuple(label for label in declared if any(char in label for char in "*?["))
    said = _Said(
        {label for key in machines if "self-hosted" in key for label in key} | set(declared), patterns, declared
    )
    typos = _typos(asks, {*GENERIC_LABELS, *declared}, said)
    wrong = {value.lower() for _, value in typos}
    runners: list[Runner] = []
    names: set[str] = set()
    for key, machine in machines.items():
        # A mistyped label is no runner's: the job that asks for it lands nowhere, and says so (CC044).
        own = [
            label for label in machine.labels if label.value.lower() not in wrong and said.custom(label.value.lower())
        ]
        if own:
            name = _unique("-".join(dict.fromkeys(label.value.lower() for label in own)), names)
            runners.append(_runner(name, key - wrong, machine, own, said))
    exact = tuple(label for label in declared if label not in patterns)
    return Inference(RunnerInventory(tuple(runners), exact), typos)


@dataclass(frozen=True)
class _Said:
    """The labels the repository says are self-hosted: written beside `self-hosted`, or declared to actionlint."""

    labels: set[str]
    patterns: tuple[str, ...]
    declared: tuple[str, ...] = ()
    """The labels and globs `.github/actionlint.yaml` declares (`patterns` are its globs)."""

    def self_hosted(self, label: str) -> bool:
        return label in self.labels or any(fnmatchcase(label, pattern) for pattern in self.patterns)

    def declares(self, label: str) -> bool:
        return label in self.declared or any(fnmatchcase(label, pattern) for pattern in self.patterns)

    def custom(self, label: str) -> bool:
        """A label of the repository's own runners, not GitHub's (nor left to actionlint as one that looks it)."""
        if label in GENERIC_LABELS or is_github_hosted(label):
            return False
        return _HOSTED_LOOKING.match(label) is None or self.self_hosted(label)


def looks_github_hosted(label: str) -> bool:
    """A GitHub-hosted label, or one that looks it (`ubuntu-latest-8-cores`): actionlint knows GitHub's list."""
    return is_github_hosted(label) or _HOSTED_LOOKING.match(label) is not None


def merged(configured: RunnerInventory, inferred: RunnerInventory) -> RunnerInventory:
    """The configured runners, and the inferred ones whose labels no configured runner carries."""
    kept = [runner for runner in inferred.runners if not configured.matching(runner.labels)]
    declared = tuple(dict.fromkeys((*configured.declared, *inferred.declared)))
    return RunnerInventory((*configured.runners, *kept), declared)


def _devices(job: Job) -> set[str]:
    """The GPU vendors whose devices the job's container or its `docker run`s map."""
    found = mapped_vendors(job.container.options or "") if job.container is not None else set()
    for step in job.steps:
        script = step.run.value if step.run is not None else ""
        if "docker" in script or "podman" in script:
            found |= mapped_vendors(script)
    return found


def _runner(name: str, key: frozenset[str], machine: _Machine, own: list[Label], said: _Said) -> Runner:
    readings = {label.value.lower(): read_name(label.value) for label in own}
    named = {vendor for reading in readings.values() for vendor in reading.vendors}
    gpu = any(reading.gpu for reading in readings.values())
    self_hosted = "self-hosted" in key or any(said.self_hosted(label) for label in readings)
    vendor: str | None = None
    if any(reading.other for reading in readings.values()):
        pass
    elif len(machine.devices) == 1:
        vendor = next(iter(machine.devices))
    elif not machine.devices and len(named) == 1 and (gpu or self_hosted):
        vendor = next(iter(named))
    elif not machine.devices and not named and gpu:
        vendor = "nvidia"
    ranked = sorted(readings, key=lambda label: _rank(readings[label]))
    telling = next((label for label in ranked if readings[label].telling), None)
    return Runner(name, key, vendor, self_hosted or vendor is not None, machine.labels[0].span, True, telling)


def _rank(reading: NameReading) -> tuple[bool, bool, bool]:
    """A GPU model tells most, then a vendor's name, then `gpu`."""
    return (not (reading.gpu and reading.vendors), not reading.vendors, not reading.gpu)


def _typos(asks: dict[str, dict[_Ask, Label]], known: set[str], said: _Said) -> dict[tuple[Span, str], Typo]:
    """The labels one job asks for that read as typos of a label more jobs ask for, or of a known one (and that
    `.github/actionlint.yaml` does not declare).

    Jobs are counted, not places where a label is written: a list written once and aliased into three jobs
    (`&gpu`, `*gpu`) is three asks, as it is written out three times. Two labels one job each asks for are each
    other's only witness: the typo is the one that reads as less (`4gup` beside `4gpu`, `mi305` beside `mi350`),
    and where neither reads as more (`box-one`, `box-onee`), neither is taken for one.
    """
    found: dict[tuple[Span, str], Typo] = {}
    for value, asked in asks.items():
        if len(asked) != 1 or not said.custom(value) or said.declares(value):
            continue  # a label the repository declares is a runner's, however near another
        label = next(iter(asked.values()))
        for other in sorted(asks, key=lambda other: -len(asks[other])):
            elsewhere = [each for each in asks[other].values() if each.span != label.span]
            witnessed = len(elsewhere) > 1 or (elsewhere and _plausible(other) > _plausible(value))
            if witnessed and mistyped(value, other):
                spans = tuple(dict.fromkeys(each.span for each in elsewhere))
                found[(label.span, label.value)] = Typo(label, other, spans, len(elsewhere))
                break
        else:
            meant = next((word for word in sorted(known) if mistyped(value, word)), None)
            if meant is not None:
                found[(label.span, label.value)] = Typo(label, meant)
    return found


def _unique(name: str, taken: set[str]) -> str:
    candidate, index = name, 2
    while candidate in taken:
        candidate, index = f"{name}-{index}", index + 1
    taken.add(candidate)
    return candidate
