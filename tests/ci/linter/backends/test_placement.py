"""Which profile keeps a template injection (who chooses the expression's text) and an SC2046 (whether the
substitution prints one field): the trust model, the one-field list, and both through the real linters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci_checks.config.selection import resolve
from ci_checks.core.diagnostic_data import decode_diagnostics, encode_diagnostics
from ci_checks.core.diagnostics import Diagnostic, Severity, Span
from ci_checks.core.repository import FileKind, Repository
from ci_checks.model.loading import Workspace
from ci_checks.model.trust import Author, Place, Trust, context_paths
from ci_checks.rules.context import RepositoryContext
from ci_checks.syntax.shell import Word, parse_fragment, walk
from ci_checks.syntax.shell.fields import one_field
from tests.ci.linter.conftest import MakeRepo, run_cli

# --- who chooses an expression's text ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "paths"),
    [
        ("inputs.ref", ["inputs.ref"]),
        ("fromJSON(inputs.config).branch", ["inputs.config"]),
        ("github.event['pull_request'].TITLE", ["github.event.pull_request.title"]),
        ("github.event.commits[0].message", ["github.event.commits.*.message"]),
        ("contains(github.event.pull_request.labels.*.name, 'gpu')", ["github.event.pull_request.labels.*.name"]),
        ("matrix[inputs.key] || 'x'", ["matrix", "inputs.key"]),
        ("format('{0}', github.head_ref) && true", ["github.head_ref"]),
        ("a ~ b", None),
    ],
)
def test_an_expression_reads_the_context_paths_its_tokens_spell(body: str, paths: list[str] | None) -> None:
    assert context_paths(body) == paths


@pytest.mark.parametrize(
    ("body", "author"),
    [
        ("github.event.pull_request.title", Author.OUTSIDER),
        ("github.event.pull_request.head.ref", Author.OUTSIDER),
        ("github.head_ref", Author.OUTSIDER),
        ("github.event.issue.body", Author.OUTSIDER),
        ("github.event.comment.body", Author.OUTSIDER),
        ("github.event.head_commit.author.email", Author.OUTSIDER),
        ("github.event.workflow_run.head_branch", Author.OUTSIDER),
        ("toJSON(github.event)", Author.OUTSIDER),
        ("github.event.client_payload.github.payload.comment.body", Author.OUTSIDER),
        ("format('{0}-{1}', github.ref_name, github.event.pull_request.body)", Author.OUTSIDER),
        ("github.ref_name", Author.MAINTAINER),
        ("github.event.pull_request.base.ref", Author.MAINTAINER),
        ("github.event.pull_request.labels.*.name", Author.MAINTAINER),
        ("github.event.client_payload.github.payload.issue.number", Author.MAINTAINER),
        ("github.event.inputs.branch", Author.MAINTAINER),
        ("github.actor", Author.MAINTAINER),
        ("vars.IMAGE || secrets.TOKEN", Author.MAINTAINER),
        ("steps.meta.outputs.tag", Author.UNKNOWN),
        ("env.TAG", Author.UNKNOWN),
        ("a ~ b", Author.UNKNOWN),
    ],
)
def test_an_expression_is_an_outsiders_where_one_of_its_paths_is(body: str, author: Author) -> None:
    assert Trust([], list).of(body, Place()).author is author


CALLER = """\
on: [pull_request, workflow_dispatch]
jobs:
  test:
    strategy:
      matrix:
        arch: [gfx942, gfx90a]
    uses: ./.github/workflows/build.yml
    with:
      title: ${{ github.event.pull_request.title }}
      fixed: v1-${{ github.sha }}-${{ matrix.arch }}
      flag: ${{ github.event.pull_request.title }}
      computed: ${{ needs.plan.outputs.version }}
  relay:
    uses: ./.github/workflows/relay.yml
    with:
      ref: ${{ github.head_ref }}
  steps:
    runs-on: ubuntu-latest
    strategy:
      matrix: ${{ fromJSON(needs.plan.outputs.matrix) }}
    steps:
      - uses: ./.github/actions/greet
        with:
          who: ${{ github.event.issue.body }}
      - uses: ./.github/actions/wrap
        with:
          what: fixed
      - run: echo ${{ matrix.arch }}
"""
BUILD = """\
on:
  workflow_call:
    inputs:
      title: {type: string}
      fixed: {type: string}
      flag: {type: boolean}
      computed: {type: string}
      branch: {type: string}
      unused: {type: string, default: main}
  workflow_dispatch:
    inputs:
      note: {type: string}
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - run: echo
"""
RELAY = """\
on:
  workflow_call:
    inputs:
      ref: {type: string}
jobs:
  again:
    uses: ./.github/workflows/build.yml
    with:
      branch: ${{ inputs.ref }}
"""
LIBRARY = """\
on:
  workflow_call:
    inputs:
      anything: {type: string}
jobs:
  lone:
    runs-on: ubuntu-latest
    steps:
      - run: echo
"""
GREET = """\
name: greet
description: greet
inputs:
  who: {description: who}
  whom: {description: whom, default: "${{ github.head_ref }}"}
runs:
  using: composite
  steps:
    - run: echo
      shell: bash
"""
WRAP = """\
name: wrap
description: wrap
inputs:
  what: {description: what}
runs:
  using: composite
  steps:
    - uses: ./.github/actions/greet
      with:
        who: ${{ inputs.what }}
        whom: ${{ inputs.what }}
"""
CALLS = {
    ".github/workflows/ci.yml": CALLER,
    ".github/workflows/build.yml": BUILD,
    ".github/workflows/relay.yml": RELAY,
    ".github/workflows/library.yml": LIBRARY,
    ".github/actions/greet/action.yml": GREET,
    ".github/actions/wrap/action.yml": WRAP,
}


def _trust(root: Path) -> tuple[Trust, Workspace]:
    repository = Repository(root)
    workspace = Workspace(repository)
    context = RepositoryContext(workspace, [], lambda path: True)
    actions = [workspace.load(path, FileKind.ACTION).action for path in repository.actions]
    return Trust(context.workflows, lambda: [action for action in actions if action is not None]), workspace


def _at(workspace: Workspace, path: str, job: str | None = None) -> Place:
    file = workspace.load(path)
    if file.action is not None:
        return Place(action=file.action)
    assert file.workflow is not None
    return Place(file.workflow, file.workflow.jobs[job] if job else None)


@pytest.mark.parametrize(
    ("path", "body", "author"),
    [
        # A caller passes the pull request's title; the job that calls it passes constants, a SHA and a matrix
        # value written out in the job for `fixed`; a boolean holds no free text whatever is passed.
        (".github/workflows/build.yml", "inputs.title", Author.OUTSIDER),
        (".github/workflows/build.yml", "inputs.fixed", Author.MAINTAINER),
        (".github/workflows/build.yml", "inputs.flag", Author.MAINTAINER),
        (".github/workflows/build.yml", "inputs.computed", Author.UNKNOWN),
        (".github/workflows/build.yml", "inputs.unused", Author.MAINTAINER),
        (".github/workflows/build.yml", "inputs.note", Author.MAINTAINER),
        (".github/workflows/build.yml", "fromJSON(inputs.TITLE).x", Author.OUTSIDER),
        # Passed on by a reusable workflow that a pull request's job calls with its branch.
        (".github/workflows/build.yml", "inputs.branch", Author.OUTSIDER),
        # No workflow here calls it: whoever calls it from elsewhere chooses what to pass.
        (".github/workflows/library.yml", "inputs.anything", Author.MAINTAINER),
        (".github/actions/greet/action.yml", "inputs.who", Author.OUTSIDER),
        # Its default, the pull request's branch, where the workflow's step leaves it out.
        (".github/actions/greet/action.yml", "inputs.whom", Author.OUTSIDER),
        (".github/actions/wrap/action.yml", "inputs.what", Author.MAINTAINER),
        (".github/actions/wrap/action.yml", "inputs.undeclared", Author.MAINTAINER),
    ],
)
def test_an_input_is_an_outsiders_where_a_caller_here_passes_outsider_text(
    make_repo: MakeRepo,
    path: str,
    body: str,
    author: Author,
) -> None:
    trust, workspace = _trust(make_repo(CALLS))
    assert trust.of(body, _at(workspace, path)).author is author


def test_an_outsiders_input_notes_each_caller_that_passed_it(make_repo: MakeRepo) -> None:
    trust, workspace = _trust(make_repo(CALLS))
    control = trust.of("inputs.branch", _at(workspace, ".github/workflows/build.yml"))
    assert control.shown == "github.head_ref"
    assert [(note.span.path, note.span.line, note.span.column, note.message) for note in control.via] == [
        (".github/workflows/relay.yml", 9, 15, "job 'again' passes `github.head_ref`, which an outsider writes, "
         "as input `branch`"),
        (".github/workflows/ci.yml", 16, 12, "job 'relay' passes `github.head_ref`, which an outsider writes, "
         "as input `ref`"),
    ]  # fmt: skip
    via_step = trust.of("inputs.who", _at(workspace, ".github/actions/greet/action.yml")).via
    assert [(note.span.line, note.message) for note in via_step] == [
        (
            24,
            "step './.github/actions/greet' passes `github.event.issue.body`, which an outsider writes, as input `who`",
        )
    ]


def test_a_matrix_written_in_the_job_is_the_maintainers_and_one_computed_at_run_time_is_not_known(
    make_repo: MakeRepo,
) -> None:
    trust, workspace = _trust(make_repo(CALLS))
    assert trust.of("matrix.arch", _at(workspace, ".github/workflows/ci.yml", "test")).author is Author.MAINTAINER
    assert trust.of("matrix.arch", _at(workspace, ".github/workflows/ci.yml", "steps")).author is Author.UNKNOWN


def test_a_cycle_of_calls_ends(make_repo: MakeRepo) -> None:
    looping = """\
on:
  workflow_call:
    inputs:
      ref: {type: string}
jobs:
  again:
    uses: ./.github/workflows/{other}.yml
    with:
      ref: ${{ inputs.ref }}
"""
    root = make_repo(
        {
            ".github/workflows/a.yml": looping.replace("{other}", "b"),
            ".github/workflows/b.yml": looping.replace("{other}", "a"),
        }
    )
    trust, workspace = _trust(root)
    assert trust.of("inputs.ref", _at(workspace, ".github/workflows/a.yml")).author is Author.UNKNOWN
    # With a pull request's branch passed into the circle, both inputs carry it, whichever is asked first: what was
    # found for `b` while the circle was cut short at `a` is not kept as `b`'s answer.
    pull_request = (
        "on: pull_request\njobs:\n  go:\n    uses: ./.github/workflows/a.yml\n"
        "    with:\n      ref: ${{ github.head_ref }}\n"
    )
    (root / ".github/workflows/ci.yml").write_text(pull_request)
    trust, workspace = _trust(root)
    for path in (".github/workflows/a.yml", ".github/workflows/b.yml"):
        assert trust.of("inputs.ref", _at(workspace, path)).author is Author.OUTSIDER, path


# --- which substitutions print one field ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("substitution", "one"),
    [
        ("$(id -u)", True),
        ("`id -g`", True),
        ('$(id -un "$USER")', True),
        ("$(id -u $USER)", False),  # the unquoted user may be several words
        ("$(id -G)", False),
        ("$(nproc)", True),
        ("$(nproc --all)", True),
        ("$(getconf _NPROCESSORS_ONLN)", True),
        ("$(getent group video | cut -d: -f3)", True),
        ("$(getent passwd ci | cut -d : -f 4)", True),
        ("$(getent passwd ci | cut -d: -f5)", False),  # the full name
        ("$(getent group video | cut -f3)", False),
        ("$(cut -d: -f3 /etc/group)", False),
        ("$(date +%s)", True),
        ("$(date -u -d yesterday +%Y%m%d-%H%M%S)", True),
        ('$(date +"%Y %m")', False),
        ("$(date)", False),
        ("$(git rev-parse HEAD)", True),
        ("$(git -C src rev-parse --short=12 HEAD)", True),
        ("$(git rev-parse --abbrev-ref HEAD)", True),
        ("$(git rev-parse HEAD HEAD~1)", False),
        ("$(git rev-parse --show-toplevel)", False),
        ("$(git rev-list --count HEAD)", True),
        ("$(wc -l < requirements.txt)", True),
        ("$(ls build | wc -l)", True),
        ("$(wc -l requirements.txt)", False),  # the count and the file's name
        ("$(whoami)", True),
        ("$(uname -m)", True),
        ("$(uname -a)", False),
        ("$(pwd)", False),  # a path may hold a blank
        ("$(ls build)", False),
        ("$(find . -name '*.whl')", False),
        ("$(cat packages.txt)", False),
        ("$(git diff --name-only)", False),
        ("$(id -u; id -g)", False),
    ],
)
def test_a_substitution_prints_one_field_only_for_the_listed_programs(substitution: str, one: bool) -> None:
    script = parse_fragment(f"docker run --user {substitution} image")
    [found] = [block for node in walk(script) if isinstance(node, Word) for block in node.substitutions][:1]
    assert one_field(found) is one


# --- the profiles, with the real linters ---------------------------------------------------------------------------

PULL_REQUEST = """\
on:
  pull_request:
  workflow_dispatch:
    inputs:
      note: {type: string}
permissions: {}
jobs:
  title:
    runs-on: ubuntu-latest
    steps:
      - run: echo "${{ github.event.pull_request.title }}"
      - run: echo "${{ inputs.note }}"
      - run: docker run --user $(id -u):$(id -g) -v "$PWD:/w" image ls $(ls build)
  call:
    uses: ./.github/workflows/reusable.yml
    with:
      branch: ${{ github.event.pull_request.head.ref }}
      version: v1
"""
REUSABLE = """\
on:
  workflow_call:
    inputs:
      branch: {type: string}
      version: {type: string}
permissions: {}
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - run: echo "${{ inputs.branch }} ${{ inputs.version }}"
"""


def _found(root: Path, *options: str) -> list[tuple[str, int, int, int]]:
    result = run_cli("check", root, *options, "--output-format", "json")
    found = json.loads(result.out)["diagnostics"]
    return sorted(
        (item["code"], int(item["path"].endswith("reusable.yml")), item["line"], item["column"])
        for item in found
        if item["code"] in ("ZZ-template-injection", "SC2046")
    )


def test_the_default_profile_keeps_the_injections_outsiders_reach_and_the_splits_that_can_happen(
    make_repo: MakeRepo,
) -> None:
    root = make_repo({".github/workflows/ci.yml": PULL_REQUEST, ".github/workflows/reusable.yml": REUSABLE})
    outsiders = [("ZZ-template-injection", 0, 11, 24), ("ZZ-template-injection", 1, 11, 24)]
    split = [("SC2046", 0, 13, 72)]
    assert _found(root, "--backends", "zizmor,shellcheck") == sorted([*outsiders, *split])
    maintainers = [("ZZ-template-injection", 0, 12, 24), ("ZZ-template-injection", 1, 11, 45)]
    security = sorted([*outsiders, *maintainers, *split])
    assert _found(root, "--backends", "zizmor,shellcheck", "--profile", "security") == security
    one_field_splits = [("SC2046", 0, 13, 32), ("SC2046", 0, 13, 41)]
    assert _found(root, "--backends", "zizmor,shellcheck", "--profile", "all") == sorted([*security, *one_field_splits])
    # Named, a finding is kept whatever the profile says.
    assert _found(root, "--backends", "zizmor,shellcheck", "--select", "ZZ-template-injection,SC2046") == sorted(
        [*security, *one_field_splits]
    )


def test_an_injection_that_came_through_a_caller_notes_the_callers_value(make_repo: MakeRepo) -> None:
    root = make_repo({".github/workflows/ci.yml": PULL_REQUEST, ".github/workflows/reusable.yml": REUSABLE})
    found = json.loads(run_cli("check", root, "--backends", "zizmor", "--output-format", "json").out)["diagnostics"]
    [injection] = [item for item in found if item["path"].endswith("reusable.yml")]
    assert injection["related"][-1] == {
        "path": ".github/workflows/ci.yml",
        "line": 17,
        "column": 15,
        "end_line": 17,
        "end_column": 56,
        "message": "job 'call' passes `github.event.pull_request.head.ref`, which an outsider writes, as input "
        "`branch`",
    }


@pytest.mark.parametrize(
    ("placed", "profiles"),
    [(None, ["correctness", "security", "all"]), ("security", ["security", "all"]), ("all", ["all"])],
)
def test_a_finding_placed_by_the_repository_is_kept_from_its_profile_on(
    placed: str | None, profiles: list[str]
) -> None:
    finding = Diagnostic(
        "ZZ-template-injection", "zizmor-template-injection", Severity.ERROR, "m", Span.point("x.yml"),
        confidence="high", profile=placed,
    )  # fmt: skip
    kept = [name for name in ("correctness", "security", "all") if resolve(None, [], [], profile=name).keeps(finding)]
    assert kept == profiles
    # A placement never brings in what the finding's confidence leaves out.
    unsure = Diagnostic(finding.code, finding.rule, Severity.INFO, "m", finding.span, confidence="low", profile=placed)
    assert [name for name in kept if resolve(None, [], [], profile=name).keeps(unsure)] == ["all"]


def test_a_placed_finding_is_kept_between_runs_as_it_was_placed() -> None:
    finding = Diagnostic("SC2046", "shellcheck", Severity.WARNING, "m", Span.point("x.yml"), profile="all")
    assert decode_diagnostics(encode_diagnostics([finding])) == [finding]
    [stored] = encode_diagnostics([finding])
    with pytest.raises(ValueError, match="not a profile"):
        decode_diagnostics([{**stored, "profile": "strict"}])
