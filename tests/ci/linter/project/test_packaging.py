"""The installable product: the wheel ships the schemas and the console script; torch stays out."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.ci.conftest import PROJECT

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib


def test_wheel_contains_the_package_schemas_and_entry_point(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", tmp_path, PROJECT],
        check=True,
        capture_output=True,
    )
    [wheel] = tmp_path.glob("ci_checks-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "ci_checks/schemas/ci-checks.schema.json" in names
    assert "ci_checks/schemas/ci-checks-output.schema.json" in names
    assert "ci_checks/cli/main.py" in names
    assert not any(name.startswith("tests/") for name in names)
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "ci-checks = ci_checks.cli.main:entry" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_console_script_runs() -> None:
    script = Path(sys.executable).parent / "ci-checks"
    result = subprocess.run([script, "rules"], capture_output=True, text=True, check=False)
    assert result.returncode == 0
    assert result.stdout.startswith("CC001")


def test_checking_never_imports_torch(tmp_path: Path) -> None:
    # The linter's tests run without torch installed: stand-ins on the path make an import of either show.
    for package in ("torch", "megatron"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    code = (
        "import sys\n"
        "from ci_checks.cli import main as cli\n"
        f"cli.main(['check', {str(PROJECT)!r}])\n"
        "print('torch' in sys.modules, 'megatron' in sys.modules)\n"
    )
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(PROJECT)])}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=environment)
    assert result.stdout.splitlines()[-1] == "False False"


def test_python_dash_m_runs_the_cli() -> None:
    command = [sys.executable, "-m", "ci_checks.cli", "--version"]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    assert (result.returncode, result.stdout.strip()) == (0, "ci-checks 0.1.0")


TEST_COMMAND = re.compile(
    r"^python -m pip install -e '\.\[dev(?:-checkpoint)?\]' && python -m pytest tests/ci/\w+( .+)?$"
)
LINTER_TESTS = "python -m pip install -e '.[dev]' && python -m pytest tests/ci/linter -n auto --dist loadfile"
CHECKPOINT_TESTS = "python -m pip install -e '.[dev-checkpoint]' && python -m pytest tests/ci/checkpoint"


def test_ci_runs_exactly_the_readme_test_commands_thoroughly() -> None:
    readme = (PROJECT / "README.md").read_text(encoding="utf-8").splitlines()
    assert [line for line in readme if TEST_COMMAND.match(line)] == [LINTER_TESTS, CHECKPOINT_TESTS]
    # Between them, the two commands run every folder of tests.
    suites = {path.name for path in (PROJECT / "tests" / "ci").iterdir() if (path / "__init__.py").is_file()}
    assert suites == {"linter", "checkpoint"}
    lines = (PROJECT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    # The linter's tests first, in the environment without torch; a failed install or test of either ends the run.
    assert lines[-2:] == [f"{LINTER_TESTS} || exit", CHECKPOINT_TESTS]
    assert "export CI_CHECKS_THOROUGH=1" in lines  # the thorough tests run in CI
    addopts = tomllib.loads((PROJECT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]
    assert "--durations=20" in addopts["ini_options"]["addopts"].split()
