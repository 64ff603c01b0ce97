"""Golden fixtures: `err/X.yml` must print exactly `err/X.out`; `ok/` files must be clean.

`X.out` is the whole text output: each finding's `path:line:col: CODE message`
line, its source excerpt with the caret underline, its notes, and the summary
line; paths are relative to the fixtures folder. An optional `X.args` holds extra command-line options and
paths, where `{fixtures}` stands for the fixtures folder (policy fixtures name
their policy file there, under `policies/`). An optional `X.env` holds
`NAME=VALUE` lines set in the environment, where `{empty}` stands for an empty
folder; a `PATH` there is also where the running Python's own scripts are
looked for, which makes a machine without the linters.

Single-file fixtures are checked in this project, so what they name
(`bash scripts/x.sh`, a local action) must exist here or be reported.

A fixture can also be a whole repository: a folder `err/X/` (or `ok/X/`)
with its own `.github`, checked as a checkout of its own (copied, with a
`.git`); its expected output, `err/X.out`, has paths relative to it.

Every error fixture also has `X.expected`: its findings (code, path, line,
column, and why), written by reading the fixture (see `expectations.py`). The
findings are compared with it before the golden text, and the golden must
state the same findings, so that a golden pasted from a wrong run fails.
"""

from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest

from tests.ci.conftest import PROJECT
from tests.ci.expectations import expected, printed
from tests.ci.linter.conftest import FIXTURES, Result, copy_repository, is_repository_fixture, run_cli


def _fixtures(folder: str) -> list[Path]:
    base = FIXTURES / folder
    repositories = [p for p in base.iterdir() if is_repository_fixture(p)]
    found = [
        p
        for p in base.rglob("*")
        if p.suffix in (".yml", ".yaml")
        and (p.is_file() or p.is_symlink())
        and not any(repository in p.parents for repository in repositories)
    ]
    return sorted([*found, *repositories])


def _run(fixture: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Result:
    args_file = fixture.with_suffix(".args")
    extra = args_file.read_text().replace("{fixtures}", str(FIXTURES)).split() if args_file.exists() else []
    env_file = fixture.with_suffix(".env")
    for line in env_file.read_text().splitlines() if env_file.exists() else []:
        name, _, value = line.partition("=")
        setting = value.replace("{empty}", str(tmp_path / "empty"))
        (tmp_path / "empty").mkdir(exist_ok=True)
        monkeypatch.setenv(name, setting)
        if name == "PATH":
            monkeypatch.setattr(sysconfig, "get_path", lambda _, folders=setting: folders)
    target = copy_repository(fixture, tmp_path) if is_repository_fixture(fixture) else fixture
    return run_cli("check", *extra, target)


def _relative(output: str) -> str:
    return output.replace(FIXTURES.relative_to(PROJECT).as_posix() + "/", "")


@pytest.mark.parametrize("fixture", _fixtures("err"), ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_error_fixture_prints_its_golden_lines(fixture: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    golden = _golden(fixture).read_text(encoding="utf-8")
    result = _run(fixture, tmp_path, monkeypatch)
    assert result.err == ""
    assert [str(finding) for finding in printed(_relative(result.out))] == [
        str(finding) for finding in expected(_expectation(fixture))
    ]
    assert _relative(result.out) == golden
    assert result.code == 1


@pytest.mark.parametrize("fixture", _fixtures("ok"), ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_clean_fixture_stays_clean(fixture: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _run(fixture, tmp_path, monkeypatch)
    assert (result.code, result.headers, result.err) == (0, [], "")


def test_every_error_fixture_has_golden_lines_and_an_expectation() -> None:
    missing = [p for p in _fixtures("err") if not (_golden(p).is_file() and _expectation(p).is_file())]
    assert missing == []


@pytest.mark.parametrize("fixture", _fixtures("err"), ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_each_golden_states_the_findings_of_its_expectation(fixture: Path) -> None:
    assert printed(_golden(fixture).read_text(encoding="utf-8")) == expected(_expectation(fixture))


def test_an_expectation_line_needs_a_code_a_place_and_a_reason(tmp_path: Path) -> None:
    table = tmp_path / "x.expected"
    table.write_text("# code path line column why\nCC041  ci.yml  3  7  the script is missing\n", encoding="utf-8")
    assert [str(finding) for finding in expected(table)] == ["ci.yml:3:7: CC041"]
    table.write_text("CC041  ci.yml  3  7\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"x\.expected:1: want `code path line column why`"):
        expected(table)


def _golden(fixture: Path) -> Path:
    return fixture.parent / f"{fixture.name}.out" if is_repository_fixture(fixture) else fixture.with_suffix(".out")


def _expectation(fixture: Path) -> Path:
    return (
        fixture.parent / f"{fixture.name}.expected"
        if is_repository_fixture(fixture)
        else fixture.with_suffix(".expected")
    )
