"""CC053 missing-mount-source on small repositories: whole messages, positions and related locations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.ci.linter.conftest import MakeRepo, run_cli

Finding = tuple[str, int, int, str, list[tuple[str, int, int, str]]]

CI = ".github/workflows/ci.yml"
DOCKERFILE = "docker/Dockerfile"
REPOSITORY = {"tests/data/case.json": "{}\n", "configs/train.yaml": "lr: 1\n", "requirements.txt": "torch\n"}
EMPTY = (
    "which the repository does not have and no earlier step makes: docker creates it as an empty folder owned by "
    "root, so the container sees an empty folder"
)


def _findings(root: Path) -> list[Finding]:
    result = run_cli("check", root, "--select", "CC053", "--output-format", "json")
    return [
        (
            d["path"],
            d["line"],
            d["column"],
            d["message"],
            [(r["path"], r["line"], r["column"], r["message"]) for r in d.get("related", [])],
        )
        for d in json.loads(result.out)["diagnostics"]
    ]


def _workflow(script: str, before: str = "", job: str = "") -> str:
    """A workflow whose job `test` checks the repository out (after `before` steps) and runs `script` (one line)."""
    return (
        f"on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n{job}    steps:\n{before}"
        f"      - uses: actions/checkout@v4\n      - run: {script}\n"
    )


def test_a_mount_of_a_path_the_checkout_lacks_names_the_path_what_docker_does_and_the_checkout(
    make_repo: MakeRepo,
) -> None:
    script = (
        "docker run -v ./tests/gone:/t:ro -v ./configs/tran.yaml:/c.yaml"
        " --mount type=bind,source=$GITHUB_WORKSPACE/ckpt,target=/ckpt img"
    )
    root = make_repo({**REPOSITORY, CI: _workflow(script)})
    shown = "`docker run -v ./tests/gone:/t:ro -v ./configs/tran.yaml:/...`"
    checkout = [(CI, 6, 15, "the repository is checked out here")]
    assert _findings(root) == [
        (CI, 7, 28, f"{shown} mounts `tests/gone`, {EMPTY}", checkout),
        (CI, 7, 50, f"{shown} mounts `configs/tran.yaml`, {EMPTY} (did you mean `configs/train.yaml`?)", checkout),
        (
            CI,
            7,
            103,
            f"{shown} mounts `ckpt`, which the repository does not have and no earlier step makes: the run fails "
            '("bind source path does not exist")',
            checkout,
        ),
    ]


@pytest.mark.parametrize(
    "script",
    [
        "docker run -v ./out:/out img",  # a folder docker makes for the container's output
        "docker run -v ./tests/data:/t:ro -v $(pwd)/configs/train.yaml:/c.yaml img",  # there
        "docker run -v /data/models:/models:ro -v $HOME/.cache/x.json:/x.json -v /var/run/docker.sock:/s img",
        "docker run -v hf-cache.v1:/root/.cache:ro img",  # a volume's name
        "docker run -v ${{ matrix.dir }}/x.json:/x.json img",  # unknown until the run
        "mkdir -p ckpt && docker run --mount type=bind,source=./ckpt,target=/ckpt img",
        "python -c 'import os; os.mkdir(\"ck\")' && docker run --mount type=bind,source=./ck,target=/ck img",
        "python tools/fetch.py && docker run -v ./weights.bin:/w.bin:ro img",  # the script it runs first names it
        "podman run -v ./gone.json:/g.json img",  # podman refuses a missing path itself
        "docker run img -v ./gone.json:/g.json",  # the container's own words
    ],
)
def test_a_mount_of_a_path_that_is_there_may_be_made_or_is_not_the_workspaces_is_not_judged(
    make_repo: MakeRepo, script: str
) -> None:
    fetch = {"tools/fetch.py": "import urllib.request\nurllib.request.urlretrieve(URL, 'weights.bin')\n"}
    assert _findings(make_repo({**REPOSITORY, **fetch, CI: _workflow(script)})) == []


@pytest.mark.parametrize(
    ("before", "job"),
    [
        ("      - uses: actions/download-artifact@v4\n        with: {name: w, path: w}\n", ""),
        ("", "    container: pytorch/pytorch:latest\n"),  # its docker run names the host's paths
    ],
)
def test_a_mount_made_earlier_or_in_a_container_job_is_not_judged(make_repo: MakeRepo, before: str, job: str) -> None:
    workflow = _workflow("docker run -v ./w/x.json:/x.json:ro img", job=job)
    if before:  # the download after the checkout
        workflow = workflow.replace("      - run:", before + "      - run:")
    assert _findings(make_repo({**REPOSITORY, CI: workflow})) == []


def test_a_bind_mount_of_a_dockerfile_is_judged_in_its_context_and_in_a_stage_built_from_scratch(
    make_repo: MakeRepo,
) -> None:
    dockerfile = (
        "FROM scratch AS assets\n"
        "COPY configs/ /configs/\n"
        "FROM python:3.11 AS base\n"
        "RUN --mount=type=bind,source=requirements.txt,target=/r.txt pip install -r /r.txt\n"
        "RUN --mount=type=bind,source=requirments-gpu.txt,target=/r.txt pip install -r /r.txt\n"
        "RUN --mount=type=bind,from=assets,source=/configs/train.yaml,target=/c.yaml true\n"
        "RUN --mount=type=bind,from=assets,source=/weights,target=/w ls /w\n"
        "RUN --mount=type=bind,from=python:3.11,source=/usr/lib,target=/l ls /l\n"
        "RUN --mount=type=bind,from=base,source=/opt/tool,target=/t ls /t\n"  # in the image it is built from
        "RUN --mount=type=bind,source=$SRC,target=/s --mount=type=cache,target=/root/.cache ls\n"
        "RUN echo --mount=type=bind,source=nothere,target=/x\n"
    )
    build = "docker build -f docker/Dockerfile ."
    root = make_repo({**REPOSITORY, DOCKERFILE: dockerfile, CI: _workflow(build)})
    assert _findings(root) == [
        (
            DOCKERFILE,
            5,
            30,
            "`RUN --mount=type=bind` source `requirments-gpu.txt` does not exist in the build context (the repository "
            "root): the build fails at this instruction (did you mean `requirements.txt`?)",
            [],
        ),
        (
            DOCKERFILE,
            7,
            42,
            "`RUN --mount=type=bind,from=assets` source `/weights` is not in stage `assets`: nothing of that stage, "
            "built from scratch, puts it there, and the build fails at this instruction",
            [],
        ),
    ]


def test_a_dockerfile_mount_the_building_job_made_in_the_context_or_of_an_unknown_context_is_not_judged(
    make_repo: MakeRepo,
) -> None:
    dockerfile = "FROM python:3.11\nRUN --mount=type=bind,source=wheels,target=/w pip install /w/*.whl\n"
    made = _workflow("mkdir -p wheels && pip wheel -w wheels . && docker build -f docker/Dockerfile .")
    assert _findings(make_repo({**REPOSITORY, DOCKERFILE: dockerfile, CI: made})) == []
    unknown = _workflow('docker build -f docker/Dockerfile "$CONTEXT"')
    assert _findings(make_repo({**REPOSITORY, DOCKERFILE: dockerfile, CI: unknown})) == []
