"""Hostile shapes of a pull request's files that used to stall the run, exhaust memory or crash it: the work they
cost is bounded and grows at most linearly with their size.

Work is counted, not timed: `_operations` counts the Python and C function calls a model build makes (the machine
running the tests may be busy), and `_peak` the most memory it held.
"""

from __future__ import annotations

import subprocess
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from types import FrameType

from hypothesis import given, settings
from hypothesis import strategies as st

from ci_checks.core import source
from ci_checks.model.files.docker import Image, image
from ci_checks.model.files.flow import Flow, Walker
from ci_checks.model.files.places import MAX_DEPTH, MAX_PATH, WORKSPACE, Place, Scope
from ci_checks.syntax import dockerfile
from ci_checks.syntax.shell import parse_fragment
from tests.ci.linter.conftest import MakeRepo, run_cli

WORKFLOW = ".github/workflows/ci.yml"


def _operations(work: Callable[[], object]) -> int:
    """How many function calls (Python's and C's) `work` makes."""
    count = 0

    def counted(frame: FrameType, event: str, argument: object) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    previous = sys.getprofile()
    sys.setprofile(counted)
    try:
        work()
    finally:
        sys.setprofile(previous)
    return count


def _peak(work: Callable[[], object]) -> int:
    """The most memory, in bytes, that `work` held at once."""
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _walked(script: str) -> Flow:
    """The flow of a `run:` script, each of its reads resolved (what a rule asks of it)."""
    flow = Flow()
    Walker(flow, None).script(parse_fragment(script), Scope(Place(WORKSPACE)))
    for read in flow.reads:
        flow.origin(read.reference.place, read.seq)
    return flow


def _built(text: str) -> Image:
    return image(dockerfile.parse(source.SourceFile("Dockerfile", text)), "Dockerfile", ".", lambda path: False)


def _stages(count: int) -> str:
    """A Dockerfile of `count` stages, each built from the one before and copying from the first."""
    lines = ["FROM ubuntu:22.04 AS s0", "COPY run.sh /opt/run.sh"]
    for index in range(1, count):
        lines += [f"FROM s{index - 1} AS s{index}", "COPY --from=s0 /opt/run.sh /opt/run.sh"]
    return "\n".join(lines) + "\n"


SHAPES: dict[str, Callable[[int], Callable[[], object]]] = {
    "cd chain": lambda n: lambda: _walked("cd a/b\n" * n + "bash x.sh\n"),
    "cd, write and read": lambda n: lambda: _walked("cd a/b\nmkdir -p c\nbash c/x.sh\n" * n),
    "doubling assignments": lambda n: lambda: _walked("a=x\n" + "a=$a$a\n" * n + 'bash "$a"\n'),
    "Dockerfile stages": lambda n: lambda: _built(_stages(n)),
    "doubling ENV": lambda n: lambda: _built("FROM ubuntu\nENV A=x\n" + "ENV A=$A$A\n" * n + "COPY $A /x\n"),
}


@settings(max_examples=10, deadline=None)
@given(shape=st.sampled_from(sorted(SHAPES)), size=st.integers(min_value=40, max_value=120))
def test_work_grows_at_most_linearly_with_the_size_of_a_hostile_shape(shape: str, size: int) -> None:
    """Four times the input costs at most about four times the operations (a square would cost sixteen)."""
    small = _operations(SHAPES[shape](size))
    large = _operations(SHAPES[shape](4 * size))
    assert large <= 6 * small, (shape, size, small, large)


def test_a_chain_of_thousands_of_cd_makes_the_working_directory_unknown_past_a_bounded_depth() -> None:
    """6,000 `cd a/b`: each read and write looks at the folders that hold its place, so no place is followed deeper
    than `MAX_DEPTH` folders (each read cost its depth, which grew with every `cd`)."""
    flow = _walked("cd a/b\nbash x.sh\n" * 6000)
    depths = [read.reference.place.path.count("/") for read in flow.reads]
    assert depths and max(depths) < MAX_DEPTH
    assert all(len(read.reference.place.path) <= MAX_PATH for read in flow.reads)
    assert flow.reads[0].reference.place == Place(WORKSPACE, "a/b")  # a shallow one is followed as before


def test_a_word_of_thousands_of_a_long_variable_is_unknown_without_being_built() -> None:
    """`a` of 4,000 characters, then a word of 20,000 `$a`: the expansion stops as soon as it is longer than
    any path, instead of building 80 MB first."""
    scope = Scope(Place(WORKSPACE), {"a": "x" * 4000})
    word = "$a" * 20_000
    assert _peak(lambda: scope.expand(word)) < 1_000_000
    assert scope.expand(word) is None
    assert scope.expand("$a/b") == "x" * 4000 + "/b"  # a long value alone is still substituted


def test_doubling_env_lines_and_a_word_of_many_of_them_are_unknown(make_repo: MakeRepo) -> None:
    """`ENV A=$A$A` 34 times, then an `ENV` of thousands of `$A`: every value is bounded, the copy source unknown."""
    text = "FROM ubuntu\nENV A=x\n" + "ENV A=$A$A\n" * 12 + "ENV B=" + "$A" * 20_000 + "\nCOPY $B /x\n"
    built = _built(text)
    assert len(built.stages[0].variables["A"] or "") == 4096
    assert built.stages[0].variables["B"] is None
    assert [found.place for found in built.sources] == [None]
    assert _peak(lambda: _built(text)) < 50_000_000


def test_a_repository_of_the_stall_shapes_is_checked_in_bounded_time(make_repo: MakeRepo) -> None:
    """6,000 `cd a/b` in a `run:` script, a word of thousands of a doubled variable, and a Dockerfile of 20,000
    stages: the run ends well inside a generous limit (each took minutes, or gigabytes, before)."""
    script = "a=x\n" + "a=$a$a\n" * 34 + 'bash "' + "$a" * 20_000 + '"\n' + "cd a/b\n" * 6000 + "bash x.sh\n"
    steps = "".join(f"          {line}\n" for line in script.splitlines())
    workflow = (
        "on: push\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n"
        f"      - run: |\n{steps}      - run: docker build .\n"
    )
    root = make_repo({WORKFLOW: workflow, "Dockerfile": _stages(20_000), "run.sh": "echo\n"})
    command = [sys.executable, "-m", "ci_checks.cli", "check", "--no-cache", "--backends", "none", str(root)]
    result = subprocess.run(command, capture_output=True, timeout=120, check=False, cwd=Path(__file__).parents[4])
    assert result.returncode in (0, 1), result.stderr
    assert b"internal error" not in result.stderr


NUL_WORKFLOW = """\
on: push
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: "./actions/a\\u0000b"
      - uses: ./actions/missing
      - run: bash ./build.sh
        working-directory: "sub\\u0000dir"
      - run: "git apply fix\\u0000.patch"
      - uses: actions/cache@v4
        with:
          path: build
          key: "${{ hashFiles('requirements\\u0000.txt') }}"
  call:
    uses: "./.github/workflows/r\\u0000.yml"
"""


def test_a_nul_in_a_path_a_workflow_names_is_a_finding_and_the_others_are_kept(make_repo: MakeRepo) -> None:
    """A NUL (`\\u0000` in a double-quoted YAML string) in a local action, a working directory, a patch or a reusable
    workflow names no file: each is reported where it is written, and the run's other findings stay (the file
    system's refusal was an internal error that lost every finding of the rule)."""
    root = make_repo({WORKFLOW: NUL_WORKFLOW})
    result = run_cli("check", root, "--no-cache", "--backends", "none", "--output-format", "concise")
    assert result.code == 1, result.err
    assert "internal error" not in result.err
    lines = result.out.splitlines()
    nul = "holds a NUL byte, which no file system accepts in a name: it names no file"
    assert any(line.startswith(f"{WORKFLOW}:7:15: CC041 `uses: ./actions/a␀b` {nul}") for line in lines), lines
    assert any(
        line.startswith(f"{WORKFLOW}:11:25: CC041 `git apply fix␀.patch` applies") and nul in line for line in lines
    )
    assert any(line.startswith(f"{WORKFLOW}:17:11: CC041") and nul in line for line in lines)
    assert any(line.startswith(f"{WORKFLOW}:8:15: CC041 `uses: ./actions/missing` names a folder") for line in lines)
    assert any(line.startswith(f"{WORKFLOW}:10:28: CC051") for line in lines)
