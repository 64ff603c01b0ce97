"""Untrusted changes against the surfaces added since the first review: report files, baselines, `--new-since`,
several repositories at once, the pytest plugin and the linters' configurations and lock files.

Each attack is built for real, as a pull request would: real symbolic and
hard links, real git commits, baselines written by `baseline write` and then
edited, actionlint and zizmor failing for real, pytest run for real. The
victim of each is a file outside the checked repository that must stay as it
was.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from ci_checks.reporters import markdown
from tests.ci.linter.conftest import MakeRepo, Result, run_cli
from tests.ci.linter.hostile import ANNOTATION, commit_all, forged_lines
from tests.ci.linter.hostile import cli as hostile_cli
from tests.ci.linter.security.test_untrusted import CLEAN, WORKFLOW
from tests.ci.linter.security.test_untrusted import INJECTION as PULL_REQUEST_INJECTION

INJECTION = PULL_REQUEST_INJECTION.replace("on: pull_request", "on: pull_request_target")
PRECIOUS = "precious: written by its owner\n"
FORMATS = ("json", "sarif", "github", "junit", "markdown", "text")
ZIZMOR_ALL = ("--backends", "zizmor", "--profile", "all")
"""zizmor with every finding: its hardening audits (excessive-permissions, dangerous-triggers) are not in the default
profile."""
# zizmor's hardening audits (dangerous triggers, excessive permissions) are in the security profile.
HARDENING = "profile: security\n"


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    target = tmp_path / "outside" / "victim"
    target.parent.mkdir()
    target.write_text(PRECIOUS)
    return target


def _untouched(victim: Path) -> None:
    assert victim.read_text() == PRECIOUS
    assert sorted(path.name for path in victim.parent.iterdir()) == ["victim"]


# --- 1. report files never written through links of the checkout --------------------------------------------


def _link(root: Path, name: str, target: Path) -> Path:
    """The link `name` under `root`, made to point at `target`."""
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    (root / name).symlink_to(target)
    return root / name


ATTACKS: dict[str, Callable[[Path, Path], object]] = {
    "linked file": lambda root, victim: _link(root, "ci-checks.sarif", victim),
    "dangling link": lambda root, victim: _link(root, "ci-checks.sarif", victim.parent / "planted"),
    "relative link": lambda root, victim: _link(root, "ci-checks.sarif", Path("..") / "outside" / "victim"),
    "linked folder": lambda root, victim: _link(root, "reports", victim.parent),
    "linked folder above": lambda root, victim: _link(root, "a/b", victim.parent),
    "link in a linked chain": lambda root, victim: (
        _link(root, "first", root / "second"),
        _link(root, "second", victim),
    ),
}
WRITTEN_AT = {
    "linked file": "ci-checks.sarif",
    "dangling link": "ci-checks.sarif",
    "relative link": "ci-checks.sarif",
    "linked folder": "reports/victim",
    "linked folder above": "a/b/victim",
    "link in a linked chain": "first",
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
@pytest.mark.parametrize("option", ["--output", "summary", "baseline write"])
def test_no_report_is_written_through_a_link_in_the_checkout(
    make_repo: MakeRepo, victim: Path, monkeypatch: pytest.MonkeyPatch, attack: str, option: str
) -> None:
    root = make_repo({WORKFLOW: CLEAN})
    ATTACKS[attack](root, victim)
    monkeypatch.chdir(root)  # where the Action runs: the checkout
    where = WRITTEN_AT[attack]
    if option == "--output":
        result = run_cli("check", "--output", f"sarif={where}")
    elif option == "summary":
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(root / where))
        result = run_cli("check")
    else:
        result = run_cli("baseline", "write", where)
    assert result.code == 2, result
    assert "is a symbolic link inside" in result.err and "follows no link there" in result.err, result.err
    _untouched(victim)


def test_a_hard_link_in_the_checkout_is_replaced_not_written_through(
    make_repo: MakeRepo, victim: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo({WORKFLOW: CLEAN})
    os.link(victim, root / "ci-checks.sarif")
    monkeypatch.chdir(root)
    assert run_cli("check", "--output", "sarif=ci-checks.sarif").code == 0
    _untouched(victim)
    assert json.loads((root / "ci-checks.sarif").read_text())["version"] == "2.1.0"
    assert (root / "ci-checks.sarif").stat().st_nlink == 1


@pytest.mark.parametrize("make", [os.mkfifo, Path.mkdir], ids=["fifo", "folder"])
def test_a_special_file_at_a_report_path_is_an_error_not_a_hang(
    make_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch, make: Callable[[Path], object]
) -> None:
    root = make_repo({WORKFLOW: CLEAN})
    make(root / "ci-checks.sarif")
    monkeypatch.chdir(root)
    result = run_cli("check", "--output", "sarif=ci-checks.sarif")
    assert result.code == 2
    assert "ci-checks reads and writes only regular files there" in result.err


def test_a_report_outside_the_checkout_follows_the_callers_own_links(
    make_repo: MakeRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo({WORKFLOW: CLEAN})
    (tmp_path / "reports").mkdir()
    (tmp_path / "linked-reports").symlink_to(tmp_path / "reports")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "linked-reports" / "summary.md"))
    (tmp_path / "reports" / "summary.md").write_text("earlier step\n")
    result = run_cli("check", root, "--output", f"sarif={tmp_path / 'linked-reports' / 'x.sarif'}")
    assert result.code == 0, result
    assert json.loads((tmp_path / "reports" / "x.sarif").read_text())["version"] == "2.1.0"
    assert (tmp_path / "reports" / "summary.md").read_text().startswith("earlier step\n## ci-checks\n")


def test_a_report_path_in_a_linked_folder_is_refused_before_anything_is_checked(
    make_repo: MakeRepo, victim: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo({WORKFLOW: INJECTION})
    _link(root, "out", victim.parent)
    monkeypatch.chdir(root)
    result = run_cli("check", "--output", "json=out/report.json")
    assert (result.code, result.out) == (2, "")
    _untouched(victim)


# --- 2. a pull request cannot accept its own findings ----------------------------------------------------------


@pytest.fixture
def adopted(tmp_path: Path) -> Path:
    """A base commit with one accepted finding in its baseline; a pull request then adds a `pull_request_target`
    workflow with template injection and baseline entries that accept all of its findings."""
    root = tmp_path / "repository"
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / WORKFLOW).write_text(CLEAN.replace("permissions: {}\n", ""))
    (root / ".github" / "ci-checks.yml").write_text(HARDENING)
    commit_all(root, "init")
    assert (
        run_cli(
            "baseline", "write", root / ".github/baseline.json", root, "--backends", "zizmor", "--profile", "all"
        ).code
        == 0
    )
    commit_all(root, "base: adopt ci-checks")
    (root / ".github/workflows/evil.yml").write_text(INJECTION)
    assert (
        run_cli(
            "baseline", "write", root / ".github/baseline.json", root, "--backends", "zizmor", "--profile", "all"
        ).code
        == 0
    )
    commit_all(root, "pull request")
    return root


def _codes(result: Result) -> list[str]:
    return [header.split(": ", 1)[1].split(" ")[0] for header in result.headers]


def test_under_config_ref_the_baseline_comes_from_the_ref(adopted: Path) -> None:
    worktree = run_cli(
        "check",
        adopted,
        *ZIZMOR_ALL,
        "--baseline",
        adopted / ".github/baseline.json",
    )
    assert worktree.code == 0  # without --config-ref the change's own baseline is used, as README says
    base = run_cli(
        "check",
        adopted,
        *ZIZMOR_ALL,
        "--config-ref",
        "HEAD^1",
        "--baseline",
        adopted / ".github/baseline.json",
    )
    assert base.code == 1, base
    assert {"ZZ-dangerous-triggers", "ZZ-template-injection"} <= set(_codes(base))
    assert all(".github/workflows/evil.yml" in header for header in base.headers)
    assert "accepted 1 finding" in base.err


def test_under_config_ref_a_baseline_the_ref_lacks_is_an_error(adopted: Path) -> None:
    (adopted / ".github/other.json").write_text((adopted / ".github/baseline.json").read_text())
    commit_all(adopted, "another baseline")
    result = run_cli("check", adopted, "--config-ref", "HEAD^1", "--baseline", adopted / ".github/other.json")
    assert result.code == 2
    assert "not in HEAD^1; with --config-ref the baseline is read from that commit" in result.err


def test_under_config_ref_a_baseline_outside_the_checkout_is_read_from_disk(adopted: Path, tmp_path: Path) -> None:
    outside = tmp_path / "trusted-baseline.json"
    outside.write_text((adopted / ".github/baseline.json").read_text())
    result = run_cli(
        "check",
        adopted,
        *ZIZMOR_ALL,
        "--config-ref",
        "HEAD^1",
        "--baseline",
        outside,
    )
    assert result.code == 0, result


@pytest.mark.parametrize("linked", ["file", "folder"])
def test_a_baseline_through_a_link_in_the_checkout_is_never_read(adopted: Path, tmp_path: Path, linked: str) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "baseline.json").write_text((adopted / ".github/baseline.json").read_text())
    if linked == "file":
        (adopted / "b.json").symlink_to(outside / "baseline.json")
        path = adopted / "b.json"
    else:
        (adopted / "b").symlink_to(outside)
        path = adopted / "b" / "baseline.json"
    for ref in ([], ["--config-ref", "HEAD^1"]):
        result = run_cli("check", adopted, "--baseline", path, *ref)
        assert result.code == 2 and "is a symbolic link inside" in result.err, result


# --- 3. nothing a checked file or a baseline holds becomes a workflow command -----------------------------------

PAYLOADS = [
    "\n::error file=ci.yml,line=1::forged",
    "\r::stop-commands::pwned",
    "\r\n  ::warning::forged",
    "\u2028::notice::forged",
    "\x85::error::forged",
    " \u3000::add-mask::forged",
    "%0A::error::forged",
    "##[add-mask]forged",
    "##[error]forged",
    "\x1b[2K::error::forged",
    "\u200b:\u2060:error::forged",
    "#\ufe0f#[add-mask]forged",
]


def _outputs(root: Path, *options: str | Path) -> dict[str, str]:
    """Every format of one run, standard output (text, the default) and standard error."""
    reports = {name: root.parent / f"report.{name}" for name in FORMATS}
    result = run_cli("check", root, *(f"--output={name}={path}" for name, path in reports.items()), *options)
    assert result.code in (0, 1), result
    return {
        **{name: path.read_text(encoding="utf-8") for name, path in reports.items()},
        "stdout": result.out,
        "stderr": result.err,
    }


def _no_forged_lines(outputs: dict[str, str]) -> None:
    for name, text in outputs.items():
        assert forged_lines(text, ANNOTATION if name == "github" else None) == [], name


@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_stale_baseline_entry_forges_no_command(make_repo: MakeRepo, tmp_path: Path, payload: str) -> None:
    root = make_repo({WORKFLOW: CLEAN})
    baseline = tmp_path / "baseline.json"
    entry = {
        "path": WORKFLOW + payload,
        "code": "CC" + payload,
        "rule": payload,
        "fingerprint": "x",
        "message": payload,
    }
    baseline.write_text(json.dumps({"version": 1, "findings": [entry, {**entry, "path": WORKFLOW}]}))
    outputs = _outputs(root, "--baseline", baseline)
    assert "2 of its entries match nothing any more" in outputs["stderr"]
    _no_forged_lines(outputs)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_value_in_a_workflow_forges_no_command_in_any_format(make_repo: MakeRepo, payload: str) -> None:
    quoted = json.dumps(f"actions/checkout{payload}")  # a double-quoted YAML scalar: its escapes become the bytes
    workflow = CLEAN.replace(
        "      - run: echo build\n", f"      - uses: {quoted}\n      - run: echo '{payload.strip()}'\n"
    )
    root = make_repo({WORKFLOW: workflow})
    outputs = _outputs(root, "--backends", "actionlint")
    # The invalid `uses:` value is quoted in a message (CC030), or the file is not YAML (raw control characters).
    assert "CC030" in outputs["stdout"] or "CC010" in outputs["stdout"], outputs["stdout"]
    _no_forged_lines(outputs)


@pytest.mark.parametrize(
    "name", ["::error::forged.yml", " ::warning::forged.yml", "a\n::error::b.yml", "##[add-mask]x.yml"]
)
def test_a_file_name_forges_no_command(make_repo: MakeRepo, name: str) -> None:
    root = make_repo({f".github/workflows/{name}": "on: push\njobs: {}\n", WORKFLOW: CLEAN})
    outputs = _outputs(root)
    outputs["list"] = run_cli("check", root, "--list-files").out
    (root / "docs" / name).mkdir(parents=True)
    nothing = run_cli("check", root / "docs" / name)
    assert "nothing to check" in nothing.err
    outputs["nothing to check"] = nothing.err
    _no_forged_lines(outputs)


def test_a_source_line_quoted_under_a_finding_forges_no_command(make_repo: MakeRepo) -> None:
    workflow = CLEAN.replace("echo build", 'echo "::set-output name=x::1" "##[set-output name=y;]2"')
    outputs = _outputs(make_repo({WORKFLOW: workflow}))
    assert "CC031" in outputs["stdout"]
    _no_forged_lines(outputs)


def test_a_diff_that_quotes_a_command_is_printed_between_stop_commands(make_repo: MakeRepo) -> None:
    # The fixed line is followed by lines the diff quotes as context: a command anywhere, and one at a line's start.
    script = '          echo "::set-output name=x::1"\n          echo "##[add-mask]forged"\n          ::error::forged\n'
    root = make_repo({WORKFLOW: CLEAN.replace("      - run: echo build\n", f"      - run: |\n{script}")})
    result = run_cli("check", root, "--diff")
    assert result.code == 1
    lines = result.out.splitlines()
    token = lines[0].removeprefix("::stop-commands::")
    assert len(token) == 32 and lines[-1] == f"::{token}::"
    diff = "\n".join(lines[1:-1]) + "\n"
    assert '+          echo "x=1" >> "$GITHUB_OUTPUT"' in diff and "           ::error::forged" in diff
    assert token not in diff
    # Without a command in it, a diff is printed as it is.
    (root / WORKFLOW).write_text(CLEAN.replace("      - run: echo build\n", f"      - run: |\n{script[:40]}\n"))
    assert run_cli("check", root, "--diff").out.startswith("--- a/.github/workflows/ci.yml\n")


# --- 7. several repositories: each finding stays with its repository -------------------------------------------

FINDINGS = """\
on: push
jobs:
  build:
    runs-on: [self-hosted, gpu]
    steps:
      - uses: actions/checkout
      - run: echo "::set-output name=x::1"
"""


def _repositories(tmp_path: Path, names: str) -> list[Path]:
    roots = []
    for name in names:
        root = tmp_path / name
        (root / ".git").mkdir(parents=True)
        (root / ".github" / "workflows").mkdir(parents=True)
        (root / WORKFLOW).write_text(FINDINGS)
        roots.append(root)
    return roots


@pytest.mark.parametrize("jobs", ["1", "3"])
def test_findings_of_several_repositories_never_merge_and_say_which_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: str
) -> None:
    _repositories(tmp_path, "abc")
    monkeypatch.chdir(tmp_path)
    one = json.loads(run_cli("check", "a", "--output-format", "json").out)["diagnostics"]
    assert len(one) >= 3
    reports = {name: tmp_path / f"report.{name}" for name in FORMATS}
    outputs = [f"--output={name}={path}" for name, path in reports.items()]
    result = run_cli("check", "a", "b", "c", "--jobs", jobs, "--output-format", "json", *outputs)
    found = json.loads(result.out)["diagnostics"]
    assert len(found) == 3 * len(one)
    assert sorted({item["path"] for item in found}) == [f"{name}/{WORKFLOW}" for name in "abc"]
    sarif = json.loads(reports["sarif"].read_text())["runs"][0]["results"]
    uris = {result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for result in sarif}
    assert sorted(uris) == [f"{name}/{WORKFLOW}" for name in "abc"] and len(sarif) == len(found)
    for name in ("github", "junit", "markdown", "text"):
        written = reports[name].read_text()
        shown = markdown.escape if name == "markdown" else str
        assert all(shown(f"{repository}/{WORKFLOW}") in written for repository in "abc"), name
    text = reports["text"].read_text()
    assert text.count("7 |       - run: echo") == 3 * sum(1 for item in one if item["line"] == 7)
    assert run_cli("check", "a", "c", "--list-files").out == f"a/{WORKFLOW}\nc/{WORKFLOW}\n"


def test_a_repository_with_a_bad_configuration_is_reported_and_the_others_are_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _repositories(tmp_path, "abc")
    (tmp_path / "b" / ".github" / "ci-checks.yml").write_text("rules: [\n")
    (tmp_path / "c" / ".github" / "ci-checks.yml").write_text("version: 1\nselect: [CC999]\n")
    monkeypatch.chdir(tmp_path)
    for jobs in ("1", "3"):
        result = run_cli("check", "a", "b", "c", "--jobs", jobs)
        assert result.code == 2
        assert result.err.startswith("b/.github/ci-checks.yml:1:9: error: ")
        assert "\nc/.github/ci-checks.yml:2:10: error: unknown rule 'CC999'" in result.err
        assert {header.split(":")[0] for header in result.headers} == {f"a/{WORKFLOW}"}
    # A repository whose configuration cannot be read from the ref is said the same way.
    result = run_cli("check", "a", "b", "--config-ref", "HEAD")
    assert result.code == 2 and result.headers == []
    assert result.err.splitlines() == [
        f"ci-checks: error: {name}: --config-ref 'HEAD' names no commit of the repository at {tmp_path / name}"
        for name in "ab"
    ]


# --- 10. the job summary stays within what GitHub takes ----------------------------------------------------------

SUMMARY_LIMIT = 1 << 20


def _many_long_findings(make_repo: MakeRepo) -> Path:
    steps = "".join(f"      - uses: {'x' * 900}-{index}/action\n" for index in range(1500))
    return make_repo({WORKFLOW: CLEAN.replace("      - run: echo build\n", steps)})


@pytest.mark.parametrize("earlier", [0, 900_000, SUMMARY_LIMIT])
def test_the_job_summary_is_cut_by_bytes_at_githubs_limit(
    make_repo: MakeRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, earlier: int
) -> None:
    root = _many_long_findings(make_repo)
    summary = tmp_path / "summary.md"
    summary.write_bytes(b"e" * earlier)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = run_cli("check", root, "--output-format", "json")
    total = len(json.loads(result.out)["diagnostics"])
    assert total >= 1500
    written = summary.read_bytes()
    assert len(written) <= SUMMARY_LIMIT and written.startswith(b"e" * earlier)
    added = written[earlier:].decode("utf-8")
    if earlier == SUMMARY_LIMIT:
        assert added == "" and "nothing added" in result.err
        return
    rows = [line for line in added.splitlines() if line.startswith("| ") and "CC030" in line]
    assert added.endswith(f"{total - len(rows)} more not shown; see the job log or the SARIF file.\n")
    assert len(rows) > (0 if earlier else 900)
    assert all(len(row) < 1400 for row in rows)  # a message is cut in its row


# --- 4. one file cannot silence zizmor unseen ---------------------------------------------------------------------

LOCK = ".github/workflows/actions.lock"


@pytest.mark.parametrize("garbage", ["lock: 1\n", "[[[\n", "\ufeffversion: v9\n"])
def test_a_lock_file_zizmor_rejects_is_an_error_at_it_that_no_filter_drops(tmp_path: Path, garbage: str) -> None:
    root = tmp_path / "repository"
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / WORKFLOW).write_text(INJECTION)
    commit_all(root, "base")
    (root / LOCK).write_text(garbage)
    commit_all(root, "a pull request that adds a garbage lock file")
    check: list[str | Path] = ["check", root, "--backends", "zizmor", "--profile", "all", "--output-format", "json"]

    def failures(*options: str | Path) -> tuple[int, list[tuple[str, str, str]]]:
        result = run_cli(*check, *options)
        found = json.loads(result.out)["diagnostics"]
        if "--fail-on" in options:  # zizmor ran without the lock file (the filters drop the rest)
            assert {item["code"] for item in found} >= {"ZZ-template-injection"}, found
        return result.code, [(d["path"], d["severity"], d["message"][:31]) for d in found if d["code"] == "CC091"]

    expected = [(LOCK, "error", "zizmor rejected this lock file ")]
    assert failures("--fail-on", "error") == (1, expected)
    assert failures("--new-since", "HEAD^1") == (1, expected)
    assert run_cli("baseline", "write", tmp_path / "baseline.json", *check[1:4]).code == 0
    assert failures("--baseline", tmp_path / "baseline.json") == (1, expected)
    recorded = json.loads((tmp_path / "baseline.json").read_text())["findings"]
    assert "CC091" not in {entry["code"] for entry in recorded}


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda path, outside: path.symlink_to(outside), "symbolic link points outside the repository"),
        (lambda path, outside: os.mkfifo(path), "a FIFO, not a regular file"),
        (lambda path, outside: path.mkdir(), "a folder, not a regular file"),
        (lambda path, outside: path.write_bytes(b"\x00\x01"), "binary file (contains a NUL byte)"),
    ],
    ids=["link", "fifo", "folder", "binary"],
)
def test_a_lock_file_that_is_not_a_regular_file_is_reported_like_other_special_files(
    make_repo: MakeRepo, victim: Path, make: Callable[[Path, Path], object], message: str
) -> None:
    root = make_repo({WORKFLOW: INJECTION})
    make(root / LOCK, victim)
    result = run_cli("check", root, "--backends", "zizmor", "--profile", "all")
    assert result.code == 1
    assert result.headers[0].startswith(f"{LOCK}:1:1: CC004 {message}") and "zizmor ran without it" in result.headers[0]
    assert any("ZZ-template-injection" in header for header in result.headers)


def test_an_inline_ignore_does_not_hide_a_linter_failure(make_repo: MakeRepo) -> None:
    # zizmor cannot load a workflow with `uses: actions/checkout` without a ref, and stops at it.
    broken = "# ci-checks: ignore[CC091] the change says so\n" + INJECTION.replace(
        "      - run:", "      - uses: actions/checkout\n      - run:"
    )
    root = make_repo({WORKFLOW: broken})
    result = run_cli("check", root, "--backends", "zizmor", "--profile", "all", "--fail-on", "error")
    assert result.code == 1
    assert result.headers[0].startswith(f"{WORKFLOW}:1:1: CC091 zizmor failed on this file")


# --- 5 and 6. --new-since: bounded, and judged by the findings of the base as well as by the lines changed -------

WITH_ACTION = """\
on: pull_request
permissions: {}
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2
        with:
          persist-credentials: false
      - uses: ./.github/actions/setup
        with:
          version: "1.0"
"""
SETUP = """\
name: setup
description: set up
inputs:
  version: {description: the version}
runs:
  using: composite
  steps:
    - run: echo "$VERSION"
      shell: bash
      env:
        VERSION: ${{ inputs.version }}
"""


@pytest.fixture
def based(tmp_path: Path) -> Path:
    root = tmp_path / "repository"
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / ".github" / "actions" / "setup").mkdir(parents=True)
    (root / WORKFLOW).write_text(WITH_ACTION)
    (root / ".github/actions/setup/action.yml").write_text(SETUP)
    (root / ".github" / "ci-checks.yml").write_text(HARDENING)
    commit_all(root, "base")
    return root


def _new(root: Path, *options: str) -> Result:
    return run_cli("check", root, "--new-since", "HEAD^1", "--output-format", "text", *options)


def test_removing_permissions_makes_new_findings_on_lines_the_change_did_not_touch(based: Path) -> None:
    (based / WORKFLOW).write_text(WITH_ACTION.replace("permissions: {}\n", ""))
    commit_all(based, "drop the permissions")
    result = _new(based, "--backends", "zizmor", "--profile", "all")
    assert result.code == 1
    assert any(f"{WORKFLOW}:3:3: ZZ-excessive-permissions" in header for header in result.headers), result.out


def test_changing_a_local_action_makes_new_findings_in_the_unchanged_workflow(based: Path) -> None:
    (based / ".github/actions/setup/action.yml").write_text(
        SETUP.replace("version: {description: the version}", "release: {description: the release}")
    )
    commit_all(based, "the action loses its input")
    result = _new(based, "--backends", "actionlint")
    assert result.code == 1, result.out
    assert [header.split(": ")[0] + ": " + header.split(" ")[1] for header in result.headers] == [
        f"{WORKFLOW}:12:11: AL-action"
    ]


def test_findings_the_base_has_as_well_are_not_new(based: Path) -> None:
    workflow = WITH_ACTION.replace("permissions: {}\n", "")
    (based / WORKFLOW).write_text(workflow)
    commit_all(based, "the base has a finding")
    (based / WORKFLOW).write_text("# a comment moves every line down\n" + workflow)
    commit_all(based, "a change that only moves it")
    assert _new(based, "--backends", "zizmor", "--profile", "all").headers == []
    assert run_cli("check", based, "--backends", "zizmor", "--profile", "all").code == 1


def test_when_the_base_cannot_be_checked_every_finding_is_reported(
    based: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ci_checks.engine import changes

    (based / WORKFLOW).write_text(WITH_ACTION.replace("permissions: {}\n", "") + "# touched\n")
    commit_all(based, "a change")
    monkeypatch.setattr(changes, "MAX_FILES", 1)
    result = _new(based, "--backends", "zizmor", "--profile", "all")
    assert result.headers == run_cli("check", based, "--backends", "zizmor", "--profile", "all").headers != []
    assert "every finding is reported" in result.err


def test_the_base_is_read_without_running_the_repositorys_git_configuration(based: Path) -> None:
    (based / WORKFLOW).write_text(WITH_ACTION.replace("permissions: {}\n", ""))
    commit_all(based, "a change")
    marker = based.parent / "git-ran-repository-code"
    hook = based / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    with (based / ".git" / "config").open("a") as config:
        config.write(f"[core]\n\tfsmonitor = {hook}\n[diff]\n\texternal = {hook}\n")
    assert _new(based, "--backends", "zizmor", "--profile", "all").code == 1
    assert not marker.exists()


def test_a_pathological_diff_is_bounded_and_still_reports_the_change(make_repo: MakeRepo, tmp_path: Path) -> None:
    # difflib took 139 s for this pair of files; the diff now stops at its bound and counts the rest as changed.
    root = tmp_path / "repository"
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / WORKFLOW).write_text("# x\n" * 2000 + CLEAN)
    commit_all(root, "base")
    (root / WORKFLOW).write_text("# x\n# y\n" * 1000 + CLEAN.replace("echo build", "echo ::set-output name=a::1"))
    commit_all(root, "a change")
    result = hostile_cli("check", root, "--new-since", "HEAD^1", timeout=60)
    assert result.returncode == 1 and ":2007:" in result.stdout and "CC031" in result.stdout


# --- 8. the pytest plugin imports only installed packages ---------------------------------------------------------

PLANTED = """\
import importlib.machinery, importlib.util, os, pathlib, sys

_here = os.path.realpath(os.path.dirname(__file__))
_frame, _by = sys._getframe(1), "another"
while _frame is not None:
    _name = _frame.f_globals.get("__name__") or ""
    if _name == "ci_checks" or _name.startswith("ci_checks."):
        _by = "ci-checks"
        break
    _frame = _frame.f_back
pathlib.Path(_here, f"ran-by-{_by}-{__name__}").write_text("")
# Then the real module, so that whatever else imports this name keeps working.
_path = [entry for entry in sys.path if not os.path.exists(os.path.join(entry or ".", "planted-here"))]
_spec = importlib.machinery.PathFinder.find_spec(__name__, _path)
if _spec is not None:
    _module = importlib.util.module_from_spec(_spec)
    sys.modules[__name__] = _module
    _spec.loader.exec_module(_module)
"""
NOT_PLANTED = {"sitecustomize", "usercustomize", "antigravity", "this", "__main__", "__future__", "__hello__"}


def _names_to_plant() -> list[str]:
    """Every module name of the standard library and of the installed packages that Python finds on the path,
    less those Python imports as it starts (before any test runner could change the path)."""
    import importlib.metadata
    import subprocess
    import sys

    started = subprocess.run(
        [sys.executable, "-c", "import sys; print(' '.join(sys.modules))"], capture_output=True, text=True, check=True
    ).stdout.split()
    installed = set(importlib.metadata.packages_distributions())
    names = {name for name in {*sys.stdlib_module_names, *installed} if name.isidentifier()}
    return sorted(names - NOT_PLANTED - set(started) - set(sys.builtin_module_names))


def test_the_plugin_imports_only_installed_packages_whatever_pytest_puts_on_the_path(pytester: pytest.Pytester) -> None:
    (pytester.path / ".github" / "workflows").mkdir(parents=True)
    (pytester.path / WORKFLOW).write_text(CLEAN)
    policy = "version: 1\nrules:\n  - id: no-curl\n    kind: forbid\n    where: {files: 'scripts/*.sh'}\n    forbid:\n"
    (pytester.path / ".github" / "ci-checks.yml").write_text(policy + "      - command: curl\n")
    (pytester.path / "scripts").mkdir()
    (pytester.path / "scripts" / "build.sh").write_text("#!/bin/sh\nset -eu\nmake -j 4 | tee build.log\n")
    pytester.makepyprojecttoml('[tool.pytest.ini_options]\npythonpath = ["lib"]\nci_checks = true\n')
    tests = pytester.path / "tests"
    tests.mkdir()
    (tests / "conftest.py").write_text("")  # pytest puts the folder of a conftest.py first on sys.path
    (tests / "test_ci.py").write_text(
        "def test_structure(ci_repo, workflow):\n"
        "    assert workflow('ci.yml').jobs\n"
        "    assert ci_repo.check().diagnostics == []\n"
    )
    # The folders of `pythonpath` and of a conftest.py; the current folder, which `python -m` puts on the path
    # before Python starts anything, has a test of its own (test_untrusted).
    folders = [pytester.path / "lib", tests]
    (pytester.path / "lib").mkdir()
    names = _names_to_plant()
    assert {"yaml", "jsonschema", "tomllib", "difflib", "sqlite3", "tree_sitter"} <= set(names)
    for folder in folders:
        (folder / "planted-here").write_text("")
        for name in names:
            (folder / f"{name}.py").write_text(PLANTED)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(passed=2)
    ran = sorted(path.name for folder in folders for path in folder.glob("ran-by-ci-checks-*"))
    assert ran == []
    assert any(folder.glob("ran-by-another-*") for folder in folders)  # the planted modules were on the path


# --- 9. under --config-ref, the linters' configurations are the ref's, and a change to one is reported ------------

SWITCH_OFF = {
    "zizmor": "rules:\n  template-injection:\n    disable: true\n",
    "actionlint": "paths:\n  .github/workflows/**/*.yml:\n    ignore: ['.*']\n",
}
LINTER_FINDING = {"zizmor": "ZZ-template-injection", "actionlint": "AL-expression"}


def _pull_request(tmp_path: Path, base: dict[str, str], change: dict[str, str]) -> Path:
    root = tmp_path / "repository"
    for name, content in {WORKFLOW: PULL_REQUEST_INJECTION, **base}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content)
    commit_all(root, "base")
    for name, content in change.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content)
    commit_all(root, "pull request")
    return root


@pytest.mark.parametrize(
    ("linter", "name", "in_base"),
    [
        ("zizmor", ".github/zizmor.yml", False),
        ("zizmor", ".github/zizmor.yaml", False),
        ("zizmor", "zizmor.yml", False),
        ("zizmor", "zizmor.yaml", False),
        ("actionlint", ".github/actionlint.yaml", False),
        ("actionlint", ".github/actionlint.yml", False),
        ("zizmor", ".github/zizmor.yml", True),
        ("zizmor", "zizmor.yaml", True),
        ("actionlint", ".github/actionlint.yaml", True),
    ],
    ids=lambda value: {False: "added", True: "changed"}.get(value, value) if isinstance(value, bool) else value,
)
def test_a_linter_configuration_the_change_switches_off_is_not_used_and_is_reported(
    tmp_path: Path, linter: str, name: str, in_base: bool
) -> None:
    base = {name: "rules: {}\n" if linter == "zizmor" else "{}\n"} if in_base else {}
    root = _pull_request(tmp_path, base, {name: SWITCH_OFF[linter]})
    own = run_cli("check", root, "--backends", linter)
    assert own.code == 0 and f"{name}:" in own.out and "CC092" in own.out  # the change's own: only an info note
    result = run_cli("check", root, "--backends", linter, "--config-ref", "HEAD^1")
    assert result.code == 1, result.out
    assert any(LINTER_FINDING[linter] in header for header in result.headers)
    how = "differs from the one in" if in_base else "is not in"
    assert f"{name}:1:1: CC092 this {linter} configuration {how} HEAD^1, whose configuration this run uses" in (
        result.out
    )


def test_an_inline_zizmor_ignore_the_change_adds_is_not_used_under_config_ref(tmp_path: Path) -> None:
    line = '      - run: echo "${{ github.event.pull_request.title }}"'
    ignored = line + "  # zizmor: ignore[template-injection]"
    root = _pull_request(tmp_path, {}, {WORKFLOW: PULL_REQUEST_INJECTION.replace(line, ignored)})
    assert (
        run_cli("check", root, "--backends", "zizmor", "--profile", "all").code == 0
    )  # zizmor honours the change's own comment
    result = run_cli("check", root, "--backends", "zizmor", "--profile", "all", "--config-ref", "HEAD^1")
    assert result.code == 1
    assert result.headers == [
        f"{WORKFLOW}:7:24: ZZ-template-injection code injection via template expansion: may expand into "
        "attacker-controllable code [zizmor-template-injection]",
        f"{WORKFLOW}:7:61: CC092 this `zizmor: ignore` is not in HEAD^1 on the same key and text, whose "
        "configuration this run uses (--config-ref), so zizmor does not use it",
    ]
    # An ignore comment the base has already is the base's configuration: it still counts.
    (root / "README.md").write_text("a later change\n")
    commit_all(root, "another change")
    assert run_cli("check", root, "--backends", "zizmor", "--profile", "all", "--config-ref", "HEAD^1").code == 0


def test_the_plugin_prints_a_hostile_policy_without_forging_a_command(pytester: pytest.Pytester) -> None:
    (pytester.path / ".github" / "workflows").mkdir(parents=True)
    (pytester.path / WORKFLOW).write_text(CLEAN.replace("echo build", "echo '##[add-mask]forged'"))
    policy = (
        'version: 1\nrules:\n  - id: "##[add-mask]x\\n::error::forged"\n    kind: forbid\n'
        "    where: {files: .github/workflows/*.yml}\n    forbid:\n      - text: add-mask\n"
    )
    (pytester.path / ".github" / "ci-checks.yml").write_text(policy)
    refused = pytester.runpytest("--ci-checks", "-p", "no:cacheprovider")
    assert refused.ret == pytest.ExitCode.INTERRUPTED  # a collection error, positioned
    (pytester.path / ".github" / "ci-checks.yml").write_text(policy.replace("##[add-mask]x\\n::error::forged", "x"))
    failed = pytester.runpytest("--ci-checks", "-p", "no:cacheprovider")
    failed.assert_outcomes(failed=1)
    for result in (refused, failed):
        assert forged_lines(result.stdout.str() + "\n" + result.stderr.str()) == []


def test_from_ci_checks_code_a_module_only_the_repository_has_is_refused_and_a_missing_one_is_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ci_checks.core import installed_imports

    installed_imports.install()
    (tmp_path / "planted_only_here.py").write_text("raise SystemExit('ran')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    probe = "import importlib.util\nfound = importlib.util.find_spec(NAME)\n"
    as_ci_checks = {"__name__": "ci_checks.probe"}
    exec(probe.replace("NAME", "'no_module_by_this_name'"), as_ci_checks)
    assert as_ci_checks["found"] is None
    with pytest.raises(ModuleNotFoundError, match="among the installed packages"):
        exec(probe.replace("NAME", "'planted_only_here'"), {"__name__": "ci_checks.probe"})
    as_the_harness = {"__name__": "ci_checks_checkpoint.probe"}  # which imports the project's code on purpose
    exec(probe.replace("NAME", "'planted_only_here'"), as_the_harness)
    assert as_the_harness["found"] is not None


def test_a_base_the_configuration_cannot_be_read_for_reports_every_finding(based: Path) -> None:
    # The change adds a Python file that its policy reads values from: the base has no such file.
    policy = (
        "version: 1\nrules:\n  - id: versions\n    kind: require\n    where: {workflow: .github/workflows/ci.yml}\n"
        "    require:\n      - key: on\n        equals: {from: {python: tools/values.py, name: TRIGGER}}\n"
    )
    (based / ".github" / "ci-checks.yml").write_text(policy)
    (based / "tools").mkdir()
    (based / "tools" / "values.py").write_text("TRIGGER = 'push'\n")
    commit_all(based, "a policy that reads a new file")
    result = _new(based)
    assert result.code == 1
    # on: pull_request, on an untouched line, is kept: in the base the item could not be read (a CC106 there, the
    # file it reads being absent), so the base has no CC102 to match it; the base is compared all the same.
    assert [header.split(" ")[1] for header in result.headers] == ["CC102"]


def test_links_in_the_base_are_written_as_links_and_never_followed(based: Path, victim: Path) -> None:
    (based / ".github" / "workflows" / "linked.yml").symlink_to(victim)
    (based / "docs").symlink_to(victim.parent)
    commit_all(based, "links, in the base")
    (based / WORKFLOW).write_text(WITH_ACTION.replace("permissions: {}\n", ""))
    commit_all(based, "a change")
    result = _new(based, "--backends", "zizmor", "--profile", "all")
    assert result.code == 1
    # The link's CC004 is in the base too: not new. The finding the change caused is.
    assert [header.split(" ")[1] for header in result.headers] == ["ZZ-excessive-permissions"]
    _untouched(victim)


def test_init_writes_no_configuration_through_a_linked_folder(tmp_path: Path, victim: Path) -> None:
    root = tmp_path / "repository"
    (root / ".git").mkdir(parents=True)
    (root / ".github").symlink_to(victim.parent)
    result = run_cli("init", root)
    assert result.code == 2 and "is a symbolic link inside" in result.err
    _untouched(victim)


SELF_HOSTED = """on: push
permissions: {}
jobs:
  gpu:
    runs-on: [self-hosted, linux]
    steps:
      - run: echo hello
"""


def test_an_inline_ci_checks_ignore_the_change_adds_is_not_used_under_config_ref(tmp_path: Path) -> None:
    ignored = SELF_HOSTED.replace("  gpu:\n", "  gpu:  # ci-checks: ignore[CC043] the change says so\n")
    root = _pull_request(tmp_path, {}, {WORKFLOW: ignored})
    assert run_cli("check", root, "--backends", "none").headers == []  # the change's own comment, as written
    result = run_cli("check", root, "--backends", "none", "--config-ref", "HEAD^1")
    assert result.headers == [
        f"{WORKFLOW}:4:3: CC043 job 'gpu' runs on a self-hosted runner (`self-hosted, linux`) without "
        "`timeout-minutes`; a hung job holds the machine for GitHub's default of 360 minutes",
        f"{WORKFLOW}:4:9: CC092 this `ci-checks: ignore` is not in HEAD^1 on the same key and text, whose "
        "configuration this run uses (--config-ref), so it suppresses nothing",
    ]
    # A comment the base has already is the base's configuration: it still counts.
    (root / "README.md").write_text("a later change\n")
    commit_all(root, "another change")
    assert run_cli("check", root, "--backends", "none", "--config-ref", "HEAD^1").headers == []


def test_an_inline_ignore_the_change_adds_is_not_used_after_a_file_without_any(tmp_path: Path) -> None:
    """Each file's comments are judged, whatever the files before it hold (`a.yml` has none)."""
    ignored = SELF_HOSTED.replace("  gpu:\n", "  gpu:  # ci-checks: ignore[CC043] the change says so\n")
    root = _pull_request(tmp_path, {}, {".github/workflows/a.yml": CLEAN, WORKFLOW: ignored})
    result = run_cli("check", root, "--backends", "none", "--config-ref", "HEAD^1")
    assert [header.split(" ")[:2] for header in result.headers] == [
        [f"{WORKFLOW}:4:3:", "CC043"],
        [f"{WORKFLOW}:4:9:", "CC092"],
    ]
