"""`ci-checks server`, end to end: a real LSP client (pygls's) drives the server over stdio as an editor does.

One server process per module serves every test's repository (each test
makes its own): initialize, open, change, diagnostics at exact ranges (UTF-16
by default, UTF-8 when the client asks), code actions applied, hover, the
linters after a save, settings from the editor and from the repository, and a
clean shutdown.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from lsprotocol import types

from ci_checks.core.diagnostics import Diagnostic
from ci_checks.query import CIRepository
from ci_checks.server import actions
from tests.ci.linter.conftest import FIXTURES, MakeRepo, copy_repository, run_cli
from tests.ci.linter.server.lsp_editor import Editor

CLEAN = """\
on: push
permissions: {}
jobs:
  build:
    runs-on: ubuntu-latest
    timeout-minutes: 10
    steps:
      - name: Build
        run: echo build
"""
WORKFLOW = ".github/workflows/ci.yml"


@pytest.fixture(scope="module")
def editor() -> Iterator[Editor]:
    started = Editor(settings={"ci-checks": {"backends": ["shellcheck"], "profile": "all"}})
    yield started
    assert started.shut_down() == 0


def ranges(found: list[types.Diagnostic]) -> list[tuple[str, tuple[int, int, int, int]]]:
    return [
        (str(d.code), (d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character))
        for d in found
    ]


def test_diagnostics_on_open_and_on_each_change_from_the_edited_text(editor: Editor, make_repo: MakeRepo) -> None:
    root = make_repo({WORKFLOW: CLEAN})
    path = root / WORKFLOW
    assert editor.open(path) == []
    # An incremental change: `name: Build` becomes a second `run:` (the disk still holds the clean file).
    found = editor.change(path, "run", (7, 8), (7, 12))
    assert ranges(found) == [("CC011", (8, 8, 8, 11))]
    [duplicate] = found
    assert duplicate.message == "duplicate key 'run'"
    assert duplicate.severity == types.DiagnosticSeverity.Error and duplicate.source == "ci-checks"
    assert duplicate.related_information is not None
    assert duplicate.related_information[0].location.range.start == types.Position(line=7, character=8)
    assert editor.change(path, "name", (7, 8), (7, 11)) == []
    assert path.read_text() == CLEAN
    assert editor.close(path) == []


def test_positions_count_utf16_units_of_the_edited_text(editor: Editor, make_repo: MakeRepo) -> None:
    # é is one UTF-16 unit, 😀 (U+1F600) two; the line breaks are CRLF and the file starts with a byte-order mark.
    keys = CLEAN.replace("      - name: Build\n", '      - env: {"é😀": a, "é😀": b}\n')
    text = "\ufeff" + keys.replace("\n", "\r\n")
    root = make_repo({WORKFLOW: CLEAN})
    path = root / WORKFLOW
    found = editor.open(path, text)
    # `      - env: {"é😀": a, ` is 23 characters and 24 UTF-16 units: the second key starts there, 5 units long.
    assert ranges(found) == [("CC011", (7, 24, 7, 29))]
    # An edit after the astral character, in UTF-16 units: `b` becomes `bb`, nothing moves.
    assert ranges(editor.change(path, "bb", (7, 31), (7, 32))) == [("CC011", (7, 24, 7, 29))]
    assert editor.text(path).splitlines()[7].endswith('"é😀": bb}')
    # Deleting the first key's 😀 (units 16 and 17) makes the keys differ.
    assert editor.change(path, "", (7, 16), (7, 18)) == []
    assert '{"é": a, "é😀": bb}' in editor.text(path)
    editor.close(path)


def test_utf8_positions_when_the_client_asks_for_them(make_repo: MakeRepo) -> None:
    text = CLEAN.replace("      - name: Build\n", '      - env: {"é😀": a, "é😀": b}\n')
    root = make_repo({WORKFLOW: text})
    editor = Editor(encodings=["utf-8"])
    try:
        assert editor.encoding == "utf-8"
        # In UTF-8 `      - env: {"é😀": a, ` is 27 bytes and "é😀" quoted 8.
        assert ranges(editor.open(root / WORKFLOW)) == [("CC011", (7, 27, 7, 35))]
    finally:
        assert editor.shut_down() == 0


def test_a_safe_fix_and_the_ignore_comments_are_code_actions_that_clear_the_finding(
    editor: Editor, make_repo: MakeRepo
) -> None:
    self_hosted = CLEAN.replace("ubuntu-latest\n    timeout-minutes: 10\n", "[self-hosted, mi300x]\n")
    root = make_repo({WORKFLOW: self_hosted})
    path = root / WORKFLOW
    [timeout] = editor.open(path)
    assert ranges([timeout]) == [("CC043", (3, 2, 3, 7))]
    titles = [action.title for action in editor.actions(path, (3, 3), (3, 3))]
    assert titles == ["Fix CC043: set timeout-minutes: 360", "Ignore CC043 on this line"]
    [fix] = [action for action in editor.actions(path, (3, 3), (3, 3)) if action.is_preferred]
    assert list(editor.apply(fix).values()) == [[]]
    assert "    timeout-minutes: 360\n" in editor.text(path)
    editor.close(path)
    # The same finding ignored on its line: the comment is written where suppression reads it.
    editor.open(path, self_hosted)
    ignore = next(a for a in editor.actions(path, (3, 2), (3, 6)) if a.title == "Ignore CC043 on this line")
    assert list(editor.apply(ignore).values()) == [[]]
    assert editor.text(path).splitlines()[3] == "  build:  # ci-checks: ignore[CC043]"
    editor.close(path)


def test_ignore_in_this_step_and_a_name_added_to_an_ignore_comment(editor: Editor, make_repo: MakeRepo) -> None:
    policy = "rules:\n  - id: no-curl\n    kind: forbid\n    where: {step: Build}\n    forbid: [{command: curl}]\n"
    script = CLEAN.replace(
        "run: echo build\n", "run: |\n          echo build\n          curl -o x https://example.com/x\n"
    )
    root = make_repo({WORKFLOW: script, ".github/ci-checks.yml": policy})
    path = root / WORKFLOW
    assert ranges(editor.open(path)) == [("CC101", (10, 10, 10, 41))]
    titles = [action.title for action in editor.actions(path, (10, 12), (10, 12))]
    assert titles == ["Ignore no-curl on this line", "Ignore no-curl in this step"]
    in_step = editor.actions(path, (10, 12), (10, 12))[1]
    assert list(editor.apply(in_step).values()) == [[]]
    assert editor.text(path).splitlines()[7] == "      - name: Build  # ci-checks: ignore[no-curl]"
    # A second finding in the step: its name joins the comment already there.
    named = editor.text(path).splitlines()[7].index("no-curl")
    editor.change(path, "CC999", (7, named), (7, named + len("no-curl")))
    [_, in_step] = editor.actions(path, (10, 12), (10, 12))
    assert list(editor.apply(in_step).values()) == [[]]
    assert editor.text(path).splitlines()[7] == "      - name: Build  # ci-checks: ignore[CC999, no-curl]"
    editor.close(path)


@pytest.mark.parametrize("rule_id", ["duplicate-key", "policy-forbid"])
def test_an_ignore_comment_names_a_policy_rule_by_its_id_whatever_the_id(make_repo: MakeRepo, rule_id: str) -> None:
    """The id of a policy rule named as a built-in rule (the Python API takes any id) is what the comment names, and
    a built-in rule's finding is ignored by its code."""
    policy = "rules:\n  - id: no-curl\n    kind: forbid\n    where: {step: Build}\n    forbid: [{command: curl}]\n"
    script = CLEAN.replace("run: echo build\n", "run: curl -o x https://example.com/x\n") + "jobs: {}\n"
    repository = CIRepository(make_repo({WORKFLOW: script, ".github/ci-checks.yml": policy}))
    [no_curl] = repository.policy
    found = repository.check([dataclasses.replace(no_curl, id=rule_id)], built_in=False).diagnostics
    assert [actions.ignore_name(d) for d in found if d.code == "CC101"] == [rule_id]
    assert [(d.code, actions.ignore_name(d)) for d in repository.check([]).diagnostics] == [("CC011", "CC011")]


def test_an_ignore_comment_is_never_written_into_a_scripts_data(editor: Editor, make_repo: MakeRepo) -> None:
    # At the end of a line of a here-document or of a quoted string that spans lines, `#` is data: the comment
    # would change the file the script writes or the program it runs. Only the step's first line is offered.
    policy = "rules:\n  - id: no-legacy\n    kind: forbid\n    where: {step: Build}\n"
    policy += "    forbid: [{text: legacy_allocator}]\n"
    script = CLEAN.replace(
        "run: echo build\n",
        "run: |\n"
        "          cat > build.cfg <<EOF\n"
        "          allocator = legacy_allocator\n"
        "          EOF\n"
        '          python -c "\n'
        "          import legacy_allocator\n"
        '          "\n'
        "          echo legacy_allocator  # shell comments may follow a command\n",
    )
    root = make_repo({WORKFLOW: script, ".github/ci-checks.yml": policy})
    path = root / WORKFLOW
    found = [(line, column) for _, (line, column, _, _) in ranges(editor.open(path))]
    assert found == [(10, 22), (13, 17), (15, 15)]
    for at in found[:2]:
        assert [action.title for action in editor.actions(path, at, at)] == ["Ignore no-legacy in this step"]
    # After a command, the line's end is a comment of the script: there it is offered.
    titles = [action.title for action in editor.actions(path, found[2], found[2])]
    assert titles == ["Ignore no-legacy on this line", "Ignore no-legacy in this step"]
    editor.close(path)


def test_a_dockerfile_finding_is_ignored_on_the_line_before(editor: Editor, make_repo: MakeRepo) -> None:
    policy = "rules:\n  - id: no-curl\n    kind: forbid\n    where: {files: docker/Dockerfile}\n"
    policy += "    forbid: [{command: curl}]\n"
    dockerfile = "FROM ubuntu:24.04\n  RUN apt-get update && \\\n      curl -o x https://example.com/x\n"
    root = make_repo({WORKFLOW: CLEAN, ".github/ci-checks.yml": policy, "docker/Dockerfile": dockerfile})
    path = root / "docker/Dockerfile"
    assert ranges(editor.open(path)) == [("CC101", (2, 6, 2, 37))]
    on_line, in_instruction = editor.actions(path, (2, 6), (2, 6))
    assert (on_line.title, in_instruction.title) == (
        "Ignore no-curl on this line",
        "Ignore no-curl in this instruction",
    )
    assert list(editor.apply(in_instruction).values()) == [[]]
    assert editor.text(path).splitlines()[1:3] == [
        "  # ci-checks: ignore-next-line[no-curl]",
        "  RUN apt-get update && \\",
    ]
    editor.close(path)


def test_hover_shows_the_rules_documentation(editor: Editor, make_repo: MakeRepo) -> None:
    root = make_repo({WORKFLOW: CLEAN.replace("name: Build", "run: echo")})
    path = root / WORKFLOW
    [duplicate] = editor.open(path)
    hover = editor.hover(path, (duplicate.range.start.line, duplicate.range.start.character + 1))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert hover.contents.kind == types.MarkupKind.Markdown
    assert hover.contents.value.startswith("# CC011 duplicate-key\n")
    assert "## Why it matters" in hover.contents.value
    assert editor.hover(path, (0, 0)) is None
    editor.close(path)


def test_the_policy_is_read_from_the_repository_and_from_its_edited_configuration(
    editor: Editor, make_repo: MakeRepo
) -> None:
    policy = "rules:\n  - id: no-echo\n    kind: forbid\n    where: {workflow: .github/workflows/ci.yml}\n"
    policy += "    forbid: [{command: echo}]\n"
    root = make_repo({WORKFLOW: CLEAN, ".github/ci-checks.yml": policy})
    workflow, config = root / WORKFLOW, root / ".github/ci-checks.yml"
    assert ranges(editor.open(workflow)) == [("CC101", (8, 13, 8, 23))]
    # The configuration, edited and not saved, decides the open workflow's findings at once.
    assert editor.open(config) == []
    editor.change(config, "printf", (4, 23), (4, 27))
    assert editor.diagnostics(workflow, until=lambda found: not found) == []
    # A configuration that cannot be used is shown where it is wrong; the last one that could is used.
    [broken] = editor.change(config, "forbidd", (2, 10), (2, 16))
    assert broken.range.start.line == 2 and "forbidd" in broken.message
    editor.close(config)
    editor.close(workflow)


def test_settings_from_the_editor_select_what_runs(make_repo: MakeRepo) -> None:
    root = make_repo({WORKFLOW: CLEAN.replace("name: Build", "run: echo").replace("10", "soon")})
    editor = Editor(settings={"ci-checks": {"select": ["CC020"], "profile": "sloppy"}})
    try:
        assert [d.code for d in editor.open(root / WORKFLOW)] == ["CC020"]
        assert any("profile 'sloppy' is not one of" in message for message in editor.messages)
        editor.configure({"ci-checks": {"ignore": ["CC020"]}})
        codes = editor.diagnostics(root / WORKFLOW, until=lambda found: [d.code for d in found] != ["CC020"])
        assert [d.code for d in codes] == ["CC011"]
    finally:
        assert editor.shut_down() == 0


def test_the_linters_run_after_a_save_in_the_background(editor: Editor, make_repo: MakeRepo) -> None:
    root = make_repo({WORKFLOW: CLEAN})
    path = root / WORKFLOW
    editor.open(path)
    editor.change(path, "run: echo $1", (7, 8), (8, 23))
    found = editor.diagnostics(path)
    assert [d.code for d in found] == []  # shellcheck has not read this text: it is not saved
    editor.save(path)
    linted = editor.diagnostics(path, until=bool)
    assert ranges(linted) == [("SC2086", (7, 18, 7, 20))]
    # The next edit changes the text shellcheck read: its findings go until the next save.
    assert editor.change(path, '"$1"', (7, 18), (7, 20)) == []
    editor.close(path)


def test_a_change_to_one_document_re_checks_the_others_it_affects(editor: Editor, make_repo: MakeRepo) -> None:
    callee = ".github/workflows/callee.yml"
    calling = "on: push\npermissions: {}\njobs:\n  call:\n    uses: ./.github/workflows/callee.yml\n"
    reads = CLEAN.replace("on: push", "on: workflow_call").replace("build", '"${{ secrets.HF_TOKEN }}"')
    root = make_repo({WORKFLOW: calling, callee: CLEAN.replace("on: push", "on: workflow_call")})
    assert editor.open(root / WORKFLOW) == []
    editor.open(root / callee)
    editor.change(root / callee, reads)
    # The caller, open and unchanged, now passes no secret the callee reads.
    [missing] = editor.diagnostics(root / WORKFLOW, until=bool)
    assert missing.code == "CC050" and missing.range.start == types.Position(line=4, character=10)
    editor.close(root / callee)
    assert editor.diagnostics(root / WORKFLOW, until=lambda found: not found) == []
    editor.close(root / WORKFLOW)


def test_a_document_not_yet_saved_is_what_the_rules_read_for_the_others(editor: Editor, make_repo: MakeRepo) -> None:
    callee = ".github/workflows/callee.yml"
    calling = "on: push\npermissions: {}\njobs:\n  call:\n    uses: ./.github/workflows/callee.yml\n"
    root = make_repo({WORKFLOW: calling})
    [absent] = editor.open(root / WORKFLOW)
    assert absent.code == "CC041"
    # The callee exists only in the editor, and reads a secret the caller does not pass.
    reads = CLEAN.replace("on: push", "on: workflow_call").replace("build", '"${{ secrets.HF_TOKEN }}"')
    editor.open(root / callee, reads)
    [missing] = editor.diagnostics(root / WORKFLOW, until=lambda found: [d.code for d in found] == ["CC050"])
    assert missing.range.start == types.Position(line=4, character=10)
    assert not (root / callee).exists()
    editor.close(root / callee)
    [absent] = editor.diagnostics(root / WORKFLOW, until=lambda found: [d.code for d in found] == ["CC041"])
    editor.close(root / WORKFLOW)


def test_the_server_imports_nothing_from_the_repository_it_runs_in(make_repo: MakeRepo) -> None:
    planted = "from pathlib import Path\nPath(__file__).with_name('imported').write_text('ran')\n"
    root = make_repo({WORKFLOW: CLEAN.replace("runs-on", "runs-onn"), "jsonschema.py": planted, "yaml.py": planted})
    # Started in the repository with `python -m`, which puts it first on sys.path: the explaining validator
    # (jsonschema, imported for a document the fast one rejects) comes from the installed packages all the same.
    editor = Editor(cwd=root)
    try:
        assert {d.code for d in editor.open(root / WORKFLOW)} == {"CC020"}
    finally:
        assert editor.shut_down() == 0
    assert not (root / "imported").exists()


def test_files_outside_what_ci_checks_reads_get_no_diagnostics(editor: Editor, make_repo: MakeRepo) -> None:
    root = make_repo({WORKFLOW: CLEAN, "docker-compose.yml": "services: {a: {image: x}, a: {image: y}}\n"})
    editor.open(root / WORKFLOW)
    editor.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=editor.uri(root / "docker-compose.yml"), language_id="yaml", version=1, text="a: 1\na: 2\n"
            )
        )
    )
    editor.change(root / WORKFLOW, CLEAN)  # a round trip: the server has handled the other document by now
    assert editor.uri(root / "docker-compose.yml") not in editor.published
    editor.close(root / WORKFLOW)


CORPUS_POLICY = """\
rules:
  - id: no-pip-upgrade
    kind: forbid
    where: {files: [".github/**/*.yml"]}
    forbid:
      - command: pip install --upgrade
      - text: ubuntu-latest
  - id: checkout-no-credentials
    kind: require
    where: {workflow: .github/workflows/*.yml, step: {uses: actions/checkout}}
    require:
      - with: {persist-credentials: false}
"""
Finding = tuple[str, str, str, int, int, int, int, str]


def _cli_findings(root: Path) -> set[Finding]:
    result = run_cli("check", root, "--backends", "none", "--no-cache", "--output-format", "json")
    assert result.code == 1, result.err
    return {
        (d["path"], d["code"], d["rule"], d["line"], d["column"], d["end_line"], d["end_column"], d["message"])
        for d in json.loads(result.out)["diagnostics"]
    }


def _found(diagnostic: Diagnostic) -> Finding:
    span = diagnostic.span
    found = (span.path, diagnostic.code, diagnostic.rule, span.line, span.column, span.end_line, span.end_column)
    return (*found, diagnostic.message)


def test_the_cli_the_server_and_the_pytest_plugin_find_the_same_in_the_fixture_corpus(tmp_path: Path) -> None:
    roots = []
    for fixture in sorted(path for path in (FIXTURES / "corpus").iterdir() if path.is_dir()):  # not the .expected
        roots.append(copy_repository(fixture, tmp_path))
        (roots[-1] / ".github" / "ci-checks.yml").write_text(CORPUS_POLICY)
    editor = Editor()
    try:
        total = 0
        for root in roots:
            by_cli = _cli_findings(root)
            total += len(by_cli)
            # The query API, which the plugin's `ci_repo` fixture is, checks as the command line does; the plugin's
            # policy items find, rule by rule, the command line's policy findings.
            repository = CIRepository(root)
            assert {_found(d) for d in repository.check().diagnostics} == by_cli
            by_items = {_found(d) for rule in repository.policy for d in repository.findings(rule.id)}
            assert by_items == {found for found in by_cli if found[2] in {rule.id for rule in repository.policy}}
            # The server, each file opened (its diagnostics turned back into spans, the rule's id taken off the
            # message where the server adds it).
            listed = run_cli("check", root, "--backends", "none", "--no-cache", "--list-files").out.splitlines()
            paths = sorted({*listed, *(found[0] for found in by_cli)})
            for relative in paths:
                editor.open(root / relative)
            by_server = set()
            for relative in paths:
                document = editor.documents[editor.uri(root / relative)]
                for d in editor.diagnostics(root / relative):
                    line, column = document.to_span(d.range.start.line, d.range.start.character)
                    end_line, end_column = document.to_span(d.range.end.line, d.range.end.character)
                    rule = next(found[2] for found in by_cli if found[0] == relative and found[1] == d.code)
                    message = d.message.removesuffix(f" [{rule}]")
                    by_server.add((relative, str(d.code), rule, line, column, end_line, end_column, message))
            for relative in paths:
                editor.close(root / relative)
            assert by_server == by_cli, root.name
        assert total >= 12  # the built-in rules' findings and the policy's, in workflows, an action and the policy
    finally:
        assert editor.shut_down() == 0
