"""The value model: the legs a job runs in, what its expressions and shell variables are there, and whether it runs.

Each test builds a small repository and asks the model what GitHub would do; the expected values are read off
GitHub's documented semantics (matrix `include`/`exclude`, inputs of calls and dispatches, `if:` per event), not
off the model's output.
"""

from __future__ import annotations

from pathlib import Path

from ci_checks.core.repository import Repository
from ci_checks.model import Job
from ci_checks.model.evaluation import UNKNOWN, Data, Scope, evaluate, possible
from ci_checks.model.loading import Workspace
from ci_checks.model.valuation import Leg
from ci_checks.model.valuation.legs import MAX_LEGS
from ci_checks.model.valuation.runners import runners
from ci_checks.model.valuation.shell import MAX_LENGTH, Env, walk
from ci_checks.rules.context import RepositoryContext
from ci_checks.syntax.shell import parse_fragment
from tests.ci.linter.conftest import MakeRepo, run_cli


def _context(root: Path) -> RepositoryContext:
    return RepositoryContext(Workspace(Repository(root)), [], lambda path: True)


def _job(context: RepositoryContext, workflow: str, job: str) -> Job:
    return next(w for w in context.workflows if w.path.endswith(workflow)).jobs[job]


def _matrices(context: RepositoryContext, job: Job) -> list[dict[str, object]]:
    return [{name: binding.value for name, binding in leg.matrix.items()} for leg in context.valuation.legs(job).legs]


MATRIX = """on: push
jobs:
  docs:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        fruit: [apple, pear]
        animal: [cat, dog]
        include:
          - color: green
          - color: pink
            animal: cat
          - fruit: apple
            shape: circle
          - fruit: banana
          - fruit: banana
            animal: cat
    steps: [{run: echo}]
  excluded:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        os: [linux, windows]
        gpu: [mi300x, h100]
        exclude:
          - {os: windows, gpu: mi300x}
    steps: [{run: echo}]
"""


def test_a_matrix_expands_as_githubs_documentation_says(make_repo: MakeRepo) -> None:
    """The example of GitHub's `matrix.include` documentation, with its stated result; `exclude` removes before."""
    context = _context(make_repo({".github/workflows/m.yml": MATRIX}))
    assert _matrices(context, _job(context, "m.yml", "docs")) == [
        {"fruit": "apple", "animal": "cat", "color": "pink", "shape": "circle"},
        {"fruit": "apple", "animal": "dog", "color": "green", "shape": "circle"},
        {"fruit": "pear", "animal": "cat", "color": "pink"},
        {"fruit": "pear", "animal": "dog", "color": "green"},
        {"fruit": "banana"},
        {"fruit": "banana", "animal": "cat"},
    ]
    assert _matrices(context, _job(context, "m.yml", "excluded")) == [
        {"os": "linux", "gpu": "mi300x"},
        {"os": "linux", "gpu": "h100"},
        {"os": "windows", "gpu": "h100"},
    ]


CALLS = """on:
  workflow_call:
    inputs:
      runs_on: {type: string, required: true}
      image: {type: string, default: rocm/pytorch:latest}
jobs:
  test:
    runs-on: ${{ fromJSON(inputs.runs_on) }}
    container: ${{ inputs.image }}
    steps: [{run: pytest}]
"""
CALLER = """on: [pull_request, workflow_dispatch]
jobs:
  gpu:
    strategy:
      matrix:
        runner: ['["amd", "mi300x"]', '["nvidia", "h100"]']
    uses: ./.github/workflows/_test.yml
    with:
      runs_on: ${{ matrix.runner }}
"""


def test_a_reusable_workflow_runs_once_for_each_leg_of_each_caller_with_what_that_leg_passes(
    make_repo: MakeRepo,
) -> None:
    context = _context(make_repo({".github/workflows/_test.yml": CALLS, ".github/workflows/ci.yml": CALLER}))
    legs = context.valuation.legs(_job(context, "_test.yml", "test")).legs
    # two events of the caller's workflow, two matrix legs each; the image is the default the call leaves
    assert [(leg.event, leg.entry.inputs["runs_on"].value, leg.entry.inputs["image"].value) for leg in legs] == [
        ("pull_request", '["amd", "mi300x"]', "rocm/pytorch:latest"),
        ("pull_request", '["nvidia", "h100"]', "rocm/pytorch:latest"),
        ("workflow_dispatch", '["amd", "mi300x"]', "rocm/pytorch:latest"),
        ("workflow_dispatch", '["nvidia", "h100"]', "rocm/pytorch:latest"),
    ]
    first = runners(legs[0]).choices[0]
    # the label is placed inside the caller's matrix string, with the call as a note
    assert [(label.value, label.span.line, label.span.column) for label in first.labels] == [
        ("amd", 6, 21),
        ("mi300x", 6, 28),
    ]
    assert [note.message for note in first.labels[0].via] == ["passed as input `runs_on` by job 'gpu'"]
    assert legs[0].describe("${{ inputs.runs_on }}") == '`inputs.runs_on` = `["amd", "mi300x"]`'


DISPATCH = """on:
  workflow_dispatch:
    inputs:
      gpu: {type: choice, options: [mi300x, mi355x], default: mi355x}
      debug: {type: boolean}
      note: {type: string, default: nightly}
  push:
jobs:
  run:
    runs-on: ${{ inputs.gpu || 'ubuntu-24.04' }}
    steps: [{run: echo}]
"""


def test_a_dispatch_gives_each_option_and_both_booleans_and_a_push_no_inputs(make_repo: MakeRepo) -> None:
    context = _context(make_repo({".github/workflows/d.yml": DISPATCH}))
    dispatch, push = context.valuation.legs(_job(context, "d.yml", "run")).legs
    assert (dispatch.event, push.event) == ("workflow_dispatch", "push")
    # every value a dispatch may give is tried where an expression reads it, the default first
    assert dispatch.possible("${{ inputs.gpu }}") == ("mi355x", "mi300x")
    assert dispatch.possible("${{ inputs.debug }}") == (False, True)
    assert dispatch.possible("${{ inputs.note }}-${{ inputs.debug }}") == ("nightly-false", "nightly-true")
    assert dispatch.describe("${{ inputs.gpu }}") == "`inputs.gpu` = `mi355x` or `mi300x`"
    assert [choice.values for choice in runners(dispatch).choices] == [["mi355x"], ["mi300x"]]
    # on a push `inputs.gpu` is empty, so the job runs on the fallback
    assert push.entry.inputs == {}
    assert [choice.values for choice in runners(push).choices] == [["ubuntu-24.04"]]


CONDITIONS = """on: [push, pull_request]
jobs:
  never:
    if: false
    runs-on: [self-hosted, gpu]
    steps: [{run: a}]
  main-only:
    if: github.ref == 'refs/heads/main'
    runs-on: [self-hosted, gpu]
    steps: [{run: a}]
  after-never:
    needs: never
    runs-on: ubuntu-latest
    steps: [{run: a}]
  always-after-never:
    needs: never
    if: always()
    runs-on: ubuntu-latest
    steps: [{run: a}]
  same-repository:
    if: github.event.pull_request.head.repo.full_name == github.repository
    runs-on: [self-hosted, gpu]
    steps: [{run: a}]
  labelled:
    if: contains(github.event.pull_request.labels.*.name, 'run-gpu')
    runs-on: [self-hosted, gpu]
    steps: [{run: a}]
  not-a-bot:
    if: github.actor != 'dependabot[bot]'
    runs-on: [self-hosted, gpu]
    steps: [{run: a}]
  member:
    if: contains(fromJSON('["OWNER", "MEMBER"]'), github.event.pull_request.author_association)
    runs-on: [self-hosted, gpu]
    steps: [{run: a}]
"""


def _runs(context: RepositoryContext, job: str, event: str, fork: bool | None = None) -> bool | None:
    legs = [leg for leg in context.valuation.legs(_job(context, "c.yml", job)).legs if leg.event == event]
    return context.valuation.runs(legs[0], fork=fork)


def test_a_job_runs_for_an_event_as_its_if_its_needs_and_a_forks_pull_request_decide(make_repo: MakeRepo) -> None:
    context = _context(make_repo({".github/workflows/c.yml": CONDITIONS}))
    assert (_runs(context, "never", "push"), _runs(context, "never", "pull_request")) == (False, False)
    # a pull request's ref is refs/pull/N/merge; a push's may be main
    assert (_runs(context, "main-only", "push"), _runs(context, "main-only", "pull_request")) == (None, False)
    assert _runs(context, "after-never", "push") is False
    assert _runs(context, "always-after-never", "push") is True
    fork = {
        job: _runs(context, job, "pull_request", fork=True)
        for job in ("same-repository", "labelled", "not-a-bot", "member")
    }
    # the actor is whoever caused the event, a maintainer or a bot pushing to the fork's branch included
    assert fork == {"same-repository": False, "labelled": False, "not-a-bot": None, "member": False}
    assert _runs(context, "same-repository", "pull_request", fork=False) is True


OUTPUTS = """on: push
jobs:
  plan:
    runs-on: ubuntu-latest
    outputs:
      runner: ${{ steps.pick.outputs.runner }}
    steps:
      - id: pick
        run: |
          if [ -f big ]; then
            echo "runner=linux-mi300x-8" >> "$GITHUB_OUTPUT"
          else
            echo "runner=linux-mi300x-1" >> "$GITHUB_OUTPUT"
          fi
  test:
    needs: plan
    runs-on: ${{ needs.plan.outputs.runner }}
    steps: [{run: echo}]
  opaque:
    runs-on: ${{ needs.other.outputs.runner }}
    steps: [{run: echo}]
  other:
    runs-on: ubuntu-latest
    outputs:
      runner: ${{ steps.tool.outputs.runner }}
    steps:
      - id: tool
        run: python pick_runner.py
"""


def test_a_needed_jobs_output_is_each_value_its_step_writes_and_unknown_where_a_program_writes_it(
    make_repo: MakeRepo,
) -> None:
    context = _context(make_repo({".github/workflows/o.yml": OUTPUTS}))
    legs = context.valuation.legs(_job(context, "o.yml", "test")).legs
    assert [choice.values for choice in runners(legs[0]).choices] == [["linux-mi300x-8"], ["linux-mi300x-1"]]
    opaque = context.valuation.legs(_job(context, "o.yml", "opaque")).legs[0]
    assert (runners(opaque).choices, runners(opaque).complete) == ((), False)


def test_an_undecided_condition_gives_each_operand_and_a_known_one_gives_its_own() -> None:
    scope = Scope("push", "ci", "ci.yml", {"runner": "mi300x"})
    text = "${{ github.repository_owner == 'ROCm' && inputs.runner || 'ubuntu-24.04' }}"
    assert possible(text, scope) == ("mi300x", "ubuntu-24.04")
    assert evaluate(text, scope) is not UNKNOWN and not isinstance(evaluate(text, scope), str)
    assert possible("${{ inputs.runner || 'ubuntu-24.04' }}", scope) == ("mi300x",)
    assert evaluate('${{ fromJSON(\'{"a": [1, "x"]}\').a[1] }}', scope) == "x"
    assert evaluate("${{ toJSON(fromJSON('[\"a\"]')) }}", scope) == '[\n  "a"\n]'
    assert evaluate("${{ join(fromJSON('[\"a\", \"b\"]'), '+') }}", scope) == "a+b"
    assert evaluate("${{ fromJSON('[1, 2]') }}", scope) == Data(items=(1.0, 2.0))


def _leg(make_repo: MakeRepo, workflow: str, job: str = "run") -> Leg:
    context = _context(make_repo({".github/workflows/w.yml": workflow}))
    return context.valuation.legs(_job(context, "w.yml", job)).legs[0]


def _at(script: str, program: str, env: dict[str, frozenset[str] | None] | None = None) -> Env:
    """The variables where the first command running `program` runs."""
    block = parse_fragment(script)
    values = walk(block, env or {}, lambda body: None)
    return values.before(next(command for command in block.commands() if command.name == program))


def test_a_scripts_variables_are_every_value_each_path_leaves_them() -> None:
    script = (
        'OPTS="--device=/dev/kfd"\n'
        'if [ -n "$X" ]; then OPTS="$OPTS --device=/dev/dri"; fi\n'
        "for gpu in mi300x mi355x; do\n"
        "  docker run $OPTS ${EXTRA:-} rocm/${gpu}\n"
        "done\n"
        "NAME=$(hostname)\n"
        "case $1 in a) MODE=fast ;; *) MODE=slow ;; esac\n"
        "make\n"
    )
    at_run = _at(script, "docker")
    assert at_run["OPTS"] == frozenset({"--device=/dev/kfd", "--device=/dev/kfd --device=/dev/dri"})
    assert at_run["gpu"] == frozenset({"mi300x", "mi355x"})
    at_make = _at(script, "make")
    assert (at_make["NAME"], at_make["MODE"]) == (None, frozenset({"fast", "slow"}))


def test_defaults_and_step_variables_are_expanded_and_what_doubles_past_the_bound_is_unknown() -> None:
    script = 'A=${RUNNER:-mi300x}\nB=${UNSET-x}\nexport C="$A-$B"\nmake\n'
    assert _at(script, "make", {"RUNNER": frozenset({""}), "UNSET": frozenset({"set"})})["C"] == frozenset(
        {"mi300x-set"}
    )
    doubling = "a=x\n" + "a=$a$a\n" * 14 + "make\n"
    assert MAX_LENGTH < 2**14 and _at(doubling, "make")["a"] is None


def test_a_sourced_repository_script_sets_what_it_assigns(make_repo: MakeRepo) -> None:
    workflow = (
        "on: push\njobs:\n  run:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: |\n          source ci/env.sh\n          docker run $GPU_FLAGS img\n"
    )
    root = make_repo({".github/workflows/w.yml": workflow, "ci/env.sh": "GPU_FLAGS=--gpus=all\n"})
    context = _context(root)
    leg = context.valuation.legs(_job(context, "w.yml", "run")).legs[0]
    step = leg.job.steps[0]
    found = leg.shell(step)
    assert found is not None and step.script is not None
    docker = next(command for command in step.script.commands() if command.name == "docker")
    assert found.before(docker)["GPU_FLAGS"] == frozenset({"--gpus=all"})


REMOTE = """on: push
jobs:
  h100:
    strategy:
      matrix:
        include:
          - {name: nightly, runs-on: linux.aws.h100}
          - {name: stable, runs-on: linux.aws.h10}
    uses: octo/infra/.github/workflows/linux_job.yml@main
    with:
      runner: ${{ matrix.runs-on }}
      script: pytest test/gpu
  a100:
    uses: octo/infra/.github/workflows/linux_job.yml@main
    with:
      runs_on: '["linux.aws.h100", "8gpu"]'
  a100-again:
    uses: octo/infra/.github/workflows/linux_job.yml@main
    with:
      runner: linux.aws.h100
  local:
    uses: ./.github/workflows/w.yml
    with:
      runner: linux.aws.h10
"""


def test_a_call_to_another_repositorys_workflow_asks_for_the_runner_an_input_names(make_repo: MakeRepo) -> None:
    """`runner:` (or `runs-on:`, `runs_on:` as a JSON list) given to a reusable workflow of another repository is the
    runner a job there asks for: a typo in it is one; a local call's inputs are followed into the workflow instead."""
    root = make_repo({".github/workflows/w.yml": REMOTE})
    context = _context(root)
    asked = {
        job: [choice.values for choice in context.resolver.runners(_job(context, "w.yml", job)).choices]
        for job in ("h100", "a100", "local")
    }
    assert asked == {
        "h100": [["linux.aws.h100"], ["linux.aws.h10"]],
        "a100": [["linux.aws.h100", "8gpu"]],
        "local": [],
    }
    result = run_cli("check", root, "--select", "CC044", "--output-format", "concise")
    assert [header.split(" asks")[0] for header in result.headers] == [".github/workflows/w.yml:8:37: CC044 job 'h100'"]


def test_what_a_hostile_workflow_asks_for_is_cut_at_the_bounds_not_followed_without_end(make_repo: MakeRepo) -> None:
    """A matrix of 30 axes of 30 values (30**30 combinations), 10,000 `include` entries and an `if:` nested 5,000
    parentheses deep: the legs stop at their bound and say so, the condition is unknown, nothing raises."""
    axes = "".join(f"        a{axis}: [{', '.join(str(value) for value in range(30))}]\n" for axis in range(30))
    entries = "".join(f"          - {{x: {index}}}\n" for index in range(10_000))
    deep = "(" * 5000 + "true" + ")" * 5000
    workflow = (
        "on: pull_request\njobs:\n"
        f"  wide:\n    runs-on: ubuntu-latest\n    strategy:\n      matrix:\n{axes}    steps: [{{run: a}}]\n"
        f"  long:\n    runs-on: ubuntu-latest\n    strategy:\n      matrix:\n        include:\n{entries}"
        "    steps: [{run: a}]\n"
        f"  deep:\n    if: {deep}\n    runs-on: ubuntu-latest\n    steps: [{{run: a}}]\n"
    )
    context = _context(make_repo({".github/workflows/w.yml": workflow}))
    for job in ("wide", "long"):
        legs = context.valuation.legs(_job(context, "w.yml", job))
        assert (len(legs.legs), legs.complete) == (MAX_LEGS, False)
    deep_leg = context.valuation.legs(_job(context, "w.yml", "deep")).legs[0]
    assert context.valuation.runs(deep_leg) is None
