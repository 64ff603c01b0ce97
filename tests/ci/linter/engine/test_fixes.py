"""`--fix`, `--unsafe-fixes` and `--diff`: edits at exact spans that keep every other byte, verified and atomic."""

from __future__ import annotations

import json
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from ci_checks.core import source
from ci_checks.core.diagnostics import Diagnostic, Edit, Fix, Severity, Span
from ci_checks.core.repository import Repository
from ci_checks.engine import fixes
from ci_checks.model import Step
from ci_checks.query import CIRepository
from ci_checks.syntax import yamlpos
from tests.ci.linter.conftest import MakeRepo, run_cli
from tests.ci.linter.project.test_corpus import REPOSITORIES

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


def test_fix_keeps_crlf_comments_flow_mappings_and_a_missing_final_newline(make_repo: MakeRepo) -> None:
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


def test_a_missing_mapping_is_added_at_the_step_s_indentation(make_repo: MakeRepo) -> None:
    workflow = (
        "on: push\njobs:\n  t:\n    runs-on: a\n    steps:\n    - uses: actions/checkout@v4  # pinned below\n"
        "    - run: make\n"
    )
    root = make_repo({".github/workflows/ci.yml": workflow, ".github/ci-checks.yml": POLICY})
    assert run_cli("check", root, "--fix").code == 0
    assert (root / ".github" / "workflows" / "ci.yml").read_text() == workflow.replace(
        "  # pinned below\n", "  # pinned below\n      with:\n        persist-credentials: false\n"
    )


def test_fix_writes_only_regular_files_inside_the_repository(make_repo: MakeRepo, tmp_path: Path) -> None:
    outside = tmp_path / "outside.yml"
    outside.write_bytes(CRLF.encode())
    root = make_repo({".github/ci-checks.yml": POLICY, ".github/workflows/real.yml": CRLF})
    (root / ".github" / "workflows" / "linked.yml").symlink_to(outside)
    run_cli("check", root, "--fix")
    assert outside.read_bytes() == CRLF.encode()


def test_unsafe_fixes_need_asking_and_zizmor_applies_its_own(make_repo: MakeRepo) -> None:
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


@pytest.mark.parametrize("repository", REPOSITORIES, ids=lambda path: path.name)
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


def test_a_self_hosted_job_gets_github_s_own_limit_safely_or_the_team_s_unsafely(make_repo: MakeRepo) -> None:
    workflow = (
        "on: push\npermissions: {}\njobs:\n  gpu:\n    # the MI300X pool\n    runs-on: [self-hosted, mi300x]\n"
        "    steps:\n      - run: echo ok\n"
    )
    root = make_repo({".github/workflows/ci.yml": workflow})
    path = root / ".github" / "workflows" / "ci.yml"
    assert run_cli("check", root, "--fix").err == "ci-checks: fixed 1 finding in 1 file\n"
    assert path.read_bytes() == workflow.replace("    runs-on:", "    timeout-minutes: 360\n    runs-on:").encode()
    path.write_text(workflow)
    (root / ".github" / "ci-checks.yml").write_text("fixes: {timeout-minutes: 90}\n")
    assert run_cli("check", root, "--fix").err == "ci-checks: fixed 0 findings in 0 files\n"
    assert run_cli("check", root, "--fix", "--unsafe-fixes").code == 0
    assert "    timeout-minutes: 90\n" in path.read_text()


INJECTION = (
    "on: push\npermissions: {}\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n"
    "      - run: echo ${{ github.event.issue.title }}\n"
)
INJECTION_FIXED = (
    "on: push\npermissions: {}\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n"
    "      - run: echo ${GITHUB_EVENT_ISSUE_TITLE}\n        env:\n"
    "          GITHUB_EVENT_ISSUE_TITLE: ${{ github.event.issue.title }}\n"
)


def test_zizmor_fixes_every_file_of_a_folder_and_each_keeps_its_layout(make_repo: MakeRepo) -> None:
    """zizmor gets plain copies (it fails on a byte-order mark, and reads lines ending at a lone CR as one)."""
    layouts: dict[str, Callable[[str], str]] = {
        "lf.yml": lambda text: text,
        "bom-crlf-no-final-newline.yml": lambda text: "\ufeff" + text.replace("\n", "\r\n").removesuffix("\r\n"),
        "cr.yml": lambda text: text.replace("\n", "\r"),
    }
    root = make_repo({f".github/workflows/{name}": layout(INJECTION) for name, layout in layouts.items()})
    result = run_cli("check", root, "--backends", "zizmor", "--select", "ZZ", "--fix", "--unsafe-fixes")
    assert (result.code, result.err) == (0, "ci-checks: fixed 3 findings in 3 files\n")
    for name, layout in layouts.items():
        assert (root / ".github" / "workflows" / name).read_bytes() == layout(INJECTION_FIXED).encode(), name


def test_a_deprecated_command_is_rewritten_in_the_quotes_it_was_written_in_or_none(make_repo: MakeRepo) -> None:
    """Unquoted, echo joins its words with one space, so the words are kept as written (an escaped quote too). Only
    a plain `echo` of the command is rewritten: one with a redirect is not."""
    steps = (
        """      - run: echo "::set-output name=a::1"\n"""
        """      - run: echo '::set-output name=b::2'\n"""
        """      - run: echo ::save-state name=c::$C  "x y"\n"""
        """      - run: echo ::add-path::/opt/bin\n"""
        """      - run: echo ::set-output name=e::5 \\"\n"""
    )
    kept = """      - run: echo "::set-output name=d::4" > log.txt\n"""
    workflow = f"on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n{steps}{kept}"
    root = make_repo({".github/workflows/ci.yml": workflow})
    assert run_cli("check", root, "--fix", "--select", "CC031").err == "ci-checks: fixed 5 findings in 1 file\n"
    fixed = (
        """      - run: echo "a=1" >> "$GITHUB_OUTPUT"\n"""
        """      - run: echo 'b=2' >> "$GITHUB_OUTPUT"\n"""
        """      - run: echo c=$C "x y" >> "$GITHUB_STATE"\n"""
        """      - run: echo /opt/bin >> "$GITHUB_PATH"\n"""
        """      - run: echo e=5 \\" >> "$GITHUB_OUTPUT"\n"""
    )
    assert (root / ".github" / "workflows" / "ci.yml").read_text() == workflow.replace(steps, fixed)


def test_diff_prints_a_unified_diff_of_each_file(make_repo: MakeRepo) -> None:
    workflow = (
        "on: push\njobs:\n  t:\n    runs-on: [self-hosted, mi300x]\n    steps:\n"
        '      - run: echo "::set-output name=v::1"'
    )
    root = make_repo({".github/workflows/ci.yml": workflow})
    result = run_cli("check", root, "--diff")
    assert (result.code, result.err) == (1, "")
    assert result.out == (
        "--- a/.github/workflows/ci.yml\n"
        "+++ b/.github/workflows/ci.yml\n"
        "@@ -1,6 +1,7 @@\n"
        " on: push\n"
        " jobs:\n"
        "   t:\n"
        "+    timeout-minutes: 360\n"
        "     runs-on: [self-hosted, mi300x]\n"
        "     steps:\n"
        '-      - run: echo "::set-output name=v::1"\n'
        "\\ No newline at end of file\n"
        '+      - run: echo "v=1" >> "$GITHUB_OUTPUT"\n'
        "\\ No newline at end of file\n"
    )
    assert (root / ".github" / "workflows" / "ci.yml").read_text() == workflow


def test_a_fix_is_not_written_through_a_link_and_the_files_after_it_are_fixed(make_repo: MakeRepo) -> None:
    workflow = "on: push\njobs:\n  t:\n    runs-on: [self-hosted, mi300x]\n    steps:\n      - run: make\n"
    root = make_repo({"real.yml": workflow, ".github/workflows/z.yml": workflow})
    (root / ".github" / "workflows" / "a.yml").symlink_to("../../real.yml")
    assert run_cli("check", root, "--diff").out.startswith("--- a/.github/workflows/z.yml\n")
    assert run_cli("check", root, "--fix").err == "ci-checks: fixed 1 finding in 1 file\n"
    assert (root / "real.yml").read_text() == workflow
    assert (root / ".github" / "workflows" / "a.yml").is_symlink()
    assert "timeout-minutes: 360" in (root / ".github" / "workflows" / "z.yml").read_text()


def test_the_new_file_is_made_beside_the_old_one(
    make_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    workflow = "on: push\njobs:\n  t:\n    runs-on: [self-hosted, mi300x]\n    steps:\n      - run: make\n"
    root = make_repo({".github/workflows/ci.yml": workflow})
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "no-such-folder"))  # it is renamed over the old one
    assert run_cli("check", root, "--fix").err == "ci-checks: fixed 1 finding in 1 file\n"
    assert sorted(path.name for path in (root / ".github" / "workflows").iterdir()) == ["ci.yml"]


def test_a_change_to_a_file_that_changed_since_it_was_read_is_not_written(make_repo: MakeRepo) -> None:
    root = make_repo({"x.sh": "echo now\n"})
    change = fixes.Change("x.sh", b"echo then\n", b"echo fixed\n", ())
    assert fixes.write(Repository(root), change) is False
    assert (root / "x.sh").read_bytes() == b"echo now\n"


# Fixes with hand-made edits, on line 1 of `# 0123456789`: columns 3 to 12 hold the digits.
LINE = "# 0123456789\non: push\njobs: {}\n"


def _fixed_line(
    make_repo: MakeRepo, *edits: tuple[int, int, str], path: str = ".github/workflows/ci.yml", end_line: int = 1
) -> str | None:
    """The first line after the fixes of one finding per edit (from a column of line 1 to one of `end_line`), in
    this order; None when nothing is changed."""
    root = make_repo({path: LINE})
    found = [
        _finding(path, order, start, end_line, end, replacement)
        for order, (start, end, replacement) in enumerate(edits)
    ]
    changes = fixes.plan(Repository(root), found, unsafe=False)
    return changes[0].after.decode().split("\n", 1)[0] if changes else None


def _finding(path: str, order: int, start: int, end_line: int, end: int, replacement: str) -> Diagnostic:
    """A finding at column `order + 1` of line 1 whose fix replaces line 1 column `start` to `end_line`:`end`."""
    fix = Fix("x", (Edit(Span(path, 1, start, end_line, end), replacement),))
    return Diagnostic("CC999", "x", Severity.ERROR, "x", Span(path, 1, order + 1, 1, order + 2), (), fix)


@pytest.mark.parametrize(
    ("edits", "line"),
    [
        ([(3, 8, "A"), (6, 10, "B")], "# A56789"),  # the second overlaps the first: taken the next pass
        ([(3, 8, "A"), (6, 10, "B"), (11, 12, "C")], "# A567C9"),  # and the third does not
        ([(3, 6, "A"), (6, 9, "B")], "# AB6789"),  # the second starts where the first ends
        ([(6, 9, "A"), (3, 6, "B")], "# BA6789"),  # the second ends where the first starts
        ([(5, 7, "A"), (3, 12, "B")], "# 01A456789"),  # the second covers the first
        ([(5, 9, "A"), (3, 6, "B")], "# 01A6789"),  # the second ends inside the first
        ([(5, 5, "A"), (5, 5, "B")], "# 01A23456789"),  # two insertions at one place
    ],
)
def test_fixes_whose_edits_overlap_are_not_made_in_one_pass(
    make_repo: MakeRepo, edits: list[tuple[int, int, str]], line: str
) -> None:
    assert _fixed_line(make_repo, *edits) == line


def test_a_fix_that_breaks_the_yaml_or_changes_nothing_is_not_made(make_repo: MakeRepo) -> None:
    assert _fixed_line(make_repo, (3, 12, "\njobs: {}\n#")) is None  # a duplicate key
    assert _fixed_line(make_repo, (1, 1, "# everything"), end_line=4) is None  # a document with nothing in it
    assert _fixed_line(make_repo, (3, 5, "01")) is None  # the same text
    assert _fixed_line(make_repo, (3, 12, "\njobs: {}\n#"), path="scripts/x.sh") == "# "  # not YAML: not parsed


def test_a_file_that_is_not_utf8_is_left_alone_and_the_next_one_fixed(make_repo: MakeRepo) -> None:
    root = make_repo({"a.sh": "echo caf\xe9\n".encode("latin-1"), "b.sh": LINE})
    found = [_finding("a.sh", 0, 1, 1, 5, "true"), _finding("b.sh", 0, 3, 1, 5, "A")]
    assert [change.relative for change in fixes.plan(Repository(root), found, unsafe=False)] == ["b.sh"]
