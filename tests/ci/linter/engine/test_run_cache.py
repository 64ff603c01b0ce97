"""Whole runs kept between runs, and repositories checked side by side: the findings never change.

Every test runs the real CLI with the real linters where they matter. That a
warm run reused its stored result, rather than checking again, is shown by a
time limit no linter can meet: a run that started one reports CC091.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from ci_checks.backends import tools
from ci_checks.backends.cache import FILE_NAME, ResultCache
from tests.ci.linter.conftest import FIXTURES, MakeRepo, Result, copy_repository, run_cli
from tests.ci.linter.project.test_corpus import SHARED_CORPUS, _repositories
from tests.ci.linter.security.test_untrusted import _copies, _stop, _stoppable
from tests.ci.linter.stopping import HeldLinter

WORKFLOW = ".github/workflows/ci.yml"
CLEAN = """\
on: push
permissions: {}
jobs:
  build:
    runs-on: self-hosted
    timeout-minutes: 10
    steps:
      - run: echo build
"""


def _json(result: Result) -> object:
    assert result.code in (0, 1), result.err
    return json.loads(result.out)


@pytest.fixture
def corpus(tmp_path: Path) -> list[Path]:
    """The fixture repositories (copied, so that each is a root with `.git`) and the larger corpus when named."""
    copies = [copy_repository(path, tmp_path / "fixtures") for path in _repositories(FIXTURES / "corpus")]
    scripts = tmp_path / "scripts"
    _write(scripts, WORKFLOW, CLEAN.replace("echo build", "echo $x").replace("    timeout-minutes: 10\n", ""))
    (scripts / ".git").mkdir()
    shared = _repositories(SHARED_CORPUS) if SHARED_CORPUS is not None and SHARED_CORPUS.is_dir() else []
    return [*copies, scripts, *shared]


def test_every_finding_is_the_same_with_and_without_the_cache_serial_and_parallel(
    corpus: list[Path], tmp_path: Path
) -> None:
    check: list[str | Path] = [
        "check",
        "--backends",
        "all",
        "--select",
        "CC,AL,SC,ZZ",
        "--output-format",
        "json",
        *corpus,
    ]
    cache: list[str | Path] = ["--cache-dir", tmp_path / "cache"]
    fresh = _json(run_cli(*check, "--no-cache", "--jobs", "1"))
    assert fresh == _json(run_cli(*check, *cache, "--jobs", "2"))  # parallel and cold: stores each repository's run
    # warm: no linter could finish in a millisecond, so these come from the stored runs
    assert fresh == _json(run_cli(*check, *cache, "--jobs", "1", "--backend-timeout", "0.001"))
    assert fresh == _json(run_cli(*check, *cache, "--jobs", "2", "--backend-timeout", "0.001"))
    codes = {finding["code"] for finding in fresh["diagnostics"]}  # type: ignore[index]
    assert {"CC041", "CC043"} <= codes and all(
        any(code.startswith(linter) for code in codes) for linter in ("AL-", "SC", "ZZ-")
    )
    assert "CC091" not in codes


def test_a_warm_run_reports_as_a_fresh_one_in_every_format(make_repo: MakeRepo, tmp_path: Path) -> None:
    root = make_repo({WORKFLOW: CLEAN.replace("echo build", "echo $x").replace("    timeout-minutes: 10\n", "")})
    outputs = [f"{name}={tmp_path / name}" for name in ("sarif", "junit", "markdown")]
    first = run_cli("check", root, "--backends", "shellcheck", "--select", "SC,CC", *[f"--output={o}" for o in outputs])
    texts = [(tmp_path / name).read_text() for name in ("sarif", "junit", "markdown")]
    second = run_cli("check", root, "--backends", "shellcheck", "--select", "SC,CC", "--backend-timeout", "0.001",
                     *[f"--output={o}" for o in outputs])  # fmt: skip
    assert (second.code, second.out) == (first.code, first.out)
    assert "SC2086" in first.out and "CC043" in first.out
    assert [(tmp_path / name).read_text() for name in ("sarif", "junit", "markdown")] == texts


def test_a_policy_finding_read_back_from_a_stored_run_is_still_a_policy_finding(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    policy = f"rules:\n  - id: no-echo\n    kind: forbid\n    where: {{workflow: {WORKFLOW}}}\n"
    policy += "    forbid: [{command: echo}]\n"
    root = make_repo({WORKFLOW: CLEAN, ".github/ci-checks.yml": policy})
    check: list[str | Path] = ["check", root, "--output-format", "sarif", "--cache-dir", tmp_path / "cache"]
    cold, warm = _json(run_cli(*check)), _json(run_cli(*check))
    assert warm == cold
    assert [result["ruleId"] for result in cold["runs"][0]["results"]] == ["CC101/no-echo"]  # type: ignore[index]
    stored = sqlite3.connect(tmp_path / "cache" / FILE_NAME).execute("SELECT value FROM results").fetchall()
    assert any('"policy_id": "no-echo"' in value for (value,) in stored)


def _write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _replace_by_link(root: Path, relative: str, target: str) -> None:
    (root / relative).unlink()
    (root / relative).symlink_to(target)


DOCKER_WORKFLOW = """\
on: push
permissions: {}
jobs:
  build:
    runs-on: ubuntu-latest
    timeout-minutes: 10
    steps:
      - uses: actions/checkout@v4
      - uses: ./.github/actions/setup
      - run: docker build -f docker/Dockerfile .
"""
ACTION = """\
name: setup
description: set up
runs:
  using: composite
  steps:
    - run: echo setup
      shell: bash
"""
MUTATIONS: dict[str, Callable[[Path], None]] = {
    "a workflow edited": lambda root: _write(root, WORKFLOW, CLEAN),
    "a workflow added": lambda root: _write(root, ".github/workflows/new.yml", "on: push\njobs: {}\n"),
    "a workflow removed": lambda root: (root / ".github/workflows/other.yml").unlink(),
    "a workflow replaced by a link": lambda root: _replace_by_link(root, ".github/workflows/other.yml", "../../README"),
    "a local action edited": lambda root: _write(
        root, ".github/actions/setup/action.yml", ACTION.replace("using", "use")
    ),
    "a local action removed": lambda root: shutil.rmtree(root / ".github/actions/setup"),
    "a file a Dockerfile copies created": lambda root: _write(root, "requirements.txt", "torch\n"),
    "the checkout marker removed": lambda root: shutil.rmtree(root / ".git"),
    "the configuration changed": lambda root: _write(root, ".github/ci-checks.yml", "ignore: [CC041]\n"),
    "a patch nothing names added": lambda root: _write(root, "patches/fix.patch", "--- a\n+++ b\n"),
}


@pytest.mark.parametrize("mutation", MUTATIONS, ids=list(MUTATIONS))
def test_a_change_on_disk_that_changes_findings_is_never_hidden_by_the_cache(
    make_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, mutation: str
) -> None:
    root = make_repo(
        {
            WORKFLOW: DOCKER_WORKFLOW,
            ".github/workflows/other.yml": CLEAN.replace("    timeout-minutes: 10\n", ""),
            ".github/actions/setup/action.yml": ACTION,
            "docker/Dockerfile": "FROM python:3.11\nCOPY requirements.txt /app/\n",
            "README": "not a workflow\n",
        }
    )
    monkeypatch.chdir(tmp_path)
    check: list[str | Path] = ["check", root, "--output-format", "json"]
    cached: list[str | Path] = [*check, "--cache-dir", tmp_path / "cache"]
    before = _json(run_cli(*cached))
    assert before == _json(run_cli(*cached))
    MUTATIONS[mutation](root)
    after = _json(run_cli(*check, "--no-cache"))
    assert after != before, "the mutation changes nothing, so this test could not fail"
    assert _json(run_cli(*cached)) == after


def test_a_linter_binary_changed_is_another_key(make_repo: MakeRepo, tmp_path: Path) -> None:
    root = make_repo({WORKFLOW: CLEAN.replace("echo build", "echo $x")})
    real = shutil.which("shellcheck") or ""
    assert real, "the linters extra installs shellcheck"
    check: list[str | Path] = [
        "check",
        root,
        "--backends",
        "shellcheck",
        "--select",
        "SC",
        "--cache-dir",
        tmp_path / "cache",
    ]
    first = run_cli(*check)
    assert "SC2086" in first.out
    copy = tmp_path / "bin" / "shellcheck"
    copy.parent.mkdir()
    shutil.copy2(Path(real).resolve(), copy)
    os.utime(copy, ns=(1, 1))
    assert "CC091" in run_cli(*check, "--backend-timeout", "0.001", "--shellcheck", copy).out
    assert run_cli(*check, "--backend-timeout", "0.001").out == first.out


@pytest.mark.parametrize("damage", ["garbage", "rows of another shape", "rows cut short"])
def test_a_damaged_cache_costs_a_check_and_changes_nothing(make_repo: MakeRepo, tmp_path: Path, damage: str) -> None:
    root = make_repo({WORKFLOW: CLEAN.replace("    timeout-minutes: 10\n", ""), "x.patch": "--- a\n"})
    cache = tmp_path / "cache"
    check: list[str | Path] = ["check", root, "--output-format", "json", "--cache-dir", cache]
    fresh = run_cli(*check)
    database = cache / FILE_NAME
    if damage == "garbage":
        database.write_bytes(b"\x00not a database" * 100)
    else:
        with sqlite3.connect(database) as connection:
            if damage == "rows of another shape":
                connection.execute("""UPDATE results SET value = '{"journal": [], "diagnostics": 1}'""")
            else:
                connection.execute("UPDATE results SET value = substr(value, 1, length(value) / 2)")
        connection.close()
    damaged = run_cli(*check)
    assert (damaged.code, damaged.out) == (fresh.code, fresh.out)
    assert "CC043" in fresh.out


def test_a_stored_run_is_reused_only_for_the_same_question(make_repo: MakeRepo, tmp_path: Path) -> None:
    """Options that change findings are part of the key; those that only change reporting are not."""
    root = make_repo({WORKFLOW: CLEAN.replace("    timeout-minutes: 10\n", "").replace("echo build", "echo $x")})
    check: list[str | Path] = ["check", root, "--backends", "shellcheck", "--cache-dir", tmp_path / "cache"]
    everything = run_cli(*check, "--select", "SC,CC")
    assert "SC2086" in everything.out and "CC043" in everything.out
    only_ours = run_cli(*check, "--select", "CC", "--backend-timeout", "0.001")
    assert "SC2086" not in only_ours.out and "CC043" in only_ours.out
    warned = run_cli(*check, "--select", "SC,CC", "--fail-on", "error", "--backend-timeout", "0.001")
    assert (warned.code, warned.out) == (0, everything.out)


def test_repositories_checked_side_by_side_fail_as_they_do_one_after_another(tmp_path: Path) -> None:
    good = tmp_path / "good"
    bad = tmp_path / "bad"
    for root in (good, bad):
        _write(root, WORKFLOW, CLEAN)
        (root / ".git").mkdir()
    _write(bad, ".github/ci-checks.yml", "rules: [{id: x, kind: nonsense}]\n")
    serial = run_cli("check", good, bad, "--jobs", "1")
    parallel = run_cli("check", good, bad, "--jobs", "2")
    assert serial.code == 2 and ".github/ci-checks.yml:1:" in serial.err
    assert (parallel.code, parallel.out, parallel.err) == (serial.code, serial.out, serial.err)


@pytest.mark.parametrize("jobs", ["0", "-1", "two", ""])
def test_jobs_must_be_a_positive_whole_number(jobs: str, make_repo: MakeRepo) -> None:
    root = make_repo({WORKFLOW: CLEAN})
    result = run_cli("check", root, "--jobs", jobs)
    assert result.code == 2 and "--jobs" in result.err


@pytest.mark.parametrize(("stop", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_stopped_parallel_run_ends_its_workers_their_linters_and_copies(
    make_repo: MakeRepo, tmp_path: Path, stop: signal.Signals, code: int
) -> None:
    first = make_repo({WORKFLOW: CLEAN})
    second = first.with_name("second")
    shutil.copytree(first, second)
    with HeldLinter(tmp_path / "held") as held:
        process = _stoppable(held, first, second, "--jobs", "2")
        linters, workers = held.started(process, workers=2)
        assert process.pid not in workers, "each repository is checked by a worker of its own"
        _stop(process, stop, code, _copies(*workers))
        assert held.ended({*workers, *linters})


def test_a_linters_version_answer_is_kept_while_its_binary_is_the_same(tmp_path: Path) -> None:
    asked = tmp_path / "asked"
    binary = tmp_path / "linter"
    binary.write_text(f"#!/bin/sh\necho x >> {asked}\necho 'linter 1.0'\n")
    binary.chmod(0o755)
    folder = tmp_path / "cache"

    def version() -> str | None:
        tools._VERSIONS.clear()  # a new run
        cache = ResultCache(folder)
        try:
            return tools.version(str(binary), ["--version"], tmp_path, cache)
        finally:
            cache.close()

    assert version() == version() == "linter 1.0\n"
    assert asked.read_text() == "x\n"  # asked once, then answered from the cache
    binary.write_text(binary.read_text().replace("1.0", "2.0.1"))  # another build: another size and time
    assert version() == "linter 2.0.1\n"
    assert asked.read_text() == "x\nx\n"
