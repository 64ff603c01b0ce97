"""`python -m ci_checks_checkpoint` before any checkpoint is saved: options, bad input, missing extras.

None of these need torch: bad input is refused before torch is imported, and the linter never
imports it.
"""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from ci_checks_checkpoint import main
from tests.ci.checkpoint.run import command
from tests.ci.conftest import PROJECT
from tests.ci.linter.hostile import open_folder, unprivileged

pytestmark = pytest.mark.checkpoint


def harness(*args: str | Path, prelude: str = "") -> subprocess.CompletedProcess[str]:
    """The command in a fresh interpreter; `prelude` runs first (to make a package absent)."""
    return subprocess.run(
        command(*map(str, args), prelude=prelude), cwd=PROJECT, capture_output=True, text=True, timeout=120, check=False
    )


# A package made absent in one interpreter: `None` in sys.modules is how Python itself marks a
# module as not importable. It stands in for an environment without the extra installed,
# which cannot be produced in an environment that has it.
WITHOUT_TORCH = "sys.modules['torch'] = None"
WITHOUT_MEGATRON = "sys.modules['megatron'] = None"


def test_the_linter_and_the_harness_entry_point_import_no_torch() -> None:
    code = (
        "import sys\n"
        "import ci_checks, ci_checks.cli.main, ci_checks_checkpoint\n"
        "from ci_checks_checkpoint import main\n"
        "ci_checks.cli.main.main(['rules'])\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'megatron', 'numpy')))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.splitlines()[-1] == "[]"


def test_missing_torch_is_one_line_naming_the_extra() -> None:
    result = harness("--size", "1MiB", prelude=WITHOUT_TORCH)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert "needs torch" in result.stderr
    assert "ci-checks[checkpoint]" in result.stderr


# The installed torch's version as its metadata reports it, made older in one interpreter: a
# stand-in for an environment with torch 2.8, which cannot be installed beside the pinned one.
OLD_TORCH = (
    "import importlib.metadata as m\n"
    "real = m.version\n"
    "m.version = lambda name: '2.8.0' if name == 'torch' else real(name)"
)


def test_a_torch_without_dcp_s_stager_is_one_line_before_anything_runs() -> None:
    result = harness("--size", "1MiB", prelude=OLD_TORCH)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "ci-checks checkpoint: error: torch 2.8.0 is installed; the harness needs torch >= 2.9 "
        "(DCP's DefaultStager): pip install 'ci-checks[checkpoint]'\n"
    )


def test_an_unwritable_report_file_is_refused_before_the_run() -> None:
    """As a user the file is read-only to (root writes into any file)."""
    err = io.StringIO()
    with open_folder() as folder:
        report = folder / "report.json"
        report.write_text("{}", encoding="utf-8")
        report.chmod(0o444)
        with unprivileged():
            code = main(["--report-json", str(report)], out=io.StringIO(), err=err)
        assert report.read_text(encoding="utf-8") == "{}"
    assert (code, err.getvalue()) == (2, f"ci-checks checkpoint: error: --report-json {report}: file is not writable\n")


def test_missing_megatron_when_asked_for_is_one_line_naming_the_extra() -> None:
    result = harness("--backend", "megatron-async", prelude=WITHOUT_MEGATRON)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert "needs megatron-core" in result.stderr
    assert "ci-checks[checkpoint,megatron]" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--size", "0"], "'0' is not a size"),
        (["--size", "lots"], "'lots' is not a size"),
        (["--tensors", "0"], "'0' is less than 1"),
        (["--threads", "two"], "'two' is not a whole number"),
        (["--crash-test", "-1"], "'-1' is less than 0"),
        (["--seed", "1.5"], "'1.5' is not a whole number"),
        (["--timeout", "0"], "'0' is not a positive number of seconds"),
        (["--timeout", "inf"], "'inf' is not a finite number of seconds"),
        (["--timeout", "nan"], "'nan' is not a finite number of seconds"),
        (["--timeout", "1e300"], "'1e300' is more than a week (604800 s)"),
        (["--crash-size", "0"], "'0' is not a size"),
        (["--require", "dcp-fast"], "dcp-fast is not a backend (choose from dcp-sync, "),
        (["--require", ","], "',' is not a backend"),
        (["--backend", "dcp-sync", "--require", "dcp-sync,megatron-async"], "--require megatron-async: not among"),
        (["--import", "my project"], "'my project' is not a dotted module name"),
        (["--import", "tests/patch.py"], "'tests/patch.py' is not a dotted module name"),
        (["--backend", "dcp-fast"], "invalid choice: 'dcp-fast'"),
        (["--workdir", "no/such/folder"], "--workdir no/such/folder: no such folder"),
        (
            ["--report-json", "no/such/folder/report.json"],
            "--report-json: the folder of no/such/folder: no such folder",
        ),
        (["--junit", "no/such/folder/junit.xml"], "--junit: the folder of no/such/folder: no such folder"),
        (["--report-json", "."], "--report-json .: is a folder, not a file"),
        (["--junit", "tests"], "--junit tests: is a folder, not a file"),
        (["--frobnicate"], "unrecognized arguments: --frobnicate"),
        (["--setup", "myproject.model"], "'myproject.model' is not MODULE:FUNCTION"),
        (["--setup", "my project:main"], "'my project:main' is not MODULE:FUNCTION"),
        (["--setup", "tools/convert.py:main"], "'tools/convert.py:main' is not MODULE:FUNCTION"),
        (["--as-platform", "cuda"], "'cuda' is not a platform (choose from rocm, rocm:VERSION)"),
        (["--as-platform", "rocm:six"], "'six' is not a ROCm version such as 6.2.4"),
        (["--expect-staging", "fast"], "invalid choice: 'fast' (choose from 'pinned', 'synchronous', 'any')"),
        (["--nproc-per-node", "0"], "'0' is less than 1"),
        (["--reshard-ranks", "two"], "'two' is not a whole number"),
        (["--min-ratio", "fast=0.5"], "'fast' is not a ratio (choose from durable, blocking)"),
        (["--min-ratio", "durable=-1"], "'-1' is not a positive ratio"),
        (["--min-ratio", "nan"], "'nan' is not a positive ratio"),
        (["--min-ratio", "half"], "'half' is not a ratio such as 0.5"),
        (["--save-timeout", "0"], "'0' is not a positive number of seconds"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    result = harness(*args)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith("ci-checks checkpoint: error: ")
    assert message in result.stderr
    assert result.stderr.count("\n") == 1


def test_a_file_is_not_a_workdir(tmp_path: Path) -> None:
    file = tmp_path / "file"
    file.write_text("", encoding="utf-8")
    result = harness("--workdir", file)
    assert result.returncode == 2
    assert result.stderr == f"ci-checks checkpoint: error: --workdir {file}: no such folder\n"


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux /proc")
def test_a_folder_nobody_may_write_is_an_environment_error_with_a_report(tmp_path: Path) -> None:
    # (test_environment.py has a read-only folder as an unprivileged user)
    result = harness("--workdir", "/proc/self", "--report-json", tmp_path / "report.json")
    assert result.returncode == 2
    assert result.stderr.startswith("ci-checks checkpoint: error: cannot make the run folder in /proc/self (proc at ")
    assert result.stdout.splitlines()[-1] == "Verdict: ERROR (exit 2): " + result.stderr.partition("error: ")[2].strip()
    assert (tmp_path / "report.json").exists()


def test_help_lists_the_public_options() -> None:
    result = harness("--help")
    assert result.returncode == 0
    text = "".join(result.stdout.split())  # argparse wraps lines at hyphens too
    for option in ("--size", "--tensors", "--backend", "--threads", "--workdir", "--crash-test", "--report-json"):
        assert option in text
    for option in ("--junit", "--seed", "--timeout", "--require", "--import", "--crash-size", "--setup"):
        assert option in text
    for option in ("--as-platform", "--nproc-per-node", "--reshard-ranks", "--min-ratio", "--save-timeout"):
        assert option in text
    assert "--expect-staging" in text
    for backend in ("dcp-sync", "dcp-async-thread", "dcp-async-process", "megatron-async"):
        assert backend in text


def test_python_dash_m_is_the_same_command() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "ci_checks_checkpoint", "--size", "nothing"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert (
        result.stderr
        == "ci-checks checkpoint: error: argument --size: 'nothing' is not a size such as 64MiB, 1GiB or 1000000\n"
    )
