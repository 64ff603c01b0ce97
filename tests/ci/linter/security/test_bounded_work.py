"""Small files that spell a great deal: a policy's Python constant, CC042's Python paths and its mention scan.

Each attack is built for real and checked by ci-checks as its own process under a wall ceiling far above what a
bounded run takes (seconds) and far below what the unbounded one took (minutes to hours); the properties count the
work itself (steps, words) on growing inputs, never time.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ci_checks.core import source
from ci_checks.model.files import python as python_paths
from ci_checks.rules import cc042_orphan_patch as cc042
from ci_checks.syntax import pysource

CEILING = 60
"""Seconds a run may take before it counts as a stall: each attack below took minutes or more before."""
KEYS = "abcdefghijklmnop"
PATCH = "diff --git a/x b/x\n"
WORKFLOW = "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: make\n"


def _nested_dicts(levels: int, fan_out: int = 16) -> str:
    """`D0` a dict of `fan_out` keys; each `D{n}` a dict whose every value is `D{n-1}`; `X = [D{levels}]`, which
    the policy reads whole: `fan_out ** levels` dicts spelled in a few hundred bytes."""
    keys = KEYS[:fan_out]
    lines = ["D0 = {" + ", ".join(f'"{key}": 1' for key in keys) + "}"]
    lines += [f"D{n} = {{" + ", ".join(f'"{key}": D{n - 1}' for key in keys) + "}" for n in range(1, levels + 1)]
    return "\n".join([*lines, f"X = [D{levels}]"]) + "\n"


def _doubling_strings(count: int) -> str:
    """`v0 = "x"`, then each `v{n} = v{n-1} + v{n-1}`: the last spells `2 ** (count - 1)` characters."""
    lines = ['v0 = "x"'] + [f"v{n} = v{n - 1} + v{n - 1}" for n in range(1, count)]
    return "\n".join([*lines, f'TARGET = v{count - 1} + "/fix.patch"']) + "\n"


def _check(root: Path, *select: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "ci_checks.cli", "check", str(root), "--no-cache", "--backends", "none"]
    command += ["--output-format", "concise", "--select", ",".join(select)]
    return subprocess.run(command, capture_output=True, text=True, timeout=CEILING, check=False)


def _repository(root: Path, files: dict[str, str]) -> Path:
    (root / ".git").mkdir(parents=True)
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content, encoding="utf-8")
    return root


# --- a policy's Python constant ----------------------------------------------------------------------------------


POLICY = """version: 1
rules:
  - id: known-jobs
    kind: require
    where: {workflow: .github/workflows/ci.yml}
    require:
      - key: 'on'
        in: {from: {python: ci/matrix.py, name: X}}
"""


def test_a_constant_of_dicts_that_name_each_other_is_an_unreadable_finding_not_millions_of_dicts(
    tmp_path: Path,
) -> None:
    module = _nested_dicts(6)
    assert len(module.encode()) < 1100  # sixteen million dicts
    files = {".github/workflows/ci.yml": WORKFLOW, ".github/ci-checks.yml": POLICY, "ci/matrix.py": module}
    result = _check(_repository(tmp_path / "repo", files), "CC1")
    assert "internal error" not in result.stderr
    assert "cannot read X: reading it takes more than 1,000,000 steps" in result.stdout
    assert result.stdout.count("CC106") == 1


def _read_constant(module: str) -> tuple[object | pysource.ConstantError, int]:
    """What reading `X` gives (or the error), and the steps it took."""
    modules = pysource._Modules({"m.py": module}.get)
    try:
        return modules.constant("m.py", "X"), modules.steps
    except pysource.ConstantError as error:
        return error, modules.steps


def _values(value: object) -> int:
    if isinstance(value, dict):
        return 1 + sum(_values(item) for item in value.values())
    if isinstance(value, list):
        return 1 + sum(_values(item) for item in value)
    return 1


@settings(max_examples=25, deadline=None)
@given(levels=st.integers(0, 6), fan_out=st.integers(1, 8))
def test_reading_a_constant_costs_what_it_spells_and_never_more_than_the_budget(levels: int, fan_out: int) -> None:
    """Steps grow with the text and the values given back, at most linearly, and stop at the budget."""
    module = _nested_dicts(levels, fan_out)
    value, steps = _read_constant(module)
    if isinstance(value, pysource.ConstantError):
        assert "steps" in str(value) or "elements" in str(value)
        assert steps <= pysource._STEPS + 2 * len(module)
    else:
        assert steps <= 4 * (len(module) + _values(value))


# --- CC042: paths a Python file spells ---------------------------------------------------------------------------


def test_forty_doubling_strings_next_to_a_stray_patch_are_read_in_seconds(tmp_path: Path) -> None:
    files = {".github/workflows/ci.yml": WORKFLOW, "tools/build.py": _doubling_strings(40), "stray.patch": PATCH}
    result = _check(_repository(tmp_path / "repo", files), "CC042")
    assert "internal error" not in result.stderr
    assert result.stdout.splitlines()[0].startswith("stray.patch:1:1: CC042 patch `stray.patch` is applied by nothing")


def _path_work(module: str) -> int:
    """The steps evaluating the last assignment's value takes, with no budget to stop it."""
    tree = pysource.parse(module)
    evaluator = python_paths._Evaluator("tools/build.py", python_paths._assignments(tree), steps=sys.maxsize)
    last = tree.body[-1]
    assert isinstance(last, ast.Assign)
    evaluator.value(last.value)
    return sys.maxsize - evaluator.steps


@settings(max_examples=30, deadline=None)
@given(count=st.integers(1, 200))
def test_the_work_of_doubling_strings_grows_linearly_with_their_lines(count: int) -> None:
    """Each line is evaluated once, and no value spells more than the longest path."""
    assert _path_work(_doubling_strings(count)) <= (count + 1) * (3 * python_paths._LONGEST + 8)


def test_a_doubled_path_is_still_known_when_it_is_short() -> None:
    """The budget leaves ordinary paths alone: a name used twice is the same path at both places."""
    module = 'BASE = "docker/patches"\nNAME = BASE + "/fix.patch"\nBOTH = [NAME, NAME + ".orig"]\n'
    mentions = python_paths.path_mentions(source.decode("tools/build.py", module.encode()), "tools/build.py")
    assert [mention.path for mention in mentions] == [
        "docker/patches",
        "docker/patches/fix.patch",
        "docker/patches/fix.patch.orig",
    ]


# --- CC042: the mention scan -------------------------------------------------------------------------------------


def test_a_json_file_of_one_long_word_next_to_a_stray_patch_is_scanned_in_seconds(tmp_path: Path) -> None:
    files = {".github/workflows/ci.yml": WORKFLOW, "data.json": '"' + "a" * 400_000 + '"\n', "stray.patch": PATCH}
    result = _check(_repository(tmp_path / "repo", files), "CC042")
    assert "internal error" not in result.stderr
    assert result.stdout.splitlines()[0].startswith("stray.patch:1:1: CC042 patch `stray.patch` is applied by nothing")


_BACKTRACKING = re.compile(r"[\w./*?${}@+-]*(?:/|\.(?:patch|diff)(?![\w-]))[\w./*?${}@+-]*")
"""The pattern the scan replaced, kept here to show that the scan finds what it found, without its square cost."""
_PIECES = st.sampled_from(["a", "/", ".", ".patch", ".diff", "-", " ", "*", "$", "{", "}", "\n", "é", "`", "x.y"])


@settings(max_examples=200, deadline=None)
@given(pieces=st.lists(_PIECES, max_size=40))
def test_the_scan_finds_the_mentions_the_backtracking_pattern_found(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert list(cc042._mentions(text)) == [(found.start(), found.group()) for found in _BACKTRACKING.finditer(text)]
