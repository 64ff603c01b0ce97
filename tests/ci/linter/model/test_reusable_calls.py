"""What a reusable workflow reads, and the calls that do not give it (CC050)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci_checks.core import source
from ci_checks.model.contexts import reads
from ci_checks.syntax import yamlpos
from tests.ci.linter.conftest import MakeRepo, run_cli

READING = """on: {workflow_call: {inputs: {upload: {type: boolean, default: false}}}}
jobs:
  t:
    if: inputs.upload && secrets['DEPLOY_KEY'] != ''
    runs-on: ubuntu-latest
    steps:
      - run: echo "${{ format('secrets.{0}', 'NOT_A_READ') }} ${{ secrets.HF_TOKEN }}"
        if: ${{ github.event.inputs.debug }}
"""


def test_reads_are_placed_exactly_and_carry_the_conditions_around_them() -> None:
    document = yamlpos.parse(source.decode("w.yml", READING.encode()))
    found = [
        (read.context, read.name, read.span.line, read.span.column, read.guards)
        for read in reads(document.root, document.source)
    ]
    job_if = "inputs.upload && secrets['DEPLOY_KEY'] != ''"
    assert found == [
        ("inputs", "upload", 4, 9, (job_if,)),
        ("secrets", "DEPLOY_KEY", 4, 26, (job_if,)),
        ("secrets", "HF_TOKEN", 7, 67, (job_if, "${{ github.event.inputs.debug }}")),
        ("github.event.inputs", "debug", 8, 17, (job_if, "${{ github.event.inputs.debug }}")),
    ]


CALLEE = """on:
  workflow_call:
    inputs:
      upload: {type: boolean, default: false}
jobs:
  t:
    runs-on: ubuntu-latest
    steps:
      - run: pytest
      - if: inputs.upload
        run: echo upload
        env: {KEY: "${{ secrets.UPLOAD_KEY }}"}
"""


def _findings(root: Path) -> list[tuple[str, int]]:
    result = run_cli("check", root, "--select", "CC050", "--output-format", "json")
    return [(d["path"], d["line"]) for d in json.loads(result.out)["diagnostics"]]


def test_a_secret_read_only_where_the_call_turns_it_off_need_not_be_passed(make_repo: MakeRepo) -> None:
    caller = """on: push
jobs:
  plain: {uses: ./.github/workflows/callee.yml}
  uploads: {uses: ./.github/workflows/callee.yml, with: {upload: true}}
  decided-later: {uses: ./.github/workflows/callee.yml, with: {upload: "${{ github.ref == 'refs/heads/main' }}"}}
  inherits: {uses: ./.github/workflows/callee.yml, with: {upload: true}, secrets: inherit}
"""
    root = make_repo({".github/workflows/callee.yml": CALLEE, ".github/workflows/caller.yml": caller})
    assert _findings(root) == [(".github/workflows/caller.yml", 4), (".github/workflows/caller.yml", 5)]


CONTRACT_CALLEE = """on:
  workflow_call:
    inputs:
      upload: {type: boolean, default: false}
    secrets:
      HF_TOKEN: {required: true}
      WANDB_KEY: {required: false}
  workflow_dispatch:
    inputs:
      debug: {type: boolean}
jobs:
  t:
    runs-on: ubuntu-latest
    steps:
      - run: echo "${{ inputs.tag }} ${{ inputs.debug }} ${{ inputs.Upload }}"
      - run: echo "${{ github.event.inputs.upload }} ${{ github.event.inputs.level }} ${{ github.event.inputs.other }}"
      - run: echo "${{ secrets.HF_TOKEN }} ${{ secrets.WANDB_KEY }} ${{ secrets.S3_KEY }} ${{ secrets.GITHUB_TOKEN }}"
"""
CONTRACT_CALLER = """on:
  workflow_dispatch:
    inputs:
      Level: {type: string}
jobs:
  none:
    uses: ./.github/workflows/callee.yml
  some:
    uses: ./.github/workflows/callee.yml
    secrets: {hf_token: x, WANDB_KEY: y, S3_KEY: z}
  inherits:
    uses: ./.github/workflows/callee.yml
    secrets: inherit
"""


def _whole_findings(path: Path) -> list[tuple[str, str, str, list[str]]]:
    """Each CC050 finding as `path:line:col`, severity, message, and its notes as `path:line:col message`."""
    result = run_cli("check", path, "--select", "CC050", "--output-format", "json")
    at = "{path}:{line}:{column}".format_map
    return [
        (at(d), d["severity"], d["message"], [f"{at(r)} {r['message']}" for r in d.get("related", [])])
        for d in json.loads(result.out)["diagnostics"]
    ]


def test_each_input_no_call_gives_and_each_secret_a_call_does_not_pass_is_said_where_the_files_checked_hold_it(
    make_repo: MakeRepo,
) -> None:
    """Input and secret names compare without case; an input only dispatch declares, one a dispatched caller
    passes in its event, GITHUB_TOKEN and `secrets: inherit` need nothing; a caller with no `on:` never runs. A
    callee's own findings are kept only where it is checked, a call's only where its caller is."""
    never = "jobs:\n  never:\n    uses: ./.github/workflows/callee.yml\n"
    job = "jobs:\n  t: {runs-on: ubuntu-latest, steps: [{run: make}]}\n"
    root = make_repo(
        {
            # judged first: a workflow no one can call, and a reusable one no one calls
            ".github/workflows/a-push.yml": f"on: push\n{job}",
            ".github/workflows/a-uncalled.yml": f"on: workflow_call\n{job}",
            ".github/workflows/callee.yml": CONTRACT_CALLEE,
            ".github/workflows/caller.yml": CONTRACT_CALLER,
            ".github/workflows/never.yml": never,
        }
    )
    callee, caller = ".github/workflows/callee.yml", ".github/workflows/caller.yml"
    empty = "in a reusable workflow reads the event of the caller's run, and no workflow that runs it is dispatched"
    own: list[tuple[str, str, str, list[str]]] = [
        (
            f"{callee}:15:24",
            "error",
            "`inputs.tag` is declared under neither `on.workflow_call.inputs` nor `on.workflow_dispatch.inputs`: no "
            "call can pass it, so it is always empty",
            [],
        ),
        (
            f"{callee}:16:24",
            "warning",
            f"`github.event.inputs.upload` {empty} with an input `upload`: it is always empty; what the call passes is "
            "`inputs.upload`",
            [],
        ),
        (
            f"{callee}:16:91",
            "warning",
            f"`github.event.inputs.other` {empty} with an input `other`: it is always empty",
            [],
        ),
    ]
    without = "job 'none' calls `.github/workflows/callee.yml` without passing"
    calls = [
        (
            f"{caller}:7:11",
            "warning",
            f"{without} optional secret `WANDB_KEY` (nor `secrets: inherit`), which the workflow reads: it is empty in "
            "this call",
            [f"{callee}:17:48 `secrets.WANDB_KEY` read here"],
        ),
        (
            f"{caller}:7:11",
            "error",
            f"{without} secret `HF_TOKEN` (nor `secrets: inherit`), which the workflow reads: it is `required`, so "
            "the call fails before it starts",
            [f"{callee}:17:24 `secrets.HF_TOKEN` read here"],
        ),
        (
            f"{caller}:7:11",
            "error",
            f"{without} secret `S3_KEY` (nor `secrets: inherit`), which the workflow reads: it is not declared under "
            "`on.workflow_call.secrets`, so no call can pass it by name and it is empty in this call",
            [f"{callee}:17:73 `secrets.S3_KEY` read here"],
        ),
    ]
    assert _whole_findings(root) == own + calls
    assert _whole_findings(root / caller) == calls
    assert _whole_findings(root / callee) == own
    assert _whole_findings(root / ".github/workflows/never.yml") == []


def test_workflows_that_call_each_other_are_followed_once_for_the_inputs_a_dispatch_gives(make_repo: MakeRepo) -> None:
    looping = """on:
  workflow_call:
  workflow_dispatch:
    inputs:
      {name}: {{type: string}}
jobs:
  t:
    runs-on: ubuntu-latest
    steps: [{{run: 'echo ${{{{ github.event.inputs.a }}}} ${{{{ github.event.inputs.c }}}}'}}]
  again:
    uses: ./.github/workflows/{other}.yml
"""
    root = make_repo(
        {
            ".github/workflows/a.yml": looping.format(name="a", other="b"),
            ".github/workflows/b.yml": looping.format(name="b", other="a"),
        }
    )
    empty = (
        "`github.event.inputs.c` in a reusable workflow reads the event of the caller's run, and no workflow that "
        "runs it is dispatched with an input `c`: it is always empty"
    )
    assert _whole_findings(root) == [
        (".github/workflows/a.yml:9:58", "warning", empty, []),
        (".github/workflows/b.yml:9:58", "warning", empty, []),
    ]


def test_a_secret_read_under_an_input_a_dispatched_caller_passes_on_must_be_passed(make_repo: MakeRepo) -> None:
    """`with: {upload: ${{ inputs.upload }}}` passes on what the dispatch is given, which the call cannot tell: the
    read of UPLOAD_KEY under `if: inputs.upload` may happen."""
    caller = """on:
  workflow_dispatch:
    inputs:
      upload: {type: boolean}
jobs:
  call: {uses: ./.github/workflows/callee.yml, with: {upload: "${{ inputs.upload }}"}}
"""
    root = make_repo({".github/workflows/callee.yml": CALLEE, ".github/workflows/caller.yml": caller})
    assert _findings(root) == [(".github/workflows/caller.yml", 6)]


def test_every_workflow_whose_run_may_call_a_reusable_one_gives_it_its_dispatch_inputs(make_repo: MakeRepo) -> None:
    """`b.yml` calls the callee twice and `a.yml` once: `a.yml`'s dispatch input `x` counts however the callers
    are listed; `y`, which no workflow declares, is always empty."""
    callee = """on: workflow_call
jobs:
  t:
    runs-on: ubuntu-latest
    steps: [{run: 'echo ${{ github.event.inputs.x }} ${{ github.event.inputs.y }}'}]
"""
    root = make_repo(
        {
            ".github/workflows/a.yml": "on:\n  workflow_dispatch:\n    inputs:\n      x: {type: string}\njobs:\n"
            "  call: {uses: ./.github/workflows/c.yml}\n",
            ".github/workflows/b.yml": "on: push\njobs:\n  one: {uses: ./.github/workflows/c.yml}\n"
            "  two: {uses: ./.github/workflows/c.yml}\n",
            ".github/workflows/c.yml": callee,
        }
    )
    assert _whole_findings(root) == [
        (
            ".github/workflows/c.yml:5:58",
            "warning",
            "`github.event.inputs.y` in a reusable workflow reads the event of the caller's run, and no workflow that "
            "runs it is dispatched with an input `y`: it is always empty",
            [],
        )
    ]


FORK_CALLEE = """on:
  workflow_call:
    secrets:
      HF_TOKEN: {required: false}
      HUB_TOKEN: {description: read when given}
      WANDB_KEY: {required: true}
jobs:
  t:
    runs-on: ubuntu-latest
    steps:
      - run: pytest
        env: {A: "${{ secrets.HF_TOKEN }}", B: "${{ secrets.HUB_TOKEN }}", C: "${{ secrets.WANDB_KEY }}"}
"""


def _calls(root: Path) -> list[tuple[int, str, str, list[str]]]:
    """Each CC050 finding of the caller as line, severity, what follows "which the workflow reads: ", its notes."""
    return [
        (int(at.split(":")[1]), severity, message.split("which the workflow reads: ")[1], notes)
        for at, severity, message, notes in _whole_findings(root)
        if at.startswith(".github/workflows/caller.yml")
    ]


def test_an_optional_secret_a_call_does_not_pass_is_a_warning_that_says_it_is_optional(make_repo: MakeRepo) -> None:
    """`required: false` and a declaration without `required` are both optional; a required one stays an error."""
    caller = "on: push\njobs:\n  call: {uses: ./.github/workflows/callee.yml}\n"
    root = make_repo({".github/workflows/callee.yml": FORK_CALLEE, ".github/workflows/caller.yml": caller})
    result = run_cli("check", root, "--select", "CC050", "--output-format", "concise")
    call = "job 'call' calls `.github/workflows/callee.yml` without passing"
    assert result.headers == [
        f".github/workflows/caller.yml:3:16: CC050 {call} optional secret `HF_TOKEN` (nor `secrets: inherit`), "
        "which the workflow reads: it is empty in this call [reusable-call-contract]",
        f".github/workflows/caller.yml:3:16: CC050 {call} optional secret `HUB_TOKEN` (nor `secrets: inherit`), "
        "which the workflow reads: it is empty in this call [reusable-call-contract]",
        f".github/workflows/caller.yml:3:16: CC050 {call} secret `WANDB_KEY` (nor `secrets: inherit`), which the "
        "workflow reads: it is `required`, so the call fails before it starts [reusable-call-contract]",
    ]
    assert [severity for _, severity, _, _ in _calls(root)] == ["warning", "warning", "error"]


@pytest.mark.parametrize(
    "trigger",
    [
        "pull_request",
        "pull_request_target",
        "issue_comment",
        "pull_request_review",
        "pull_request_review_comment",
        "workflow_run",
    ],
)
def test_where_a_fork_can_start_the_caller_secrets_inherit_is_never_advised(make_repo: MakeRepo, trigger: str) -> None:
    caller = f"on:\n  push:\n  {trigger}:\njobs:\n  call: {{uses: ./.github/workflows/callee.yml}}\n"
    root = make_repo({".github/workflows/callee.yml": FORK_CALLEE, ".github/workflows/caller.yml": caller})
    fork = f"`{trigger}` lets a fork start this workflow, so"
    inherit = "(`secrets: inherit` would hand every secret to the fork's code)"
    note = f".github/workflows/caller.yml:3:3 `{trigger}` lets a fork start it here"
    optional = f"it is empty in this call; {fork} pass this one secret only where the run is trusted, or nothing"
    found = _calls(root)
    assert [(line, severity, message) for line, severity, message, _ in found] == [
        (5, "warning", f"{optional} {inherit}"),
        (5, "warning", f"{optional} {inherit}"),
        (5, "error", f"it is `required`, so the call fails before it starts; {fork} pass this one secret {inherit}"),
    ]
    assert all(notes[-1] == note for _, _, _, notes in found)
    messages = [message for _, _, message, _ in _whole_findings(root)]
    assert not any("(nor `secrets: inherit`)" in message for message in messages)


def test_a_fork_that_starts_the_callers_own_caller_counts_and_an_undeclared_secret_is_to_be_declared(
    make_repo: MakeRepo,
) -> None:
    """`pr.yml` (pull_request) calls `caller.yml`, which calls the callee: the fork reaches the call through it;
    `nightly.yml` calls the callee too, and no fork starts it."""
    middle = (
        "on: workflow_call\njobs:\n  call:\n    uses: ./.github/workflows/callee.yml\n"
        "    secrets: {HF_TOKEN: x, HUB_TOKEN: y, WANDB_KEY: z}\n"
    )
    callee = FORK_CALLEE.replace('C: "${{ secrets.WANDB_KEY }}"', 'C: "${{ secrets.WANDB_KEY }} ${{ secrets.S3 }}"')
    root = make_repo(
        {
            ".github/workflows/callee.yml": callee,
            ".github/workflows/caller.yml": middle,
            ".github/workflows/pr.yml": "on: pull_request\njobs:\n  gpu: {uses: ./.github/workflows/caller.yml}\n",
            ".github/workflows/nightly.yml": "on: schedule\njobs:\n  gpu:\n    uses: ./.github/workflows/callee.yml\n"
            "    secrets: {HF_TOKEN: x, HUB_TOKEN: y, WANDB_KEY: z}\n",
        }
    )
    found = [
        (at, severity, message.split("reads: ")[1], notes[-1]) for at, severity, message, notes in _whole_findings(root)
    ]
    assert found == [
        (
            ".github/workflows/caller.yml:4:11",
            "error",
            "it is not declared under `on.workflow_call.secrets`, so no call can pass it by name and it is empty in "
            "this call; `pull_request` of `.github/workflows/pr.yml`, which runs it, lets a fork start this workflow, "
            "so declare it there and pass it only where the run is trusted, or nothing (`secrets: inherit` would hand "
            "every secret to the fork's code)",
            ".github/workflows/pr.yml:1:5 `pull_request` lets a fork start it here",
        ),
        (
            ".github/workflows/nightly.yml:4:11",
            "error",
            "it is not declared under `on.workflow_call.secrets`, so no call can pass it by name and it is empty in "
            "this call",
            ".github/workflows/callee.yml:12:109 `secrets.S3` read here",
        ),
    ]


def test_a_caller_that_decides_what_forks_get_may_withhold_an_optional_secret(make_repo: MakeRepo) -> None:
    """A job whose `if:` tests the head repository withholds on purpose; one that passes the secret only in
    trusted runs passes it; a required secret withheld still fails the call."""
    caller = """on: pull_request_target
jobs:
  fork-only:
    if: github.event.pull_request.head.repo.fork
    uses: ./.github/workflows/callee.yml
    secrets: {WANDB_KEY: "${{ secrets.WANDB_KEY }}"}
  same-repository:
    if: github.event.pull_request.head.repo.full_name == github.repository
    uses: ./.github/workflows/callee.yml
    secrets: {HUB_TOKEN: "${{ secrets.HUB_TOKEN }}", WANDB_KEY: "${{ secrets.WANDB_KEY }}"}
  conditional:
    uses: ./.github/workflows/callee.yml
    secrets:
      HF_TOKEN: ${{ !github.event.pull_request.head.repo.fork && secrets.HF_TOKEN || '' }}
      HUB_TOKEN: ${{ !github.event.pull_request.head.repo.fork && secrets.HUB_TOKEN || '' }}
      WANDB_KEY: ${{ secrets.WANDB_KEY }}
  required-withheld:
    if: ${{ !github.event.pull_request.head.repo.fork }}
    uses: ./.github/workflows/callee.yml
"""
    root = make_repo({".github/workflows/callee.yml": FORK_CALLEE, ".github/workflows/caller.yml": caller})
    assert [(line, severity, message.split(";")[0]) for line, severity, message, _ in _calls(root)] == [
        (19, "error", "it is `required`, so the call fails before it starts")
    ]
