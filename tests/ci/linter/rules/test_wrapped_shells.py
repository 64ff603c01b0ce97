"""A pull request cannot hide a `run:` script by wrapping its shell: the script is checked as the runner runs it,
or a finding says it cannot be."""

from __future__ import annotations

import pytest

from ci_checks.syntax.shell.programs import shell_program
from tests.ci.linter.conftest import MakeRepo, run_cli

WORKFLOW = ".github/workflows/ci.yml"
DANGLING = """\
on: pull_request
permissions: {{}}
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - shell: {shell}
        run: ./tools/missing.sh
"""


@pytest.mark.parametrize(
    "shell",
    [
        "/usr/bin/env bash -e {0}",
        "env -i PATH=/usr/bin bash {0}",
        "nice -n 10 bash {0}",
        "sudo bash {0}",
        "sudo -E -u ci /bin/sh {0}",
        "stdbuf -oL -eL bash {0}",
        "nohup env -- dash {0}",
        "bash --noprofile --norc -eo pipefail {0}",
    ],
)
def test_a_script_behind_a_wrapped_shell_is_checked(make_repo: MakeRepo, shell: str) -> None:
    root = make_repo({WORKFLOW: DANGLING.format(shell=shell)})
    result = run_cli("check", "--no-cache", "--backends", "none", "--output-format", "concise", root)
    assert "CC041 `./tools/missing.sh` runs `tools/missing.sh`, which does not exist" in result.out
    assert "CC055" not in result.out


@pytest.mark.parametrize(
    "shell",
    [
        "sudo --login-class=ci bash {0}",  # an option whose value may be the next word
        "env",  # no program after the wrapper
        "env -S 'bash -e' {0}",  # quoted words
        "sudo sudo sudo sudo sudo sudo sudo sudo bash {0}",  # more wrappers than are followed
    ],
)
def test_a_shell_that_cannot_be_resolved_is_said_not_hidden(make_repo: MakeRepo, shell: str) -> None:
    root = make_repo({WORKFLOW: DANGLING.format(shell=shell)})
    result = run_cli("check", "--no-cache", "--backends", "none", "--output-format", "concise", root)
    assert f"CC055 `shell: {shell}` cannot be resolved to a program" in result.out
    assert "Found 1 problem (1 info)" in result.out  # information that the script went unchecked, not silence


def test_a_default_shell_a_matrix_picks_is_unknown_where_a_leg_runs_a_posix_shell(make_repo: MakeRepo) -> None:
    workflow = """\
on: push
jobs:
  posix:
    runs-on: ubuntu-latest
    strategy: {matrix: {sh: [bash, pwsh]}}
    defaults: {run: {shell: "${{ matrix.sh }}"}}
    steps: [{run: ./tools/missing.sh}]
  never-posix:
    runs-on: ubuntu-latest
    strategy: {matrix: {sh: [pwsh, python]}}
    defaults: {run: {shell: "${{ matrix.sh }}"}}
    steps: [{run: ./tools/missing.sh}]
"""
    root = make_repo({WORKFLOW: workflow})
    result = run_cli("check", "--no-cache", "--backends", "none", "--output-format", "concise", root)
    assert [line.split(": ", 1)[0] for line in result.out.splitlines() if "CC055" in line] == [f"{WORKFLOW}:7:19"]


def test_the_program_is_read_as_the_runner_starts_it() -> None:
    assert [
        shell_program(shell)
        for shell in ("bash", "/usr/local/bin/zsh {0}", "nice -5 sh {0}", "python {0}", "pwsh", "${{ inputs.sh }}")
    ] == ["bash", "zsh", "sh", "python", "pwsh", None]
