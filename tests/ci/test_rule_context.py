"""What built-in rules say holds in the context of the finding: the shell a fix is written for, a re-enabled command."""

from __future__ import annotations

import json

import pytest

from tests.ci.conftest import run_cli

SET_OUTPUT = '      - id: v\n        run: echo "::set-output name=v::1"\n'


def _findings(make_repo, workflow: str) -> list[dict[str, object]]:  # type: ignore[no-untyped-def]
    root = make_repo({".github/workflows/ci.yml": workflow})
    result = run_cli("check", root, "--output-format", "json", "--select", "CC031")
    return list(json.loads(result.out)["diagnostics"])


@pytest.mark.parametrize(
    ("runs_on", "shell", "fixed"),
    [
        ("ubuntu-latest", "", True),
        ("${{ matrix.os }}\n    strategy:\n      matrix:\n        os: [ubuntu-latest, macos-14]", "", True),
        ("${{ matrix.os }}\n    strategy:\n      matrix:\n        os: [ubuntu-latest, windows-latest]", "", False),
        ("${{ matrix.os }}\n    strategy:\n      matrix:\n        os: [ubuntu-latest, windows-latest]", "bash", True),
        ("${{ needs.plan.outputs.runner }}", "", False),
        ("windows-latest", "sh", True),
    ],
    ids=["linux", "linux-and-macos", "a-windows-leg", "a-windows-leg-in-bash", "unknown-runner", "windows-in-sh"],
)
def test_the_github_output_rewrite_is_offered_only_where_the_step_runs_in_bash_or_sh(
    make_repo, runs_on: str, shell: str, fixed: bool
) -> None:  # type: ignore[no-untyped-def]
    step = SET_OUTPUT + (f"        shell: {shell}\n" if shell else "")
    workflow = f"on: push\njobs:\n  t:\n    runs-on: {runs_on}\n    steps:\n{step}"
    (finding,) = _findings(make_repo, workflow)
    assert ("fix" in finding) is fixed
    if fixed:
        assert finding["fix"]["edits"][0]["replacement"] == 'echo "v=1" >> "$GITHUB_OUTPUT"'  # type: ignore[index]


@pytest.mark.parametrize("where", ["workflow", "job", "step"])
def test_set_env_is_a_security_warning_where_unsecure_commands_are_allowed(make_repo, where: str) -> None:  # type: ignore[no-untyped-def]
    env = "env:\n  ACTIONS_ALLOW_UNSECURE_COMMANDS: 'true'\n"
    indent = {"workflow": "", "job": "    ", "step": "        "}[where]
    block = "".join(indent + line + "\n" for line in env.splitlines())
    workflow = (
        f"on: push\n{block if where == 'workflow' else ''}jobs:\n  t:\n    runs-on: ubuntu-latest\n"
        f'{block if where == "job" else ""}    steps:\n      - run: echo "::set-env name=A::1"\n'
        f"{block if where == 'step' else ''}"
    )
    (finding,) = _findings(make_repo, workflow)
    assert finding["severity"] == "warning"
    assert str(finding["message"]).startswith("`::set-env` works here only because ACTIONS_ALLOW_UNSECURE_COMMANDS")
    assert finding["related"][0]["message"] == "ACTIONS_ALLOW_UNSECURE_COMMANDS is set to true here"  # type: ignore[index]


def test_set_env_fails_the_step_where_nothing_allows_it(make_repo) -> None:  # type: ignore[no-untyped-def]
    workflow = (
        'on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo "::set-env name=A::1"\n'
    )
    (finding,) = _findings(make_repo, workflow)
    assert (finding["severity"], finding["message"]) == (
        "error",
        '`::set-env` is disabled on GitHub runners and fails the step; append to "$GITHUB_ENV" instead',
    )


def test_allowing_unsecure_commands_through_the_environment_file_counts(make_repo) -> None:  # type: ignore[no-untyped-def]
    workflow = (
        "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n"
        '      - run: echo "ACTIONS_ALLOW_UNSECURE_COMMANDS=true" >> "$GITHUB_ENV"\n'
        '      - run: echo "::add-path::/opt/bin"\n'
    )
    (finding,) = _findings(make_repo, workflow)
    assert finding["severity"] == "warning"
