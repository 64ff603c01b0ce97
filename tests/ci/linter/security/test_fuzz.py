"""Property-based: mutated real-shaped files never crash, stall or misplace a finding, in any format.

Each example is a repository of a workflow, a composite action, a policy, a
Dockerfile, a shell script and a Python file, all of the shapes ML
repositories write, with one or two of them mutated: bytes flipped, cut
short, YAML and shell tokens inserted, Unicode line separators, byte-order
marks, CRLF and lone CR line ends, deep nesting, bytes that are not UTF-8.
ci-checks runs once over it writing every format (`--output FORMAT=FILE`).

The property: the exit code is 0, 1 or 2 (2 only with one positioned error
about the policy file); nothing is printed as an internal error or a
traceback; the run ends within a time limit; the JSON and SARIF documents are
strict JSON, the JUnit report is XML, each GitHub annotation one workflow
command; and every line and column reported lies inside the file it names, as
that file's bytes read.

Profiles (the second in a thorough run, `--thorough` or `CI_CHECKS_THOROUGH=1`, as `.ci/run` runs;
`CI_CHECKS_FUZZ=default|thorough` chooses one either way):
- `default`: a fixed set of examples, well under a minute;
- `thorough`: 10,000 random examples without the linters and 300 with them.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any
from xml.etree import ElementTree

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ci_checks.cli import main as cli
from tests.ci.conftest import thorough

PROFILE = os.environ.get("CI_CHECKS_FUZZ", "thorough" if thorough() else "default")
EXAMPLES = {"default": (200, 6), "thorough": (10_000, 300)}[PROFILE]
"""(without linters, with linters) examples of each property."""
TIME_LIMIT_S = 60
_SETTINGS = {
    "deadline": None,
    "database": None,
    "derandomize": PROFILE == "default",
    # The autouse fixture that keeps the linters off unless asked sets the environment once for every example.
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
}

WORKFLOW = """\
name: ROCm CI
on:
  pull_request:
  workflow_call:
    inputs:
      megatron_ref: {type: string, default: main}
permissions: {}
env:
  PYTHON: "3.10"
jobs:
  test:
    runs-on: [self-hosted, gpu-mi300]
    strategy:
      matrix:
        torch: ["2.4", "2.5"]
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2
        with:
          persist-credentials: false
      - uses: ./tools/setup
      - name: Install Megatron
        env:
          MEGATRON_PR: ${{ inputs.megatron_ref }}
        run: |
          if [ -n "$MEGATRON_PR" ]; then
            git fetch origin "$MEGATRON_PR" && git checkout -f FETCH_HEAD
            pip install -e . --no-deps  # ci-checks: ignore[no-amd] reason
          fi
          echo "torch=${{ matrix.torch }}" >> "$GITHUB_OUTPUT"
      - run: >
          python -m pytest tests/
          -k "not slow"
"""
ACTION = """\
name: setup
description: Set up the toolchain
inputs:
  version: {description: the version, default: "1.0"}
runs:
  using: composite
  steps:
    - run: echo "::set-output name=v::${{ inputs.version }}" && cd $HOME
      shell: bash
"""
POLICY = """\
version: 1
rules:
  - id: install-order
    kind: order
    where: {workflow: .github/workflows/ci.yml, step: Install Megatron, branch: '[ -n "$MEGATRON_PR" ]'}
    order:
      - command: git checkout -f FETCH_HEAD
      - command: pip install -e .
  - id: no-amd
    kind: forbid
    where: {files: ["docker/*", "scripts/*.sh", ".github/workflows/*.yml", "tools/*.py"]}
    forbid:
      - text: amd_patch
      - command: git apply
      - regex: '^\\s*patch -p1'
      - python: {name: ROCmFileSystemWriterAsync}
  - id: checkout-no-credentials
    kind: require
    where: {workflow: .github/workflows/*.yml, step: {uses: actions/checkout}}
    require:
      - with: {persist-credentials: false}
"""
DOCKERFILE = """\
# escape=\\
FROM rocm/pytorch:latest AS build
ARG MEGATRON_REF=main
RUN --mount=type=cache,target=/root/.cache \\
    git clone https://github.com/NVIDIA/Megatron-LM && \\
    cd Megatron-LM && git checkout "$MEGATRON_REF" && \\
    # a comment inside the instruction
    pip install -e .
RUN ["python", "-c", "print(1)"]
COPY docker/amd_patch.diff /tmp/
RUN <<EOF
git apply /tmp/amd_patch.diff
EOF
"""
SHELL = """\
#!/usr/bin/env bash
set -euo pipefail
for rank in $(seq 0 "$((WORLD_SIZE - 1))"); do
  case "$rank" in
    0) echo "main rank" ;;
    *) python train.py --rank "$rank" & ;;
  esac
done
wait
if [[ -f amd_patch.diff ]]; then git apply amd_patch.diff; fi
"""
PYTHON = """\
import torch.distributed.checkpoint as dcp
from megatron.core.dist_checkpointing.strategies import filesystem_async


class ROCmFileSystemWriterAsync(filesystem_async.FileSystemWriterAsync):
    def write(self, plan):  # ci-checks: ignore[no-amd]
        return super().write(plan)


filesystem_async.FileSystemWriterAsync = ROCmFileSystemWriterAsync
setattr(dcp, "FileSystemWriter", ROCmFileSystemWriterAsync)
"""
FILES = {
    ".github/workflows/ci.yml": WORKFLOW,
    "tools/setup/action.yml": ACTION,
    ".github/ci-checks.yml": POLICY,
    "docker/Dockerfile": DOCKERFILE,
    "scripts/build.sh": SHELL,
    "tools/patch.py": PYTHON,
}
TOKENS = [
    "{",
    "}",
    "[",
    "]",
    "&a ",
    "*a",
    "<<: *a",
    "!!str ",
    "!custom ",
    "? ",
    "- ",
    ": ",
    '"',
    "'",
    "|",
    ">-",
    "#",
    "\t",
    "${{ ",
    " }}",
    "\n---\n",
    "\n...\n",
    "%YAML 1.2\n",
    "&a [*a, *a, *a]",
    "\\",
    "$(",
    "`",
    "<<EOF\n",
    "if true; then ",
    "fi",
    "done",
    ";;",
    "\\\n",
    "\r",
    "\r\n",
    "\x00",
    "\u2028",
    "\u2029",
    "\x85",
    "\ufeff",
    "é",
    "€",
    "🚀",
    "\u200b",
    "\ud7ff",
    "def (",
    "class X(",
    ")",
    "lambda: ",
    "    ",
    "\n  \n",
    "0x",
    "1e999",
    "kind: forbid\n",
    "where: {files: ['**']}\n",
    "rules: [",
    "version: 1\n",
    "- id: x\n",
    "regex: '(a+)+$'\n",
]
OPENERS = ["[", "{", "(", "$(", "if true; then ", "- ", "  ", '"${{ ', "f(", "[[ ", "{ ", "case a in b) "]
SEPARATORS = ["\u2028", "\u2029", "\x85", "\r", "\v", "\f"]

Mutation = Callable[[bytes], bytes]


def _at(data: bytes, where: float) -> int:
    return min(int(where * len(data)), len(data))


def _flip(where: float, value: int) -> Mutation:
    def apply(data: bytes) -> bytes:
        index = _at(data, where)
        return data[:index] + bytes([value]) + data[index + 1 :]

    return apply


def _cut(where: float) -> Mutation:
    return lambda data: data[: _at(data, where)]


def _insert(where: float, text: str, times: int = 1) -> Mutation:
    def apply(data: bytes) -> bytes:
        index = _at(data, where)
        return data[:index] + (text * times).encode("utf-8", "surrogatepass") + data[index:]

    return apply


def _whole(kind: str) -> Mutation:
    changes: dict[str, Mutation] = {
        "crlf": lambda data: data.replace(b"\n", b"\r\n"),
        "cr": lambda data: data.replace(b"\n", b"\r"),
        "bom": lambda data: b"\xef\xbb\xbf" + data,
        "utf16": lambda data: b"\xff\xfe" + data,
        "latin1": lambda data: data.decode("utf-8", "replace").encode("latin-1", "replace"),
        "no-final-newline": lambda data: data.rstrip(b"\n"),
        "separators": lambda data: data.replace(b"\n", "\u2028".encode(), 3),
        "empty": lambda data: b"",
        "tabs": lambda data: data.replace(b"  ", b"\t"),
    }
    return changes[kind]


_POSITION = st.floats(min_value=0, max_value=1, allow_nan=False)
MUTATIONS = st.one_of(
    st.builds(_flip, _POSITION, st.integers(0, 255)),
    st.builds(_cut, _POSITION),
    st.builds(_insert, _POSITION, st.sampled_from(TOKENS)),
    st.builds(_insert, _POSITION, st.sampled_from(SEPARATORS)),
    st.builds(_insert, _POSITION, st.sampled_from(OPENERS), st.integers(1, 2000)),
    st.builds(_insert, _POSITION, st.text(max_size=20)),
    st.builds(
        _whole,
        st.sampled_from(["crlf", "cr", "bom", "utf16", "latin1", "no-final-newline", "separators", "empty", "tabs"]),
    ),
)
REPOSITORIES = st.dictionaries(
    st.sampled_from(sorted(FILES)), st.lists(MUTATIONS, min_size=1, max_size=4), min_size=1, max_size=2
)


class _Hang(Exception):
    pass


@contextmanager
def _time_limit(seconds: int) -> Iterator[None]:
    def expire(signum: int, frame: FrameType | None) -> None:
        raise _Hang(f"no result within {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _lines(data: bytes) -> list[str]:
    """The file's lines as ci-checks counts them (and as editors do): ends at \\n, \\r\\n or \\r."""
    text = data.decode("utf-8-sig", errors="replace")
    lines = re.split(r"\r\n|\r|\n", text)
    return lines[:-1] if len(lines) > 1 and lines[-1] == "" else lines


def _inside(lines: list[str], line: int, column: int) -> bool:
    return 1 <= line <= len(lines) and 1 <= column <= len(lines[line - 1]) + 1


def _check_positions(diagnostics: list[dict[str, Any]], written: dict[str, bytes]) -> None:
    for diagnostic in diagnostics:
        for place in [diagnostic, *diagnostic.get("related", [])]:
            path = place["path"]
            if path not in written:
                continue
            lines = _lines(written[path])
            start = (place["line"], place["column"])
            end = (place["end_line"], place["end_column"])
            assert _inside(lines, *start) and _inside(lines, *end), (
                f"{diagnostic} lies outside {path} ({len(lines)} lines)"
            )
            assert start <= end, diagnostic


_ANNOTATION = re.compile(
    r"::(error|warning|notice) file=[^,:]*,line=\d+,col=\d+,endLine=\d+,endColumn=\d+,title=[^:]*::.*"
)


def _check(repository: dict[str, list[Mutation]], backends: str) -> None:
    with tempfile.TemporaryDirectory(prefix="ci-checks-fuzz-") as folder:
        root = Path(folder) / "repository"
        (root / ".git").mkdir(parents=True)
        written: dict[str, bytes] = {}
        for path, text in FILES.items():
            data = text.encode("utf-8")
            for mutation in repository.get(path, []):
                data = mutation(data)
            written[path] = data
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_bytes(data)
        reports = {name: Path(folder) / f"report.{name}" for name in ("sarif", "junit", "github", "markdown", "text")}
        out, err = io.StringIO(), io.StringIO()
        arguments = [
            "check",
            str(root),
            "--output-format",
            "json",
            *(f"--output={name}={path}" for name, path in reports.items()),
            "--backends",
            backends,
            "--no-cache",
            "--backend-timeout",
            "30",
        ]
        with _time_limit(TIME_LIMIT_S):
            code = cli.main(arguments, out=out, err=err)
        assert code in (0, 1, 2), code
        assert "Traceback" not in err.getvalue() and "internal error" not in err.getvalue(), err.getvalue()
        if code == 2:
            # Only the policy file, mutated into one that is not valid, stops the run, with one positioned error.
            match = re.fullmatch(r"\.github/ci-checks\.yml:(\d+):(\d+): error: .+\n", err.getvalue(), re.DOTALL)
            assert match is not None, err.getvalue()
            lines = _lines(written[".github/ci-checks.yml"])
            assert _inside(lines, int(match[1]), int(match[2])) or (lines == [""] and match.groups() == ("1", "1"))
            return
        document = json.loads(out.getvalue(), parse_constant=_not_json)
        _check_positions(document["diagnostics"], written)
        sarif = json.loads(reports["sarif"].read_text(encoding="utf-8"))
        assert len(sarif["runs"][0]["results"]) == len(document["diagnostics"])
        ElementTree.fromstring(reports["junit"].read_text(encoding="utf-8"))
        # The runner reads workflow commands line by line at `\n`; U+2028 and the like are text in a message.
        annotations = reports["github"].read_text(encoding="utf-8").removesuffix("\n").split("\n")
        annotations = [line for line in annotations if line]
        assert len(annotations) == len(document["diagnostics"])
        assert all(_ANNOTATION.fullmatch(line) for line in annotations), annotations
        assert reports["markdown"].read_text(encoding="utf-8").startswith("## ci-checks\n")
        for text in [out.getvalue(), *(path.read_text(encoding="utf-8") for path in reports.values())]:
            assert not re.search("[\ud800-\udfff]", text)


def _not_json(name: str) -> object:
    raise AssertionError(f"{name} is not JSON")


@settings(max_examples=EXAMPLES[0], **_SETTINGS)  # type: ignore[arg-type]
@given(REPOSITORIES)
def test_mutated_repositories_never_break_a_run(repository: dict[str, list[Mutation]]) -> None:
    _check(repository, "none")


@settings(max_examples=EXAMPLES[1], **_SETTINGS)  # type: ignore[arg-type]
@given(REPOSITORIES)
def test_mutated_repositories_never_break_the_linters(repository: dict[str, list[Mutation]]) -> None:
    _check(repository, "all")
