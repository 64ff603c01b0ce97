"""Policy language: constants read as Python iterates them, `**` PATHs, `referenced_by`, and concise rules."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from ci_checks.syntax.pysource import ConstantError, constant
from tests.ci.linter.conftest import MakeRepo, Result, run_cli

CI = """on:
  schedule:
    - cron: "0 15 * * 6"
    - cron: "0 1 * * *"
  workflow_dispatch:
    inputs:
      arch: {type: choice, options: [gfx942, gfx950]}
jobs:
  build-image:
    runs-on: ubuntu-latest
    steps:
      - run: docker build -t ci .
  stage-a-gpu-1:
    needs: build-image
    runs-on: [self-hosted, mi300x]
    steps:
      - run: pytest
"""

SCHEDULES = '''"""Which cron runs which suites."""
import os
from dataclasses import dataclass

from .common import BASE_ARCHES


@dataclass
class Policy:
    suites: tuple[str, ...]


WEEKLY = Policy(("slow",))
NIGHTLY = Policy(tuple(os.environ.get("SUITES", "fast").split(",")))
SCHEDULE_POLICIES = {"0 15 * * 6": WEEKLY, "0 1 * * *": NIGHTLY}
ARCHES = frozenset({"gfx950", "gfx942"})
ALL_ARCHES = (*BASE_ARCHES, "gfx950")
CRONS = list(SCHEDULE_POLICIES.keys())
SORTED = sorted(ARCHES | {"gfx1100"})
EXTRA = ["gfx942"]
EXTRA += ["gfx950"]
LOADED = load_policies()
'''


def check(make_repo: MakeRepo, rules: str, files: Mapping[str, str | bytes] | None = None) -> Result:
    tree = {
        ".github/workflows/ci.yml": CI,
        ".github/ci-checks.yml": f"version: 1\nrules:\n{rules}",
        "ci/schedules.py": SCHEDULES,
        "ci/common.py": 'BASE_ARCHES = ("gfx942",)\n',
        **(files or {}),
    }
    return run_cli("check", make_repo(tree), "--select", "CC1")


def _reader(files: dict[str, str]) -> Callable[[str], str | None]:
    return files.get


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("SCHEDULE_POLICIES", ["0 15 * * 6", "0 1 * * *"]),
        ("ARCHES", ["gfx942", "gfx950"]),
        ("ALL_ARCHES", ["gfx942", "gfx950"]),
        ("CRONS", ["0 15 * * 6", "0 1 * * *"]),
        ("SORTED", ["gfx1100", "gfx942", "gfx950"]),
        ("EXTRA", ["gfx942", "gfx950"]),
    ],
)
def test_a_constant_reads_as_python_iterates_it(name: str, value: list[str]) -> None:
    files = {"ci/schedules.py": SCHEDULES, "ci/common.py": 'BASE_ARCHES = ("gfx942",)\n'}
    assert constant(_reader(files), "ci/schedules.py", name) == value


def test_other_shapes_of_constants_read_as_python_iterates_them() -> None:
    module = """from enum import Enum
class Arch(str, Enum):
    MI300 = "gfx942"
    MI355 = "gfx950"
MEMBERS = [Arch.MI300, Arch.MI355.value]
TIMEOUT = 60
NAME = "nightly"
MATRIX = [{"arch": ["gfx942"]}, {"arch": {"gfx950"}}]
MERGED = {**{"a": 1}, "b": 2} | dict(c=3)
NEGATIVE = (-1, +2)
ANNOTATED: tuple[str, ...] = ("x",)
TWICE = ("old",)
TWICE = ("new",)
"""
    read = _reader({"m.py": module})
    assert constant(read, "m.py", "MEMBERS") == ["gfx942", "gfx950"]
    assert constant(read, "m.py", "TIMEOUT") == 60
    assert constant(read, "m.py", "NAME") == "nightly"
    assert constant(read, "m.py", "MATRIX") == [{"arch": ["gfx942"]}, {"arch": ["gfx950"]}]
    assert constant(read, "m.py", "MERGED") == ["a", "b", "c"]
    assert constant(read, "m.py", "NEGATIVE") == [-1, 2]
    assert constant(read, "m.py", "ANNOTATED") == ["x"]
    assert constant(read, "m.py", "TWICE") == ["new"]


@pytest.mark.parametrize(
    ("module", "error"),
    [
        ("X = compute()\n", "m.py:1 calls compute(), which only running it would tell"),
        ("X = [f'{a}' for a in B]\n", "m.py:1 is `[f'{a}' for a in B]`, which only running it would tell"),
        ("X = Y\nY = X\n", "X in m.py is defined in terms of itself"),
        ("X = 'a' * 3\n", "m.py:1 combines a str and an int with `*`, which only running it would tell"),
        ("from elsewhere import X\n", "X in m.py is imported from a module not in the repository"),
        ("def X():\n    pass\n", "X in m.py is bound by a `def`, which only running it would tell"),
        ("class X:\n    pass\n", "X in m.py is a class, not a value"),
        (
            "from enum import Enum\nclass Arch(Enum):\n    MI300 = 'gfx942'\nX = list(Arch)\n",
            "m.py:4 iterates the class Arch",
        ),
        ("A = 'ab'\n" + "".join(f"A{i + 1} = A{i or ''} + A{i or ''}\n" for i in range(20)), "more than 1,000,000"),
        ("X = [\n" * 2000 + "]" * 2000 + "\n", "m.py:201 has a Python syntax error: too many nested parentheses"),
        ("".join(f"X{i} = X{i + 1}\n" for i in range(5000)) + "X5000 = 1\n", "nested too deeply to be read"),
    ],
)
def test_a_constant_that_only_running_the_module_would_give_is_refused_with_why(module: str, error: str) -> None:
    name = "A20" if module.startswith("A = ") else "X0" if module.startswith("X0") else "X"
    with pytest.raises(ConstantError) as raised:
        constant(_reader({"m.py": module}), "m.py", name)
    assert error in str(raised.value)


def _crons_in(rule_id: str, name: str) -> str:
    """A rule that every cron of ci.yml is one of constant `name` of ci/schedules.py."""
    return (
        f"  - id: {rule_id}\n    kind: require\n    where: {{workflow: .github/workflows/ci.yml, trigger: schedule}}\n"
        f"    require:\n      - key: '[*].cron'\n        in: {{from: {{python: ci/schedules.py, name: {name}}}}}\n"
    )


def test_constants_from_a_dict_a_frozenset_and_an_imported_tuple_compare_in_the_policy(make_repo: MakeRepo) -> None:
    rules = (
        _crons_in("crons", "SCHEDULE_POLICIES")
        + """  - id: arches
    kind: require
    where: {workflow: .github/workflows/ci.yml, trigger: workflow_dispatch}
    require:
      - key: inputs.arch.options
        equals: {from: {python: ci/schedules.py, name: ARCHES}}
      - key: inputs.arch.options
        has: {from: {python: ci/schedules.py, name: ALL_ARCHES}}
"""
    )
    result = check(make_repo, rules)
    assert (result.code, result.headers, result.err) == (0, [], "")
    weekly_gone = CI.replace('    - cron: "0 15 * * 6"\n', '    - cron: "0 16 * * 6"\n')
    result = check(make_repo, rules, files={".github/workflows/ci.yml": weekly_gone})
    assert [h.split(": ", 1)[1] for h in result.headers] == [
        "CC102 `[0].cron` in trigger 'schedule' is '0 16 * * 6', not one of '0 15 * * 6', '0 1 * * *' [crons]"
    ]


def test_an_unreadable_constant_is_a_finding_of_each_rule_that_uses_it_and_the_others_run(make_repo: MakeRepo) -> None:
    rules = (
        _crons_in("first", "LOADED")
        + """  - id: second
    kind: forbid
    where: {workflow: .github/workflows/ci.yml}
    forbid:
      - key: jobs.*.runs-on
        has: {from: {python: ci/schedules.py, name: LOADED}}
  - id: third
    kind: require
    where: {workflow: .github/workflows/ci.yml, job: build-image}
    require:
      - key: timeout-minutes
"""
    )
    result = check(make_repo, rules)
    assert result.err == ""
    assert [h.split(": ", 1)[1] for h in result.headers] == [
        "CC106 cannot read LOADED: ci/schedules.py:22 calls load_policies(), which only running it would tell; "
        "this item of the rule is not checked [first]",
        "CC106 cannot read LOADED: ci/schedules.py:22 calls load_policies(), which only running it would tell; "
        "this item of the rule is not checked [second]",
        "CC102 job 'build-image' lacks `timeout-minutes` [third]",
    ]
    assert result.code == 1


def test_a_constant_file_is_read_from_the_repository_only(make_repo: MakeRepo, tmp_path: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("X = ['gfx942']\n", encoding="utf-8")
    rules = """  - id: r
    kind: require
    where: {workflow: .github/workflows/ci.yml, trigger: workflow_dispatch}
    require:
      - key: inputs.arch.options
        has: {from: {python: ci/link.py, name: X}}
"""
    root = make_repo({})
    (root / "ci").mkdir()
    (root / "ci" / "link.py").symlink_to(outside)
    result = check(make_repo, rules)
    assert result.err == ""
    assert [h.split(": ", 1)[1].split(" [")[0] for h in result.headers] == [
        "CC106 cannot read X: 'ci/link.py' does not exist in the repository; this item of the rule is not checked"
    ]


DECIDE = (
    CI
    + """  docker-decide:
    runs-on: ubuntu-latest
    outputs:
      build: ${{ steps.d.outputs.build }}
    steps:
      - id: d
        run: echo build=true >> "$GITHUB_OUTPUT"
"""
)


def test_a_double_star_path_finds_a_name_at_any_depth(make_repo: MakeRepo) -> None:
    nowhere = """  - id: no-decide
    kind: forbid
    where: {workflow: .github/workflows/*.yml}
    forbid:
      - key: '**.docker-decide'
      - key: '**'
        contains: docker-decide
"""
    assert check(make_repo, nowhere).code == 0
    needed = DECIDE.replace("  stage-a-gpu-1:\n    needs: build-image", "  stage-a-gpu-1:\n    needs: [docker-decide]")
    result = check(make_repo, nowhere, files={".github/workflows/ci.yml": needed})
    assert [h.split(": ", 1)[1] for h in result.headers] == [
        "CC101 `jobs.stage-a-gpu-1.needs[0]` is 'docker-decide', which is forbidden here (`**` contains "
        "'docker-decide') [no-decide]",
        "CC101 `jobs.docker-decide` is forbidden here [no-decide]",
    ]


@pytest.mark.parametrize(
    ("item", "holds"),
    [
        ("- key: 'jobs.**.run'\n  contains: pytest\n  count: 1", True),
        ("- key: '**.run'\n  count: 2", True),
        ("- key: '**.cron'\n  in: ['0 15 * * 6', '0 1 * * *']", True),
        ("- key: '**.cron'\n  equals: '0 1 * * *'", False),
        ("- key: '**.options'\n  has: [gfx950]", True),
        ("- key: 'on.**.arch.type'\n  equals: choice", True),
        ("- key: '**.**.runs-on'\n  count: 2", True),
        ("- key: 'jobs.**'\n  contains: mi300x\n  count: {min: 1}", True),
    ],
)
def test_a_double_star_path_descends_any_depth_none_included(make_repo: MakeRepo, item: str, holds: bool) -> None:
    indented = "".join(f"      {line}\n" for line in item.split("\n"))
    rules = f"  - id: r\n    kind: require\n    where: {{workflow: .github/workflows/ci.yml}}\n    require:\n{indented}"
    result = check(make_repo, rules)
    assert (result.code, result.err) == (0 if holds else 1, ""), result.out


NEWER = """name: GPU CI
description: Builds the image, then tests it
on:
  schedule:
    - cron: "0 15 * * 6"
      timezone: Europe/Paris
concurrency:
  group: gpu-ci
  queue: max
jobs:
  call:
    uses: $/.github/workflows/_run-ci.yml
  build:
    runs-on: ubuntu-latest
    cancel-timeout-minutes: 5
    concurrency:
      group: build
      queue: single
    steps:
      - uses: $/.github/actions/setup
      - uses: actions/checkout@v4
      - id: server
        run: ./serve
        background: true
      - parallel:
          - id: unit
            run: pytest tests/a
          - uses: $/.github/actions/setup
      - wait: [server]
      - wait-all:
      - cancel: server
"""
NEWER_FILES = {
    ".github/workflows/ci.yml": NEWER,
    ".github/workflows/_run-ci.yml": "on: workflow_call\njobs:\n  a:\n    runs-on: x\n    steps:\n      - run: echo\n",
    ".github/actions/setup/action.yml": "name: s\ndescription: s\nruns:\n  using: composite\n  steps:\n"
    "    - run: echo\n      shell: bash\n",
    "serve": "#!/bin/sh\n",
}


def test_the_keys_github_accepts_today_are_known_to_paths_and_found_by_items(make_repo: MakeRepo) -> None:
    rules = """  - id: newer
    kind: require
    where: {workflow: .github/workflows/ci.yml}
    require:
      - {key: concurrency.queue, equals: max}
      - {key: jobs.build.concurrency.queue, equals: single}
      - {key: 'on.schedule[*].timezone', equals: Europe/Paris}
      - {key: description, contains: image}
      - {key: jobs.build.cancel-timeout-minutes, equals: 5}
      - {key: 'jobs.build.steps[*].background', equals: true}
      - {key: 'jobs.build.steps[*].wait', has: [server]}
      - {key: 'jobs.build.steps[*].cancel', equals: server}
      - {key: 'jobs.build.steps[*].wait-all'}
      - {key: 'jobs.build.steps[*].parallel[*].run', contains: pytest, count: 1}
      - {key: 'jobs.*.uses', matches: '^\\$/'}
  - id: in-groups
    kind: require
    where: {workflow: .github/workflows/ci.yml, job: build}
    require:
      - command: pytest tests/a
      - step: {uses: $/.github/actions/setup}
        count: 2
      - step: {uses: .github/actions/setup}
        count: 2
  - id: group-step
    kind: require
    where: {workflow: .github/workflows/ci.yml, step: unit}
    require:
      - {key: run, contains: pytest}
"""
    result = run_cli("check", make_repo({**NEWER_FILES, ".github/ci-checks.yml": f"version: 1\nrules:\n{rules}"}))
    assert (result.code, result.headers, result.err) == (0, [], ""), result.out


def test_no_rule_flags_the_keys_github_accepts_today(make_repo: MakeRepo) -> None:
    """CC020 (the schema), CC030 (`uses`), CC040 (the workspace before a checkout) and CC041 (dangling `$/` paths)."""
    root = make_repo(NEWER_FILES)
    result = run_cli("check", root, "--select", "CC0")
    assert (result.code, result.headers, result.err) == (0, [], "")
    (root / ".github" / "actions" / "setup" / "action.yml").unlink()
    result = run_cli("check", root, "--select", "CC0")
    assert [h.split(": ", 1)[1] for h in result.headers] == [
        "CC041 `uses: $/.github/actions/setup` names a folder without action.yml or action.yaml",
        "CC041 `uses: $/.github/actions/setup` names a folder without action.yml or action.yaml",
    ]


ORPHANS = {
    ".github/workflows/ci.yml": """on: push
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with: {path: src}
      - uses: ./src/.github/actions/setup
      - run: |
          docker build -f docker/Dockerfile.rocm .
          bash scripts/run.sh
        working-directory: src
      - uses: docker/build-push-action@v6
        with: {file: src/docker/Dockerfile.cuda}
""",
    ".github/actions/setup/action.yml": "name: s\ndescription: s\nruns:\n  using: composite\n  steps:\n"
    '    - run: pip install -r "$GITHUB_ACTION_PATH/requirements.txt"\n      shell: bash\n',
    ".github/actions/setup/requirements.txt": "torch\n",
    ".github/actions/unused/action.yml": "name: u\ndescription: u\nruns:\n  using: composite\n  steps: []\n",
    "docker/Dockerfile.rocm": "FROM rocm/pytorch\nCOPY docker/amd_patch/latest/megatron.patch /tmp/p.patch\n"
    "COPY docker/common /opt/common\nCOPY docker/*.sh /opt/\nCOPY . /src\n",
    "docker/Dockerfile.cuda": "FROM nvidia/cuda\n",
    "docker/Dockerfile.old": "FROM nvidia/cuda\n",
    "docker/amd_patch/latest/megatron.patch": "diff\n",
    "docker/amd_patch/sglv0.5.10/megatron.patch": "diff\n",
    "docker/common/env.sh": "export A=1\n",
    "docker/entry.sh": "#!/bin/sh\n",
    "scripts/run.sh": "#!/bin/sh\ngit apply patches/fix.patch\npython tools/apply.py\n",
    "scripts/stale.sh": "#!/bin/sh\n",
    "patches/fix.patch": "diff\n",
    "patches/by-python.patch": "diff\n",
    "patches/orphan.patch": "diff\n",
    "tools/apply.py": 'import subprocess\nsubprocess.run(["git", "apply", "patches/by-python.patch"])\n',
}


def _files_that(
    make_repo: MakeRepo, condition: str, glob: str = "**", more: Mapping[str, str | bytes] | None = None
) -> list[str]:
    rules = f"  - id: r\n    kind: forbid\n    forbid:\n      - file: '{glob}'\n        referenced_by: {condition}\n"
    root = make_repo({**ORPHANS, **(more or {}), ".github/ci-checks.yml": f"version: 1\nrules:\n{rules}"})
    result = run_cli("check", root, "--select", "CC1")
    assert result.err == ""
    return [h.split(":", 1)[0] for h in result.headers]


def test_referenced_by_false_finds_the_files_nothing_in_the_repository_refers_to(make_repo: MakeRepo) -> None:
    assert _files_that(make_repo, "false") == [
        ".github/actions/unused/action.yml",
        ".github/ci-checks.yml",
        ".github/workflows/ci.yml",
        "docker/Dockerfile.old",
        "docker/amd_patch/sglv0.5.10/megatron.patch",
        "patches/orphan.patch",
        "scripts/stale.sh",
    ]


def test_a_script_refers_to_a_file_beside_it_and_a_copy_from_another_stage_to_none(make_repo: MakeRepo) -> None:
    more = {
        "scripts/nightly.sh": "#!/bin/sh\nbash lib.sh\n",
        "scripts/lib.sh": "#!/bin/sh\n",
        "docker/Dockerfile.multi": "FROM a AS build\nFROM b\nCOPY --from=build patches/orphan.patch /x.patch\n",
    }
    assert _files_that(make_repo, "scripts/nightly.sh", more=more) == ["scripts/lib.sh"]
    assert _files_that(make_repo, "docker/Dockerfile.multi", more=more) == []


def test_a_dockerfile_refers_to_its_copy_and_add_sources_and_a_python_file_to_its_path_literals(
    make_repo: MakeRepo,
) -> None:
    more: dict[str, str | bytes] = {
        "docker/Dockerfile.copy": "FROM a\nLABEL notes/label.txt notes/other.txt x\nCOPY --chown=1 notes/a.txt /a\n"
        "ADD notes/b.txt https://example.com/c.txt $HOME/d ${X}/e /opt/\nCOPY notes/[ab.txt /x\nCOPY . /src\n",
        "tools/paths.py": 'A = "./notes/c.txt"\nB = " ./scripts/stale.sh "\n'
        'C = "notes/label.txt./"\nD = "/notes/d.txt"\n',
        "tools/broken.py": 'A = "notes/e.txt"\ndef broken(:\n',
        "notes/label.txt": "",
        "notes/other.txt": "",
        "notes/a.txt": "",
        "notes/b.txt": "",
        "notes/c.txt": "",
        "notes/d.txt": "",
        "notes/e.txt": "",
        "scripts/unreadable.sh": b"bash notes/other.txt\n\xff\n",
    }
    assert _files_that(make_repo, "docker/Dockerfile.copy", more=more) == ["notes/a.txt", "notes/b.txt"]
    assert _files_that(make_repo, "tools/*.py", more=more) == [
        "notes/c.txt",
        "patches/by-python.patch",
        "scripts/stale.sh",
    ]
    assert _files_that(make_repo, "scripts/unreadable.sh", more=more) == []


def test_referenced_by_a_glob_or_true_finds_the_files_those_refer_to(make_repo: MakeRepo) -> None:
    assert _files_that(make_repo, ".github/workflows/*.yml") == [
        ".github/actions/setup/action.yml",
        "docker/Dockerfile.cuda",
        "docker/Dockerfile.rocm",
        "scripts/run.sh",
    ]
    assert _files_that(make_repo, "[scripts/*.sh, tools/*.py]", "patches/*") == [
        "patches/by-python.patch",
        "patches/fix.patch",
    ]
    assert _files_that(make_repo, "true", "docker/**") == [
        "docker/Dockerfile.cuda",
        "docker/Dockerfile.rocm",
        "docker/amd_patch/latest/megatron.patch",
        "docker/common/env.sh",
        "docker/entry.sh",
    ]


def test_a_file_item_says_who_refers_to_what_it_finds(make_repo: MakeRepo) -> None:
    rules = """  - id: built
    kind: forbid
    forbid:
      - file: docker/Dockerfile.cuda
        referenced_by: true
  - id: applied
    kind: require
    require:
      - file: 'patches/*.patch'
        referenced_by: '**/*.py'
        count: 2
  - id: orphans
    kind: require
    require:
      - file: 'patches/*.patch'
        referenced_by: false
        count: 0
  - id: run
    kind: require
    require:
      - file: 'scripts/*.sh'
        referenced_by: true
        count: 2
"""
    root = make_repo({**ORPHANS, ".github/ci-checks.yml": f"version: 1\nrules:\n{rules}"})
    result = run_cli("check", root, "--select", "CC1")
    assert [h.split(": ", 1)[1] for h in result.headers] == [
        "CC102 the repository has a file matching 'patches/*.patch' that '**/*.py' refers to 1 time, not exactly "
        "2: patches/by-python.patch [applied]",
        "CC102 the repository has a file matching 'patches/*.patch' that nothing refers to 1 time, not exactly 0: "
        "patches/orphan.patch [orphans]",
        "CC102 the repository has a file matching 'scripts/*.sh' that something refers to 1 time, not exactly 2: "
        "scripts/run.sh [run]",
        "CC101 docker/Dockerfile.cuda, which .github/workflows/ci.yml refers to, is forbidden here [built]",
    ]


def test_a_file_referred_to_by_many_names_the_first_three_and_counts_the_rest(make_repo: MakeRepo) -> None:
    rules = (
        "  - id: many\n    kind: forbid\n    forbid:\n      - file: docker/Dockerfile.x\n        referenced_by: true\n"
    )
    tools = {f"tools/t{number}.py": 'open("docker/Dockerfile.x")\n' for number in range(1, 6)}
    root = make_repo({**tools, "docker/Dockerfile.x": "FROM scratch\n", ".github/ci-checks.yml": f"rules:\n{rules}"})
    assert run_cli("check", root, "--select", "CC1").headers == [
        "docker/Dockerfile.x:1:1: CC101 docker/Dockerfile.x, which tools/t1.py, tools/t2.py, tools/t3.py and 2 "
        "more refer to, is forbidden here [many]"
    ]
    for extra in ("tools/t4.py", "tools/t5.py"):
        (root / extra).unlink()
    assert run_cli("check", root, "--select", "CC1").headers == [
        "docker/Dockerfile.x:1:1: CC101 docker/Dockerfile.x, which tools/t1.py, tools/t2.py, tools/t3.py refer to, "
        "is forbidden here [many]"
    ]


def test_text_and_regex_items_find_only_what_is_inside_their_scope_and_count_each_occurrence(
    make_repo: MakeRepo,
) -> None:
    """`sudo` is only in job a, `make docs` and `||` only in job b: a search in one job does not reach into the other,
    before it or after it; a one-character text is counted at each place, next to each other too."""
    workflow = (
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: sudo make\n"
        '  b:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo "a || b" && make docs\n'
    )
    ci = "{workflow: .github/workflows/ci.yml, job: %s}"
    rules = f"""  - id: sudo-in-a
    kind: forbid
    where: {ci % "a"}
    forbid: [{{regex: 'sudo\\s'}}]
  - id: sudo-in-b
    kind: forbid
    where: {ci % "b"}
    forbid: [{{regex: 'sudo\\s'}}]
  - id: docs-in-a
    kind: forbid
    where: {ci % "a"}
    forbid: [{{text: make docs}}]
  - id: pipes-in-b
    kind: require
    where: {ci % "b"}
    require: [{{text: '|', count: 2}}]
"""
    root = make_repo({".github/workflows/ci.yml": workflow, ".github/ci-checks.yml": f"version: 1\nrules:\n{rules}"})
    assert run_cli("check", root, "--select", "CC1").headers == [
        ".github/workflows/ci.yml:6:14: CC101 /sudo\\s/ is forbidden here (found 'sudo ') [sudo-in-a]"
    ]


def test_a_python_string_refers_to_a_path_with_a_slash_or_a_dot_and_only_build_push_file_names_a_dockerfile(
    make_repo: MakeRepo,
) -> None:
    """`bin/launch` and `setup.cfg` are each named by a Python string; the `file:` input of an action other than
    docker/build-push-action names nothing ci-checks knows to be read."""
    forbid = "  - id: {name}\n    kind: forbid\n    forbid:\n      - file: {path}\n        referenced_by: {by}\n"
    rules = "".join(
        forbid.format(name=name, path=path, by=by)
        for name, path, by in (
            ("launch", "bin/launch", "true"),
            ("cfg", "setup.cfg", "true"),
            ("y", "docker/y", "false"),
        )
    )
    workflow = (
        "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@v4\n      - uses: other/action@v1\n        with: {file: docker/y}\n"
    )
    files = {
        "tools/go.py": 'open("bin/launch")\nopen("setup.cfg")\n',
        "bin/launch": "",
        "setup.cfg": "",
        "docker/y": "",
    }
    root = make_repo({**files, ".github/workflows/ci.yml": workflow, ".github/ci-checks.yml": f"rules:\n{rules}"})
    assert run_cli("check", root, "--select", "CC1").headers == [
        "bin/launch:1:1: CC101 bin/launch, which tools/go.py refers to, is forbidden here [launch]",
        "docker/y:1:1: CC101 docker/y, which nothing in the repository refers to, is forbidden here [y]",
        "setup.cfg:1:1: CC101 setup.cfg, which tools/go.py refers to, is forbidden here [cfg]",
    ]


def test_a_script_too_deep_to_read_is_reported_to_a_rule_of_commands_where_it_goes_too_deep(
    make_repo: MakeRepo,
) -> None:
    """A text item reads the text, which is there; a command item would need the commands, which are not."""
    deep = "if true; then " * 101 + "git apply amd.patch" + "; fi" * 101
    workflow = f"on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: {deep}\n"
    rule = "  - id: {}\n    kind: forbid\n    where: {{workflow: .github/workflows/ci.yml}}\n    forbid: [{}]\n"
    rules = rule.format("commands", "{command: git apply}") + rule.format("texts", "{text: amd.patch}")
    root = make_repo({".github/workflows/ci.yml": workflow, ".github/ci-checks.yml": f"rules:\n{rules}"})
    run = len("      - run: ")
    too_deep = run + len("if true; then ") * 99 + len("if ") + 1  # `true`, the 101st statement inside another
    text = run + len("if true; then ") * 101 + len("git apply ") + 1
    assert run_cli("check", root, "--select", "CC1").headers == [
        f".github/workflows/ci.yml:6:{too_deep}: CC106 shell statements are nested more than 100 deep; not checked by "
        "this rule [commands]",
        f".github/workflows/ci.yml:6:{text}: CC101 'amd.patch' is forbidden here [texts]",
    ]


def _headers(make_repo: MakeRepo, rules: str, files: dict[str, str] | None = None) -> list[str]:
    result = check(make_repo, rules, files)
    assert result.err == "", result.err
    return [h.split(": ", 1)[1] if h.startswith(".github/workflows") else h for h in result.headers]


def test_one_rule_holds_several_scopes_and_items_each_with_its_own_where(make_repo: MakeRepo) -> None:
    rules = """  - id: gpu-ci
    kind: require
    where: {workflow: .github/workflows/ci.yml}
    require:
      - key: '[*].cron'
        in: {from: {python: ci/schedules.py, name: SCHEDULE_POLICIES}}
        where: {trigger: schedule}
      - key: needs
        has: [build-image]
        where: {job: 'stage-*-gpu-*'}
      - command: docker build
        where: {job: build-image}
      - text: BASE_ARCHES
        where: {files: ci/common.py}
      - key: jobs.build-image.runs-on
"""
    assert _headers(make_repo, rules) == []
    broken = CI.replace("needs: build-image", "needs: lint").replace("docker build", "docker pull")
    assert _headers(make_repo, rules, {".github/workflows/ci.yml": broken}) == [
        "CC102 job 'build-image' lacks `docker build` [gpu-ci]",
        "CC102 `needs` in job 'stage-a-gpu-1' is ['lint'], without 'build-image' [gpu-ci]",
    ]


def test_a_where_may_list_several_scopes_and_a_list_of_names_must_all_exist(make_repo: MakeRepo) -> None:
    other = "on: push\njobs:\n  test:\n    runs-on: [self-hosted, mi300x]\n    steps:\n      - run: pytest\n"
    rules = """  - id: gpu-jobs
    kind: require
    where:
      - {workflow: .github/workflows/ci.yml, job: [build-image, stage-a-gpu-1]}
      - {workflow: .github/workflows/other.yml, job: test}
    require:
      - key: runs-on
"""
    assert _headers(make_repo, rules) == [
        ".github/ci-checks.yml:7:9: CC104 `where` selects nothing: no file matches '.github/workflows/other.yml' "
        "[gpu-jobs]"
    ]
    assert _headers(make_repo, rules, {".github/workflows/other.yml": other}) == []
    renamed = CI.replace("stage-a-gpu-1:", "stage-a-gpu-2:")
    assert _headers(make_repo, rules, {".github/workflows/other.yml": other, ".github/workflows/ci.yml": renamed}) == [
        ".github/ci-checks.yml:6:65: CC104 `where` names job 'stage-a-gpu-1', which matches nothing (jobs there: "
        "build-image, stage-a-gpu-2) [gpu-jobs]",
    ]
    globbed = rules.replace("[build-image, stage-a-gpu-1]", "[build-image, 'stage-b-*']")
    assert _headers(make_repo, globbed, {".github/workflows/ci.yml": CI}) == []
    two_files = """  - id: both
    kind: forbid
    where: {files: [ci/schedules.py, ci/gone.py]}
    forbid:
      - text: amd_patch
"""
    assert _headers(make_repo, two_files) == [
        ".github/ci-checks.yml:5:38: CC104 `where` names file 'ci/gone.py', which does not exist [both]"
    ]


def test_a_listed_path_written_with_a_leading_dot_slash_names_the_file_without_it(make_repo: MakeRepo) -> None:
    rules = """  - id: both
    kind: forbid
    where: {workflow: [./.github/workflows/ci.yml, ./gone.yml]}
    forbid:
      - text: amd_patch
"""
    assert _headers(make_repo, rules) == [
        ".github/ci-checks.yml:5:52: CC104 `where` names workflow './gone.yml', which does not exist [both]"
    ]
    files = rules.replace(
        "workflow: [./.github/workflows/ci.yml, ./gone.yml]", "files: [./ci/schedules.py, ./ci/gone.py]"
    )
    assert _headers(make_repo, files) == [
        ".github/ci-checks.yml:5:40: CC104 `where` names file './ci/gone.py', which does not exist [both]"
    ]


def test_the_items_of_an_order_rule_take_no_where_of_their_own(make_repo: MakeRepo) -> None:
    rules = """  - id: o
    kind: order
    where: {workflow: .github/workflows/ci.yml}
    order:
      - command: docker build
      - command: pytest
        where: {job: stage-a-gpu-1}
"""
    result = check(make_repo, rules)
    assert result.code == 2
    assert result.err.startswith(".github/ci-checks.yml:9:9: error: the items of an `order` rule are ordered")
    bad = "  - id: r\n    kind: require\n    where: {workflow: x.yml}\n    require:\n      - command: a\n"
    bad += "        where: {jobs: x}\n"
    result = check(make_repo, bad)
    assert result.code == 2
    assert "unknown key of an item's `where` 'jobs' (did you mean 'job'?)" in result.err


@pytest.mark.parametrize(
    ("item", "holds"),
    [
        ("key: '[*].cron'\n  set: {from: {python: ci/schedules.py, name: SCHEDULE_POLICIES}}", True),
        ("key: '[*].cron'\n  set: ['0 1 * * *', '0 15 * * 6']", True),
        ("key: '[*].cron'\n  set: ['0 1 * * *']", False),
        ("key: '[*].cron'\n  set: ['0 1 * * *', '0 15 * * 6', '0 2 * * *']", False),
    ],
)
def test_a_set_is_what_the_selected_values_are_together(make_repo: MakeRepo, item: str, holds: bool) -> None:
    rules = "  - id: r\n    kind: require\n    where: {workflow: .github/workflows/ci.yml, trigger: schedule}\n"
    indented = item.replace("\n", "\n      ")
    result = check(make_repo, rules + f"    require:\n      - {indented}\n")
    assert (result.code, result.err) == (0 if holds else 1, ""), result.out


def test_a_set_names_what_is_extra_and_what_is_missing(make_repo: MakeRepo) -> None:
    rules = """  - id: crons
    kind: require
    where: {workflow: .github/workflows/ci.yml, trigger: schedule}
    require:
      - key: '[*].cron'
        set: ['0 15 * * 6', '0 2 * * *']
  - id: needs
    kind: require
    where: {workflow: .github/workflows/ci.yml, job: stage-a-gpu-1}
    require:
      - {key: needs, set: [build-image]}
"""
    assert _headers(make_repo, rules) == [
        "CC102 `[*].cron` in trigger 'schedule' lacks '0 2 * * *' of the set ['0 15 * * 6', '0 2 * * *'] [crons]",
        "CC102 `[1].cron` in trigger 'schedule' holds '0 1 * * *', which the set ['0 15 * * 6', '0 2 * * *'] does not "
        "[crons]",
    ]
    forbidden = rules.replace("crons\n    kind: require", "crons\n    kind: forbid").replace(
        "    require:\n      - key: '[*]", "    forbid:\n      - key: '[*]"
    )
    result = check(make_repo, forbidden)
    assert result.code == 2
    assert "`set` judges the values a PATH selects together, in a `require` rule without `count`" in result.err


def test_a_large_constant_against_many_values_is_judged_without_comparing_every_pair(make_repo: MakeRepo) -> None:
    """Not a speed goal: a constant and a workflow both come from a pull request; 20,000 by 2,000 comparisons of
    GitHub readings one by one took minutes."""
    crons = "".join(f'    - cron: "{i % 60} {i % 24} * * *"\n' for i in range(2000))
    workflow = f"on:\n  schedule:\n{crons}jobs:\n  a:\n    runs-on: x\n    steps:\n      - run: make\n"
    values = ", ".join(repr(f"{i % 60} {i % 24} * * {i}") for i in range(20_000))
    rules = """  - id: big
    kind: require
    where: {workflow: .github/workflows/ci.yml, trigger: schedule}
    require:
      - key: '[*].cron'
        set: {from: {python: ci/big.py, name: BIG}}
      - key: '[*].cron'
        in: {from: {python: ci/big.py, name: BIG}}
        count: {min: 0}
"""
    started = time.perf_counter()
    result = check(make_repo, rules, {".github/workflows/ci.yml": workflow, "ci/big.py": f"BIG = {{{values}}}\n"})
    assert time.perf_counter() - started < 30
    assert len(result.headers) == 1 + 2000  # the values lacking, then each cron that is not one of them
    assert " lacks '0 0 * * 0', " in result.headers[0]
    assert len(result.headers[0]) < 2000
