"""The `runners:` inventory: its configuration, how `runs-on` is followed to labels, and actionlint's known labels."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_checks import config
from ci_checks.context import RepositoryContext
from ci_checks.loading import Workspace
from ci_checks.repository import Repository
from tests.ci.conftest import run_cli

INVENTORY = """runners:
  mi300x:
    vendor: amd
    labels: [self-hosted, AMD, mi300x]
  h100:
    vendor: nvidia
    labels: [self-hosted, h100]
  cpu: {}
"""


def test_the_inventory_is_read_with_labels_compared_without_case(tmp_path: Path) -> None:
    path = tmp_path / "ci-checks.yml"
    path.write_text(INVENTORY)
    inventory = config.load("ci-checks.yml", path).runners
    assert [(r.name, sorted(r.labels), r.vendor, r.self_hosted) for r in inventory.runners] == [
        ("mi300x", ["amd", "mi300x", "self-hosted"], "amd", True),
        ("h100", ["h100", "self-hosted"], "nvidia", True),
        ("cpu", ["cpu"], None, True),
    ]
    assert [(r.span.line, r.span.column) for r in inventory.runners] == [(2, 3), (5, 3), (8, 3)]
    assert inventory.knows("MI300X") and inventory.knows("linux") and not inventory.knows("mi300")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("runners:\n  mi300x:\n    vendor: AMD\n", "3:13: error: runners.mi300x.vendor: unknown value 'AMD'"),
        (
            "runners:\n  mi300x:\n    labls: [a]\n",
            "3:5: error: unknown configuration key 'labls' (did you mean 'labels'?)",
        ),
        ("runners:\n  mi300x:\n    labels: [a b]\n", "3:14: error: runner label 'a b' cannot contain spaces or commas"),
        ("runners:\n  mi300x:\n    labels: []\n", "3:13: error: runners.mi300x.labels needs at least 1 item"),
        ("runners: [mi300x]\n", "1:10: error: runners must be of type object"),
        (
            "runners:\n  mi300x:\n    self-hosted: yes\n",
            "3:18: error: runners.mi300x.self-hosted must be of type boolean",
        ),
    ],
)
def test_a_bad_inventory_is_a_positioned_error_with_exit_2(make_repo, content: str, expected: str) -> None:  # type: ignore[no-untyped-def]
    root = make_repo({".github/ci-checks.yml": content, ".github/workflows/a.yml": "on: push\njobs: {}\n"})
    result = run_cli("check", root)
    assert result.code == 2
    assert result.err.startswith(f".github/ci-checks.yml:{expected}")


def test_a_bad_inventory_in_pyproject_is_placed_at_its_table(make_repo) -> None:  # type: ignore[no-untyped-def]
    pyproject = '[tool.ci-checks]\nversion = 1\n\n[tool.ci-checks.runners.mi300x]\nvendor = "amd"\nlabels = "mi300x"\n'
    root = make_repo({"pyproject.toml": pyproject, ".github/workflows/a.yml": "on: push\njobs: {}\n"})
    result = run_cli("check", root)
    assert result.code == 2
    assert result.err.startswith("pyproject.toml:6:10: error: runners.mi300x.labels must be of type array")


CALLER = """on: workflow_dispatch
jobs:
  plain:
    runs-on: [self-hosted, "gpu-${{ matrix.count }}"]
    strategy:
      matrix:
        count: [1, 8]
        include:
          - count: 4
  chosen:
    runs-on: ${{ github.repository_owner == 'octo' && 'big-runner' || 'ubuntu-24.04' }}
  by-platform:
    runs-on: ${{ matrix.platform.runner }}
    strategy:
      matrix:
        platform:
          - {runner: mi300x}
          - {runner: [self-hosted, h100]}
  call:
    uses: ./.github/workflows/callee.yml
    with:
      runs_on: '["self-hosted", "amd", "mi300x"]'
  unknown:
    runs-on: ${{ needs.plan.outputs.runner }}
"""
CALLEE = """on:
  workflow_call:
    inputs:
      runs_on: {type: string, default: '["ubuntu-latest"]'}
jobs:
  run:
    runs-on: ${{ fromJSON(inputs.runs_on) }}
"""


def _context(make_repo) -> RepositoryContext:  # type: ignore[no-untyped-def]
    root = make_repo({".github/workflows/caller.yml": CALLER, ".github/workflows/callee.yml": CALLEE})
    return RepositoryContext(Workspace(Repository(root)), [], lambda path: True)


def test_runs_on_is_followed_through_matrices_expressions_and_callers(make_repo) -> None:  # type: ignore[no-untyped-def]
    context = _context(make_repo)
    jobs = {(w.path.rsplit("/", 1)[1], j.id): j for w in context.workflows for j in w.jobs.values()}
    values = {key: [c.values for c in context.resolver.runners(job).choices] for key, job in jobs.items()}
    assert values[("caller.yml", "plain")] == [
        ["self-hosted", "gpu-1"],
        ["self-hosted", "gpu-8"],
        ["self-hosted", "gpu-4"],
    ]
    assert values[("caller.yml", "chosen")] == [["big-runner"], ["ubuntu-24.04"]]
    assert values[("caller.yml", "by-platform")] == [["mi300x"], ["self-hosted", "h100"]]
    assert values[("callee.yml", "run")] == [["ubuntu-latest"], ["self-hosted", "amd", "mi300x"]]
    assert values[("caller.yml", "unknown")] == []
    assert not context.resolver.runners(jobs[("caller.yml", "unknown")]).complete


def test_a_label_from_a_json_input_is_placed_inside_the_callers_string(make_repo) -> None:  # type: ignore[no-untyped-def]
    context = _context(make_repo)
    callee = next(w for w in context.workflows if w.path.endswith("callee.yml"))
    choice = context.resolver.runners(callee.jobs["run"]).choices[1]
    amd = choice.labels[1]
    assert (amd.value, amd.span.path, amd.span.line, amd.span.column, amd.span.end_column) == (
        "amd",
        ".github/workflows/caller.yml",
        22,
        34,
        37,
    )
    assert [r.message for r in amd.via] == ["passed as input `runs_on` by job 'call'"]


WORKFLOW = "on: push\njobs:\n  t:\n    runs-on: [self-hosted, mi300x]\n    timeout-minutes: 30\n" + (
    "    steps:\n      - run: echo ok\n"
)


def test_the_inventory_is_given_to_actionlint_as_its_self_hosted_labels(make_repo) -> None:  # type: ignore[no-untyped-def]
    root = make_repo({".github/workflows/a.yml": WORKFLOW})
    without = run_cli("check", root, "--backends", "actionlint")
    assert [h.split()[1] for h in without.headers] == ["AL-runner-label"]
    (root / ".github" / "ci-checks.yml").write_text("runners:\n  mi300x:\n    labels: [self-hosted, mi300x]\n")
    with_inventory = run_cli("check", root, "--backends", "actionlint")
    assert (with_inventory.code, with_inventory.headers, with_inventory.err) == (0, [], "")


def test_the_repositorys_own_actionlint_labels_are_kept(make_repo) -> None:  # type: ignore[no-untyped-def]
    workflow = WORKFLOW.replace("mi300x]", "mi300x, legacy-box]")
    root = make_repo(
        {
            ".github/workflows/a.yml": workflow,
            ".github/actionlint.yaml": "self-hosted-runner:\n  labels: [legacy-box]\n",
            ".github/ci-checks.yml": "runners:\n  mi300x:\n    labels: [self-hosted, mi300x]\n",
        }
    )
    result = run_cli("check", root, "--backends", "actionlint", "--select", "AL")
    assert (result.code, result.headers) == (0, [])
