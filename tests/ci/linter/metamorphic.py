"""A generator of real-shaped GPU-CI repositories, written out in many YAML styles that GitHub reads alike.

`REPOSITORY` is the data of a small repository: a GPU CI workflow with ROCm
stages, two reusable workflows that must stay in parity, a composite action, a
Dockerfile, a shell script and Python files. `render(repository, style)` writes
it out; each `Style` changes only how the YAML is written (indentation, flow or
block collections, key order, quoting, `|`/`|-`/`>` block scalars, comments
between keys, anchors and aliases, CRLF line breaks), never what it means.

`RULES` are policy rules over that repository, each with a semantic mutation
(a key removed, a value changed, two commands swapped, a flag added) that must
flip its verdict.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ci_checks.syntax.yamlpos import resolve_plain

Data = Any
Repository = dict[str, Any]
"""Repo-relative path to YAML data (a dict) or file text (a str)."""


@dataclass(frozen=True)
class Style:
    name: str
    indent: int = 2
    indent_sequences: bool = True
    flow: bool = False
    key_order: str = "as-is"
    quotes: str = "plain"
    block: str = "|"
    comments: bool = False
    anchors: bool = False
    newline: str = "\n"


CANONICAL = Style("canonical")
STYLES = (
    CANONICAL,
    Style("indent 4, sequences flush", indent=4, indent_sequences=False),
    Style("flow collections", flow=True),
    Style("keys reversed", key_order="reversed"),
    Style("keys shuffled", key_order="shuffled"),
    Style("double quotes", quotes="double"),
    Style("single quotes", quotes="single"),
    Style("block strip |-", block="|-"),
    Style("block folded >", block=">"),
    Style("comments between keys", comments=True),
    Style("anchors and aliases", anchors=True),
    Style("CRLF", newline="\r\n"),
    Style(
        "all at once",
        indent=4,
        indent_sequences=False,
        flow=True,
        key_order="shuffled",
        quotes="double",
        block="|-",
        comments=True,
        anchors=True,
        newline="\r\n",
    ),
)

_INDICATORS = set("-?:,[]{}#&*!|>'\"%@`")
_FLOW_INDICATORS = set(",[]{}")


def _plain_safe(text: str, in_flow: bool) -> bool:
    if not text or text != text.strip() or "\n" in text or "\t" in text:
        return False
    if text[0] in _INDICATORS or ": " in text or " #" in text or text.endswith(":"):
        return False
    if in_flow and any(char in _FLOW_INDICATORS for char in text):
        return False
    return isinstance(resolve_plain(text), str)


def _string(text: str, style: Style, in_flow: bool) -> str:
    if style.quotes == "double":
        return json.dumps(text)
    if style.quotes == "single" or not _plain_safe(text, in_flow):
        return "'" + text.replace("'", "''") + "'"
    return text


def _scalar(value: Data, style: Style, in_flow: bool = False) -> str:
    if value is None:
        return "~" if style.quotes != "plain" else ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return _string(str(value), style, in_flow)


def _is_leaf_container(value: Data) -> bool:
    items = value.values() if isinstance(value, dict) else value
    return bool(items) and all(not isinstance(item, dict | list) and "\n" not in str(item) for item in items)


class _Writer:
    def __init__(self, style: Style, seed: str) -> None:
        self.style = style
        self.random = random.Random(seed)
        self.lines: list[str] = []
        self.anchors: dict[str, str] = {}
        self.repeated: set[str] = set()
        self.comment = 0

    def keys(self, mapping: dict[str, Data]) -> list[str]:
        keys = list(mapping)
        if self.style.key_order == "reversed":
            keys.reverse()
        elif self.style.key_order == "shuffled":
            self.random.shuffle(keys)
        return keys

    def flow(self, value: Data) -> str:
        if isinstance(value, dict):
            inner = ", ".join(
                f"{_string(k, self.style, True)}: {_scalar(v, self.style, True)}" for k, v in value.items()
            )
            return "{" + inner + "}"
        return "[" + ", ".join(_scalar(item, self.style, True) for item in value) + "]"

    def block_scalar(self, text: str, column: int) -> list[str]:
        pad = " " * column
        lines = text.rstrip("\n").split("\n")
        if self.style.block != ">":
            return [pad + line if line else "" for line in lines]
        folded: list[str] = []
        for index, line in enumerate(lines):
            if index and not line.startswith(" ") and not lines[index - 1].startswith(" "):
                folded.append("")  # in a folded scalar, an empty line is a line break
            folded.append(pad + line if line else "")
        return folded

    def anchor(self, value: Data) -> tuple[str, bool]:
        """(` &name` or ` *name`, whether the value is an alias) for containers that repeat."""
        if not self.style.anchors or not isinstance(value, dict | list) or not value:
            return "", False
        key = json.dumps(value, sort_keys=True)
        if key not in self.repeated:
            return "", False
        if key in self.anchors:
            return f" *{self.anchors[key]}", True
        name = f"a{len(self.anchors) + 1}"
        self.anchors[key] = name
        return f" &{name}", False

    def maybe_comment(self, column: int) -> None:
        if self.style.comments:
            self.comment += 1
            if self.comment % 2:
                self.lines.append(" " * column + f"# reviewed {self.comment}")

    def mapping(self, mapping: dict[str, Data], column: int, first_prefix: str | None = None) -> None:
        for index, key in enumerate(self.keys(mapping)):
            value = mapping[key]
            prefix = first_prefix if index == 0 and first_prefix is not None else " " * column
            if index or first_prefix is None:
                self.maybe_comment(column)
            head = f"{prefix}{_string(key, self.style, False)}:"
            self.value(head, value, column)

    def value(self, head: str, value: Data, column: int) -> None:
        mark, alias = self.anchor(value)
        if alias:
            self.lines.append(head + mark)
            return
        if isinstance(value, str) and "\n" in value:
            header = {"|": "|", "|-": "|-", ">": ">"}[self.style.block]
            chomp = "" if value.endswith("\n") or self.style.block == "|-" else "-"
            self.lines.append(f"{head}{mark} {header}{chomp if header != '|-' else ''}")
            self.lines.extend(self.block_scalar(value, column + self.style.indent))
        elif isinstance(value, dict | list) and not value:
            self.lines.append(f"{head}{mark} {'{}' if isinstance(value, dict) else '[]'}")
        elif isinstance(value, dict | list) and self.style.flow and _is_leaf_container(value):
            self.lines.append(f"{head}{mark} {self.flow(value)}")
        elif isinstance(value, dict):
            self.lines.append(head + mark)
            self.mapping(value, column + self.style.indent)
        elif isinstance(value, list):
            self.lines.append(head + mark)
            self.sequence(value, column + (self.style.indent if self.style.indent_sequences else 0))
        else:
            scalar = _scalar(value, self.style)
            self.lines.append(f"{head} {scalar}" if scalar else head)

    def sequence(self, items: list[Data], column: int) -> None:
        for item in items:
            prefix = " " * column + "- "
            if isinstance(item, dict) and item and not (self.style.flow and _is_leaf_container(item)):
                self.mapping(item, column + 2, first_prefix=prefix)
            elif isinstance(item, dict | list):
                self.lines.append(prefix + (self.flow(item) if item else ("{}" if isinstance(item, dict) else "[]")))
            else:
                self.lines.append(prefix + _scalar(item, self.style))


def _repeated(data: Data) -> set[str]:
    seen: dict[str, int] = {}

    def walk(value: Data) -> None:
        if isinstance(value, dict | list) and value:
            key = json.dumps(value, sort_keys=True)
            seen[key] = seen.get(key, 0) + 1
            for item in value.values() if isinstance(value, dict) else value:
                walk(item)

    walk(data)
    return {key for key, count in seen.items() if count > 1}


def render_yaml(data: dict[str, Data], style: Style, seed: str = "") -> str:
    writer = _Writer(style, seed)
    writer.repeated = _repeated(data)
    writer.mapping(data, 0)
    return style.newline.join(writer.lines) + style.newline


def render(repository: Repository, style: Style) -> dict[str, str]:
    return {
        path: render_yaml(content, style, path) if isinstance(content, dict) else content
        for path, content in repository.items()
    }


def write(root: Path, files: dict[str, str]) -> Path:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode("utf-8"))
    return root


# ---------------------------------------------------------------------------
# The repository

CHECKOUT = {"uses": "actions/checkout@v4", "with": {"persist-credentials": False, "fetch-depth": 0}}
GPU = ["self-hosted", "linux", "mi300x"]
INSTALL_SCRIPT = """cd /opt/Megatron-LM
if [ -n "$MEGATRON_PR" ]; then
  git fetch origin "$MEGATRON_PR"
  git checkout -f FETCH_HEAD
  pip install -e . --no-deps --break-system-packages
else
  echo "using the image's Megatron-LM"
fi
case "$GPU_ARCH" in
  gfx94*|gfx95*) export KERNELS=ck ;;
  *) export KERNELS=triton ;;
esac
cd "$GITHUB_WORKSPACE"
pip install -e . --no-deps
"""
INSTALL = {"name": "Install Megatron", "env": {"MEGATRON_PR": "${{ inputs.megatron_pr }}"}, "run": INSTALL_SCRIPT}
TEST = {"name": "Test [gpu]", "shell": "bash", "run": "python -m pytest tests -x\n"}


def _stage(needs: Data, **extra: Data) -> dict[str, Data]:
    return {"needs": needs, "runs-on": list(GPU), "timeout-minutes": 90, **extra, "steps": [CHECKOUT, INSTALL, TEST]}


CI = {
    "name": "GPU CI",
    "on": {
        "push": {"branches": ["main"], "paths-ignore": ["docs/**"]},
        "pull_request": {"types": ["opened", "synchronize"]},
        "schedule": [{"cron": "0 1 * * *"}, {"cron": "0 13 * * *"}],
        "workflow_dispatch": {
            "inputs": {
                "arch": {"description": "GPU architecture", "type": "choice", "options": ["gfx942", "gfx950"]},
                "image": {"type": "string", "default": "latest"},
            }
        },
    },
    "permissions": {"contents": "read"},
    "concurrency": {"group": "ci-${{ github.ref }}", "cancel-in-progress": True},
    "env": {"PYTHONUNBUFFERED": "1", "PIP_NO_CACHE": "true"},
    "jobs": {
        "build-image": {
            "runs-on": "ubuntu-latest",
            "timeout-minutes": 60,
            "concurrency": {"group": "image-${{ github.ref }}", "queue": "max"},
            "steps": [
                CHECKOUT,
                {
                    "name": "Build the ROCm image",
                    "run": "docker build -f docker/Dockerfile.rocm -t ci:${{ github.sha }} .\n"
                    "docker push ci:${{ github.sha }}\n",
                },
            ],
        },
        "lint": {
            "runs-on": "ubuntu-latest",
            "steps": [
                CHECKOUT,
                {"name": "Lint", "run": "ruff check ."},
                {"uses": "$/.github/actions/setup"},
                {"parallel": [{"name": "Types", "run": "mypy .\n"}, {"name": "Docs", "run": "mkdocs build\n"}]},
            ],
        },
        "stage-a-gpu-1": _stage("build-image", env={"GPU_ARCH": "gfx942"}),
        "stage-a-gpu-2": _stage(["build-image"], env={"GPU_ARCH": "gfx950"}),
        "stage-b-gpu-1": _stage(
            ["build-image", "stage-a-gpu-1"],
            **{"continue-on-error": False, "strategy": {"fail-fast": False, "matrix": {"shard": [1, 2]}}},
        ),
    },
}


def _reusable(name: str, extra_steps: list[dict[str, Data]]) -> dict[str, Data]:
    return {
        "name": name,
        "on": {
            "workflow_call": {
                "inputs": {
                    "runs_on": {"type": "string", "required": True},
                    "megatron_pr": {"type": "string", "default": ""},
                },
                "secrets": {"HF_TOKEN": {"required": True}},
            }
        },
        "permissions": {"contents": "read"},
        "jobs": {
            "test": {
                "runs-on": "${{ fromJSON(inputs.runs_on) }}",
                "timeout-minutes": 120,
                "steps": [CHECKOUT, INSTALL, *extra_steps, TEST],
            }
        },
    }


CONTAINER = {"name": "Run in container", "run": "docker run --device=/dev/kfd --device=/dev/dri ci:latest pytest\n"}
ACTION = {
    "name": "Set up",
    "description": "Install the project",
    "inputs": {"python-version": {"description": "Python", "default": "3.10", "required": False}},
    "runs": {
        "using": "composite",
        "steps": [{"name": "Install", "shell": "bash", "run": "pip install -r requirements.txt\n"}],
    },
}
REPOSITORY: Repository = {
    ".github/workflows/ci.yml": CI,
    ".github/workflows/_run-ci-rocm.yml": _reusable("Run CI (ROCm)", [CONTAINER]),
    ".github/workflows/_run-ci.yml": _reusable("Run CI (CUDA)", []),
    ".github/actions/setup/action.yml": ACTION,
    "docker/Dockerfile.rocm": "FROM rocm/pytorch:latest\nRUN pip install -e /opt/Megatron-LM --no-deps\n",
    "scripts/ci.sh": "#!/bin/sh\nset -eu\ngit apply patches/rocm.patch\npython -m pytest tests\n",
    "patches/rocm.patch": "diff --git a/x b/x\n",
    "tools/ci_config.py": 'SUPPORTED_ARCHES = ("gfx942", "gfx950")\n'
    "from dataclasses import dataclass\n\n\n@dataclass\nclass Policy:\n    suites: tuple[str, ...]\n\n\n"
    'NIGHTLY = Policy(("unit",))\nSCHEDULE_POLICIES = {"0 1 * * *": NIGHTLY, "0 13 * * *": NIGHTLY}\n'
    'GPU_ARCHES = frozenset({"gfx950", "gfx942"})\n',
    "ci/patches.py": "from megatron.core import dist_checkpointing\n\nSAVE = dist_checkpointing.save\n",
}


# ---------------------------------------------------------------------------
# Rules and the mutations that flip them

Mutation = Callable[[Repository], None]


@dataclass(frozen=True)
class Case:
    id: str
    rule: str
    """The rule's YAML after `- id: ID`, indented by four spaces."""
    mutate: Mutation
    tags: tuple[str, ...] = field(default=())

    def policy(self) -> str:
        return f"  - id: {self.id}\n{self.rule}"


def _job(repository: Repository, path: str, job: str) -> dict[str, Data]:
    data: dict[str, Data] = repository[path]["jobs"][job]
    return data


def _step(repository: Repository, path: str, job: str, name: str) -> dict[str, Data]:
    steps = _job(repository, path, job)["steps"]
    for index, step in enumerate(steps):
        if step.get("name") == name:
            steps[index] = copy.deepcopy(step)  # steps are shared between jobs: change this one only
            return steps[index]  # type: ignore[no-any-return]
    raise LookupError(name)


def _edit_run(path: str, job: str, name: str, old: str, new: str) -> Mutation:
    def mutate(repository: Repository) -> None:
        step = _step(repository, path, job, name)
        assert old in step["run"], (old, step["run"])
        step["run"] = step["run"].replace(old, new, 1)

    return mutate


def _set(path: str, keys: list[str | int], value: Data) -> Mutation:
    def mutate(repository: Repository) -> None:
        node = repository[path]
        for key in keys[:-1]:
            node[key] = copy.deepcopy(node[key])
            node = node[key]
        node[keys[-1]] = value

    return mutate


def _delete(path: str, keys: list[str | int]) -> Mutation:
    def mutate(repository: Repository) -> None:
        node = repository[path]
        for key in keys[:-1]:
            node[key] = copy.deepcopy(node[key])
            node = node[key]
        del node[keys[-1]]

    return mutate


def _file(path: str, text: str | None) -> Mutation:
    def mutate(repository: Repository) -> None:
        if text is None:
            del repository[path]
        else:
            repository[path] = text

    return mutate


def _edit_file(path: str, old: str, new: str) -> Mutation:
    def mutate(repository: Repository) -> None:
        assert old in repository[path]
        repository[path] = repository[path].replace(old, new, 1)

    return mutate


def _rename_job(path: str, old: str, new: str) -> Mutation:
    def mutate(repository: Repository) -> None:
        jobs = repository[path]["jobs"]
        repository[path]["jobs"] = {new if name == old else name: job for name, job in jobs.items()}

    return mutate


def _swap_steps(path: str, job: str, first: int, second: int) -> Mutation:
    def mutate(repository: Repository) -> None:
        steps = list(_job(repository, path, job)["steps"])
        steps[first], steps[second] = steps[second], steps[first]
        _job(repository, path, job)["steps"] = steps

    return mutate


def _append_step(path: str, job: str, step: dict[str, Data], at: int | None = None) -> Mutation:
    def mutate(repository: Repository) -> None:
        steps = list(_job(repository, path, job)["steps"])
        steps.insert(len(steps) if at is None else at, step)
        _job(repository, path, job)["steps"] = steps

    return mutate


CI_YML, ROCM, CUDA, SETUP = (
    ".github/workflows/ci.yml",
    ".github/workflows/_run-ci-rocm.yml",
    ".github/workflows/_run-ci.yml",
    ".github/actions/setup/action.yml",
)
W_CI = "{workflow: .github/workflows/ci.yml}"
W_ROCM = "{workflow: .github/workflows/_run-ci-rocm.yml}"
INSTALL_STEP = "{workflow: .github/workflows/_run-ci-rocm.yml, step: Install Megatron}"
OVERRIDE = "{workflow: .github/workflows/_run-ci-rocm.yml, step: Install Megatron, branch: '[ -n \"$MEGATRON_PR\" ]'}"
W_SCHEDULE = "{workflow: .github/workflows/ci.yml, trigger: schedule}"
W_DISPATCH = "{workflow: .github/workflows/ci.yml, trigger: workflow_dispatch}"
W_LINT = "{workflow: .github/workflows/ci.yml, job: lint}"
W_STAGE_B = "{workflow: .github/workflows/ci.yml, job: stage-b-gpu-1}"


def _constant(name: str) -> str:
    return f"{{from: {{python: tools/ci_config.py, name: {name}}}}}"


def _rule(kind: str, where: str | None, items: str, extra: str = "") -> str:
    lines = f"    kind: {kind}\n" + (f"    where: {where}\n" if where else "") + extra + f"    {kind}:\n"
    return lines + "".join(f"      {line}\n" for line in items.strip("\n").split("\n"))


RULES: tuple[Case, ...] = (
    # command
    Case(
        "c-override-order",
        _rule("order", OVERRIDE, "- command: git checkout -f FETCH_HEAD\n- command: pip install -e ."),
        _edit_run(
            ROCM,
            "test",
            "Install Megatron",
            "  git checkout -f FETCH_HEAD\n  pip install -e . --no-deps --break-system-packages\n",
            "  pip install -e . --no-deps --break-system-packages\n  git checkout -f FETCH_HEAD\n",
        ),
    ),
    Case(
        "c-no-plain-apply",
        _rule("forbid", W_ROCM, '- command: git apply "$P"\n  without: [--check, --reverse, -R]'),
        _edit_run(ROCM, "test", "Install Megatron", "fi\ncase", 'fi\ngit apply "$P"\ncase'),
    ),
    Case(
        "c-dry-run-allowed",
        _rule("forbid", W_ROCM, '- command: git apply --check "$P"\n  exact: true'),
        _edit_run(ROCM, "test", "Install Megatron", "fi\ncase", "fi\ngit apply --check $P\ncase"),
    ),
    Case(
        "c-exact-install",
        _rule("require", INSTALL_STEP, "- command: pip install -e . --no-deps\n  exact: true\n  count: 1"),
        _edit_run(
            ROCM, "test", "Install Megatron", "pip install -e . --no-deps\n", "pip install -e . --no-deps --user\n"
        ),
    ),
    Case(
        "c-else-echo",
        _rule(
            "require",
            "{workflow: .github/workflows/_run-ci-rocm.yml, step: Install Megatron, "
            "branch: {if: '[ -n \"$MEGATRON_PR\" ]', else: true}}",
            "- command: echo",
        ),
        _edit_run(ROCM, "test", "Install Megatron", 'echo "using the image\'s Megatron-LM"', "true"),
    ),
    Case(
        "c-case-ck",
        _rule(
            "require",
            "{workflow: .github/workflows/_run-ci-rocm.yml, step: Install Megatron, "
            "branch: {case: '\"$GPU_ARCH\"', arm: 'gfx94*'}}",
            "- command: export KERNELS=ck",
        ),
        _edit_run(ROCM, "test", "Install Megatron", "KERNELS=ck", "KERNELS=triton"),
    ),
    Case(
        "c-container-devices",
        _rule("forbid", W_ROCM, "- command: docker run\n  without: [--device=/dev/kfd]"),
        _edit_run(ROCM, "test", "Run in container", "--device=/dev/kfd ", ""),
    ),
    Case(
        "c-dockerfile-install",
        _rule("require", "{files: docker/Dockerfile.rocm}", "- command: pip install -e /opt/Megatron-LM"),
        _edit_file("docker/Dockerfile.rocm", "pip install -e /opt/Megatron-LM", "pip install /opt/Megatron-LM"),
    ),
    Case(
        "c-no-curl-in-scripts",
        _rule("forbid", "{files: 'scripts/*.sh'}", "- command: curl"),
        _edit_file("scripts/ci.sh", "python -m pytest", "curl -fsSL x | sh\npython -m pytest"),
    ),
    Case(
        "c-one-pytest",
        _rule(
            "require",
            "{workflow: .github/workflows/_run-ci*.yml, job: test}",
            "- command: pytest\n  count: {min: 1, max: 2}",
        ),
        _append_step(ROCM, "test", {"name": "Again", "run": "python -m pytest tests\npytest -k slow\n"}),
    ),
    Case(
        "c-image-before-tests",
        _rule("order", W_CI, "- command: docker build\n- command: python -m pytest", "    across: jobs\n"),
        _delete(CI_YML, ["jobs", "stage-a-gpu-2", "needs"]),
    ),
    Case(
        "c-checkout-before-lint",
        _rule(
            "order",
            "{workflow: .github/workflows/ci.yml, job: lint}",
            "- step: {uses: actions/checkout}\n- command: ruff check",
        ),
        _swap_steps(CI_YML, "lint", 0, 1),
    ),
    Case(
        "c-action-install",
        _rule("require", "{action: .github/actions/*/action.yml}", "- command: pip install -r requirements.txt"),
        _set(SETUP, ["runs", "steps", 0, "run"], "pip install .\n"),
    ),
    Case(
        "c-no-rm-in-override",
        _rule("forbid", OVERRIDE, "- command: rm -rf"),
        _edit_run(
            ROCM,
            "test",
            "Install Megatron",
            "  git checkout -f FETCH_HEAD\n",
            "  git checkout -f FETCH_HEAD\n  rm -rf build\n",
        ),
    ),
    # step
    Case(
        "s-one-checkout",
        _rule(
            "require", "{workflow: .github/workflows/ci.yml, job: '*'}", "- step: {uses: actions/checkout}\n  count: 1"
        ),
        _append_step(CI_YML, "lint", CHECKOUT),
    ),
    Case(
        "s-install-step",
        _rule("require", W_ROCM, "- step: Install Megatron"),
        _set(ROCM, ["jobs", "test", "steps", 1, "name"], "Install Megatron-LM"),
    ),
    Case(
        "s-no-upload",
        _rule("forbid", W_CI, "- step: {uses: actions/upload-artifact}"),
        _append_step(CI_YML, "lint", {"uses": "actions/upload-artifact@v4", "with": {"name": "logs", "path": "logs"}}),
    ),
    Case(
        "s-literal-name",
        _rule(
            "require",
            "{workflow: .github/workflows/_run-ci-rocm.yml, step: {literal: 'Test [gpu]'}}",
            "- command: python -m pytest",
        ),
        _set(ROCM, ["jobs", "test", "steps", 3, "name"], "Test gpu"),
    ),
    Case(
        "s-checkout-first",
        _rule("order", W_ROCM, "- step: {uses: actions/checkout}\n- step: Install Megatron"),
        _swap_steps(ROCM, "test", 0, 1),
    ),
    Case(
        "s-job-list",
        _rule(
            "require",
            "{workflow: .github/workflows/ci.yml, job: [lint, build-image]}",
            "- step: {uses: 'actions/checkout@v4'}",
        ),
        _set(
            CI_YML,
            ["jobs", "lint", "steps", 0],
            {"uses": "actions/checkout@v3", "with": {"persist-credentials": False, "fetch-depth": 0}},
        ),
    ),
    # text and regex
    Case(
        "t-no-amd-patch",
        _rule("forbid", "{files: ['.github/workflows/*.yml', 'docker/Dockerfile*']}", "- text: amd_patch"),
        _edit_run(ROCM, "test", "Install Megatron", "fi\ncase", "fi\ngit apply /tmp/amd_patch/megatron.patch\ncase"),
    ),
    Case(
        "t-fetch-head",
        _rule("require", INSTALL_STEP, "- text: FETCH_HEAD"),
        _edit_run(ROCM, "test", "Install Megatron", "FETCH_HEAD", "ORIG_HEAD"),
    ),
    Case(
        "r-no-set-plus-e",
        _rule("forbid", "{files: '.github/workflows/*.yml'}", "- regex: 'set \\+e'"),
        _edit_run(CI_YML, "build-image", "Build the ROCm image", "docker push", "set +e\ndocker push"),
    ),
    Case(
        "r-back-to-workspace",
        _rule("require", INSTALL_STEP, "- regex: '^\\s*cd \"\\$GITHUB_WORKSPACE\"'"),
        _edit_run(ROCM, "test", "Install Megatron", 'cd "$GITHUB_WORKSPACE"', "cd /tmp"),
    ),
    # python
    Case(
        "p-no-writer-swap",
        _rule("forbid", "{files: 'ci/*.py'}", "- python: {assign: '*.FileSystemWriterAsync'}"),
        _edit_file("ci/patches.py", "SAVE =", "dist_checkpointing.FileSystemWriterAsync = object\nSAVE ="),
    ),
    Case(
        "p-imports-megatron",
        _rule("require", "{files: 'ci/*.py'}", "- python: {import: megatron.core}"),
        _edit_file("ci/patches.py", "from megatron.core import", "from torch.distributed import"),
    ),
    Case(
        "p-no-rocm-writer",
        _rule("forbid", "{files: 'ci/*.py'}", "- python: {name: ROCmFileSystemWriterAsync}"),
        _edit_file("ci/patches.py", "SAVE =", "ROCmFileSystemWriterAsync = None\nSAVE ="),
    ),
    Case(
        "p-no-writer-subclass",
        _rule("forbid", "{files: 'ci/*.py'}", "- python: {subclass: '*FileSystemWriterAsync'}"),
        _edit_file("ci/patches.py", "SAVE =", "class W(dist_checkpointing.FileSystemWriterAsync):\n    pass\n\nSAVE ="),
    ),
    # with and env
    Case(
        "w-no-credentials",
        _rule(
            "require",
            "{workflow: .github/workflows/*.yml, step: {uses: actions/checkout}}",
            "- with: {persist-credentials: false}",
        ),
        _set(
            CI_YML,
            ["jobs", "lint", "steps", 0],
            {"uses": "actions/checkout@v4", "with": {"persist-credentials": True, "fetch-depth": 0}},
        ),
    ),
    Case(
        "w-full-history",
        _rule(
            "require", "{workflow: .github/workflows/*.yml, step: {uses: actions/checkout}}", "- with: {fetch-depth: 0}"
        ),
        _set(
            ROCM,
            ["jobs", "test", "steps", 0],
            {"uses": "actions/checkout@v4", "with": {"persist-credentials": False, "fetch-depth": 1}},
        ),
    ),
    Case(
        "e-unbuffered",
        _rule("require", W_CI, "- env: {PYTHONUNBUFFERED: '1'}"),
        _set(CI_YML, ["env", "PYTHONUNBUFFERED"], "0"),
    ),
    Case(
        "e-cache-stays-on",
        _rule("forbid", W_CI, "- env: {PIP_NO_CACHE: false}"),
        _set(CI_YML, ["env", "PIP_NO_CACHE"], "false"),
    ),
    # key: existence, every comparator, count, from, scopes
    Case(
        "k-gpu-timeouts",
        _rule("require", "{workflow: .github/workflows/ci.yml, job: 'stage-*'}", "- key: timeout-minutes"),
        _delete(CI_YML, ["jobs", "stage-a-gpu-2", "timeout-minutes"]),
    ),
    Case(
        "k-no-continue-on-error",
        _rule("forbid", W_CI, "- key: jobs.*.continue-on-error\n  equals: true"),
        _set(CI_YML, ["jobs", "stage-b-gpu-1", "continue-on-error"], True),
    ),
    Case(
        "k-push-main",
        _rule("require", W_CI, "- key: on.push.branches\n  equals: [main]"),
        _set(CI_YML, ["on", "push", "branches"], ["dev"]),
    ),
    Case(
        "k-push-main-scalar",
        _rule("require", W_CI, "- key: on.push.branches\n  equals: main"),
        _set(CI_YML, ["on", "push", "branches"], ["main", "release/*"]),
    ),
    Case(
        "k-read-only",
        _rule("require", W_CI, "- key: permissions.contents\n  in: [read, none]"),
        _set(CI_YML, ["permissions", "contents"], "write"),
    ),
    Case(
        "k-permissions-exactly",
        _rule("require", W_CI, "- key: permissions\n  equals: {contents: read}"),
        _set(CI_YML, ["permissions", "actions"], "read"),
    ),
    Case(
        "k-stages-need-image",
        _rule(
            "require",
            "{workflow: .github/workflows/ci.yml, job: 'stage-*-gpu-*'}",
            "- key: needs\n  has: [build-image]",
        ),
        _set(CI_YML, ["jobs", "stage-b-gpu-1", "needs"], ["stage-a-gpu-1"]),
    ),
    Case(
        "k-first-stage-needs",
        _rule(
            "require",
            "{workflow: .github/workflows/ci.yml, job: stage-a-gpu-1}",
            "- key: needs\n  equals: [build-image]",
        ),
        _set(CI_YML, ["jobs", "stage-a-gpu-1", "needs"], "lint"),
    ),
    Case(
        "k-dispatch-inputs",
        _rule(
            "require",
            "{workflow: .github/workflows/ci.yml, trigger: workflow_dispatch}",
            "- key: inputs\n  keys: [arch, image]",
        ),
        _set(CI_YML, ["on", "workflow_dispatch", "inputs", "debug"], {"type": "boolean"}),
    ),
    Case(
        "k-triggers",
        _rule("require", W_CI, "- key: 'on'\n  keys_include: [push, pull_request]"),
        _delete(CI_YML, ["on", "pull_request"]),
    ),
    Case(
        "k-cron-on-the-hour",
        _rule(
            "require", "{workflow: .github/workflows/ci.yml, trigger: schedule}", "- key: '[*].cron'\n  matches: '^0 '"
        ),
        _set(CI_YML, ["on", "schedule", 1], {"cron": "30 13 * * *"}),
    ),
    Case(
        "k-builds-the-image",
        _rule("require", W_CI, "- key: jobs.build-image.steps[1].run\n  contains: docker build"),
        _swap_steps(CI_YML, "build-image", 0, 1),
    ),
    Case(
        "k-two-crons",
        _rule(
            "require",
            "{workflow: .github/workflows/ci.yml, trigger: schedule}",
            "- key: '[*].cron'\n  in: ['0 1 * * *', '0 13 * * *']\n  count: 2",
        ),
        _set(CI_YML, ["on", "schedule"], [{"cron": "0 1 * * *"}, {"cron": "0 13 * * 0"}]),
    ),
    Case(
        "k-three-stages",
        _rule("require", W_CI, "- key: jobs.stage-*-gpu-*\n  count: 3"),
        _delete(CI_YML, ["jobs", "stage-a-gpu-2"]),
    ),
    Case(
        "k-arches-from-python",
        _rule(
            "require",
            W_CI,
            "- key: on.workflow_dispatch.inputs.arch.options\n"
            "  equals: {from: {python: tools/ci_config.py, name: SUPPORTED_ARCHES}}",
        ),
        _edit_file("tools/ci_config.py", '"gfx950")\n', '"gfx950", "gfx1100")\n'),
    ),
    Case(
        "k-cache-flag-literal-key",
        _rule("require", W_CI, '- key: env["PIP_NO_CACHE"]\n  equals: true'),
        _set(CI_YML, ["env", "PIP_NO_CACHE"], "false"),
    ),
    Case(
        "k-timeout-is-a-number",
        _rule("forbid", W_CI, "- key: jobs.*.timeout-minutes\n  equals: '60'"),
        _set(CI_YML, ["jobs", "build-image", "timeout-minutes"], "60"),
    ),
    Case(
        "k-checkout-first",
        _rule(
            "require",
            "{workflow: .github/workflows/ci.yml, job: build-image}",
            "- key: steps[0].uses\n  matches: '^actions/checkout@'",
        ),
        _swap_steps(CI_YML, "build-image", 0, 1),
    ),
    Case(
        "k-last-cron",
        _rule("require", W_CI, "- key: on.schedule[-1].cron\n  equals: 0 13 * * *"),
        _set(CI_YML, ["on", "schedule"], [{"cron": "0 13 * * *"}, {"cron": "0 1 * * *"}]),
    ),
    Case(
        "k-cancel-in-progress",
        _rule("require", W_CI, "- key: concurrency.cancel-in-progress\n  equals: true"),
        _set(CI_YML, ["concurrency", "cancel-in-progress"], False),
    ),
    Case(
        "k-both-shards",
        _rule(
            "require",
            "{workflow: .github/workflows/ci.yml, job: stage-b-gpu-1}",
            "- key: strategy.matrix.shard\n  has: [1, 2]",
        ),
        _set(CI_YML, ["jobs", "stage-b-gpu-1", "strategy", "matrix", "shard"], [1]),
    ),
    Case(
        "k-action-python",
        _rule(
            "require",
            "{action: .github/actions/setup/action.yml}",
            "- key: inputs.python-version.default\n  equals: '3.10'",
        ),
        _set(SETUP, ["inputs", "python-version", "default"], "3.11"),
    ),
    Case(
        "k-gpu-labels",
        _rule(
            "require",
            "{workflow: .github/workflows/ci.yml, job: ['stage-a-*', 'stage-b-*']}",
            "- key: runs-on\n  has: [self-hosted, mi300x]",
        ),
        _set(CI_YML, ["jobs", "stage-a-gpu-1", "runs-on"], ["self-hosted", "linux", "mi250"]),
    ),
    Case(
        "k-pr-types",
        _rule(
            "require", "{workflow: .github/workflows/ci.yml, trigger: pull_request}", "- key: types\n  has: [opened]"
        ),
        _set(CI_YML, ["on", "pull_request", "types"], ["closed"]),
    ),
    Case(
        "k-docs-skip",
        _rule(
            "require", "{workflow: .github/workflows/ci.yml, trigger: push}", "- key: paths-ignore\n  has: ['docs/**']"
        ),
        _delete(CI_YML, ["on", "push", "paths-ignore"]),
    ),
    Case(
        "k-token-required",
        _rule(
            "require",
            "{workflow: .github/workflows/_run-ci-rocm.yml, trigger: workflow_call}",
            "- key: secrets.HF_TOKEN.required\n  equals: true",
        ),
        _set(ROCM, ["on", "workflow_call", "secrets", "HF_TOKEN", "required"], False),
    ),
    Case(
        "k-input-types",
        _rule(
            "require",
            "{workflow: '.github/workflows/_run-ci*.yml', trigger: workflow_call}",
            "- key: inputs.*.type\n  in: [string, boolean]",
        ),
        _set(CUDA, ["on", "workflow_call", "inputs", "runs_on", "type"], "number"),
    ),
    Case(
        "k-no-empty-env",
        _rule("forbid", W_CI, "- key: env.*\n  matches: '^\\s*$'"),
        _set(CI_YML, ["env", "PYTHONUNBUFFERED"], ""),
    ),
    Case(
        "k-image-then-stages",
        _rule(
            "order",
            W_CI,
            "- key: steps[*].run\n  contains: docker build\n- step: {literal: 'Test [gpu]'}",
            "    across: jobs\n",
        ),
        _delete(CI_YML, ["jobs", "stage-a-gpu-1", "needs"]),
    ),
    # file
    Case(
        "f-rocm-dockerfile",
        _rule("require", None, "- file: docker/Dockerfile.rocm\n  count: 1"),
        _file("docker/Dockerfile.rocm", None),
    ),
    Case(
        "f-no-patches",
        _rule("forbid", None, "- file: docker/**/*.patch"),
        _file("docker/amd_patch/sglv0.5.10/megatron.patch", "diff --git a/x b/x\n"),
    ),
    # what is absent, counts of what matches, sets, constants as Python iterates them, any depth
    Case(
        "k-no-decide-job",
        _rule("forbid", W_CI, "- key: jobs.docker-decide\n- key: '**.docker-decide'"),
        _set(CI_YML, ["jobs", "docker-decide"], {"runs-on": "ubuntu-latest", "steps": [{"run": "true"}]}),
    ),
    Case(
        "k-one-late-cron",
        _rule("require", W_SCHEDULE, "- key: '[*].cron'\n  equals: '0 13 * * *'\n  count: 1"),
        _set(CI_YML, ["on", "schedule", 1], {"cron": "0 14 * * *"}),
    ),
    Case(
        "k-some-stage-tests",
        _rule("require", W_CI, "- key: 'jobs.*.steps[*].run'\n  contains: docker push\n  count: {min: 1}"),
        _edit_run(CI_YML, "build-image", "Build the ROCm image", "docker push", "docker save"),
    ),
    Case(
        "k-cron-set-from-python",
        _rule("require", W_SCHEDULE, f"- key: '[*].cron'\n  set: {_constant('SCHEDULE_POLICIES')}"),
        _set(CI_YML, ["on", "schedule"], [{"cron": "0 1 * * *"}, {"cron": "0 13 * * *"}, {"cron": "0 2 * * 6"}]),
    ),
    Case(
        "k-exact-needs-set",
        _rule("require", W_STAGE_B, "- {key: needs, set: [stage-a-gpu-1, build-image]}"),
        _set(CI_YML, ["jobs", "stage-b-gpu-1", "needs"], ["build-image", "stage-a-gpu-1", "lint"]),
    ),
    Case(
        "k-arches-from-frozenset",
        _rule("require", W_DISPATCH, f"- key: inputs.arch.options\n  equals: {_constant('GPU_ARCHES')}"),
        _edit_file("tools/ci_config.py", 'frozenset({"gfx950", "gfx942"})', 'frozenset({"gfx950"})'),
    ),
    Case(
        "k-no-patch-value-anywhere",
        _rule("forbid", W_ROCM, "- key: '**'\n  contains: amd_patch"),
        _set(ROCM, ["env"], {"PATCH": "/tmp/amd_patch/megatron.patch"}),
    ),
    Case(
        "k-timeouts-at-any-depth",
        _rule("require", W_CI, "- key: 'jobs.**.timeout-minutes'\n  count: {min: 4}"),
        _delete(CI_YML, ["jobs", "stage-a-gpu-2", "timeout-minutes"]),
    ),
    # GitHub's newer keys
    Case(
        "k-image-queue",
        _rule("require", W_CI, "- key: jobs.build-image.concurrency.queue\n  equals: max"),
        _set(CI_YML, ["jobs", "build-image", "concurrency", "queue"], "single"),
    ),
    Case(
        "s-self-action",
        _rule("require", W_LINT, "- step: {uses: $/.github/actions/setup}"),
        _set(CI_YML, ["jobs", "lint", "steps", 2], {"uses": "./.github/actions/setup"}),
    ),
    Case(
        "c-types-in-parallel",
        _rule("require", W_LINT, "- command: mypy ."),
        _set(CI_YML, ["jobs", "lint", "steps", 3, "parallel", 0, "run"], "pyright .\n"),
    ),
    # referenced_by
    Case(
        "f-no-orphan-patches",
        _rule("forbid", None, "- file: 'patches/*.patch'\n  referenced_by: false"),
        _file("patches/old.patch", "diff --git a/y b/y\n"),
    ),
    Case(
        "f-image-built-by-ci",
        _rule("require", None, "- file: docker/Dockerfile.rocm\n  referenced_by: .github/workflows/*.yml"),
        _edit_run(CI_YML, "build-image", "Build the ROCm image", "-f docker/Dockerfile.rocm", "-f Dockerfile"),
    ),
    # concise rules: several scopes, items with their own where, listed names that must exist
    Case(
        "w-scope-list",
        _rule(
            "require",
            "[{workflow: .github/workflows/ci.yml, job: build-image}, {workflow: .github/workflows/_run-ci-rocm.yml,"
            " job: test}]",
            "- key: timeout-minutes",
        ),
        _delete(ROCM, ["jobs", "test", "timeout-minutes"]),
    ),
    Case(
        "w-items-own-where",
        _rule(
            "require",
            W_CI,
            "- key: needs\n  has: [build-image]\n  where: {job: 'stage-*'}\n"
            "- key: '[*].cron'\n  matches: '^0 '\n  where: {trigger: schedule}\n"
            "- command: docker build\n  where: {job: build-image}",
        ),
        _set(CI_YML, ["jobs", "stage-a-gpu-2", "needs"], ["lint"]),
    ),
    Case(
        "w-listed-jobs-exist",
        _rule(
            "require",
            "{workflow: .github/workflows/ci.yml, job: [build-image, stage-a-gpu-1, stage-b-gpu-1]}",
            "- key: timeout-minutes",
        ),
        _rename_job(CI_YML, "stage-b-gpu-1", "stage-b-gpu-9"),
    ),
    # parity
    Case(
        "par-reusable",
        "    kind: parity\n    workflows: [.github/workflows/_run-ci.yml, .github/workflows/_run-ci-rocm.yml]\n"
        "    compare: [inputs, secrets, steps]\n    allow: {steps: [Run in container]}\n",
        _set(CUDA, ["jobs", "test", "steps", 1, "name"], "Install Megatron-LM"),
    ),
    Case(
        "par-jobs",
        "    kind: parity\n    workflows: [.github/workflows/_run-ci.yml, .github/workflows/_run-ci-rocm.yml]\n"
        "    compare: [jobs]\n",
        _set(ROCM, ["jobs", "smoke"], {"runs-on": "ubuntu-latest", "steps": [{"run": "true"}]}),
    ),
)


def policy() -> str:
    return "version: 1\nrules:\n" + "".join(case.policy() for case in RULES)


def mutated(case: Case) -> Repository:
    repository = copy.deepcopy(REPOSITORY)
    case.mutate(repository)
    return repository


def all_mutated() -> Repository:
    """Every mutation at once, where one does not undo another's precondition."""
    repository = copy.deepcopy(REPOSITORY)
    for case in RULES:
        try:
            case.mutate(repository)
        except (AssertionError, LookupError, KeyError, IndexError):
            continue
    return repository


# ---------------------------------------------------------------------------
# Built-in rules on the file model: a reusable ROCm workflow that fetches and installs an upstream ref, an image
# workflow that picks its Dockerfile through a step output, and a Dockerfile that copies and applies a patch.

FILE_RULES = ("CC040", "CC041", "CC042", "CC047", "CC048")
ROCM_RUN = ".github/workflows/_run-ci-rocm.yml"
IMAGE = ".github/workflows/image.yml"
PATCH_TEXT = "diff --git a/megatron/x.py b/megatron/x.py\n--- a/megatron/x.py\n+++ b/megatron/x.py\n"
FILES_INSTALL = """if [ -n "$MEGATRON_PR" ]; then
  cd /root/Megatron-LM
  git fetch origin "$MEGATRON_PR"
  git checkout -f FETCH_HEAD
  git apply "$GITHUB_WORKSPACE/docker/amd_patch/latest/megatron.patch"
  pip install -e . --no-deps
fi
cd "$GITHUB_WORKSPACE" && pip install -e . --no-deps
"""
FILES_REPOSITORY: Repository = {
    ROCM_RUN: {
        "name": "CI Job (ROCm)",
        "on": {"workflow_call": {"inputs": {"megatron_pr": {"type": "string", "default": ""}}}},
        "permissions": {"contents": "read"},
        "jobs": {
            "run": {
                "runs-on": list(GPU),
                "timeout-minutes": 240,
                "container": {"image": "rocm/miles:nightly", "options": "--device=/dev/kfd --device=/dev/dri"},
                "steps": [
                    {"id": "checkout", "name": "Checkout repository", **CHECKOUT},
                    {
                        "id": "install",
                        "name": "Install Megatron",
                        "env": {"MEGATRON_PR": "${{ inputs.megatron_pr }}"},
                        "run": FILES_INSTALL,
                    },
                    {"id": "suite", "name": "Run tests", "shell": "bash", "run": "bash scripts/ci.sh\n"},
                ],
            }
        },
    },
    IMAGE: {
        "name": "Image (ROCm)",
        "on": {"push": {"branches": ["main"]}},
        "permissions": {"contents": "read"},
        "jobs": {
            "image": {
                "runs-on": "ubuntu-latest",
                "timeout-minutes": 60,
                "steps": [
                    CHECKOUT,
                    {
                        "id": "pick",
                        "name": "Pick the Dockerfile",
                        "run": 'echo "dockerfile=docker/Dockerfile.rocm" >> "$GITHUB_OUTPUT"\nmkdir -p assets\n',
                    },
                    {
                        "name": "Build",
                        "uses": "docker/build-push-action@v6",
                        "with": {"context": ".", "file": "${{ steps.pick.outputs.dockerfile }}", "push": False},
                    },
                ],
            }
        },
    },
    "docker/Dockerfile.rocm": (
        "FROM rocm/pytorch:latest\n"
        "RUN git clone https://github.com/radixark/Megatron-LM /opt/Megatron-LM\n"
        "COPY docker/amd_patch/latest/megatron.patch /tmp/amd_patch/megatron.patch\n"
        "RUN cd /opt/Megatron-LM && git apply /tmp/amd_patch/megatron.patch\n"
        "COPY assets/ /opt/data/\n"
    ),
    "docker/amd_patch/latest/megatron.patch": PATCH_TEXT,
    "scripts/ci.sh": "#!/bin/sh\nset -eu\npython -m pytest tests\n",
}

FILE_CASES: tuple[Case, ...] = (
    Case("CC040", "checkout below the install", _swap_steps(ROCM_RUN, "run", 0, 1)),
    Case("CC041", "the script the tests run deleted", _file("scripts/ci.sh", None)),
    Case("CC041", "the COPY'd assets no longer made", _edit_run(IMAGE, "image", "Pick the Dockerfile", "mkdir", "ls")),
    Case(
        "CC042",
        "a duplicate of the patch",
        _file("docker/amd_patch/sglv0.5.10/megatron.patch", PATCH_TEXT),
    ),
    Case(
        "CC047",
        "install before the fetched ref's checkout",
        _edit_run(
            ROCM_RUN,
            "run",
            "Install Megatron",
            "  git checkout -f FETCH_HEAD\n  git apply",
            "  pip install -e . --no-deps\n  git checkout -f FETCH_HEAD\n  git apply",
        ),
    ),
    Case(
        "CC048",
        "the COPY of the patch dropped",
        _edit_file(
            "docker/Dockerfile.rocm", "COPY docker/amd_patch/latest/megatron.patch /tmp/amd_patch/megatron.patch\n", ""
        ),
    ),
)
"""Each case's `id` is the rule its mutation must make report, `rule` says what the mutation does."""


def files_mutated(case: Case | None = None) -> Repository:
    """The file-model repository with one case's mutation, or every mutation at once."""
    repository = copy.deepcopy(FILES_REPOSITORY)
    for each in [case] if case is not None else FILE_CASES:
        each.mutate(repository)
    return repository


# ---------------------------------------------------------------------------
# Built-in rules on the same repository, with no configuration
#
# The repository as a team with no `ci-checks.yml` has it: pull requests do not reach the self-hosted stages,
# the reusable workflows are called by a nightly workflow that passes their runners and secrets, and every step
# of theirs has an id (which `renamed_ids` renames). Each case breaks one built-in rule by meaning alone.

NIGHTLY_YML = ".github/workflows/nightly.yml"
NIGHTLY = {
    "name": "Nightly",
    "on": {"push": {"branches": ["main"]}, "schedule": [{"cron": "0 3 * * *"}]},
    "concurrency": {"group": "nightly-${{ github.ref }}", "cancel-in-progress": True},
    "jobs": {
        "rocm": {
            "uses": "./.github/workflows/_run-ci-rocm.yml",
            "with": {"runs_on": '["self-hosted", "amd", "mi300x"]'},
            "secrets": {"HF_TOKEN": "${{ secrets.HF_TOKEN }}"},
        },
        "cuda": {
            "uses": "./.github/workflows/_run-ci.yml",
            "with": {"runs_on": '["self-hosted", "nvidia", "h100"]'},
            "secrets": {"HF_TOKEN": "${{ secrets.HF_TOKEN }}"},
        },
    },
}


def _without_pull_requests() -> Repository:
    repository = copy.deepcopy(REPOSITORY)
    del repository[CI_YML]["on"]["pull_request"]
    for path in (ROCM, CUDA):
        job = repository[path]["jobs"]["test"]
        job["env"] = {"HF_TOKEN": "${{ secrets.HF_TOKEN }}"}
        job["steps"] = [{**step, "id": f"step-{index}"} for index, step in enumerate(job["steps"])]
    repository[NIGHTLY_YML] = NIGHTLY
    return repository


BUILT_IN_REPOSITORY = _without_pull_requests()


@dataclass(frozen=True)
class BuiltInCase:
    code: str
    """The built-in rule the mutation breaks."""
    id: str
    mutate: Mutation


def _runner_label(old: str, new: str) -> Mutation:
    def mutate(repository: Repository) -> None:
        job = _job(repository, CI_YML, "stage-a-gpu-2")
        assert old in job["runs-on"]
        job["runs-on"] = [new if label == old else label for label in job["runs-on"]]

    return mutate


BUILT_IN: tuple[BuiltInCase, ...] = (
    BuiltInCase("CC043", "gpu-stage-without-timeout", _delete(CI_YML, ["jobs", "stage-a-gpu-1", "timeout-minutes"])),
    BuiltInCase("CC044", "runner-label-typo", _runner_label("mi300x", "mi300")),
    BuiltInCase("CC045", "pull-requests-reach-gpu", _set(CI_YML, ["on", "pull_request"], {"types": ["opened"]})),
    BuiltInCase(
        "CC046",
        "rocm-container-without-kfd",
        _edit_run(ROCM, "test", CONTAINER["name"], "--device=/dev/kfd ", ""),
    ),
    BuiltInCase(
        "CC049",
        "cuda-and-rocm-share-a-group",
        _set(NIGHTLY_YML, ["concurrency"], {"group": "ci-${{ github.ref }}", "cancel-in-progress": True}),
    ),
    BuiltInCase("CC050", "secret-not-passed", _delete(NIGHTLY_YML, ["jobs", "cuda", "secrets"])),
)
BUILT_IN_CODES = tuple(dict.fromkeys(case.code for case in BUILT_IN))


def built_in_mutated(case: BuiltInCase | None = None) -> Repository:
    """The repository with one case's mutation, or with every case's (None)."""
    repository = copy.deepcopy(BUILT_IN_REPOSITORY)
    for each in BUILT_IN if case is None else (case,):
        each.mutate(repository)
    return repository


def renamed_ids(repository: Repository) -> Repository:
    """The same repository with every step id renamed, and every `steps.<id>.` that reads one."""
    renamed = copy.deepcopy(repository)
    names: dict[str, str] = {}

    def rename(value: Data) -> Data:
        if isinstance(value, dict):
            if isinstance(value.get("id"), str) and ("run" in value or "uses" in value):
                names.setdefault(value["id"], f"renamed-{len(names)}")
                value = {**value, "id": names[value["id"]]}
            return {key: rename(item) for key, item in value.items()}
        if isinstance(value, list):
            return [rename(item) for item in value]
        return value

    for path, data in renamed.items():
        if isinstance(data, dict):
            renamed[path] = rename(data)
    text = json.dumps(renamed)
    for old, new in names.items():
        text = text.replace(f"steps.{old}.", f"steps.{new}.")
    assert names, "the repository has no step ids to rename"
    return json.loads(text)  # type: ignore[no-any-return]
