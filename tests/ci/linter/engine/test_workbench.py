"""The language server's engine (`engine.live.Workbench`), without a client.

The repository stays loaded between checks: an edit drops the edited file
alone (the others keep their parsed model and their findings), a file
changed on disk is read again once asked to look (`refresh`), and documents
that are not on disk yet are part of the repository while they are open.
"""

from __future__ import annotations

import os

import pytest

from ci_checks.engine.live import Workbench
from ci_checks.engine.options import Options
from tests.ci.linter.conftest import MakeRepo

CALLER = "on: push\npermissions: {}\njobs:\n  call:\n    uses: ./.github/workflows/callee.yml\n"
CALLEE = """\
on: workflow_call
permissions: {}
jobs:
  work:
    runs-on: ubuntu-latest
    timeout-minutes: 5
    steps:
      - run: echo "${{ secrets.HF_TOKEN }}"
"""
CALLER_PATH, CALLEE_PATH = ".github/workflows/ci.yml", ".github/workflows/callee.yml"


@pytest.fixture
def bench(make_repo: MakeRepo) -> Workbench:
    root = make_repo({CALLER_PATH: CALLER, CALLEE_PATH: CALLEE})
    return Workbench(root, Options(backends=[]))


def codes(bench: Workbench, *paths: str) -> list[tuple[str, str]]:
    return [(d.span.path, d.code) for d in bench.check(list(paths)).diagnostics]


def test_an_edit_reads_again_only_the_edited_file(bench: Workbench) -> None:
    bench.update(CALLER_PATH, CALLER.encode())
    assert codes(bench, CALLER_PATH) == [(CALLER_PATH, "CC050")]
    callee = bench.loaded(CALLEE_PATH)
    caller = bench.loaded(CALLER_PATH)
    assert callee is not None and caller is not None
    bench.update(CALLER_PATH, (CALLER + "# edited\n").encode())
    assert codes(bench, CALLER_PATH) == [(CALLER_PATH, "CC050")]
    # The callee, closed and unchanged, is the same parsed file; the caller is read from its new text.
    assert bench.loaded(CALLEE_PATH) is callee
    assert bench.loaded(CALLER_PATH) is not caller
    assert bench.read(CALLER_PATH) == CALLER + "# edited\n"


def test_a_file_changed_on_disk_is_read_again_when_asked_to_look(bench: Workbench) -> None:
    bench.update(CALLER_PATH, CALLER.encode())
    assert codes(bench, CALLER_PATH) == [(CALLER_PATH, "CC050")]
    callee_path = bench.repository.root / CALLEE_PATH
    callee_path.write_text(CALLEE.replace("secrets.HF_TOKEN", "github.sha"))
    stat = callee_path.stat()
    os.utime(callee_path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert codes(bench, CALLER_PATH) == [(CALLER_PATH, "CC050")]  # not looked at yet: the file as read
    bench.refresh()
    assert codes(bench, CALLER_PATH) == []
    # Asked to look again with nothing changed, nothing is read again; a configuration written to disk is read.
    callee = bench.loaded(CALLEE_PATH)
    bench.refresh()
    assert codes(bench, CALLER_PATH) == [] and bench.loaded(CALLEE_PATH) is callee
    (bench.repository.root / ".github" / "ci-checks.yml").write_text("ignore: [CC041]\n")
    bench.refresh()
    assert bench.settings is not None and bench.settings.ignore == ["CC041"]


def test_an_open_document_that_is_not_on_disk_is_part_of_the_repository(make_repo: MakeRepo) -> None:
    root = make_repo({CALLER_PATH: CALLER})
    bench = Workbench(root, Options(backends=[]))
    bench.update(CALLER_PATH, CALLER.encode())
    assert codes(bench, CALLER_PATH) == [(CALLER_PATH, "CC041")]  # calls a workflow that is not there
    bench.update(CALLEE_PATH, CALLEE.encode())
    assert CALLEE_PATH in bench.repository.workflows
    assert codes(bench, CALLER_PATH, CALLEE_PATH) == [(CALLER_PATH, "CC050")]
    bench.update(CALLEE_PATH, None)  # closed without being saved
    assert CALLEE_PATH not in bench.repository.workflows
    assert codes(bench, CALLER_PATH) == [(CALLER_PATH, "CC041")]


def test_an_unusable_configuration_is_positioned_and_the_last_usable_one_kept(bench: Workbench) -> None:
    config = ".github/ci-checks.yml"
    bench.update(config, b"ignore: [CC050]\n")
    assert bench.config_error is None and codes(bench, CALLER_PATH) == []
    bench.update(config, b"ignore: [CC050\n")
    assert bench.config_error is not None and bench.config_error.span.path == config
    assert codes(bench, CALLER_PATH) == []  # still ignored, as the last configuration that could be used says
    bench.update(config, None)
    assert bench.config_error is None and codes(bench, CALLER_PATH) == [(CALLER_PATH, "CC050")]


def test_the_rules_read_the_unsaved_text_and_each_edit_makes_another_repository(bench: Workbench) -> None:
    on_disk = bench.repository
    unsaved = CALLEE.replace("secrets.HF_TOKEN", "github.sha")
    bench.update(CALLEE_PATH, unsaved.encode())
    # The caller's finding follows the callee as the editor holds it; the disk still holds the one reading a secret.
    assert codes(bench, CALLER_PATH) == []
    assert (bench.repository.root / CALLEE_PATH).read_text() == CALLEE
    assert bench.read(CALLEE_PATH) == unsaved
    # The repository the first check read through is as it was made: the edit made another.
    assert bench.repository is not on_disk and not on_disk.documents
    assert on_disk.read(CALLEE_PATH).text == CALLEE
    bench.update(CALLEE_PATH, None)
    assert codes(bench, CALLER_PATH) == [(CALLER_PATH, "CC050")]


def test_an_unsaved_configurations_exclusions_are_what_the_next_check_lists(bench: Workbench) -> None:
    assert CALLEE_PATH in bench.repository.workflows
    bench.update(".github/ci-checks.yml", f"exclude: [{CALLEE_PATH}]\n".encode())
    assert bench.repository.exclude == (CALLEE_PATH,)
    assert bench.repository.workflows == [CALLER_PATH]
    bench.update(".github/ci-checks.yml", None)
    assert bench.repository.workflows == [CALLEE_PATH, CALLER_PATH]
