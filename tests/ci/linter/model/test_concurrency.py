"""Concurrency groups computed without running anything, and the runs whose groups collide (CC049)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci_checks.model.evaluation import UNKNOWN, Scope, Value, evaluate, same_text, written
from tests.ci.linter.conftest import MakeRepo, run_cli

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


def test_cuda_and_rocm_workflows_of_one_pull_request_cancel_each_other(make_repo: MakeRepo) -> None:
    rocm = CUDA.replace("CUDA", "ROCm").replace("pull_request\n", "pull_request_target\n", 1)
    root = make_repo({".github/workflows/cuda.yml": CUDA, ".github/workflows/rocm.yml": rocm})
    # The same pull request starts both, `pull_request` beside `pull_request_target`.
    assert _findings(root) == [
        (
            ".github/workflows/rocm.yml",
            4,
            "`.github/workflows/cuda.yml` and `.github/workflows/rocm.yml` both run for `pull_request` beside "
            "`pull_request_target` and ask for the same concurrency group, "
            "`gpu-${{ github.event.pull_request.number }}`, with `cancel-in-progress`: the run that starts second "
            "cancels the other",
        )
    ]
    (root / ".github" / "workflows" / "rocm.yml").write_text(rocm.replace("group: gpu-", "group: rocm-"))
    assert _findings(root) == []


def test_the_events_both_run_for_are_listed_each_once_and_a_pair_of_events_as_one(make_repo: MakeRepo) -> None:
    """For `push` the group is `gpu-` in both (no pull request number): the first event whose groups meet names it."""
    cuda = CUDA.replace("on: pull_request", "on: [push, pull_request, pull_request_review]").replace(
        "${{ github.event_name == 'pull_request' }}", "true"
    )
    rocm = cuda.replace("CUDA", "ROCm").replace(" pull_request,", " pull_request_target,")
    root = make_repo({".github/workflows/cuda.yml": cuda, ".github/workflows/rocm.yml": rocm})
    assert _findings(root) == [
        (
            ".github/workflows/rocm.yml",
            4,
            "`.github/workflows/cuda.yml` and `.github/workflows/rocm.yml` both run for `push`, `pull_request_review` "
            "and `pull_request` beside `pull_request_target` and ask for the same concurrency group, `gpu-`, with "
            "`cancel-in-progress`: the run that starts second cancels the other",
        )
    ]


def test_a_reusable_workflow_takes_its_callers_workflow_name(make_repo: MakeRepo) -> None:
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


def test_two_workflows_that_collide_on_their_own_and_in_one_callers_run_are_told_both_in_one_finding(
    make_repo: MakeRepo,
) -> None:
    """Two events are listed as `a and b`; the group of the caller's run is shown as computed there."""
    called = (
        "on: [push, pull_request, workflow_call]\n"
        "concurrency: {group: 'gpu-${{ github.event.pull_request.number }}', cancel-in-progress: true}\n"
        "jobs:\n  t: {runs-on: ubuntu-latest, steps: [{run: pytest}]}\n"
    )
    caller = "on: release\njobs:\n" + "".join(
        f"  {name}: {{uses: ./.github/workflows/{name}.yml}}\n" for name in ("cuda", "rocm")
    )
    root = make_repo(
        {
            ".github/workflows/cuda.yml": called,
            ".github/workflows/rocm.yml": called,
            ".github/workflows/rel.yml": caller,
        }
    )
    assert _findings(root) == [
        (
            ".github/workflows/rocm.yml",
            2,
            "`.github/workflows/cuda.yml` and `.github/workflows/rocm.yml` both run for `push` and `pull_request` and "
            "ask for the same concurrency group, `gpu-`, with `cancel-in-progress`: the run that starts second cancels "
            "the other; so do they, side by side, in one run of `.github/workflows/rel.yml` (`release`) (as `gpu-`)",
        )
    ]


JOBS = """name: GPU
on: push
jobs:
  cuda:
    runs-on: ubuntu-latest
    concurrency: {group: "gpu-${{ github.ref }}", cancel-in-progress: CUDA}
    steps: [{run: pytest}]
  build:
    runs-on: ubuntu-latest
    steps: [{run: make}]
  rocm:
    runs-on: ubuntu-latest
    concurrency: {group: "gpu-${{ github.ref }}", cancel-in-progress: ROCM}
    steps: [{run: pytest}]
"""


def _findings_with_notes(root: Path) -> list[tuple[str, int, int, str, list[tuple[str, int, int, str]]]]:
    result = run_cli("check", root, "--select", "CC049", "--output-format", "json")
    return [
        (
            d["path"],
            d["line"],
            d["column"],
            d["message"],
            [(r["path"], r["line"], r["column"], r["message"]) for r in d["related"]],
        )
        for d in json.loads(result.out)["diagnostics"]
    ]


@pytest.mark.parametrize(
    ("cancels", "needs", "found"),
    [
        (("true", "true"), {}, True),
        (("true", "false"), {}, True),  # either one cancelling is enough
        (("false", "true"), {}, True),
        (("false", "false"), {}, False),  # both wait their turn: nothing is cancelled
        (("true", "true"), {"rocm": "cuda"}, False),
        (("true", "true"), {"cuda": "rocm"}, False),
        (("true", "true"), {"rocm": "build", "build": "cuda"}, False),  # one after the other, through `build`
        (("true", "true"), {"rocm": "build"}, True),
    ],
)
def test_two_jobs_of_one_run_collide_where_they_run_side_by_side_and_one_cancels(
    make_repo: MakeRepo,
    cancels: tuple[str, str],
    needs: dict[str, str],
    found: bool,
) -> None:
    workflow = JOBS.replace("CUDA", cancels[0]).replace("ROCM", cancels[1])
    for job, needed in needs.items():
        workflow = workflow.replace(f"  {job}:\n", f"  {job}:\n    needs: {needed}\n")
    root = make_repo({".github/workflows/gpu.yml": workflow})
    rocm_line = 13 + len(needs)
    expected = [
        (
            ".github/workflows/gpu.yml",
            rocm_line,
            26,
            "job 'cuda' of `.github/workflows/gpu.yml` and job 'rocm' of `.github/workflows/gpu.yml` run side by side "
            "in one run of `.github/workflows/gpu.yml` (`push`) and ask for the same concurrency group, "
            "`gpu-${{ github.ref }}`, with `cancel-in-progress`: one cancels the other",
            [(".github/workflows/gpu.yml", 6 + ("cuda" in needs), 26, "`gpu-${{ github.ref }}` asked for here")],
        )
    ]
    assert _findings_with_notes(root) == (expected if found else [])


def test_jobs_of_other_groups_before_the_colliding_ones_do_not_hide_them(make_repo: MakeRepo) -> None:
    lint = '  lint:\n    runs-on: ubuntu-latest\n    concurrency: {group: "lint-${{ github.ref }}"}\n'
    lint += "    steps: [{run: x}]\n"
    workflow = JOBS.replace("CUDA", "true").replace("ROCM", "true").replace("jobs:\n", "jobs:\n" + lint, 1)
    root = make_repo({".github/workflows/gpu.yml": workflow})
    assert [(path, line) for path, line, *_ in _findings_with_notes(root)] == [(".github/workflows/gpu.yml", 17)]


def test_a_job_that_asks_for_the_group_its_run_holds_waits_for_itself(make_repo: MakeRepo) -> None:
    """A job's group that its own workflow holds, and a called workflow's job's group that its caller holds (neither
    job cancels: the two wait, side by side, for each other's turn, and for the workflow's)."""
    caller = JOBS.replace("name: GPU\n", 'name: GPU\nconcurrency: "gpu-${{ github.ref }}"\n')
    caller = caller.replace("CUDA", "false").split("  build:")[0] + "  tests: {uses: ./.github/workflows/called.yml}\n"
    called = (
        "on: workflow_call\njobs:\n  inner:\n    runs-on: ubuntu-latest\n"
        '    concurrency: {group: "gpu-${{ github.ref }}"}\n    steps: [{run: pytest}]\n'
    )
    root = make_repo({".github/workflows/gpu.yml": caller, ".github/workflows/called.yml": called})
    held = (".github/workflows/gpu.yml", 2, 14, "`gpu-${{ github.ref }}` held here")
    assert _findings_with_notes(root) == [
        (
            ".github/workflows/called.yml",
            5,
            26,
            "job 'inner' of `.github/workflows/called.yml` (called by job 'tests') asks for the concurrency group "
            "`gpu-${{ github.ref }}`, which its caller's run already holds (`.github/workflows/gpu.yml`): GitHub "
            "cancels it as a deadlock",
            [held, (".github/workflows/gpu.yml", 9, 3, "job 'tests' calls `./.github/workflows/called.yml`")],
        ),
        (
            ".github/workflows/gpu.yml",
            7,
            26,
            "job 'cuda' of `.github/workflows/gpu.yml` asks for the concurrency group `gpu-${{ github.ref }}`, which "
            "its own workflow's run already holds (`.github/workflows/gpu.yml`): GitHub cancels it as a deadlock",
            [held],
        ),
    ]


def test_a_pair_of_groups_met_through_several_calls_is_one_finding_that_names_its_run_once(make_repo: MakeRepo) -> None:
    """`lint`'s group meets the called job's through `one` and through `two`: one finding for the two places, naming
    the run once (with the first call); the two calls of one workflow also collide with each other."""
    caller = (
        "on: push\njobs:\n  lint:\n    runs-on: ubuntu-latest\n"
        "    concurrency: {group: gpu, cancel-in-progress: true}\n    steps: [{run: make}]\n"
        "  one: {uses: ./.github/workflows/tests.yml}\n  two: {uses: ./.github/workflows/tests.yml}\n"
    )
    called = (
        "on: workflow_call\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
        "    concurrency: {group: gpu, cancel-in-progress: true}\n    steps: [{run: pytest}]\n"
    )
    root = make_repo({".github/workflows/gpu.yml": caller, ".github/workflows/tests.yml": called})
    test = "job 'test' of `.github/workflows/tests.yml`"
    calls = [
        (".github/workflows/gpu.yml", line, 3, f"job '{job}' calls `./.github/workflows/tests.yml`")
        for line, job in ((7, "one"), (8, "two"))
    ]
    side_by_side = (
        "run side by side in one run of `.github/workflows/gpu.yml` (`push`) and ask for the same concurrency"
    )
    assert _findings_with_notes(root) == [
        (
            ".github/workflows/tests.yml",
            5,
            26,
            f"job 'lint' of `.github/workflows/gpu.yml` and {test} (called by job 'one') {side_by_side} group, `gpu`, "
            "with `cancel-in-progress`: one cancels the other",
            [(".github/workflows/gpu.yml", 5, 26, "`gpu` asked for here"), calls[0]],
        ),
        (
            ".github/workflows/tests.yml",
            5,
            26,
            f"{test} (called by job 'one') and {test} (called by job 'two') {side_by_side} group, `gpu`, with "
            "`cancel-in-progress`: one cancels the other",
            calls,
        ),
    ]
