"""`ci-checks check --stdin-filename PATH -`: standard input read as that file of the repository, instead of the
disk's (an editor's unsaved buffer, a file generated on the fly), by the rules and the linters alike."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from ci_checks.cli import main as cli
from tests.ci.linter.conftest import MakeRepo, Result

CLEAN = """\
on: push
permissions: {}
jobs:
  test:
    runs-on: ubuntu-latest
    timeout-minutes: 10
    steps:
      - run: echo "hello"
"""
DUPLICATE = CLEAN.replace('      - run: echo "hello"\n', '      - run: echo "hello"\n        run: echo "bye"\n')
WORKFLOW = ".github/workflows/ci.yml"


def run_with_stdin(data: bytes, *args: str | Path) -> Result:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([str(a) for a in args], out=out, err=err, stdin=io.BytesIO(data))
    return Result(code, out.getvalue(), err.getvalue())


@pytest.fixture
def repo(make_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch) -> Path:
    root: Path = make_repo({WORKFLOW: CLEAN})
    monkeypatch.chdir(root)
    return root


def test_standard_input_is_checked_as_the_named_file_instead_of_the_disk(repo: Path) -> None:
    found = run_with_stdin(DUPLICATE.encode(), "check", "--stdin-filename", WORKFLOW, "-")
    assert (found.code, found.headers) == (1, [f"{WORKFLOW}:9:9: CC011 duplicate key 'run'"])
    (repo / WORKFLOW).write_text(DUPLICATE)
    clean = run_with_stdin(CLEAN.encode(), "check", "--stdin-filename", WORKFLOW, "-")
    assert (clean.code, clean.headers) == (0, [])
    # Nothing kept from a run over standard input passes for the file on disk, which is checked as it is.
    assert run_with_stdin(b"", "check", WORKFLOW).headers == [f"{WORKFLOW}:9:9: CC011 duplicate key 'run'"]


def test_a_file_not_on_disk_yet_is_checked_with_the_repository_around_it(repo: Path) -> None:
    (repo / WORKFLOW).write_text("on: push\npermissions: {}\njobs:\n  call:\n    uses: ./.github/workflows/new.yml\n")
    callee = CLEAN.replace("on: push", "on: workflow_call").replace('"hello"', '"${{ secrets.HF_TOKEN }}"')
    new = ".github/workflows/new.yml"
    alone = run_with_stdin(b"", "check", WORKFLOW)
    assert [header.split()[:2] for header in alone.headers] == [[f"{WORKFLOW}:5:11:", "CC041"]]  # not there
    # Given on standard input, the new workflow is there, and reads a secret the caller on disk does not pass.
    found = run_with_stdin(callee.encode(), "check", "--stdin-filename", new, "-", WORKFLOW)
    assert [header.split()[:2] for header in found.headers] == [[f"{WORKFLOW}:5:11:", "CC050"]]
    assert f"read here at {new}:8:24" in found.out
    listed = run_with_stdin(callee.encode(), "check", "--stdin-filename", new, "-", "--list-files")
    assert listed.out.splitlines() == [new]


def test_standard_input_reads_as_a_file_does(repo: Path) -> None:
    crlf_with_bom = b"\xef\xbb\xbf" + DUPLICATE.replace("\n", "\r\n").encode()
    found = run_with_stdin(crlf_with_bom, "check", "--stdin-filename", WORKFLOW, "-")
    assert found.headers == [f"{WORKFLOW}:9:9: CC011 duplicate key 'run'"]
    binary = run_with_stdin(b"on: push\x00\n", "check", "--stdin-filename", WORKFLOW, "-")
    assert binary.headers == [f"{WORKFLOW}:1:9: CC002 binary file (contains a NUL byte)"]
    large = run_with_stdin(CLEAN.encode(), "check", "--stdin-filename", WORKFLOW, "-", "--max-file-size", "100")
    assert [header.split(": ", 1)[1][:5] for header in large.headers] == ["CC001"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["-"], "`-` reads standard input as the file --stdin-filename names; give --stdin-filename"),
        (["--stdin-filename", WORKFLOW, WORKFLOW], "give `-` among the paths to read it"),
        (["--stdin-filename", ".github", "-"], ".github: a folder, not a file"),
        (["--stdin-filename", WORKFLOW, "--fix", "-"], "--fix and --diff change files on disk"),
    ],
)
def test_standard_input_is_asked_for_plainly(repo: Path, arguments: list[str], message: str) -> None:
    result = run_with_stdin(DUPLICATE.encode(), "check", *arguments)
    assert result.code == 2 and message in result.err, result.err


def test_the_linters_read_standard_input_too(repo: Path) -> None:
    unquoted = CLEAN.replace('echo "hello"', "echo $1")
    found = run_with_stdin(
        unquoted.encode(), "check", "--stdin-filename", WORKFLOW, "-", "--backends", "shellcheck", "--select", "SC2086"
    )
    assert [header.split(": ", 1)[1].split()[0] for header in found.headers] == ["SC2086"], found.out + found.err


def test_the_console_script_reads_its_standard_input(repo: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "ci_checks.cli", "check", "--stdin-filename", WORKFLOW, "-", "--backends", "none"],
        input=DUPLICATE.encode(),
        capture_output=True,
        check=False,
    )
    assert result.returncode == 1, result.stderr
    assert f"{WORKFLOW}:9:9: CC011 duplicate key 'run'" in result.stdout.decode()
