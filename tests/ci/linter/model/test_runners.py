"""The `runners:` inventory: its configuration, how `runs-on` is followed to labels, and actionlint's known labels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci_checks.config import load as config
from ci_checks.core.repository import Repository
from ci_checks.model import inventory
from ci_checks.model.loading import Workspace
from ci_checks.model.runners import RunnerInventory
from ci_checks.rules.context import RepositoryContext
from tests.ci.linter.conftest import MakeRepo, run_cli

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
def test_a_bad_inventory_is_a_positioned_error_with_exit_2(make_repo: MakeRepo, content: str, expected: str) -> None:
    root = make_repo({".github/ci-checks.yml": content, ".github/workflows/a.yml": "on: push\njobs: {}\n"})
    result = run_cli("check", root)
    assert result.code == 2
    assert result.err.startswith(f".github/ci-checks.yml:{expected}")


def test_a_bad_inventory_in_pyproject_is_placed_at_its_table(make_repo: MakeRepo) -> None:
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


def _context(make_repo: MakeRepo) -> RepositoryContext:
    root = make_repo({".github/workflows/caller.yml": CALLER, ".github/workflows/callee.yml": CALLEE})
    return RepositoryContext(Workspace(Repository(root)), [], lambda path: True)


def test_runs_on_is_followed_through_matrices_expressions_and_callers(make_repo: MakeRepo) -> None:
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
    # The callee's one caller passes `runs_on`: its default is never what a run gets.
    assert values[("callee.yml", "run")] == [["self-hosted", "amd", "mi300x"]]
    assert values[("caller.yml", "unknown")] == []
    assert not context.resolver.runners(jobs[("caller.yml", "unknown")]).complete


def test_a_label_from_a_json_input_is_placed_inside_the_callers_string(make_repo: MakeRepo) -> None:
    context = _context(make_repo)
    callee = next(w for w in context.workflows if w.path.endswith("callee.yml"))
    choice = context.resolver.runners(callee.jobs["run"]).choices[0]
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


def test_the_inventory_is_given_to_actionlint_as_its_self_hosted_labels(make_repo: MakeRepo) -> None:
    hosted_typo = WORKFLOW.replace("[self-hosted, mi300x]", "ubuntu-lates")
    root = make_repo({".github/workflows/a.yml": WORKFLOW, ".github/workflows/b.yml": hosted_typo})
    inferred = run_cli("check", root, "--backends", "actionlint")
    # `mi300x` is inferred; a label that looks like GitHub's own is left to actionlint, which knows GitHub's list.
    assert [(h.split()[0].split(":")[0], h.split()[1]) for h in inferred.headers] == [
        (".github/workflows/b.yml", "AL-runner-label")
    ]
    (root / ".github" / "ci-checks.yml").write_text("runners:\n  mi300x:\n    labels: [self-hosted, mi300x]\n")
    (root / ".github" / "workflows" / "b.yml").unlink()
    with_inventory = run_cli("check", root, "--backends", "actionlint")
    assert (with_inventory.code, with_inventory.headers, with_inventory.err) == (0, [], "")


NO_CONFIG = {
    ".github/workflows/rocm.yml": """on: pull_request
jobs:
  by-name:
    runs-on: [self-hosted, linux-mi300x-gpu-8]
    steps: [{run: rocminfo}]
  by-devices:
    runs-on: [box-a]
    container: {image: rocm/pytorch, options: --device=/dev/kfd --device=/dev/dri}
    steps: [{run: rocminfo}]
  builder:
    runs-on: aws-linux-scale-rocm-prod
    container: python:3.12
    steps: [{run: make}]
  intel:
    runs-on: [self-hosted, intel, xpu]
    container: {image: intel/xpu, options: --device=/dev/dri}
    steps: [{run: xpu-smi}]
""",
    ".github/workflows/cuda.yml": """on: push
jobs:
  h100:
    strategy:
      matrix:
        gpus: [1, 8]
    runs-on: "nvidia-h100-${{ matrix.gpus }}gpu"
    steps: [{run: nvidia-smi}]
  cu124:
    runs-on: [self-hosted, cu124]
    steps: [{run: nvidia-smi}]
  plain-gpu:
    runs-on: [my-gpu-box]
    steps: [{run: nvidia-smi}]
  cpu:
    runs-on: [linux-amd64-cpu16]
    steps: [{run: make}]
  hosted:
    runs-on: ubuntu-24.04
    steps: [{run: make}]
""",
}


def _inferred(root: Path) -> dict[str, tuple[str | None, bool]]:
    path = root / ".github" / "ci-checks.yml"
    configured = config.load(".github/ci-checks.yml", path).runners if path.exists() else RunnerInventory()
    context = RepositoryContext(Workspace(Repository(root)), [], lambda path: True, configured)
    return {runner.name: (runner.vendor, runner.self_hosted) for runner in context.runners.runners}


def test_with_no_configuration_the_workflows_imply_the_inventory(make_repo: MakeRepo) -> None:
    root = make_repo(NO_CONFIG)
    assert _inferred(root) == {
        "linux-mi300x-gpu-8": ("amd", True),
        "box-a": ("amd", True),
        # `rocm` names whose software it builds; nothing says the machine has a GPU, nor that it is self-hosted.
        "aws-linux-scale-rocm-prod": (None, False),
        # Intel's GPUs are `/dev/dri` too: no vendor is guessed where a label names another accelerator.
        "intel-xpu": (None, True),
        "nvidia-h100-1gpu": ("nvidia", True),
        "nvidia-h100-8gpu": ("nvidia", True),
        "cu124": ("nvidia", True),
        "my-gpu-box": ("nvidia", True),
        "linux-amd64-cpu16": (None, False),
    }


def test_a_configured_runner_wins_over_the_inferred_one_it_carries(make_repo: MakeRepo) -> None:
    configured = "runners:\n  big:\n    vendor: nvidia\n    labels: [self-hosted, linux-mi300x-gpu-8]\n"
    root = make_repo({**NO_CONFIG, ".github/ci-checks.yml": configured})
    inventory = _inferred(root)
    assert inventory["big"] == ("nvidia", True)
    assert "linux-mi300x-gpu-8" not in inventory and inventory["box-a"] == ("amd", True)


@pytest.mark.parametrize(
    ("label", "vendors", "gpu"),
    [
        ("linux-mi300x-gpu-8", {"amd"}, True),
        ("gfx90a", {"amd"}, True),
        ("gfx942", {"amd"}, True),
        ("linux-gfx1100-8", {"amd"}, True),
        ("rocm-6.2", {"amd"}, False),
        ("MI325X", {"amd"}, True),
        ("nvidia-h100-8gpu", {"nvidia"}, True),
        ("8xH100", {"nvidia"}, True),
        ("cu124", {"nvidia"}, False),
        ("v100", {"nvidia"}, True),
        ("gpu-l40s", {"nvidia"}, True),
        ("linux.g5.12xlarge.nvidia.gpu", {"nvidia"}, True),
        ("l40s-4gpu", {"nvidia"}, True),
        ("4gpu", set(), True),
        ("linux-amd64-cpu16", set(), False),
        ("linux-aarch64-a2b3-0", set(), False),
        ("linux.2xlarge", set(), False),
    ],
)
def test_label_names_are_read_word_by_word(label: str, vendors: set[str], gpu: bool) -> None:
    reading = inventory.read_name(label)
    assert (set(reading.vendors), reading.gpu) == (vendors, gpu)


@pytest.mark.parametrize(
    ("label", "meant", "typo"),
    [
        ("mi300", "mi300x", True),
        ("self-hosed", "self-hosted", True),
        ("4gup", "4gpu", True),
        ("nvidai", "nvidia", True),
        ("mi305", "mi350", True),
        ("h1000", "h100", True),
        ("h200", "h100", False),
        ("a10", "a100", False),
        ("linux-amd64-cpu-2-hk", "linux-amd64-cpu-4-hk", False),
        ("linux-aarch64-a2b1-8", "linux-aarch64-a2b3-8", False),
        ("mi300x", "mi300x", False),
        ("mi250", "mi300x", False),
        # Another machine: a GPU model that exists and differs in a letter, another class of machine.
        ("mi300a", "mi300x", False),
        ("linux-cpu-8", "linux-gpu-8", False),
        ("linux-gpu-8", "linux-cpu-8", False),
        ("npu-8", "gpu-8", False),
        ("amd-gpu-8", "amd-gpux-8", True),
    ],
)
def test_a_typo_is_one_edit_and_not_another_machines_number(label: str, meant: str, typo: bool) -> None:
    assert inventory.mistyped(label, meant) is typo


@pytest.mark.parametrize(
    ("label", "other", "same"),
    [
        ("linux-mi300x-8", "linux-h100-8", False),
        ("rocm-gpu", "cuda-gpu", False),
        ("gfx942", "nvidia-runner", False),
        ("linux-gpu-16", "linux-cpu-16", False),
        ("linux.npu.4", "linux.gpu.4", False),
        ("h1000", "h100", True),
        ("amd-mi300x", "mi325x", True),
        ("amd", "amd-cpu", True),
        ("box-one", "box-two", True),
    ],
)
def test_labels_of_two_vendors_or_classes_of_machine_are_never_the_same_machine(
    label: str, other: str, same: bool
) -> None:
    """A vendor or a class (GPUs, CPUs alone, another accelerator) said by both and different; a label that says
    nothing (`h1000`, `box-one`) may be anything."""
    assert inventory.same_machine_class(label, other) is same


TYPOS = """on: push
jobs:
  a: {runs-on: [self-hosted, amd, mi300x], steps: [{run: a}]}
  b: {runs-on: [self-hosted, amd, mi300x], steps: [{run: b}]}
  typo: {runs-on: [self-hosted, amd, mi300], steps: [{run: c}]}
  hosed: {runs-on: [self-hosed, amd, mi300x], steps: [{run: d}]}
  once-each-1: {runs-on: [self-hosted, box-one], steps: [{run: e}]}
  once-each-2: {runs-on: [self-hosted, box-onee], steps: [{run: f}]}
  count: {runs-on: [self-hosted, cpu-2], steps: [{run: g}]}
  counts: {runs-on: [self-hosted, cpu-4], steps: [{run: h}]}
  counted: {runs-on: [self-hosted, cpu-4], steps: [{run: i}]}
"""


def test_a_label_written_once_one_edit_from_a_label_written_elsewhere_is_a_typo(make_repo: MakeRepo) -> None:
    root = make_repo({".github/workflows/a.yml": TYPOS})
    result = run_cli("check", root, "--select", "CC044")
    assert result.headers == [
        ".github/workflows/a.yml:5:38: CC044 job 'typo' asks for runner label `mi300`, which nothing else names; it "
        "is one edit from `mi300x`, which 3 other jobs ask for, so no runner may carry it (did you mean `mi300x`?)",
        ".github/workflows/a.yml:6:21: CC044 job 'hosed' asks for runner label `self-hosed`, which nothing else "
        "names; it is one edit from `self-hosted`, which 8 other jobs ask for, so no runner may carry it "
        "(did you mean `self-hosted`?)",
    ]
    # The typo's job lands on no runner; the others, and the labels beside the typo, are known.
    context = RepositoryContext(Workspace(Repository(root)), [], lambda path: True)
    assert not context.runners.knows("mi300") and context.runners.knows("amd") and context.runners.knows("box-onee")


def test_a_label_one_edit_from_another_vendors_or_class_of_machine_is_another_machine_not_a_typo(
    make_repo: MakeRepo,
) -> None:
    """`linux-cpu-8` beside three `linux-gpu-8` jobs, `mi300a` beside `mi300x`: other machines, not reported and
    taken as runners; `linux-gpuu-8` is still a typo of `linux-gpu-8`."""
    jobs = "".join(
        f"  {name}: {{runs-on: [self-hosted, {label}], steps: [{{run: a}}]}}\n"
        for name, label in [
            ("nv-1", "linux-gpu-8"),
            ("nv-2", "linux-gpu-8"),
            ("nv-3", "linux-gpu-8"),
            ("cpu", "linux-cpu-8"),
            ("amd-1", "mi300x"),
            ("amd-2", "mi300x"),
            ("apu", "mi300a"),
            ("typo", "linux-gpuu-8"),
        ]
    )
    root = make_repo({".github/workflows/a.yml": f"on: push\njobs:\n{jobs}"})
    assert run_cli("check", root, "--select", "CC044", "--output-format", "concise").headers == [
        ".github/workflows/a.yml:10:33: CC044 job 'typo' asks for runner label `linux-gpuu-8`, which nothing else "
        "names; it is one edit from `linux-gpu-8`, which 3 other jobs ask for, so no runner may carry it (did you "
        "mean `linux-gpu-8`?) [unknown-runner-label]"
    ]
    context = RepositoryContext(Workspace(Repository(root)), [], lambda path: True)
    assert context.runners.knows("linux-cpu-8") and context.runners.knows("mi300a")


def test_with_an_inventory_the_hint_is_a_label_of_the_same_vendor_and_class(make_repo: MakeRepo) -> None:
    """The closest inventory label of another vendor (`linux-mi300x-8` for `linux-h100-8`), class (`linux-cpu-16`
    for `linux-gpu-16`) or GPU model (`linux-mi300x-8` for `linux-mi325x-8`) is not offered; one of the same is
    (`linux-mi300x-8` for `linux-mi300x8`)."""
    configured = (
        "runners:\n  amd:\n    vendor: amd\n    labels: [self-hosted, linux-mi300x-8]\n"
        "  cpu:\n    labels: [self-hosted, linux-cpu-16]\n"
    )
    jobs = "".join(
        f"  {name}: {{runs-on: [self-hosted, {label}], steps: [{{run: a}}]}}\n"
        for name, label in [
            ("nv", "linux-h100-8"),
            ("gpu", "linux-gpu-16"),
            ("amd", "linux-mi325x-8"),
            ("dash", "linux-mi300x8"),
        ]
    )
    root = make_repo({".github/ci-checks.yml": configured, ".github/workflows/a.yml": f"on: push\njobs:\n{jobs}"})
    unknown = "which no runner in the `runners:` inventory has"
    assert run_cli("check", root, "--select", "CC044").headers == [
        f".github/workflows/a.yml:3:31: CC044 job 'nv' asks for runner label `linux-h100-8`, {unknown}",
        f".github/workflows/a.yml:4:32: CC044 job 'gpu' asks for runner label `linux-gpu-16`, {unknown}",
        f".github/workflows/a.yml:5:32: CC044 job 'amd' asks for runner label `linux-mi325x-8`, {unknown}",
        f".github/workflows/a.yml:6:33: CC044 job 'dash' asks for runner label `linux-mi300x8`, {unknown} (did you "
        "mean `linux-mi300x-8`?)",
    ]


def test_a_typo_witnessed_by_one_other_job_says_that_one_job_asks_for_the_label(make_repo: MakeRepo) -> None:
    """`mi305` beside `mi350`: one job each, and the model number that reads as less is the typo."""
    jobs = (
        "  a: {runs-on: [self-hosted, mi350], steps: [{run: a}]}\n"
        "  b: {runs-on: [self-hosted, mi305], steps: [{run: b}]}\n"
    )
    root = make_repo({".github/workflows/a.yml": f"on: push\njobs:\n{jobs}"})
    assert run_cli("check", root, "--select", "CC044").headers == [
        ".github/workflows/a.yml:4:30: CC044 job 'b' asks for runner label `mi305`, which nothing else names; it is "
        "one edit from `mi350`, which 1 other job asks for, so no runner may carry it (did you mean `mi350`?)"
    ]


AGAINST_THE_INVENTORY = """on: push
jobs:
  known: {runs-on: [self-hosted, Linux, AMD, MI300X], steps: [{run: a}]}
  generic: {runs-on: [self-hosted, X64], steps: [{run: a}]}
  hosted: {runs-on: ubuntu-24.04, steps: [{run: a}]}
  typo: {runs-on: [self-hosted, MI300], steps: [{run: a}]}
  near: {runs-on: [self-hosted, Mi3], steps: [{run: a}]}
  unknown: {runs-on: &far [self-hosted, mi], steps: [{run: a}]}
  same: {runs-on: *far, steps: [{run: a}]}
  matrix:
    strategy: {matrix: {gpu: [amd, mi300x]}}
    runs-on: [self-hosted, box9, "${{ matrix.gpu }}"]
    steps: [{run: a}]
"""


def test_with_an_inventory_a_label_no_runner_has_is_reported_once_where_it_is_written(make_repo: MakeRepo) -> None:
    """Labels compare without case, with the inventory's and those every self-hosted runner has; a
    GitHub-hosted one is known; the hint is the closest inventory label at least 0.6 alike (`mi3` is 0.67 alike
    `mi300x`, `mi` 0.5); a label written once is reported once, for the first job that asks for it (a YAML alias
    asks again) and whichever matrix choice takes it; a workflow with no `on:` (here before the others) is passed
    over."""
    root = make_repo(
        {
            ".github/ci-checks.yml": "runners:\n  mi300x:\n    vendor: amd\n    labels: [self-hosted, amd, mi300x]\n",
            ".github/workflows/a.yml": "jobs:\n  t: {runs-on: [self-hosted, never-run], steps: [{run: a}]}\n",
            ".github/workflows/b.yml": AGAINST_THE_INVENTORY,
        }
    )
    result = run_cli("check", root, "--select", "CC044")
    unknown = "which no runner in the `runners:` inventory has"
    assert result.headers == [
        f".github/workflows/b.yml:6:33: CC044 job 'typo' asks for runner label `MI300`, {unknown} (did you mean "
        "`mi300x`?)",
        f".github/workflows/b.yml:7:33: CC044 job 'near' asks for runner label `Mi3`, {unknown} (did you mean "
        "`mi300x`?)",
        f".github/workflows/b.yml:8:41: CC044 job 'unknown' asks for runner label `mi`, {unknown}",
        f".github/workflows/b.yml:12:28: CC044 job 'matrix' asks for runner label `box9`, {unknown}",
    ]


def test_a_workflow_with_no_trigger_is_not_judged(make_repo: MakeRepo) -> None:
    never = "jobs:\n  t:\n    runs-on: [self-hosted, mi300]\n    container: rocm/pytorch\n    steps: [{run: a}]\n"
    # a call and a job limited in each step come first: the jobs after them are still judged
    first = (
        "  call: {uses: octo/ci/.github/workflows/gpu.yml@v1}\n"
        "  limited: {runs-on: [self-hosted, amd, mi300x], steps: [{run: a, timeout-minutes: 5}]}\n"
    )
    container = "  box:\n    runs-on: [self-hosted, amd, mi300x]\n    container: rocm/pytorch\n    steps: [{run: a}]\n"
    workflow = TYPOS.replace("jobs:\n", "jobs:\n" + first, 1) + container
    root = make_repo({".github/workflows/a.yml": workflow, ".github/workflows/a-never.yml": never})  # judged first
    result = run_cli("check", root, "--select", "CC043,CC044,CC045,CC046", "--output-format", "concise")
    # `mi300` is named in both files, so only `self-hosed` is one edit from what the others ask for (and its job
    # lands on no runner); each other job on a self-hosted runner but `limited` has no timeout; `box` runs an AMD
    # image with no devices
    assert [" ".join(header.split(" ")[:2]) for header in result.headers] == [
        *(f".github/workflows/a.yml:{line}:3: CC043" for line in (5, 6, 7)),
        ".github/workflows/a.yml:8:21: CC044",
        *(f".github/workflows/a.yml:{line}:3: CC043" for line in range(9, 15)),
        ".github/workflows/a.yml:16:16: CC046",
    ]


PULL_REQUEST_CALLS = """on: pull_request
jobs:
  gpu:
    uses: ./.github/workflows/_run.yml
    with: {runs_on: '["h100", "8gpu"]'}
  cpu:
    uses: ./.github/workflows/_run.yml
    with: {runs_on: '["ubuntu-latest"]'}
  other-gpu:
    uses: ./.github/workflows/_run.yml
    with: {runs_on: '["h200", "8gpu"]'}
"""
RUN = """on:
  workflow_call:
    inputs:
      runs_on: {type: string, required: true}
jobs:
  run:
    runs-on: ${{ fromJSON(inputs.runs_on) }}
    timeout-minutes: 60
    steps: [{run: pytest}]
"""


def test_only_the_callers_that_pass_a_self_hosted_runner_expose_it(make_repo: MakeRepo) -> None:
    root = make_repo({".github/workflows/pr.yml": PULL_REQUEST_CALLS, ".github/workflows/_run.yml": RUN})
    result = run_cli("check", root, "--select", "CC045", "--output-format", "json")
    found = [(d["line"], [r["line"] for r in d["related"]]) for d in json.loads(result.out)["diagnostics"]]
    # Each finding at the calling job, with the labels that caller passes; the caller of `ubuntu-latest` is safe.
    assert found == [(3, [1, 5, 5]), (9, [1, 11, 11])]


ALIASED_CALLS = PULL_REQUEST_CALLS.replace("""'["h100", "8gpu"]'""", """&gpus '["h100", "8gpu"]'""").replace(
    """'["h200", "8gpu"]'""", "*gpus"
)


def test_a_caller_that_passes_a_self_hosted_runner_through_a_yaml_alias_exposes_it(make_repo: MakeRepo) -> None:
    """`*gpus` is the value written in another job: the caller that passes it is still told by its `with:`, and the
    note names it."""
    root = make_repo({".github/workflows/pr.yml": ALIASED_CALLS, ".github/workflows/_run.yml": RUN})
    result = run_cli("check", root, "--select", "CC045", "--output-format", "json")
    found = [
        (d["line"], d["column"], d["message"], [(r["line"], r["column"], r["message"]) for r in d["related"]])
        for d in json.loads(result.out)["diagnostics"]
    ]
    exposed = (
        "runs on a self-hosted runner and `pull_request` runs it for pull requests from forks, with no gate that "
        "excludes forks (a head-repository, label or author check, or an environment with required reviewers)"
    )
    assert found == [
        (
            line,
            3,
            f"job '{caller}' (calling 'run') {exposed}",
            [
                (1, 5, "`pull_request` triggers it here"),
                (5, 30, "runner label `h100`"),
                (5, 21, f"passed as input `runs_on` by job '{caller}'"),
            ],
        )
        for line, caller in ((3, "gpu"), (9, "other-gpu"))
    ]


CHAINED_CALLS = {
    ".github/workflows/pr.yml": """on: pull_request
jobs:
  through: {uses: ./.github/workflows/_middle.yml, with: {runs_on: '["self-hosted", "h100"]'}}
  hosted: {uses: ./.github/workflows/_middle.yml, with: {runs_on: '["ubuntu-latest"]'}}
  fixed: {uses: ./.github/workflows/_fixed.yml}
  own: {uses: ./.github/workflows/_own.yml}
  paired: {uses: ./.github/workflows/_pair.yml, with: {kind: self-hosted, gpu: h100}}
  paired-too: {uses: ./.github/workflows/_pair.yml, with: {kind: self-hosted, gpu: mi300x}}
""",
    ".github/workflows/_pair.yml": """on:
  workflow_call:
    inputs:
      kind: {type: string, required: true}
      gpu: {type: string, required: true}
jobs:
  pair: {runs-on: ['${{ inputs.kind }}', '${{ inputs.gpu }}'], steps: [{run: pytest}]}
""",
    ".github/workflows/_middle.yml": """on:
  pull_request:
  workflow_call:
    inputs:
      runs_on: {type: string, required: true}
jobs:
  pass:
    uses: ./.github/workflows/_run.yml
    with: {runs_on: '${{ inputs.runs_on }}'}
""",
    ".github/workflows/_fixed.yml": """on: workflow_call
jobs:
  fixed:
    uses: ./.github/workflows/_run.yml
    with: {runs_on: '["self-hosted", "mi300x"]'}
""",
    ".github/workflows/_own.yml": """on: workflow_call
jobs:
  gpu: {runs-on: [self-hosted, h100], steps: [{run: pytest}]}
""",
    ".github/workflows/_run.yml": RUN,
}


def test_a_chain_of_calls_exposes_a_runner_only_where_each_caller_passes_it_down(make_repo: MakeRepo) -> None:
    """`through` passes a self-hosted runner down through `_middle.yml`; `hosted` passes `ubuntu-latest` down the
    same call, and exposes nothing; `_fixed.yml` passes one of its own, `_own.yml` runs on one. `_middle.yml`'s own
    pull requests pass no input: the labels `through` passes are not theirs. Each caller of `_pair.yml` is shown
    the labels it passes itself, not another caller's."""
    root = make_repo(CHAINED_CALLS)
    result = run_cli("check", root, "--select", "CC045", "--output-format", "json")
    found = [
        (d["line"], d["message"].split(" runs on ")[0], [(r["path"], r["line"], r["message"]) for r in d["related"]])
        for d in json.loads(result.out)["diagnostics"]
        if d["path"] == ".github/workflows/pr.yml"
    ]
    trigger = (".github/workflows/pr.yml", 1, "`pull_request` triggers it here")
    assert found == [
        (
            3,
            "job 'through' (calling 'run')",
            [
                trigger,
                (".github/workflows/pr.yml", 3, "runner label `self-hosted`"),
                (".github/workflows/_middle.yml", 9, "passed as input `runs_on` by job 'pass'"),
                (".github/workflows/pr.yml", 3, "passed as input `runs_on` by job 'through'"),
            ],
        ),
        (
            5,
            "job 'fixed' (calling 'run')",
            [
                trigger,
                (".github/workflows/_fixed.yml", 5, "runner label `self-hosted`"),
                (".github/workflows/_fixed.yml", 5, "passed as input `runs_on` by job 'fixed'"),
            ],
        ),
        (6, "job 'own' (calling 'gpu')", [trigger, (".github/workflows/_own.yml", 3, "runner label `self-hosted`")]),
        *(
            (
                line,
                f"job '{caller}' (calling 'pair')",
                [
                    trigger,
                    (".github/workflows/pr.yml", line, "runner label `self-hosted`"),
                    (".github/workflows/pr.yml", line, f"passed as input `kind` by job '{caller}'"),
                ],
            )
            for line, caller in ((7, "paired"), (8, "paired-too"))
        ),
    ]
    assert [d["path"] for d in json.loads(result.out)["diagnostics"]] == [".github/workflows/pr.yml"] * 5


def test_the_repositorys_own_actionlint_labels_are_kept(make_repo: MakeRepo) -> None:
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


def test_labels_declared_to_actionlint_are_self_hosted_runners(make_repo: MakeRepo) -> None:
    workflow = "on: push\njobs:\n" + "".join(
        f"  {job}:\n    runs-on: [{label}]\n    steps: [{{run: make}}]\n"
        for job, label in (("legacy", "legacy-box"), ("pool", "pool-17"), ("other", "other-box"))
    )
    actionlint = "self-hosted-runner:\n  labels: [legacy-box, 'pool-*']\n"
    root = make_repo({".github/workflows/a.yml": workflow, ".github/actionlint.yaml": actionlint})
    result = run_cli("check", root, "--select", "CC043")
    assert [header.split(": CC043 ")[1].split(" runs")[0] for header in result.headers] == [
        "job 'legacy'",
        "job 'pool'",
    ]


def test_a_self_hosted_job_is_timed_out_only_by_its_own_limit_or_one_on_every_step(make_repo: MakeRepo) -> None:
    # A job with no steps, or one step without a limit, is reported; a flow-mapping job gets no fix (no line to put
    # the key on); a reusable call (even one that also names a runner) runs its callee's jobs, judged there.
    workflow = """on: push
jobs:
  flow: {runs-on: [self-hosted, gpu], steps: [{run: a}]}
  no-steps:
    runs-on: [self-hosted, gpu]
  some-steps:
    runs-on: [self-hosted, gpu]
    steps:
      - run: a
        timeout-minutes: 5
      - run: b
  every-step:
    runs-on: [self-hosted, gpu]
    steps:
      - run: a
        timeout-minutes: 5
  call:
    uses: ./.github/workflows/r.yml
    runs-on: [self-hosted, gpu]
"""
    files = {".github/workflows/ci.yml": workflow, ".github/ci-checks.yml": "fixes: {timeout-minutes: 90}\n"}
    result = run_cli("check", make_repo(files), "--select", "CC043", "--output-format", "json")
    found = [
        (
            d["line"],
            d["column"],
            d["message"].split(" runs on")[0],
            [(r["line"], r["column"], r["message"]) for r in d["related"]],
            (d["fix"]["description"], d["fix"]["safe"], d["fix"]["edits"]) if "fix" in d else None,
        )
        for d in json.loads(result.out)["diagnostics"]
    ]
    unsafe = "set timeout-minutes: 90 (the job is cancelled sooner)"
    assert found == [
        (3, 3, "job 'flow'", [(3, 20, "runner label `self-hosted`")], None),
        (4, 3, "job 'no-steps'", [(5, 15, "runner label `self-hosted`")], (unsafe, False, [_insertion(5)])),
        (6, 3, "job 'some-steps'", [(7, 15, "runner label `self-hosted`")], (unsafe, False, [_insertion(7)])),
    ]
    assert json.loads(result.out)["diagnostics"][0]["message"] == (
        "job 'flow' runs on a self-hosted runner (`self-hosted, gpu`) without `timeout-minutes`; a hung job holds the "
        "machine for GitHub's default of 360 minutes"
    )


def _insertion(line: int) -> dict[str, object]:
    """The edit that puts `timeout-minutes: 90` before the job's first key, on `line`."""
    return {
        "path": ".github/workflows/ci.yml",
        "line": line,
        "column": 1,
        "end_line": line,
        "end_column": 1,
        "replacement": "    timeout-minutes: 90\n",
    }


GPU_CONTAINERS = """on: push
jobs:
  cuda:
    runs-on: [self-hosted, h100]
    timeout-minutes: 60
    steps:
      - run: docker run --rm nvcr.io/nvidia/pytorch:25.01-py3 nvidia-smi
        shell: pwsh
      - run: |
          docker container run --rm img a
          docker container run --gpus=all img a2
          docker run --gpus=all img a3
          docker run --rm "$IMAGE" c
          docker build -t img .
          docker container ls
          docker run --runtime=nvidia img d
          nvidia-docker run img e
      - run: /usr/bin/podman run --rm img b
  rocm:
    runs-on: [self-hosted, mi300x]
    timeout-minutes: 60
    container: rocm/pytorch:latest
    steps:
      - run: docker run --privileged img f
  rocm-expression:
    runs-on: [self-hosted, mi300x]
    timeout-minutes: 60
    container:
      image: rocm/pytorch:latest
      options: ${{ vars.ROCM_OPTIONS }}
    steps:
      - run: docker run --device=/dev/kfd img g
  both:
    strategy:
      matrix:
        runner: [[self-hosted, mi300x], [self-hosted, h100], [self-hosted, nvidia, h100]]
    runs-on: ${{ matrix.runner }}
    timeout-minutes: 60
    container:
      image: rocm/pytorch:latest
      options: --device=/dev/kfd --device=/dev/dri
    steps:
      - run: echo no container
  call:
    uses: ./.github/workflows/r.yml
    runs-on: [self-hosted, h100]
    container: nvcr.io/nvidia/pytorch:25.01-py3
  empty-image:
    runs-on: [self-hosted, mi300x]
    timeout-minutes: 60
    container:
      image: ''
    steps:
      - run: a
"""


def test_each_container_a_gpu_job_starts_is_given_the_gpus_of_each_vendor_it_may_run_on(make_repo: MakeRepo) -> None:
    # docker and podman (by any path), `run` and `container run`, each once per vendor the job may run on (named by
    # its first choice of that vendor, the matrix leg named), an image only known at run time included (no image
    # brings the devices); passed over: a script in PowerShell, other docker commands, options from an expression
    # not known here (`vars.*`), a reusable call, a container without an image.
    inventory = (
        "runners:\n  mi300x:\n    vendor: amd\n    labels: [self-hosted, amd, mi300x]\n"
        "  h100:\n    vendor: nvidia\n    labels: [self-hosted, nvidia, h100, 8gpu]\n"
    )
    root = make_repo({".github/workflows/ci.yml": GPU_CONTAINERS, ".github/ci-checks.yml": inventory})
    result = run_cli("check", root, "--select", "CC046", "--output-format", "json")
    found = [
        (d["line"], d["column"], d["message"], [(r["line"], r["column"], r["message"]) for r in d["related"]])
        for d in json.loads(result.out)["diagnostics"]
    ]
    h100, mi300x = "runner label `h100`", "runner label `mi300x`"
    on_nvidia = "starts a container on an NVIDIA GPU runner without `--gpus`; CUDA sees no GPU inside it"
    amd_devices = "`--device=/dev/kfd` and `--device=/dev/dri`"
    assert found == [
        (10, 11, f"`docker container run` in job 'cuda' {on_nvidia}", [(4, 28, h100)]),
        (13, 11, f"`docker run` in job 'cuda' {on_nvidia}", [(4, 28, h100)]),
        (18, 14, f"`/usr/bin/podman run` in job 'cuda' {on_nvidia}", [(4, 28, h100)]),
        (
            22,
            16,
            "the container of job 'rocm' runs on an AMD GPU runner (`self-hosted, mi300x`) without "
            f"{amd_devices} in `options:`; ROCm sees no GPU inside it",
            [(20, 28, mi300x)],
        ),
        (
            32,
            14,
            f"`docker run` in job 'rocm-expression' starts a container on an AMD GPU runner without {amd_devices}; "
            "ROCm sees no GPU inside it",
            [(26, 28, mi300x)],
        ),
        (
            41,
            16,
            'the container of job \'both\' (`matrix.runner` = `["self-hosted", "h100"]`) runs on an NVIDIA GPU '
            "runner (`self-hosted, h100`) without `--gpus` in its `options:`; CUDA sees no GPU inside it",
            [(36, 55, h100)],
        ),
    ]


def test_a_container_started_through_sudo_time_or_env_is_judged_and_shown_as_the_command_that_starts_it(
    make_repo: MakeRepo,
) -> None:
    script = (
        "          sudo -E docker run --rm img a\n          time docker container run --rm img b\n"
        "          sudo docker run --gpus all img c\n          env X=1 podman run img d\n"
        "          npm run docker\n          sudo\n"  # neither starts a container
    )
    workflow = (
        "on: push\njobs:\n  cuda:\n    runs-on: [self-hosted, nvidia, h100]\n    timeout-minutes: 60\n"
        f"    steps:\n      - run: |\n{script}"
    )
    root = make_repo({".github/workflows/ci.yml": workflow})
    result = run_cli("check", root, "--select", "CC046", "--output-format", "concise")
    on_nvidia = "starts a container on an NVIDIA GPU runner without `--gpus`; CUDA sees no GPU inside it"
    assert result.headers == [
        f".github/workflows/ci.yml:{line}:11: CC046 `{shown}` in job 'cuda' {on_nvidia} [gpu-container-devices]"
        for line, shown in ((8, "docker run"), (9, "docker container run"), (11, "podman run"))
    ]


def test_a_typo_no_other_job_shares_is_told_what_makes_its_label_real(make_repo: MakeRepo) -> None:
    # Without an inventory, a label one edit from `self-hosted` is a typo even where no other job asks for that
    # label; `mi300`, which nothing else is near, is a runner's.
    workflow = (
        "on: push\njobs:\n  a:\n    runs-on: [self-hostd, linux]\n    steps: [{run: a}]\n"
        "  b:\n    runs-on: [self-hosted, mi300]\n    steps: [{run: a}]\n"
    )
    root = make_repo({".github/workflows/ci.yml": workflow})
    result = run_cli("check", root, "--select", "CC044")
    assert result.headers == [
        ".github/workflows/ci.yml:4:15: CC044 job 'a' asks for runner label `self-hostd`, which nothing else names; it "
        "is one edit from `self-hosted`, a label every self-hosted runner has, so no runner may carry it (did you mean "
        "`self-hosted`?)",
    ]


def test_a_job_whose_if_turns_pull_requests_away_is_not_exposed_by_them(make_repo: MakeRepo) -> None:
    workflow = """on: [push, pull_request]
jobs:
  skips-pr:
    if: github.event_name != 'pull_request'
    runs-on: [self-hosted, gpu]
    timeout-minutes: 5
    steps: [{run: a}]
  not-push:
    if: github.event_name != 'push'
    runs-on: [self-hosted, gpu]
    timeout-minutes: 5
    steps: [{run: a}]
"""
    result = run_cli("check", make_repo({".github/workflows/ci.yml": workflow}), "--select", "CC045")
    assert result.headers == [
        ".github/workflows/ci.yml:8:3: CC045 job 'not-push' runs on a self-hosted runner and `pull_request` runs it "
        "for pull requests from forks, with no gate that excludes forks (a head-repository, label or author check, or "
        "an environment with required reviewers)"
    ]


def test_a_job_after_a_reusable_call_is_exposed_too(make_repo: MakeRepo) -> None:
    """A call job does not end the search of its workflow's jobs."""
    gpu = "runs-on: [self-hosted, gpu]\n    timeout-minutes: 5\n    steps: [{run: a}]\n"
    files = {
        ".github/workflows/top.yml": "on: pull_request\njobs:\n  down:\n    uses: ./.github/workflows/w4.yml\n"
        f"  gpu:\n    {gpu}",
        ".github/workflows/w4.yml": f"on: workflow_call\njobs:\n  target:\n    {gpu}",
    }
    result = run_cli("check", make_repo(files), "--select", "CC045", "--output-format", "concise")
    exposed = (
        "runs on a self-hosted runner and `pull_request` runs it for pull requests from forks, with no gate that "
        "excludes forks (a head-repository, label or author check, or an environment with required reviewers)"
    )
    assert [header.removesuffix(" [untrusted-self-hosted]") for header in result.headers] == [
        f".github/workflows/top.yml:3:3: CC045 job 'down' (calling 'target') {exposed}",
        f".github/workflows/top.yml:5:3: CC045 job 'gpu' {exposed}",
    ]


def test_a_call_cycle_exposes_a_job_once_by_its_own_workflows_trigger_not_again_by_the_call_back_to_it(
    make_repo: MakeRepo,
) -> None:
    """`a.yml` calls `b.yml`, which calls `a.yml` back: `gpu` is exposed by `a.yml`'s own pull requests, not again
    as called by `call-b` (the cycle's way round to it); `gpu-b` is exposed through `call-b`."""
    job = "runs-on: [self-hosted, gpu]\n    timeout-minutes: 5\n    steps: [{run: make}]\n"
    files = {
        ".github/workflows/a.yml": f"on: [pull_request, workflow_call]\njobs:\n  gpu:\n    {job}"
        "  call-b: {uses: ./.github/workflows/b.yml}\n",
        ".github/workflows/b.yml": f"on: workflow_call\njobs:\n  gpu-b:\n    {job}"
        "  call-a: {uses: ./.github/workflows/a.yml}\n",
    }
    result = run_cli("check", make_repo(files), "--select", "CC045")
    exposed = (
        "runs on a self-hosted runner and `pull_request` runs it for pull requests from forks, with no gate that "
        "excludes forks (a head-repository, label or author check, or an environment with required reviewers)"
    )
    assert result.headers == [
        f".github/workflows/a.yml:3:3: CC045 job 'gpu' {exposed}",
        f".github/workflows/a.yml:7:3: CC045 job 'call-b' (calling 'gpu-b') {exposed}",
    ]


EXPOSED_BY_PULL_REQUESTS = (
    "runs on a self-hosted runner and `pull_request` runs it for pull requests from forks, with no gate that excludes "
    "forks (a head-repository, label or author check, or an environment with required reviewers)"
)


def test_what_keeps_a_self_hosted_job_out_of_reach_of_a_pull_request_is_read_whole(make_repo: MakeRepo) -> None:
    """`pull_request_target` without the head checked out exposes no job, but the `pull_request` after it still does;
    an event test after another term of the `if:` counts, two that no event passes at once let none through, and a gate
    on a needed job counts though another needed job is reached by two paths (`build`, directly and through `lint`)."""
    job = "runs-on: [self-hosted, gpu]\n    timeout-minutes: 5\n    steps: [{run: a}]\n"
    workflow = (
        "on: [pull_request_target, pull_request, push]\njobs:\n"
        f"  plain:\n    {job}"
        f"  pushed:\n    if: success() && github.event_name != 'pull_request'\n    {job}"
        f"  never:\n    if: github.event_name == 'push' && github.event_name == 'pull_request'\n    {job}"
        "  approve: {environment: gpu, runs-on: ubuntu-latest, steps: [{run: a}]}\n"
        "  build: {runs-on: ubuntu-latest, steps: [{run: make}]}\n"
        "  lint: {needs: build, runs-on: ubuntu-latest, steps: [{run: make lint}]}\n"
        f"  approved:\n    needs: [approve, lint, build]\n    {job}"
    )
    result = run_cli("check", make_repo({".github/workflows/ci.yml": workflow}), "--select", "CC045")
    assert result.headers == [f".github/workflows/ci.yml:3:3: CC045 job 'plain' {EXPOSED_BY_PULL_REQUESTS}"]


def test_a_call_exposes_a_self_hosted_job_only_when_it_can_run_it_ungated(make_repo: MakeRepo) -> None:
    """A job gated in the called workflow is gated in every call; a workflow that is not `on: workflow_call` never
    runs as called (GitHub fails the caller's run), whatever its own jobs are."""
    job = "runs-on: [self-hosted, gpu]\n    timeout-minutes: 5\n    steps: [{run: a}]\n"
    files = {
        ".github/workflows/pr.yml": "on: pull_request\njobs:\n"
        "  gated: {uses: ./.github/workflows/_gated.yml}\n"
        "  not-callable: {uses: ./.github/workflows/_push.yml}\n"
        "  plain: {uses: ./.github/workflows/_plain.yml}\n",
        ".github/workflows/_gated.yml": f"on: workflow_call\njobs:\n  gpu:\n    environment: gpu\n    {job}",
        ".github/workflows/_push.yml": f"on: push\njobs:\n  gpu:\n    {job}",
        ".github/workflows/_plain.yml": f"on: workflow_call\njobs:\n  gpu:\n    {job}",
    }
    result = run_cli("check", make_repo(files), "--select", "CC045")
    assert result.headers == [
        f".github/workflows/pr.yml:5:3: CC045 job 'plain' (calling 'gpu') {EXPOSED_BY_PULL_REQUESTS}"
    ]


def test_a_chain_of_calls_is_followed_four_calls_up_from_the_self_hosted_job_and_no_further(
    make_repo: MakeRepo,
) -> None:
    """`w4.yml`'s pull requests reach the job through four calls, and expose it; `w5.yml`'s would through five, past
    the bound of the search."""
    files = {
        ".github/workflows/w0.yml": "on: workflow_call\njobs:\n  gpu:\n"
        "    runs-on: [self-hosted, gpu]\n    timeout-minutes: 5\n    steps: [{run: a}]\n"
    }
    for level in range(1, 6):
        on = "[pull_request, workflow_call]" if level == 4 else "pull_request" if level == 5 else "workflow_call"
        files[f".github/workflows/w{level}.yml"] = (
            f"on: {on}\njobs:\n  call{level}: {{uses: ./.github/workflows/w{level - 1}.yml}}\n"
        )
    result = run_cli("check", make_repo(files), "--select", "CC045")
    assert result.headers == [
        f".github/workflows/w4.yml:3:3: CC045 job 'call4' (calling 'gpu') {EXPOSED_BY_PULL_REQUESTS}"
    ]


def test_a_container_started_after_other_docker_commands_of_a_script_is_judged(make_repo: MakeRepo) -> None:
    script = "          docker pull img\n          docker run img a\n"
    workflow = (
        "on: push\njobs:\n  cuda:\n    runs-on: [self-hosted, nvidia, h100]\n    timeout-minutes: 60\n"
        f"    steps:\n      - run: |\n{script}"
    )
    result = run_cli("check", make_repo({".github/workflows/ci.yml": workflow}), "--select", "CC046")
    assert result.headers == [
        ".github/workflows/ci.yml:9:11: CC046 `docker run` in job 'cuda' starts a container on an NVIDIA GPU runner "
        "without `--gpus`; CUDA sees no GPU inside it"
    ]


DECLARED = """on: push
jobs:
  rocm: {runs-on: [self-hosted, Linux, X64, gpu-MI300X-8], timeout-minutes: 60, steps: [{run: a}]}
  retired: {runs-on: [self-hosted, gpu-mi250-8], timeout-minutes: 60, steps: [{run: a}]}
  typo: {runs-on: [self-hosted, gpu-h100-8x], timeout-minutes: 60, steps: [{run: a}]}
  pooled: {runs-on: [self-hosted, pool-17], timeout-minutes: 60, steps: [{run: a}]}
  hosted: {runs-on: ubuntu-latest-16-cores, steps: [{run: a}]}
  configured: {runs-on: [self-hosted, gpu-b200-8], timeout-minutes: 60, steps: [{run: a}]}
  again: {runs-on: &old [self-hosted, gpu-mi250-8], timeout-minutes: 60, steps: [{run: a}]}
  alias: {runs-on: *old, timeout-minutes: 60, steps: [{run: a}]}
  matrix:
    strategy: {matrix: {gpu: [gpu-h100-8, gpu-h200-8]}}
    runs-on: [self-hosted, "${{ matrix.gpu }}"]
    timeout-minutes: 60
    steps: [{run: a}]
  call:
    uses: ./.github/workflows/_run.yml
    with: {runs_on: '["self-hosted", "gpu-mi355x-8"]'}
"""
LIST = "self-hosted-runner:\n  labels: [gpu-mi300x-8, GPU-H100-8, 'pool-*']\n"


def _declared_repo(
    make_repo: MakeRepo, config: str = ".github/actionlint.yaml", listed: str = LIST, **more: str
) -> Path:
    return make_repo(
        {
            ".github/workflows/a.yml": DECLARED,
            ".github/workflows/_run.yml": RUN,
            ".github/workflows/never.yml": "jobs:\n  t: {runs-on: [self-hosted, gpu-mi400-8], steps: [{run: a}]}\n",
            config: listed,
            **more,
        }
    )


@pytest.mark.parametrize("config", [".github/actionlint.yaml", ".github/actionlint.yml"])
def test_a_label_the_repositorys_own_list_lacks_is_reported_where_it_is_written(
    make_repo: MakeRepo, config: str
) -> None:
    """Declared labels compare without case, globs match; labels every self-hosted runner has and GitHub's (or
    ones that look it) are known; a label is reported once for each place it is written (`again`'s, not again
    for the alias of it); matrix values and a caller's JSON input are placed where written; a workflow with no
    `on:` is not judged. The hint stays within one vendor, class and GPU model: `gpu-h100-8x` is offered
    `gpu-h100-8`, `gpu-mi250-8` not `gpu-mi300x-8`."""
    root = _declared_repo(make_repo, config)
    result = run_cli("check", root, "--select", "CC044,CC054", "--output-format", "json")
    diagnostics = json.loads(result.out)["diagnostics"]
    found = [
        (d["code"], d["line"], d["column"], d["message"], [r["message"] for r in d["related"]]) for d in diagnostics
    ]
    missing = f"which `{config}` does not declare, so no runner picks up the job"
    listed = f"the runner labels `{config}` declares"
    assert found == [
        ("CC054", 4, 36, f"job 'retired' asks for runner label `gpu-mi250-8`, {missing}", [listed]),
        (
            "CC054",
            5,
            33,
            f"job 'typo' asks for runner label `gpu-h100-8x`, {missing} (did you mean `gpu-h100-8`?)",
            [listed],
        ),
        ("CC054", 8, 39, f"job 'configured' asks for runner label `gpu-b200-8`, {missing}", [listed]),
        ("CC054", 9, 39, f"job 'again' asks for runner label `gpu-mi250-8`, {missing}", [listed]),
        ("CC054", 12, 43, f"job 'matrix' asks for runner label `gpu-h200-8`, {missing}", [listed]),
        (
            "CC054",
            18,
            39,
            f"job 'run' asks for runner label `gpu-mi355x-8`, {missing}",
            ["passed as input `runs_on` by job 'call'", listed],
        ),
    ]


def test_with_an_inventory_its_labels_are_known_too_and_the_message_says_so(make_repo: MakeRepo) -> None:
    configured = "runners:\n  b200:\n    vendor: nvidia\n    labels: [self-hosted, gpu-b200-8]\n"
    root = _declared_repo(make_repo, **{".github/ci-checks.yml": configured})
    result = run_cli("check", root, "--select", "CC044,CC054", "--output-format", "concise")
    carried = (
        "which `.github/actionlint.yaml` does not declare and no runner of the `runners:` inventory carries, so no "
        "runner picks up the job"
    )
    assert [header.split(": ", 1)[1].removesuffix(" [undeclared-runner-label]") for header in result.headers] == [
        f"CC054 job 'retired' asks for runner label `gpu-mi250-8`, {carried}",
        f"CC054 job 'typo' asks for runner label `gpu-h100-8x`, {carried} (did you mean `gpu-h100-8`?)",
        f"CC054 job 'again' asks for runner label `gpu-mi250-8`, {carried}",
        f"CC054 job 'matrix' asks for runner label `gpu-h200-8`, {carried}",
        f"CC054 job 'run' asks for runner label `gpu-mi355x-8`, {carried}",
    ]


def test_without_a_list_of_labels_nothing_is_undeclared_and_an_empty_list_declares_nothing(make_repo: MakeRepo) -> None:
    """No `labels` under `self-hosted-runner` (or no usable file) is no list: unknown-runner-label judges alone. An
    empty list says no self-hosted label exists: every custom label is undeclared."""
    for listed in ("self-hosted-runner:\n  config-variables: [GPU]\n", "self-hosted-runner: [[[\n", "labels: [x]\n"):
        root = _declared_repo(make_repo, listed=listed)
        assert run_cli("check", root, "--select", "CC054").headers == []
    root = _declared_repo(make_repo, listed="self-hosted-runner:\n  labels: []\n")
    headers = run_cli("check", root, "--select", "CC054", "--output-format", "concise").headers
    assert [header.split("label `")[1].split("`")[0] for header in headers] == [
        "gpu-MI300X-8",
        "gpu-mi250-8",
        "gpu-h100-8x",
        "pool-17",
        "gpu-b200-8",
        "gpu-mi250-8",
        "gpu-h100-8",
        "gpu-h200-8",
        "gpu-mi355x-8",
    ]


def test_with_a_list_a_declared_label_is_never_a_typo_and_unknown_runner_label_leaves_every_label_to_it(
    make_repo: MakeRepo,
) -> None:
    """`mi300` one edit from `mi300x`, which three jobs ask for: a typo without a list; with one that declares it,
    a runner's label (the inventory counts its job as a runner's); with one that does not, CC054's."""
    jobs = "".join(
        f"  {name}: {{runs-on: [self-hosted, {label}], timeout-minutes: 5, steps: [{{run: a}}]}}\n"
        for name, label in [("a", "mi300x"), ("b", "mi300x"), ("c", "mi300x"), ("d", "mi300")]
    )
    root = make_repo({".github/workflows/a.yml": f"on: push\njobs:\n{jobs}"})

    def codes() -> list[str]:
        return [header.split(" ")[1] for header in run_cli("check", root, "--select", "CC044,CC054").headers]

    assert codes() == ["CC044"]
    (root / ".github/actionlint.yaml").write_text("self-hosted-runner:\n  labels: [mi300x, mi300]\n")
    assert codes() == []
    context = RepositoryContext(Workspace(Repository(root)), [], lambda path: True)
    assert context.runners.knows("mi300") and not context.inferred.typos
    (root / ".github/actionlint.yaml").write_text("self-hosted-runner:\n  labels: [mi300x]\n")
    assert codes() == ["CC054"]


def test_actionlints_finding_of_the_same_label_is_one_finding_with_ours(make_repo: MakeRepo) -> None:
    """actionlint reports the literal labels and matrix values the list lacks; each is ours with its note. It does
    not follow a caller's JSON input, and compares with case (`gpu-MI300X-8`, `gpu-h100-8` against the list's
    `gpu-mi300x-8`, `GPU-H100-8`): those it reports alone."""
    root = _declared_repo(make_repo)
    options = ["--backends", "actionlint", "--select", "CC054,AL-runner-label", "--output-format", "json"]
    result = run_cli("check", root, *options)
    found = [
        (
            d["path"].rsplit("/", 1)[1],
            d["line"],
            d["column"],
            d["code"],
            [r["message"].split(":")[0] for r in d.get("related", ())],
        )
        for d in json.loads(result.out)["diagnostics"]
    ]
    listed, same = "the runner labels `.github/actionlint.yaml` declares", "AL-runner-label says the same"
    assert found == [
        ("a.yml", 3, 45, "AL-runner-label", []),
        ("a.yml", 4, 36, "CC054", [listed, same]),
        ("a.yml", 5, 33, "CC054", [listed, same]),
        ("a.yml", 8, 39, "CC054", [listed, same]),
        ("a.yml", 9, 39, "CC054", [listed, same]),
        ("a.yml", 12, 31, "AL-runner-label", []),
        ("a.yml", 12, 43, "CC054", [listed, same]),
        ("a.yml", 18, 39, "CC054", ["passed as input `runs_on` by job 'call'", listed]),
        ("never.yml", 2, 30, "AL-runner-label", []),  # actionlint judges a workflow with no `on:` too
    ]
