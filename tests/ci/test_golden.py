"""Golden fixtures: `err/X.yml` must print exactly `err/X.out`; `ok/` files must be clean.

`X.out` is the whole text output: each finding's `path:line:col: CODE message`
line, its source excerpt with the caret underline, its notes, and the summary
line; paths are relative to the fixtures folder. An optional `X.args` holds extra command-line options and
paths, where `{fixtures}` stands for the fixtures folder (policy fixtures name
their policy file there, under `policies/`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ci.conftest import FIXTURES, PROJECT, run_cli


def _fixtures(folder: str) -> list[Path]:
    base = FIXTURES / folder
    found = [p for p in base.rglob("*") if p.suffix in (".yml", ".yaml") and (p.is_file() or p.is_symlink())]
    return sorted(found)


def _run(fixture: Path):  # type: ignore[no-untyped-def]
    args_file = fixture.with_suffix(".args")
    extra = args_file.read_text().replace("{fixtures}", str(FIXTURES)).split() if args_file.exists() else []
    return run_cli("check", *extra, fixture)


def _relative(output: str) -> str:
    return output.replace(FIXTURES.relative_to(PROJECT).as_posix() + "/", "")


@pytest.mark.parametrize("fixture", _fixtures("err"), ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_error_fixture_prints_its_golden_lines(fixture: Path) -> None:
    expected = fixture.with_suffix(".out").read_text(encoding="utf-8")
    result = _run(fixture)
    assert result.err == ""
    assert _relative(result.out) == expected
    assert result.code == 1


@pytest.mark.parametrize("fixture", _fixtures("ok"), ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_clean_fixture_stays_clean(fixture: Path) -> None:
    result = _run(fixture)
    assert (result.code, result.headers, result.err) == (0, [], "")


def test_every_error_fixture_has_golden_lines() -> None:
    missing = [p for p in _fixtures("err") if not p.with_suffix(".out").is_file()]
    assert missing == []
