"""Inputs that used to crash or stall the whole run, or put findings where they are not.

Each is built for real: the files on disk, the real linters, the CLI in its
own process where streams are what is tested.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from ci_checks.backends import tools
from ci_checks.core.repository import Repository
from ci_checks.model.loading import Workspace
from tests.ci.linter.conftest import MakeRepo, run_cli
from tests.ci.linter.hostile import unprivileged
from tests.ci.linter.security.test_untrusted import INJECTION

WORKFLOW = ".github/workflows/ci.yml"
FORBID_IN_FILES = """\
version: 1
rules:
  - id: no-amd
    kind: forbid
    where: {{files: ["{glob}"]}}
    forbid:
      - {matcher}
"""


def _cli(*arguments: str | Path, **options: object) -> subprocess.CompletedProcess[bytes]:
    """ci-checks as its own process, the way CI runs it."""
    command = [sys.executable, "-m", "ci_checks.cli", *map(str, arguments)]
    return subprocess.run(command, capture_output=True, timeout=120, check=False, **options)  # type: ignore[call-overload, no-any-return]


# --- 10. a Dockerfile that used to exhaust the recursion limit ---------------------------------------------


def test_a_run_of_a_thousand_brackets_is_read_as_shell(make_repo: MakeRepo) -> None:
    policy = FORBID_IN_FILES.format(glob="docker/Dockerfile", matcher="command: git apply")
    deep = "RUN " + "if true; then " * 150 + "git apply amd.patch" + "; fi" * 150
    dockerfile = "FROM ubuntu\nRUN " + "[" * 1000 + "\n" + deep + "\nRUN git apply x.patch\n"
    root = make_repo({".github/ci-checks.yml": policy, "docker/Dockerfile": dockerfile})
    result = run_cli("check", root)
    assert "internal error" not in result.err
    assert result.headers == [
        "docker/Dockerfile:3:1394: CC106 shell statements are nested more than 100 deep; not checked by this rule "
        "[no-amd]",
        "docker/Dockerfile:4:5: CC101 `git apply` is forbidden here [no-amd]",
    ]


# --- 11. options and environments that used to raise ------------------------------------------------------


@pytest.mark.parametrize("value", ["inf", "1e308", "nan", "-1", "0"])
def test_an_absurd_backend_timeout_is_a_usage_error(make_repo: MakeRepo, value: str) -> None:
    result = run_cli("check", make_repo({WORKFLOW: INJECTION}), "--backend-timeout", value, "--backends", "all")
    assert result.code == 2
    assert "internal error" not in result.err and f"argument --backend-timeout: {value!r}" in result.err


def test_a_folder_on_path_that_cannot_be_searched_is_passed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    locked = tmp_path / "locked"
    (locked / "bin").mkdir(parents=True)
    installed = tools.find_binary("shellcheck", None)
    locked.chmod(0)
    monkeypatch.setenv("PATH", os.pathsep.join([str(locked / "bin"), str(Path(installed).parent)]))
    try:
        with unprivileged():
            try:
                found: str | None = tools.find_binary("shellcheck", None)
            except tools.Unavailable:  # where this user cannot reach the installed one either
                found = None
    finally:
        locked.chmod(stat.S_IRWXU)
    assert found in (installed, None)


# --- 12. standard output and error that cannot be written ---------------------------------------------------


def test_a_closed_standard_output_is_exit_2_with_a_message(make_repo: MakeRepo) -> None:
    root = make_repo({WORKFLOW: INJECTION})
    result = _cli("check", root, preexec_fn=lambda: os.close(1))
    assert result.returncode == 2
    assert result.stderr.decode() == "ci-checks: error: standard output is closed; the report was not written\n"


def test_a_full_standard_output_is_exit_2_with_a_message(make_repo: MakeRepo) -> None:
    root = make_repo({WORKFLOW: INJECTION.replace("echo", "echo ::set-output name=a::1")})
    with Path("/dev/full").open("w") as full:
        result = subprocess.run(
            [sys.executable, "-m", "ci_checks.cli", "check", str(root)],
            stdout=full,
            stderr=subprocess.PIPE,
            check=False,
        )
    assert result.returncode == 2
    assert result.stderr.decode() == "ci-checks: error: cannot write standard output: No space left on device\n"


def test_a_finding_the_output_encoding_cannot_write_is_escaped(make_repo: MakeRepo) -> None:
    root = make_repo({WORKFLOW: INJECTION.replace("greet:", "grüße:\n    runs-on: ubuntu-latest")})
    result = _cli("check", root, env={**os.environ, "PYTHONIOENCODING": "ascii"})
    assert (result.returncode, result.stderr) == (1, b"")
    assert b"CC011 duplicate key 'runs-on'" in result.stdout
    assert b"gr\\xfc\\xdfe:" in result.stdout


def test_a_usage_error_with_standard_error_closed_is_still_exit_2() -> None:
    result = _cli("check", "--no-such-option", preexec_fn=lambda: os.close(2))
    assert result.returncode == 2


# --- 13. one file a linter cannot load ----------------------------------------------------------------------

CHECKOUT_WITHOUT_REF = """\
on: push
permissions: {}
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout
"""
INPUT_TYPE_EXPRESSION = """\
on:
  workflow_dispatch:
    inputs:
      x:
        type: ${{ github.event_name }}
permissions: {}
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - run: echo hi
"""


@pytest.mark.parametrize("broken", [CHECKOUT_WITHOUT_REF, INPUT_TYPE_EXPRESSION], ids=["uses-no-ref", "input-type"])
def test_a_file_zizmor_cannot_load_costs_only_that_file(make_repo: MakeRepo, broken: str) -> None:
    files = {f".github/workflows/{name}.yml": INJECTION for name in ("a", "c", "d", "e")}
    root = make_repo({**files, ".github/workflows/b.yml": broken})
    found = json.loads(run_cli("check", root, "--backends", "zizmor", "--output-format", "json").out)["diagnostics"]
    assert {d["path"] for d in found if d["code"] == "ZZ-template-injection"} == set(files)
    failed = [(d["path"], d["line"], d["message"].split(":")[0]) for d in found if d["code"] == "CC091"]
    assert failed == [(".github/workflows/b.yml", 1, "zizmor failed on this file, so it checked nothing in it")]


def test_a_file_actionlint_cannot_read_costs_only_that_file(make_repo: MakeRepo, tmp_path: Path) -> None:
    from ci_checks.backends import actionlint, linter_config, mirror
    from ci_checks.backends.context import Context
    from ci_checks.core.config_source import WorkTree

    names = ("a", "b", "c")
    root = make_repo({f".github/workflows/{name}.yml": INJECTION for name in names})
    repository = Repository(root)
    workspace = Workspace(repository)
    files = [workspace.load(path) for path in repository.workflows]
    copy = mirror.build(tmp_path / "copy", files, repository)
    # The copy of one workflow disappears before actionlint reads it: actionlint stops for every file.
    Path(copy.path_of(files[1])).unlink()
    config = linter_config.read("actionlint", WorkTree(repository))
    context = Context("actionlint", copy, tmp_path, config, tools.TimeLimit(60))
    found = actionlint.run(tools.find_binary("actionlint", None), files, context)
    assert {d.span.path for d in found if d.code == "AL-expression"} == {
        ".github/workflows/a.yml",
        ".github/workflows/c.yml",
    }
    failed = [d for d in found if d.code == "CC091"]
    assert [(d.span.path, d.span.line) for d in failed] == [(".github/workflows/b.yml", 1)]
    assert failed[0].message.startswith(
        "actionlint failed on this file, so it checked nothing in it: exited with status 3"
    )


def test_a_fifo_for_a_linter_configuration_is_reported_not_waited_for(make_repo: MakeRepo) -> None:
    root = make_repo({WORKFLOW: INJECTION})
    os.mkfifo(root / ".github" / "actionlint.yaml")
    os.mkfifo(root / ".github" / "zizmor.yml")
    result = run_cli("check", root, "--backends", "actionlint,zizmor", "--backend-timeout", "20")
    codes = [header.split(": ", 1)[1].split()[0] for header in result.headers]
    assert "CC091" not in codes
    assert [h for h in result.headers if " CC004 " in h] == [
        ".github/actionlint.yaml:1:1: CC004 a FIFO, not a regular file; not read; actionlint ran without it",
        ".github/zizmor.yml:1:1: CC004 a FIFO, not a regular file; not read; zizmor ran without it",
    ]


# --- 14. a linter named explicitly that is missing or is not that linter ------------------------------------


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--actionlint", "/bin/true", "--actionlint names '/bin/true', which is not actionlint"),
        ("--shellcheck", "/bin/echo", "--shellcheck names '/bin/echo', which is not shellcheck"),
        (
            "CI_CHECKS_ZIZMOR",
            "/no/such/zizmor",
            "$CI_CHECKS_ZIZMOR names '/no/such/zizmor', which is not an executable file",
        ),
        (
            "--actionlint",
            "no-such-actionlint",
            "--actionlint names 'no-such-actionlint', which is not an executable file",
        ),
    ],
)
def test_a_named_linter_that_is_missing_or_not_that_linter_is_exit_2(
    make_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch, option: str, value: str, message: str
) -> None:
    root = make_repo({WORKFLOW: INJECTION.replace("echo", "echo $x")})
    arguments: list[str | Path] = ["check", root, "--backends", "all"]
    if option.startswith("--"):
        arguments += [option, value]
    else:
        monkeypatch.setenv(option, value)
    result = run_cli(*arguments)
    assert (result.code, result.out, result.err) == (2, "", f"ci-checks: error: {message}\n")


# --- 15 and 16. positions that do not exist, and line breaks that are not ---------------------------------


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"a: {", "1:5"),
        (b"on: push\njobs: [", "2:8"),
        (b"on: push\njobs: [\n", "2:8"),
        (b"on: 'open", "1:5"),
    ],
)
def test_a_syntax_error_at_the_end_is_on_a_line_that_exists(make_repo: MakeRepo, content: bytes, expected: str) -> None:
    root = make_repo({WORKFLOW: content})
    headers = run_cli("check", root).headers
    assert [h.split(": ")[0] for h in headers] == [f"{WORKFLOW}:{expected}"]


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"], ids=["U+2028", "U+2029", "U+0085"])
@pytest.mark.parametrize(
    ("path", "glob", "matcher", "text", "expected"),
    [
        (
            "tools/a.py",
            "tools/*.py",
            "python: {name: ROCmWriter}",
            's = "{sep}€"; ROCmWriter = 1\nROCmWriter()\n',
            ["1:11", "2:1"],
        ),
        ("tools/a.sh", "tools/*.sh", "command: git apply", 'echo "{sep}"\ngit apply x.patch\n', ["2:1"]),
        ("docker/Dockerfile", "docker/*", "command: git apply", 'FROM x\nRUN echo "{sep}"\nRUN git apply x\n', ["3:5"]),
    ],
    ids=["python", "shell", "dockerfile"],
)
def test_unicode_line_separators_do_not_move_findings(
    make_repo: MakeRepo, separator: str, path: str, glob: str, matcher: str, text: str, expected: list[str]
) -> None:
    root = make_repo(
        {".github/ci-checks.yml": FORBID_IN_FILES.format(glob=glob, matcher=matcher), path: text.format(sep=separator)}
    )
    result = run_cli("check", root)
    assert [h.split(": ")[0] for h in result.headers] == [f"{path}:{where}" for where in expected]


# --- found by the property-based suite: a character that made the shell parser read memory it does not own ----

PARSE_MANY = """
from ci_checks.syntax import shell
for text in ("a{\\U0010ffff", "git apply x{\\U00066822i\\t-h", "echo {\\U000e0000}"):
    for _ in range(200):
        shell.parse_fragment(text)
"""


def test_characters_above_the_basic_plane_after_a_brace_do_not_crash_the_shell_parser() -> None:
    # tree-sitter-bash 0.25 crashed on these in about half of the processes: several processes, many parses each.
    for _ in range(5):
        finished = subprocess.run([sys.executable, "-c", PARSE_MANY], capture_output=True, timeout=120, check=False)
        assert (finished.returncode, finished.stderr) == (0, b"")


@pytest.mark.parametrize("cache", [(), ("--no-cache",)], ids=["kept", "not-kept"])
def test_names_too_long_for_the_file_system_are_dangling_references_not_internal_errors(
    make_repo: MakeRepo, cache: tuple[str, ...]
) -> None:
    # Found by test_fuzz's thorough profile: `Path.is_dir` raises ENAMETOOLONG where `os.path.isdir` says False.
    name = "x" * 300
    workflow = (
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n"
        f"      - uses: ./{name}\n  b:\n    uses: ./.github/workflows/{name}.yml\n"
    )
    root = make_repo({WORKFLOW: workflow, "Dockerfile": f"FROM x\nCOPY {name} /x\n"})
    result = run_cli("check", root, "--select", "CC041", *cache)
    assert (result.code, result.err) == (1, "")
    assert [header.split(" ")[0] for header in result.headers] == [
        f"{WORKFLOW}:7:15:",
        f"{WORKFLOW}:9:11:",
        "Dockerfile:2:6:",
    ]
