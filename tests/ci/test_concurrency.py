"""Concurrency groups computed without running anything, and the runs whose groups collide (CC049)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci_checks.model.evaluation import UNKNOWN, Scope, Value, evaluate, same_text, written
from tests.ci.conftest import run_cli

PULL_REQUEST = Scope("pull_request", "CUDA", ".github/workflows/cuda.yml")
PUSH = Scope("push", "CUDA", ".github/workflows/cuda.yml")
OTHER_PUSH = Scope("push", "ROCm", ".github/workflows/rocm.yml")


@pytest.mark.parametrize(
    ("text", "scope", "shown"),
    [
        ("ci-${{ github.ref }}", PUSH, "ci-${{ github.ref }}"),
        ("${{ github.workflow }}-${{ github.ref }}", PUSH, "CUDA-${{ github.ref }}"),
        ("${{ github.head_ref || github.run_id }}", PULL_REQUEST, "${{ github.head_ref }}"),
        ("${{ github.head_ref || github.run_id }}", PUSH, "${{ github.run_id }}"),
        ("pr-${{ github.event.pull_request.number || github.sha }}", PUSH, "pr-${{ github.sha }}"),
        ("${{ format('{0}-{1}', github.workflow, github.event_name) }}", PUSH, "CUDA-push"),
        ("${{ github.event_name == 'push' && 'main' || github.head_ref }}", PUSH, "main"),
        ("${{ github.ref }}", PULL_REQUEST, "refs/pull/${{ github.event.number }}/merge"),
        ("${{ inputs.ref || github.ref }}", PUSH, "${{ github.ref }}"),
        ("${{ matrix.shard }}-x", PUSH, "${{ … }}"),
        ("${{ hashFiles('x') }}", PUSH, "${{ … }}"),
        ("${{ github.ref", PUSH, "${{ github.ref"),
    ],
)
def test_a_group_is_evaluated_as_far_as_the_event_tells(text: str, scope: Scope, shown: str) -> None:
    assert written(evaluate(text, scope)) == shown


def _same(first: str, second: str, one: Scope = PUSH, other: Scope = OTHER_PUSH) -> bool:
    return same_text(evaluate(first, one), evaluate(second, other))


def test_groups_are_the_same_text_only_where_that_is_sure() -> None:
    assert _same("ci-${{ github.ref }}", "CI-${{ github.ref }}")  # groups compare without case
    assert not _same("${{ github.workflow }}-${{ github.ref }}", "${{ github.workflow }}-${{ github.ref }}")
    assert not _same("${{ github.run_id }}", "${{ github.run_id }}")  # two runs
    assert _same("${{ github.run_id }}", "${{ github.run_id }}", PUSH, PUSH)  # a caller and its callee
    assert not _same("${{ matrix.a }}", "${{ matrix.a }}")  # never decided by what cannot be known
    assert not _same("${{ github.ref }}", "${{ github.sha }}")  # unknown values are not assumed to differ, nor equal
    assert _same("${{ vars.A || github.ref }}", "${{ vars.A || github.ref }}")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("${{ github.event_name == 'pull_request' }}", True),
        ("${{ github.ref != 'refs/heads/main' }}", True),  # a pull request's ref is refs/pull/N/merge
        ("${{ !contains(github.event_name, 'push') }}", True),
        ("${{ startsWith(github.ref, 'refs/tags/') }}", False),
        ("${{ github.event.pull_request.draft }}", None),
    ],
)
def test_cancel_in_progress_is_decided_per_event(text: str, expected: bool | None) -> None:
    value: Value = evaluate(text, PULL_REQUEST)
    assert (None if value is UNKNOWN or not isinstance(value, bool) else value) == expected


CUDA = """name: CUDA
on: pull_request
concurrency:
  group: gpu-${{ github.event.pull_request.number }}
  cancel-in-progress: ${{ github.event_name == 'pull_request' }}
jobs:
  t: {runs-on: ubuntu-latest, steps: [{run: pytest}]}
"""


def _findings(root: Path) -> list[tuple[str, int, str]]:
    result = run_cli("check", root, "--select", "CC049", "--output-format", "json")
    return [(d["path"], d["line"], d["message"]) for d in json.loads(result.out)["diagnostics"]]


def test_cuda_and_rocm_workflows_of_one_pull_request_cancel_each_other(make_repo) -> None:  # type: ignore[no-untyped-def]
    rocm = CUDA.replace("CUDA", "ROCm").replace("pull_request\n", "pull_request_target\n", 1)
    root = make_repo({".github/workflows/cuda.yml": CUDA, ".github/workflows/rocm.yml": rocm})
    # The same pull request starts both, `pull_request` beside `pull_request_target`.
    assert _findings(root) == [
        (
            ".github/workflows/rocm.yml",
            4,
            "`.github/workflows/cuda.yml` and `.github/workflows/rocm.yml` both run for `pull_request` and "
            "`pull_request_target` and ask for the same concurrency group, "
            "`gpu-${{ github.event.pull_request.number }}`, with `cancel-in-progress`: the run that starts second "
            "cancels the other",
        )
    ]
    (root / ".github" / "workflows" / "rocm.yml").write_text(rocm.replace("group: gpu-", "group: rocm-"))
    assert _findings(root) == []


def test_a_reusable_workflow_takes_its_callers_workflow_name(make_repo) -> None:  # type: ignore[no-untyped-def]
    called = (
        CUDA.replace("on: pull_request", "on:\n  pull_request:\n  workflow_call:")
        .replace("gpu-${{ github.event.pull_request.number }}", "${{ github.workflow }}-${{ github.ref }}")
        .replace("${{ github.event_name == 'pull_request' }}", "true")
    )
    caller = "name: Release\non: push\njobs:\n  cuda: {uses: ./.github/workflows/cuda.yml}\n"
    caller += "  rocm: {uses: ./.github/workflows/rocm.yml}\n"
    rocm = called.replace("CUDA", "ROCm")
    root = make_repo(
        {".github/workflows/cuda.yml": called, ".github/workflows/rocm.yml": rocm, ".github/workflows/rel.yml": caller}
    )
    found = _findings(root)
    # Run for their own pull requests, their names differ; called by one push, both are `Release-<ref>`.
    assert [(path, line) for path, line, _ in found] == [(".github/workflows/rocm.yml", 6)]
    assert "`Release-${{ github.ref }}`" in found[0][2] and "one run of `.github/workflows/rel.yml`" in found[0][2]
    (root / ".github" / "workflows" / "rel.yml").write_text(caller.replace("rocm: {", "rocm: {needs: cuda, "))
    assert _findings(root) == []  # one after the other: nothing is cancelled
