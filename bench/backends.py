"""Time the external backends over a corpus and compare shellcheck findings with actionlint's.

    python bench/backends.py CORPUS [--repeat 3]

CORPUS holds one folder per repository (each with a .github/ folder); all
their workflows and composite actions are checked as one batch, as one
repository would be. The linters are found as ci-checks finds them (options
aside): CI_CHECKS_<NAME>, PATH, then next to this Python.

Timed, best of --repeat runs after one warm-up, the runs taken in turns:

- actionlint with its per-step shellcheck (its default; pointed at the same
  shellcheck binary), one process over all workflows: the baseline;
- actionlint alone (`-shellcheck= -pyflakes=`), and zizmor alone;
- ci-checks' batched shellcheck backend, with one process per CPU and with
  one process, both without a cache, and with a cache the warm-up run filled;
- `run_backends` with all three, as `ci-checks check --backends ...` runs it,
  and the loading (parse and model) that it needs and ci-checks does anyway;
- the whole `ci-checks check --backends all` (every rule, the schema, the
  linters, JSON output) over every repository folder, one run per repository
  as a user would run it: with `--no-cache`, and with a cache the warm-up run
  filled.

Then the SC findings of the two shellcheck runs are compared on workflows
(actionlint reads no composite action on its own), as sets of
(file, line, column, code): once with the positions each tool reports, and
once with actionlint's script-relative position (from its message) mapped
into the file the way ci-checks maps its own, which compares the findings
regardless of how each tool positions them. Each difference is printed with
its class.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ci_checks.backends import shellcheck, tools
from ci_checks.backends.cache import ResultCache
from ci_checks.backends.external import run_backends
from ci_checks.cli import main as cli
from ci_checks.core.diagnostics import Diagnostic
from ci_checks.core.linters import BACKENDS, BackendSettings
from ci_checks.core.repository import FileKind, Repository
from ci_checks.model.loading import LoadedFile, load

# actionlint's message for a shellcheck finding: "... SC2086:info:3:14: Double quote ...".
_SHELLCHECK_MESSAGE = re.compile(r"SC(\d+):\w+:(\d+):(\d+):")

_BACKEND_OF = {"AL": "actionlint", "SC": "shellcheck", "ZZ": "zizmor"}

Key = tuple[str, int, int, str]


@dataclass
class Timing:
    """The best wall time and the least CPU time (this process and its children) of several runs."""

    wall: float = float("inf")
    cpu: float = float("inf")

    def __add__(self, other: Timing) -> Timing:
        return Timing(self.wall + other.wall, self.cpu + other.cpu)


def cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def measure(repeat: int, actions: dict[str, Callable[[], Any]]) -> tuple[dict[str, Timing], dict[str, Any]]:
    """Timings and last results of the actions, run in turn `repeat` times after a warm-up of each.

    Taking turns spreads load from other processes over all of them alike.
    """
    results = {name: action() for name, action in actions.items()}
    timings = {name: Timing() for name in actions}
    for _ in range(repeat):
        for name, action in actions.items():
            wall, cpu = time.perf_counter(), cpu_seconds()
            results[name] = action()
            timings[name].wall = min(timings[name].wall, time.perf_counter() - wall)
            timings[name].cpu = min(timings[name].cpu, cpu_seconds() - cpu)
    return timings, results


def load_corpus(corpus: Path) -> list[LoadedFile]:
    """Every workflow and composite action of the corpus, as files of one repository rooted at `corpus`."""
    whole = Repository(corpus)
    files = []
    for folder in sorted(p for p in corpus.iterdir() if (p / ".github").is_dir()):
        repository = Repository(folder)
        files += [load(whole, f"{folder.name}/{path}", FileKind.WORKFLOW) for path in repository.workflows]
        files += [load(whole, f"{folder.name}/{path}", FileKind.ACTION) for path in repository.actions]
    return files


def run_json(argv: list[str], cwd: Path) -> Any:
    return json.loads(subprocess.run(argv, cwd=cwd, capture_output=True, check=False).stdout)


def script_of(file: LoadedFile, line: int, column: int, scripts: list[shellcheck.Script]) -> shellcheck.Script | None:
    """The script of the step of `file` that contains line:column (actionlint reports at the step or in it)."""
    by_run = {id(script.locator.node): script for script in scripts if script.file is file}
    for step in file.steps:
        span = step.span
        if step.run is not None and (span.line, span.column) <= (line, column) <= (span.end_line, span.end_column):
            return by_run.get(id(step.run))
    return None


def compare(
    actionlint_findings: list[dict[str, Any]], ours: list[Diagnostic], workflows: dict[str, LoadedFile]
) -> None:
    """Print how many findings are the same, and each difference with its class."""
    scripts = shellcheck.scripts(list(workflows.values()))
    mine = Counter((d.span.path, d.span.line, d.span.column, d.code) for d in ours if d.span.path in workflows)
    print(f"SC findings on workflows: actionlint {len(actionlint_findings)}, ci-checks {sum(mine.values())}")
    reported: Counter[Key] = Counter()
    mapped: Counter[Key] = Counter()
    moved: dict[Key, Key] = {}
    for finding in actionlint_findings:
        path, line, column = finding["filepath"], finding["line"], finding["column"]
        match = _SHELLCHECK_MESSAGE.search(finding["message"])
        if match is None or path not in workflows:
            continue
        code = f"SC{match[1]}"
        key = (path, line, column, code)
        script = script_of(workflows[path], line, column, scripts)
        if script is not None:
            # actionlint's script lines leave out the `set -e` line it adds; ci-checks also adds a directive line.
            script_line, script_column = int(match[2]) + 2, int(match[3])
            span = script.span(script_line, script_column, script_line, script_column + 1)
            moved[key] = (path, span.line, span.column, code)
        reported[key] += 1
        mapped[moved.get(key, key)] += 1
    for title, theirs in (("as each tool positions them", reported), ("actionlint's script positions mapped", mapped)):
        only_theirs, only_mine = theirs - mine, mine - theirs
        print(
            f"  {title}: {sum((theirs & mine).values())} the same, "
            f"{sum(only_theirs.values())} only actionlint, {sum(only_mine.values())} only ci-checks"
        )
        for key in sorted(only_theirs.elements()):
            moved_here = moved.get(key) in mine
            print(f"    only actionlint: {key} [{explain(key, moved_here, workflows, scripts)}]")
        for key in sorted(only_mine.elements()):
            print(f"    only ci-checks:  {key} [{explain(key, key in mapped, workflows, scripts)}]")


def explain(key: Key, positioned: bool, workflows: dict[str, LoadedFile], scripts: list[shellcheck.Script]) -> str:
    """The class of a difference; `positioned` when it is the same finding once actionlint's position is mapped."""
    if positioned:
        return "the same finding, positioned differently: actionlint reports it at the step or `run:` key"
    path, line, column, _ = key
    script = script_of(workflows[path], line, column, scripts)
    if script is None:
        return "a step ci-checks does not give shellcheck: the shell is chosen differently"
    return (
        f"another finding in a {script.dialect} step: the shell is chosen differently, "
        "or shellcheck read different text (`${{ }}` masking, files that `-x` sources)"
    )


def check_all(corpus: Path, cache_options: list[str]) -> Counter[str]:
    """`ci-checks check --backends all` over each repository folder; the findings counted by their source."""
    counts: Counter[str] = Counter()
    for folder in sorted(p for p in corpus.iterdir() if (p / ".github").is_dir()):
        out = io.StringIO()
        argv = ["check", str(folder), "--backends", "all", "--output-format", "json", *cache_options]
        cli.main(argv, out=out, err=io.StringIO())
        for diagnostic in json.loads(out.getvalue())["diagnostics"]:
            counts[_BACKEND_OF.get(diagnostic["code"][:2], "ci-checks rules")] += 1
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    corpus = args.corpus.resolve()
    binaries = {name: tools.find_binary(name, None) for name in BACKENDS}
    files = load_corpus(corpus)
    workflows = {file.path: file for file in files if file.kind is FileKind.WORKFLOW}
    settings = BackendSettings(binaries=binaries)
    limit = 600.0

    # Corpus-relative paths, run from the corpus: actionlint's `filepath` is then the path ci-checks uses.
    actionlint = [binaries["actionlint"], "-format", "{{json .}}", "-no-color", "-pyflakes="]
    with_shellcheck = [*actionlint, f"-shellcheck={binaries['shellcheck']}", "--", *workflows]
    alone = [*actionlint, "-shellcheck=", "--", *workflows]
    zizmor = [binaries["zizmor"], "--offline", "--format", "json", "--no-progress", "--"]
    zizmor += [file.path for file in files if file.workflow is not None or file.action is not None]

    def ours(processes: int, cache_folder: Path | None = None) -> Callable[[], list[Diagnostic]]:
        def run() -> list[Diagnostic]:
            results = ResultCache(cache_folder) if cache_folder is not None else None
            try:
                return shellcheck.run(
                    binaries["shellcheck"], files, corpus, tools.TimeLimit(limit), processes, cache=results
                )
            finally:
                if results is not None:
                    results.close()

        return run

    base = "actionlint + per-step shellcheck (base)"
    per_cpu = f"ci-checks shellcheck, {shellcheck.CPUS} processes"
    warm = "ci-checks shellcheck, warm cache"
    everything = "ci-checks run_backends, all three"
    # The warm-up run of each action fills its cache; the timed runs read it.
    with tempfile.TemporaryDirectory(prefix="bench-cache-") as caches:
        timings, results = measure(
            args.repeat,
            {
                base: lambda: run_json(with_shellcheck, corpus),
                "actionlint alone": lambda: run_json(alone, corpus),
                "zizmor alone": lambda: run_json(zizmor, corpus),
                per_cpu: ours(shellcheck.CPUS),
                "ci-checks shellcheck, 1 process": ours(1),
                warm: ours(shellcheck.CPUS, Path(caches) / "shellcheck"),
                everything: lambda: run_backends(BACKENDS, files, corpus, settings),
                "ci-checks loading (parse + model)": lambda: load_corpus(corpus),
                "ci-checks check --backends all": lambda: check_all(corpus, ["--no-cache"]),
                "ci-checks check --backends all, warm": lambda: check_all(
                    corpus, ["--cache-dir", str(Path(caches) / "check")]
                ),
            },
        )
    timings["ci-checks loading + run_backends"] = timings["ci-checks loading (parse + model)"] + timings[everything]
    timings["actionlint + shellcheck, then zizmor"] = timings[base] + timings["zizmor alone"]
    baseline = timings[base]

    per_backend = Counter(_BACKEND_OF.get(d.code[:2], d.code) for d in results[everything])
    print(f"files: {len(files)} ({len(workflows)} workflows, {len(files) - len(workflows)} actions); ", end="")
    print(f"run: scripts given to shellcheck: {len(shellcheck.scripts(files))}")
    print(f"findings of run_backends: {dict(per_backend)}")
    print(f"findings of ci-checks check --backends all: {dict(results['ci-checks check --backends all'])}")
    print(f"warm-cache findings equal the cold ones: shellcheck {results[warm] == results[per_cpu]}, ", end="")
    print(f"check {results['ci-checks check --backends all, warm'] == results['ci-checks check --backends all']}")
    load = os.getloadavg()[0]
    print(f"machine: {shellcheck.CPUS} CPUs, load average {load:.1f} after the runs; best of {args.repeat}, in turns\n")
    print(f"{'':40} {'wall s':>8} {'/ base':>7} {'CPU s':>8} {'/ base':>7}")
    for name, timing in timings.items():
        print(
            f"{name:40} {timing.wall:8.3f} {timing.wall / baseline.wall:7.3f}"
            f" {timing.cpu:8.3f} {timing.cpu / baseline.cpu:7.3f}"
        )
    print()
    compare([f for f in results[base] if f["kind"] == "shellcheck"], results[per_cpu], workflows)


if __name__ == "__main__":
    main()
