"""What built-in rules say holds in the context of the finding: the shell a fix is written for, a re-enabled command,
the text GitHub makes of a number."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.ci.linter.conftest import MakeRepo, run_cli

SET_OUTPUT = '      - id: v\n        run: echo "::set-output name=v::1"\n'


def _findings(make_repo: MakeRepo, workflow: str) -> list[dict[str, object]]:
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
        ("${{ matrix.os }}\n    strategy:\n      matrix:\n        os: [ubuntu-latest, Windows-2022]", "", False),
        ("\n      group: gpu-runners", "", False),
        ('[ubuntu-latest, "${{ fromJSON(needs.plan.outputs.label) }}"]', "", False),
    ],
    ids=[
        "linux",
        "linux-and-macos",
        "a-windows-leg",
        "a-windows-leg-in-bash",
        "unknown-runner",
        "windows-in-sh",
        "a-windows-leg-in-capitals",
        "a-runner-group",
        "a-linux-label-and-an-unknown-one",
    ],
)
def test_the_github_output_rewrite_is_offered_only_where_the_step_runs_in_bash_or_sh(
    make_repo: MakeRepo, runs_on: str, shell: str, fixed: bool
) -> None:
    step = SET_OUTPUT + (f"        shell: {shell}\n" if shell else "")
    workflow = f"on: push\njobs:\n  t:\n    runs-on: {runs_on}\n    steps:\n{step}"
    (finding,) = _findings(make_repo, workflow)
    assert ("fix" in finding) is fixed
    if fixed:
        assert finding["fix"]["edits"][0]["replacement"] == 'echo "v=1" >> "$GITHUB_OUTPUT"'  # type: ignore[index]


@pytest.mark.parametrize("where", ["workflow", "job", "step"])
def test_set_env_is_a_security_warning_where_unsecure_commands_are_allowed(make_repo: MakeRepo, where: str) -> None:
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


def test_set_env_fails_the_step_where_nothing_allows_it(make_repo: MakeRepo) -> None:
    workflow = (
        'on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo "::set-env name=A::1"\n'
    )
    (finding,) = _findings(make_repo, workflow)
    assert (finding["severity"], finding["message"]) == (
        "error",
        '`::set-env` is disabled on GitHub runners and fails the step; append to "$GITHUB_ENV" instead',
    )


def test_allowing_unsecure_commands_through_the_environment_file_counts(make_repo: MakeRepo) -> None:
    workflow = (
        "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n"
        '      - run: echo "ACTIONS_ALLOW_UNSECURE_COMMANDS=true" >> "$GITHUB_ENV"\n'
        '      - run: echo "::add-path::/opt/bin"\n'
    )
    (finding,) = _findings(make_repo, workflow)
    assert finding["severity"] == "warning"


def _lines(root: Path) -> list[tuple[str, int, int, str, str, list[tuple[int, int]], str | None]]:
    """Each CC031 finding whole: path, line, column, severity, message, the related locations and the fix's text."""
    result = run_cli("check", root, "--output-format", "json", "--select", "CC031")
    return [
        (
            d["path"],
            d["line"],
            d["column"],
            d["severity"],
            d["message"],
            [(r["line"], r["column"]) for r in d.get("related", [])],
            d["fix"]["edits"][0]["replacement"] if "fix" in d else None,
        )
        for d in json.loads(result.out)["diagnostics"]
    ]


DEPRECATED = '`::set-output` is deprecated; append `name=value` to "$GITHUB_OUTPUT" instead'
REWRITE = 'echo "v=1" >> "$GITHUB_OUTPUT"'


def test_a_composite_action_is_told_the_calling_workflow_decides_unless_an_earlier_step_allows_it(
    make_repo: MakeRepo,
) -> None:
    # An action has no `env:` above its steps; its steps write to the job's environment file like any step.
    head = "name: x\ndescription: x\nruns:\n  using: composite\n  steps:\n"
    disabled = (
        head + '    - run: echo "::set-env name=A::1"\n      shell: bash\n'
        '    - run: echo "::set-output name=v::1"\n      shell: sh\n'
        '    - run: echo "::set-output name=v::1"\n      shell: zsh\n'
    )
    allowed = (
        head + '    - run: echo "ACTIONS_ALLOW_UNSECURE_COMMANDS=true" >> "$GITHUB_ENV"\n      shell: bash\n'
        '    - run: echo "::add-path::/opt/bin"\n      shell: bash\n'
    )
    root = make_repo({".github/actions/x/action.yml": disabled, ".github/actions/y/action.yml": allowed})
    x, y = ".github/actions/x/action.yml", ".github/actions/y/action.yml"
    assert _lines(root) == [
        (
            x,
            6,
            12,
            "error",
            "`::set-env` is disabled on GitHub runners and fails the step, unless the calling workflow sets "
            'ACTIONS_ALLOW_UNSECURE_COMMANDS (which is unsafe); append to "$GITHUB_ENV" instead',
            [],
            'echo "A=1" >> "$GITHUB_ENV"',
        ),
        (x, 8, 12, "warning", DEPRECATED, [], REWRITE),
        (x, 10, 12, "warning", DEPRECATED, [], None),
        (
            y,
            8,
            12,
            "warning",
            "`::add-path` works here only because ACTIONS_ALLOW_UNSECURE_COMMANDS is true, which lets any process "
            'that prints to the log change the job\'s environment; append to "$GITHUB_PATH" instead',
            [(6, 18)],
            'echo "/opt/bin" >> "$GITHUB_PATH"',
        ),
    ]


def test_the_rewrite_follows_the_default_shell_of_the_job_before_the_workflow_and_the_runner(
    make_repo: MakeRepo,
) -> None:
    workflow = (
        "on: push\ndefaults:\n  run:\n    shell: zsh\njobs:\n"
        "  zsh:\n    runs-on: ubuntu-latest\n    steps:\n"
        + SET_OUTPUT
        + "  sh-on-windows:\n    runs-on: windows-latest\n"
        "    defaults:\n      run:\n        shell: sh -e {0}\n    steps:\n" + SET_OUTPUT
    )
    root = make_repo({".github/workflows/ci.yml": workflow})
    ci = ".github/workflows/ci.yml"
    assert _lines(root) == [
        (ci, 10, 14, "warning", DEPRECATED, [], None),
        (ci, 18, 14, "warning", DEPRECATED, [], REWRITE),
    ]


def test_no_rewrite_is_offered_for_an_echo_whose_text_is_not_plain(make_repo: MakeRepo) -> None:
    # A word that goes on past its closing quote, a `%` (escaped in workflow commands, not in the environment
    # files) and a YAML-quoted script whose text differs from the file's are reported but not rewritten.
    steps = (
        '      - run: echo "::set-output name=v::1"x\n'
        '      - run: echo "::set-output name=v::50%"\n'
        '      - run: "echo \\"::set-output name=v::1\\""\n'
        "      - run: echo '::set-output name=v::1'\n"
    )
    root = make_repo(
        {".github/workflows/ci.yml": f"on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n{steps}"}
    )
    ci = ".github/workflows/ci.yml"
    assert _lines(root) == [
        (ci, 6, 14, "warning", DEPRECATED, [], None),
        (ci, 7, 14, "warning", DEPRECATED, [], None),
        (ci, 8, 15, "warning", DEPRECATED, [], None),
        (ci, 9, 14, "warning", DEPRECATED, [], "echo 'v=1' >> \"$GITHUB_OUTPUT\""),
    ]


def test_a_workflow_command_is_what_echo_or_printf_print_at_the_start_of_a_line(make_repo: MakeRepo) -> None:
    # echo's own options are passed over, not printf's nor a word that only starts like one; a command printed
    # after other text is no command. A rewrite is offered only for a lone `echo` with one word (no option) and
    # no redirection.
    steps = (
        "      - run: printf '::set-output name=v::1\\n'\n"
        '      - run: printf -e "::set-env name=A::1"\n'
        '      - run: echo -nx "::set-output name=v::1"\n'
        '      - run: echo -E "::set-output name=v::1"\n'
        '      - run: echo "note ::set-output name=v::1"\n'
        '      - run: echo "::save-state name=s::1"\n'
        '      - run: A=1 echo "::set-output name=v::1"\n'
        '      - run: echo "::set-output name=v::1" >&2\n'
        '      - run: echo "::set-output name=v::" 1\n'
    )
    root = make_repo(
        {".github/workflows/ci.yml": f"on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n{steps}"}
    )
    ci = ".github/workflows/ci.yml"
    state = '`::save-state` is deprecated; append `name=value` to "$GITHUB_STATE" instead'
    assert _lines(root) == [
        (ci, 6, 14, "warning", DEPRECATED, [], None),
        (ci, 9, 14, "warning", DEPRECATED, [], None),
        (ci, 11, 14, "warning", state, [], 'echo "s=1" >> "$GITHUB_STATE"'),
        (ci, 12, 14, "warning", DEPRECATED, [], None),
        (ci, 13, 14, "warning", DEPRECATED, [], None),
        (ci, 14, 14, "warning", DEPRECATED, [], None),
    ]


def test_the_commands_after_a_step_or_an_echo_that_prints_none_are_still_read(make_repo: MakeRepo) -> None:
    # A PowerShell script is not parsed, and an echo that only names a command prints none: the steps and commands
    # after them are read all the same.
    steps = (
        '      - run: echo "::set-output name=v::1"\n        shell: pwsh\n'
        '      - run: |\n          echo "set-output is going away"\n          echo "::set-output name=v::1"\n'
    )
    root = make_repo(
        {".github/workflows/ci.yml": f"on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n{steps}"}
    )
    assert _lines(root) == [(".github/workflows/ci.yml", 10, 11, "warning", DEPRECATED, [], REWRITE)]


def test_only_a_true_value_or_an_earlier_write_allows_set_env(make_repo: MakeRepo) -> None:
    steps = (
        '      - run: echo "::set-env name=A::1"\n'
        '      - run: echo "ACTIONS_ALLOW_UNSECURE_COMMANDS=true" >> "$GITHUB_ENV"\n'
    )
    workflow = (
        "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    env:\n      ACTIONS_ALLOW_UNSECURE_COMMANDS: 'false'\n"
        f"    steps:\n{steps}"
    )
    root = make_repo({".github/workflows/ci.yml": workflow})
    message = '`::set-env` is disabled on GitHub runners and fails the step; append to "$GITHUB_ENV" instead'
    assert _lines(root) == [(".github/workflows/ci.yml", 8, 14, "error", message, [], 'echo "A=1" >> "$GITHUB_ENV"')]


def test_a_number_is_reported_where_github_would_pass_on_other_text_than_written(make_repo: MakeRepo) -> None:
    # Every place a value is passed on is looked at: the workflow's, a job's and a step's env, a called workflow's
    # and a step's with, the matrix. Infinity and not-a-number, booleans, keys, and numbers written as GitHub
    # writes them (a leading + aside) are passed over.
    workflow = """on: push
env:
  W: 3.10
jobs:
  call:
    uses: ./.github/workflows/r.yml
    with:
      v: 1.50
  t:
    runs-on: ubuntu-latest
    env:
      J: 010
      INF: .inf
      NAN: .nan
      NINF: -.inf
      PLUS: +12
      PLUSF: +1.0
      KEPT: 3.11
      WHOLE: 12
      NEGATIVE: -7
      BOOL: true
      HEX: 0x1F
      E: 1e3
      EDGE: 999999999999999.0
      LARGE: 1.0e15
      NEGATIVE_LARGE: -1.0e15
    strategy:
      matrix:
        cuda: [11.8, 12.0]
        3.0: [a key]
        include:
          - {torch: 2.10}
    steps:
      - uses: ./.github/actions/a
        with:
          x: 2.0
        env:
          S: 0.50
"""
    action = (
        "name: a\ndescription: a\nruns:\n  using: composite\n  steps:\n    - uses: ./b\n      with:\n        v: 3.10\n"
    )
    root = make_repo({".github/workflows/ci.yml": workflow, ".github/actions/a/action.yml": action})
    result = run_cli("check", root, "--select", "CC032")
    shown = [
        (".github/actions/a/action.yml:8:12", "3.10", "3.1"),
        (".github/workflows/ci.yml:3:6", "3.10", "3.1"),
        (".github/workflows/ci.yml:8:10", "1.50", "1.5"),
        (".github/workflows/ci.yml:12:10", "010", "10"),
        (".github/workflows/ci.yml:17:14", "+1.0", "1"),
        (".github/workflows/ci.yml:22:12", "0x1F", "31"),
        (".github/workflows/ci.yml:23:10", "1e3", "1000"),
        (".github/workflows/ci.yml:24:13", "999999999999999.0", "999999999999999"),
        (".github/workflows/ci.yml:25:14", "1.0e15", "1000000000000000.0"),
        (".github/workflows/ci.yml:26:23", "-1.0e15", "-1000000000000000.0"),
        (".github/workflows/ci.yml:29:22", "12.0", "12"),
        (".github/workflows/ci.yml:32:21", "2.10", "2.1"),
        (".github/workflows/ci.yml:36:14", "2.0", "2"),
        (".github/workflows/ci.yml:38:14", "0.50", "0.5"),
    ]
    assert result.headers == [
        f"{where}: CC032 {written} is read as the number {number}; quote it to keep it as written"
        for where, written, number in shown
    ]
