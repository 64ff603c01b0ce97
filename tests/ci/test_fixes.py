"""`--fix`, `--unsafe-fixes` and `--diff`: edits at exact spans that keep every other byte, verified and atomic."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from ci_checks import source, yamlpos
from ci_checks.model import Step
from ci_checks.query import CIRepository
from tests.ci.conftest import run_cli

POLICY = """rules:
  - id: no-credentials
    kind: require
    where: {workflow: .github/workflows/*.yml, step: {uses: actions/checkout}}
    require:
      - with: {persist-credentials: false}
"""
CRLF = (
    "on: push\r\npermissions: {}\r\njobs:\r\n  t:\r\n    runs-on: ubuntu-latest\r\n    steps:\r\n"
    "      - uses: actions/checkout@v4\r\n        with:\r\n          fetch-depth: 0  # the whole history\r\n"
    "          # tags are needed too\r\n          fetch-tags: true\r\n"
    "      - uses: actions/checkout@v4\r\n        with: {path: b}\r\n"
    "      - uses: actions/checkout@v4\r\n        with: {persist-credentials: true}\r\n"
    '      - run: echo "::set-output name=v::1"'
)


def test_fix_keeps_crlf_comments_flow_mappings_and_a_missing_final_newline(make_repo) -> None:  # type: ignore[no-untyped-def]
    root = make_repo({".github/workflows/ci.yml": CRLF, ".github/ci-checks.yml": POLICY})
    workflow = root / ".github" / "workflows" / "ci.yml"
    workflow.chmod(0o640)
    diff = run_cli("check", root, "--diff")
    assert diff.code == 1
    assert workflow.read_bytes() == CRLF.encode()  # --diff writes nothing
    result = run_cli("check", root, "--fix")
    assert (result.code, result.err) == (0, "ci-checks: fixed 4 findings in 1 file\n")
    assert workflow.read_bytes() == (
        b"on: push\r\npermissions: {}\r\njobs:\r\n  t:\r\n    runs-on: ubuntu-latest\r\n    steps:\r\n"
        b"      - uses: actions/checkout@v4\r\n        with:\r\n          fetch-depth: 0  # the whole history\r\n"
        b"          # tags are needed too\r\n          fetch-tags: true\r\n          persist-credentials: false\r\n"
        b"      - uses: actions/checkout@v4\r\n        with: {path: b, persist-credentials: false}\r\n"
        b"      - uses: actions/checkout@v4\r\n        with: {persist-credentials: false}\r\n"
        b'      - run: echo "v=1" >> "$GITHUB_OUTPUT"'
    )
    assert stat.S_IMODE(workflow.stat().st_mode) == 0o640
    for line in diff.out.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            assert line[1:].rstrip("\r") in workflow.read_text().replace("\r\n", "\n").splitlines()
    assert run_cli("check", root, "--fix").err == "ci-checks: fixed 0 findings in 0 files\n"


def test_a_missing_mapping_is_added_at_the_step_s_indentation(make_repo) -> None:  # type: ignore[no-untyped-def]
    workflow = (
        "on: push\njobs:\n  t:\n    runs-on: a\n    steps:\n    - uses: actions/checkout@v4  # pinned below\n"
        "    - run: make\n"
    )
    root = make_repo({".github/workflows/ci.yml": workflow, ".github/ci-checks.yml": POLICY})
    assert run_cli("check", root, "--fix").code == 0
    assert (root / ".github" / "workflows" / "ci.yml").read_text() == workflow.replace(
        "  # pinned below\n", "  # pinned below\n      with:\n        persist-credentials: false\n"
    )


def test_fix_writes_only_regular_files_inside_the_repository(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    outside = tmp_path / "outside.yml"
    outside.write_bytes(CRLF.encode())
    root = make_repo({".github/ci-checks.yml": POLICY, ".github/workflows/real.yml": CRLF})
    (root / ".github" / "workflows" / "linked.yml").symlink_to(outside)
    run_cli("check", root, "--fix")
    assert outside.read_bytes() == CRLF.encode()


def test_unsafe_fixes_need_asking_and_zizmor_applies_its_own(make_repo) -> None:  # type: ignore[no-untyped-def]
    workflow = (
        "on: push\npermissions: {}\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2\n"
        "      - run: echo ${{ github.event.issue.title }}"
    )
    root = make_repo({".github/workflows/ci.yml": workflow})
    path = root / ".github" / "workflows" / "ci.yml"
    options = ("--backends", "zizmor", "--select", "ZZ")
    result = run_cli("check", root, *options)
    assert "  = fix: replace expression with environment variable (by zizmor); unsafe: --unsafe-fixes" in result.out
    assert run_cli("check", root, *options, "--fix").err == "ci-checks: fixed 0 findings in 0 files\n"
    assert run_cli("check", root, *options, "--fix", "--unsafe-fixes").code == 0
    fixed = path.read_text()
    assert fixed.endswith("GITHUB_EVENT_ISSUE_TITLE: ${{ github.event.issue.title }}")  # still no final newline
    assert "persist-credentials: false" in fixed


def _corpus() -> list[Path]:
    folder = os.environ.get("CI_CHECKS_CORPUS")
    return sorted(path for path in Path(folder).iterdir() if path.is_dir()) if folder else []


def _data(text: bytes, path: str) -> object:
    document = yamlpos.parse(source.decode(path, text))
    return yamlpos.to_plain(document.root) if document.root is not None else None


def _masked(data: object, places: set[tuple[str | int, ...]], at: tuple[str | int, ...] = ()) -> object:
    """The data with the steps (or jobs) a fix was about replaced by a marker."""
    if at in places:
        return "<fixed>"
    if isinstance(data, dict):
        return {key: _masked(value, places, (*at, key)) for key, value in data.items()}
    if isinstance(data, list):
        return [_masked(value, places, (*at, index)) for index, value in enumerate(data)]
    return data


def _step_at(steps: list[Step], line: int) -> Step | None:
    """The step a line belongs to: the last that starts at or before it (a step's span ends where the next begins)."""
    started = [step for step in steps if step.span.line <= line <= step.span.end_line]
    return started[-1] if started else None


def _fixed_places(root: Path, findings: list[dict[str, object]]) -> dict[str, set[tuple[str | int, ...]]]:
    repository = CIRepository(root)
    places: dict[str, set[tuple[str | int, ...]]] = {}
    for finding in findings:
        path, line = str(finding["path"]), int(str(finding["line"]))
        if path.endswith(("action.yml", "action.yaml")):
            step = _step_at(repository.action(path).steps, line)
            places.setdefault(path, set()).add(step.place if step is not None else ())
            continue
        try:
            workflow = repository.workflow(path)
        except (LookupError, ValueError):
            places.setdefault(path, set()).add(())
            continue
        for job in workflow.jobs.values():
            if job.key.span.line <= line <= job.node.span.end_line:
                step = _step_at(job.steps, line)
                places.setdefault(path, set()).add(step.place if step is not None else ("jobs", job.id))
    return places


@pytest.mark.parametrize("repository", _corpus(), ids=lambda path: path.name)
def test_fix_over_a_real_repository_changes_only_what_it_fixes(repository: Path, tmp_path: Path) -> None:
    root = tmp_path / "repo"
    shutil.copytree(repository, root)
    (root / ".git").mkdir()
    # zizmor is the linter that offers fixes; actionlint and shellcheck offer none.
    everything = ("--backends", "zizmor", "--select", "CC,ZZ")
    before = {p: p.read_bytes() for p in sorted((root / ".github").rglob("*.y*ml")) if p.is_file()}
    report = json.loads(run_cli("check", root, *everything, "--output-format", "json").out)
    # zizmor fixes every finding of an audit it has a fix for in a file: those are all fixed places.
    fixing = {(d["path"], d["code"]) for d in report["diagnostics"] if "fix" in d}
    fixable = [d for d in report["diagnostics"] if (d["path"], d["code"]) in fixing]
    places = _fixed_places(root, fixable)  # positions of the files as they were
    assert run_cli("check", root, *everything, "--fix", "--unsafe-fixes").code in (0, 1)
    for path, old in before.items():
        new = path.read_bytes()
        if new == old:
            continue
        relative = path.relative_to(root).as_posix()
        assert relative in places, relative
        assert _masked(_data(new, relative), places[relative]) == _masked(_data(old, relative), places[relative])
        assert new.endswith(b"\n") == old.endswith(b"\n") and (b"\r\n" in new) == (b"\r\n" in old)
    again = json.loads(run_cli("check", root, *everything, "--output-format", "json").out)
    assert [d for d in again["diagnostics"] if "fix" in d and d["fix"]["safe"]] == []
    after = {p: p.read_bytes() for p in before}
    assert run_cli("check", root, *everything, "--fix", "--unsafe-fixes").err.startswith("ci-checks: fixed")
    assert {p: p.read_bytes() for p in before} == after  # a second --fix changes nothing


def test_a_self_hosted_job_gets_github_s_own_limit_safely_or_the_team_s_unsafely(make_repo) -> None:  # type: ignore[no-untyped-def]
    workflow = (
        "on: push\npermissions: {}\njobs:\n  gpu:\n    # the MI300X pool\n    runs-on: [self-hosted, mi300x]\n"
        "    steps:\n      - run: echo ok\n"
    )
    root = make_repo({".github/workflows/ci.yml": workflow})
    path = root / ".github" / "workflows" / "ci.yml"
    assert run_cli("check", root, "--fix").err == "ci-checks: fixed 1 finding in 1 file\n"
    assert path.read_text() == workflow.replace("    runs-on:", "    timeout-minutes: 360\n    runs-on:")
    path.write_text(workflow)
    (root / ".github" / "ci-checks.yml").write_text("fixes: {timeout-minutes: 90}\n")
    assert run_cli("check", root, "--fix").err == "ci-checks: fixed 0 findings in 0 files\n"
    assert run_cli("check", root, "--fix", "--unsafe-fixes").code == 0
    assert "    timeout-minutes: 90\n" in path.read_text()
