"""Baselines: accept today's findings, report only new ones, survive lines moving, list what was fixed."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

from ci_checks.core.diagnostics import Diagnostic, Severity, Span
from ci_checks.core.source import SourceFile
from ci_checks.engine import baseline
from ci_checks.engine.baseline import Entry, compare, fingerprints
from ci_checks.query import CIRepository
from tests.ci.linter.conftest import MakeRepo, run_cli
from tests.ci.linter.hostile import commit_all
from tests.ci.linter.project.test_corpus import REPOSITORIES

WORKFLOW = """on: push
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - run: |
          echo "::set-output name=a::1"
          echo ok
      - run: echo "::set-output name=b::2"
"""


def test_a_baseline_accepts_todays_findings_and_reports_new_ones(make_repo: MakeRepo, tmp_path: Path) -> None:
    root = make_repo({".github/workflows/ci.yml": WORKFLOW})
    recorded = tmp_path / "baseline.json"
    result = run_cli("baseline", "write", recorded, root)
    assert (result.code, result.out) == (
        0,
        f"Wrote 2 findings to {recorded}; `check --baseline {recorded}` accepts them.\n",
    )
    result = run_cli("check", root, "--baseline", recorded)
    assert (result.code, result.headers) == (0, [])
    assert result.err == f"ci-checks: {recorded} accepted 2 findings\n"

    workflow = root / ".github" / "workflows" / "ci.yml"
    workflow.write_text("# a comment that moves every line down\n\n" + WORKFLOW)
    assert run_cli("check", root, "--baseline", recorded).headers == []

    workflow.write_text(
        WORKFLOW.replace("          echo ok\n", '          echo ok\n          echo "::set-output name=c::3"\n')
    )
    result = run_cli("check", root, "--baseline", recorded)
    assert result.code == 1
    assert [h.split(" `")[0] for h in result.headers] == [".github/workflows/ci.yml:9:11: CC031"]

    workflow.write_text(WORKFLOW.replace('      - run: echo "::set-output name=b::2"\n', ""))
    result = run_cli("check", root, "--baseline", recorded)
    assert result.code == 0
    assert result.err.splitlines() == [
        f"ci-checks: {recorded} accepted 1 finding; 1 of its entries match nothing any more (fixed?):",
        '  .github/workflows/ci.yml: CC031 `::set-output` is deprecated; append `name=value` to "$GITHUB_OUTPUT" '
        "instead [deprecated-workflow-command]",
    ]


def test_identical_findings_are_counted_not_merged(make_repo: MakeRepo, tmp_path: Path) -> None:
    twice = WORKFLOW.replace('echo "::set-output name=b::2"', 'echo "::set-output name=a::1"')
    root = make_repo({".github/workflows/ci.yml": twice})
    recorded = tmp_path / "baseline.json"
    assert run_cli("baseline", "write", recorded, root).code == 0
    once_more = twice + '      - run: echo "::set-output name=a::1"\n'
    (root / ".github" / "workflows" / "ci.yml").write_text(once_more)
    assert [h.split(" `")[0] for h in run_cli("check", root, "--baseline", recorded).headers] == [
        ".github/workflows/ci.yml:10:14: CC031"
    ]


@pytest.mark.parametrize(
    ("content", "error"),
    [
        (None, "the baseline must be a regular file"),
        ("{", "not a ci-checks baseline"),
        ('{"version": 9, "findings": []}', "not a ci-checks baseline of format 1"),
        ('{"version": 1, "findings": [{"path": 1}]}', "an entry lacks one of path, code, rule, fingerprint, message"),
    ],
)
def test_a_bad_baseline_is_an_error_with_exit_2(
    make_repo: MakeRepo, tmp_path: Path, content: str | None, error: str
) -> None:
    root = make_repo({".github/workflows/ci.yml": WORKFLOW})
    recorded = tmp_path / "baseline.json"
    if content is not None:
        recorded.write_text(content)
    result = run_cli("check", root, "--baseline", recorded)
    assert result.code == 2
    assert result.err.startswith(f"ci-checks: error: {recorded}: {error}")


def _job_key_line(root: Path) -> tuple[Path, int, int, bool]:
    """A workflow, the line and column of the first `timeout-minutes:` or else `runs-on:` key of a job written in
    block style, and whether it is `timeout-minutes` (to be given a bad value) or not (to have one put above it)."""
    repository = CIRepository(root)
    for relative in repository.repository.workflows:
        workflow = repository.workflow(relative)
        for job in workflow.jobs.values():
            timeout = job.node.key_node("timeout-minutes")
            key = timeout if timeout is not None else job.node.key_node("runs-on")
            if key is not None and key.span.line > job.key.span.line:
                return root / relative, key.span.line, key.span.column, timeout is not None
    raise LookupError("no job with a runs-on key on a line of its own")


@pytest.mark.parametrize("repository", REPOSITORIES, ids=lambda path: path.name)
def test_a_baseline_of_a_real_repository_with_every_linter(repository: Path, tmp_path: Path) -> None:
    root = tmp_path / "repo"
    shutil.copytree(repository, root)
    (root / ".git").mkdir()
    recorded = tmp_path / "baseline.json"
    everything = ("--backends", "all", "--select", "CC,AL,SC,ZZ")
    assert run_cli("baseline", "write", recorded, root, *everything).code == 0
    assert run_cli("check", root, "--baseline", recorded, *everything).headers == []
    workflows = sorted((root / ".github" / "workflows").glob("*.y*ml"))
    for workflow in workflows:
        text = workflow.read_text(encoding="utf-8")
        bom = "\ufeff" if text.startswith("\ufeff") else ""
        workflow.write_text(bom + "# moved\n" + text.removeprefix(bom), encoding="utf-8")
    assert run_cli("check", root, "--baseline", recorded, *everything).headers == []
    edited, line, column, replaced = _job_key_line(root)
    lines = edited.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[line - 1 : line - 1 + replaced] = [" " * (column - 1) + "timeout-minutes: soon\n"]  # minutes, a number
    edited.write_text("".join(lines), encoding="utf-8")
    new = run_cli("check", root, "--baseline", recorded, *everything).headers
    assert len(new) == 1, new


# --- the baseline's format, stated by hand --------------------------------------------------------------------

_LINES = 'on: push\n      - run: echo "${{ github.head_ref }}" >x\n  # ci-checks: a comment line\n'
_SOURCE = SourceFile("ci.yml", _LINES)


def _fingerprint(line: str, excerpt: str, message: str, index: int = 0) -> str:
    """The documented recipe: sha256 of the line's words, the span's text and the message, joined by NUL."""
    context = "\0".join((line, excerpt, message)).encode("utf-8", "surrogatepass")
    return f"{hashlib.sha256(context).hexdigest()[:20]}:{index}"


def _found(message: str, line: int, column: int, end_line: int, end_column: int, path: str = "ci.yml") -> Diagnostic:
    return Diagnostic("CC040", "rule", Severity.ERROR, message, Span(path, line, column, end_line, end_column))


_RUN = '- run: echo "${{ github.head_ref }}" >x'


@pytest.mark.parametrize(
    ("diagnostic", "line", "excerpt"),
    [
        (_found("m", 2, 20, 2, 42), _RUN, "${{ github.head_ref }}"),  # between two quotes: not one character more
        (_found("m", 2, 9, 3, 5), _RUN, _RUN.removeprefix("- ")),  # a span over lines: to the end of its first line
        (_found("m", 1, 1, 1, 3), "on: push", "on"),  # from the first column
        (_found("m", 3, 5, 3, 14), "", ""),  # on a comment: the whole file's finding, whatever the comment says
        (_found("not read \udc80", 1, 1, 1, 2, path="run.sh"), "", ""),  # a file not read, a byte not UTF-8
    ],
)
def test_a_fingerprint_is_made_of_the_line_the_span_and_the_message(
    diagnostic: Diagnostic, line: str, excerpt: str
) -> None:
    assert fingerprints([diagnostic], {"ci.yml": _SOURCE}) == [
        (diagnostic, _fingerprint(line, excerpt, diagnostic.message))
    ]


def test_a_fingerprint_is_twenty_hex_digits_and_an_index() -> None:
    found = _found("m", 1, 1, 1, 3)
    assert fingerprints([found], {"ci.yml": _SOURCE}) == [(found, "6b9c9696b0b26a884233:0")]


def test_identical_findings_are_numbered_in_order() -> None:
    found = _found("m", 1, 1, 1, 3)
    assert [fingerprint for _, fingerprint in fingerprints([found] * 3, {"ci.yml": _SOURCE})] == [
        _fingerprint("on: push", "on", "m", index) for index in range(3)
    ]


def test_a_baseline_file_is_json_indented_by_one_in_ascii(tmp_path: Path) -> None:
    written = tmp_path / "baseline.json"
    baseline.write(written, [Entry("ci.yml", "CC040", "rule", "0123:0", "caf\u00e9 \u2192 x")])
    assert written.read_text(encoding="utf-8") == (
        "{\n"
        ' "version": 1,\n'
        ' "findings": [\n'
        "  {\n"
        '   "path": "ci.yml",\n'
        '   "code": "CC040",\n'
        '   "rule": "rule",\n'
        '   "fingerprint": "0123:0",\n'
        '   "message": "caf\\u00e9 \\u2192 x"\n'
        "  }\n"
        " ]\n"
        "}\n"
    )


def test_an_entry_listed_three_times_accepts_one_finding_and_is_stale_twice() -> None:
    """A baseline merged from two branches can list one entry more than once: each copy accepts one finding."""
    found = _found("m", 1, 1, 1, 3)
    entry = Entry("ci.yml", "CC040", "rule", _fingerprint("on: push", "on", "m"), "m")
    comparison = compare([found], {"ci.yml": _SOURCE}, [entry] * 3, lambda path: True)
    assert (comparison.new, comparison.accepted, comparison.stale) == ([], 1, [entry, entry])


def _committed_baseline(root: Path, text: str) -> Path:
    (root / "baseline.json").write_text(text)
    commit_all(root, "a baseline")
    return root / "baseline.json"


def test_a_baseline_read_from_a_commit_may_be_as_large_as_any_baseline(tmp_path: Path) -> None:
    """Larger than a workflow may be (4 MiB): the limit of a baseline file is its own, 64 MiB."""
    path = _committed_baseline(tmp_path, '{"version": 1, "findings": []}' + " " * (5 << 20))
    assert baseline.load(path, [tmp_path], "HEAD") == []


@pytest.mark.parametrize(
    ("state", "error"),
    [
        ("no git", "{path}: not in a git repository, so the baseline cannot be read from HEAD"),
        ("no commit", "--baseline {path}, read from the commit --config-ref names: --config-ref 'HEAD' "),
        (
            "not committed",
            "{path}: not in HEAD; with --config-ref the baseline is read from that commit, as the configuration is, so "
            "that a change cannot accept its own findings (name a baseline outside the checkout to use another)",
        ),
        ("a link", "{path}: cannot read the baseline from HEAD: "),
    ],
)
def test_a_baseline_that_cannot_be_read_from_a_commit_says_why(tmp_path: Path, state: str, error: str) -> None:
    root = tmp_path / "repository"
    root.mkdir()
    path = root / "baseline.json"
    if state == "not committed":
        commit_all(root, "nothing yet")
    if state == "no commit":
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    if state == "a link":
        (root / "elsewhere.json").write_text('{"version": 1, "findings": []}')
        path.symlink_to("elsewhere.json")
        commit_all(root, "a link")
        path.unlink()
    path.write_text('{"version": 1, "findings": []}')
    with pytest.raises(baseline.BaselineError) as raised:
        baseline.load(path, [root], "HEAD")
    assert str(raised.value).startswith(error.format(path=path))


@pytest.mark.parametrize(
    ("size", "error"),
    [
        (baseline.MAX_BYTES, "{path}: not a ci-checks baseline of format 1 (write it again)"),
        (baseline.MAX_BYTES + 1, "{path}: the baseline is larger than 64 MiB"),
    ],
)
def test_a_baseline_file_may_be_64_mib_and_no_larger(tmp_path: Path, size: int, error: str) -> None:
    path = tmp_path / "baseline.json"
    path.write_bytes(b"[]" + b" " * (size - 2))
    with pytest.raises(baseline.BaselineError) as raised:
        baseline.read(path)
    assert str(raised.value) == error.format(path=path)


def test_a_baseline_file_that_fails_to_read_says_why() -> None:
    """/proc/self/mem is a regular file whose first page is never mapped: reading it fails (EIO) for real."""
    path = Path("/proc/self/mem")
    with pytest.raises(baseline.BaselineError) as raised:
        baseline.read(path)
    assert str(raised.value) == f"{path}: cannot read the baseline: Input/output error"
