"""ci-checks' speed and memory beside its peers, as one table.

    python bench/speed.py FOLDER [--repeat 5] [--warmup 1] [--copies 1,4,16] [--memory-repeat 1]

FOLDER holds one sub-folder per repository (each with a .github/ folder; a
.git folder is not needed). Every tool runs as a subprocess, ci-checks through
its console script, so start-up and imports count as a user sees them; each
run's standard output goes to a file, as a hook's or a CI log's would.

- P1 ci-checks' own checks: `ci-checks check --backends none --no-cache` with
  the ten-rule policy `bench/speed-policy.yml` over every repository in one
  process, beside `zizmor --offline` over the same repositories and
  `check-jsonschema --builtin-schema vendor.github-workflows` over the same
  workflow files;
- P2 everything: `ci-checks check --backends all --no-cache` (the same policy)
  beside actionlint with its per-step shellcheck (`-shellcheck=` the same
  shellcheck binary) over the workflow files;
- P3 one file as pre-commit runs it: `bench/speed-workflow.yml` (2 KB) alone in
  a fresh repository, `ci-checks check --skip-unread-files FILE` with the
  default backends (the first run: an empty cache; the file just edited: a
  warm cache and the file changed before each run; unchanged: a warm cache)
  and with `--backends none` (an empty cache), beside `actionlint FILE` and
  `zizmor --offline FILE`;
- P4 re-checking unchanged repositories with every backend: a warm cache
  (filled by an earlier run) against a cold one (an empty `--cache-dir`
  before each run), over every repository, and over the largest one alone;
- memory: ci-checks as in P1 over 1, 4 and 16 copies of FOLDER (`--copies`)
  beside zizmor over 1 copy and over the most copies.

The commands of P1-P4 are taken in turns, `--repeat` rounds after `--warmup`
untimed rounds, so that load from other processes falls on all of them alike.
ci-checks and check-jsonschema run from compiled bytecode, kept in a folder of
the benchmark's own, as they do from a pip install (which compiles it), even
where the environment forbids writing it. The table gives the median wall
time, its range, the median CPU time (user and system, of the process and the
children it waited for: steadier than wall time on a busy machine, and above
it where work ran in parallel) and the median peak resident set size: the
largest of the process and of any child it waited for (Linux `wait4`), not
their sum. Memory runs are taken in turns of their own. A ratio is ci-checks'
median wall time (or peak RSS) over the peer's; each goal is the one ci-checks
is held to. A run that exits with a code meaning the tool failed (not merely
found something) stops the benchmark with its error output.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ci_checks import __version__
from ci_checks.backends import tools
from ci_checks.core.repository import Repository

BENCH = Path(__file__).resolve().parent
POLICY = BENCH / "speed-policy.yml"
ONE_FILE = BENCH / "speed-workflow.yml"
ONE_FILE_PATH = ".github/workflows/gpu-tests.yml"
TIME_LIMIT = 900.0

# Exit codes that mean the tool ran to the end (with or without findings).
CI_CHECKS_OK = frozenset({0, 1})
ACTIONLINT_OK = frozenset({0, 1})
CHECK_JSONSCHEMA_OK = frozenset({0, 1})
ZIZMOR_OK = frozenset({0, 10, 11, 12, 13, 14})

BYTECODE = ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")
"""Variables that decide where Python keeps compiled modules: the benchmark sets them itself."""

COLUMNS = ("measurement", "command", "median wall", "range", "median CPU", "peak RSS", "ratio", "goal", "met")


@dataclass
class Command:
    """One command line, run repeatedly; `before` runs (untimed) before each run."""

    label: str
    argv: list[str]
    cwd: Path
    ok: frozenset[int]
    shown: str
    # How a ratio names this command when it is the peer.
    alias: str = ""
    env: dict[str, str] = field(default_factory=dict)
    before: Callable[[], None] | None = None
    needs_warm_up: bool = False
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    peaks: list[int] = field(default_factory=list)

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)

    @property
    def peak(self) -> float:
        """Median peak resident set size, bytes."""
        return statistics.median(self.peaks)


@dataclass
class Goal:
    """`command` divided by `peer` (wall times, or peak RSS with `memory`) at most `at_most`; no peer: seconds."""

    at_most: float
    peer: Command | None = None
    memory: bool = False


@dataclass
class Row:
    measurement: str
    command: Command
    # Ratios shown without a goal: (peer, memory?).
    compared: list[tuple[Command, bool]] = field(default_factory=list)
    goals: list[Goal] = field(default_factory=list)


def run_once(command: Command, base_env: dict[str, str], scratch: Path) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user and system) and peak RSS (bytes) of one run of `command` and its children."""
    if command.before is not None:
        command.before()
    env = {**base_env, **command.env}
    with (scratch / "stdout").open("wb") as out, (scratch / "stderr").open("wb+") as err:
        start = time.perf_counter()
        process = subprocess.Popen(command.argv, cwd=command.cwd, env=env, stdout=out, stderr=err)
        killer = threading.Timer(TIME_LIMIT, process.kill)
        killer.start()
        # wait4 rather than Popen.wait: it gives this child's own resource use.
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        killer.cancel()
        process.returncode = code = os.waitstatus_to_exitcode(status)
        if code not in command.ok:
            err.seek(0)
            message = err.read().decode(errors="replace")[-4000:]
            raise SystemExit(f"{command.label} failed with exit code {code}: {command.shown}\n{message}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def measure(commands: Sequence[Command], repeat: int, warmup: int, base_env: dict[str, str], scratch: Path) -> None:
    """Run the commands in turns: `warmup` untimed rounds (at least one for those that need it), then `repeat`."""
    for round_ in range(max(warmup, 1)):
        for command in commands:
            if round_ < warmup or command.needs_warm_up:
                run_once(command, base_env, scratch)
    for _ in range(repeat):
        for command in commands:
            wall, cpu, peak = run_once(command, base_env, scratch)
            command.walls.append(wall)
            command.cpus.append(cpu)
            command.peaks.append(peak)


def seconds(value: float) -> str:
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def mebibytes(value: float) -> str:
    return f"{value / 2**20:.0f} MiB"


def ratio(command: Command, peer: Command, memory: bool) -> float:
    return command.peak / peer.peak if memory else command.wall / peer.wall


def describe(peer: Command, memory: bool) -> str:
    name = peer.alias or peer.label
    return f"{name} (RSS)" if memory else name


def cells(row: Row) -> list[str]:
    command = row.command
    ratios = [f"{ratio(command, peer, memory):.2f}x {describe(peer, memory)}" for peer, memory in row.compared]
    goals, met = [], []
    for goal in row.goals:
        if goal.peer is None:
            goals.append(f"≤ {seconds(goal.at_most)}")
            value = command.wall
        else:
            value = ratio(command, goal.peer, goal.memory)
            ratios.append(f"{value:.2f}x {describe(goal.peer, goal.memory)}")
            goals.append(f"≤ {goal.at_most:g}x {describe(goal.peer, goal.memory)}")
        met.append("yes" if value <= goal.at_most else "no")
    spread = f"{seconds(min(command.walls))} - {seconds(max(command.walls))}"
    return [
        row.measurement,
        command.label,
        seconds(command.wall),
        spread,
        seconds(statistics.median(command.cpus)),
        mebibytes(command.peak),
        "; ".join(ratios) or "—",
        "; ".join(goals) or "—",
        "; ".join(met) or "—",
    ]


def table(rows: Sequence[Row]) -> str:
    lines = [[*COLUMNS], *(cells(row) for row in rows)]
    widths = [max(len(line[i]) for line in lines) for i in range(len(COLUMNS))]

    def joined(line: Sequence[str]) -> str:
        return "| " + " | ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)) + " |"

    rule = "|" + "|".join("-" * (width + 2) for width in widths) + "|"
    return "\n".join([joined(lines[0]), rule, *(joined(line) for line in lines[1:])])


def repositories_in(folder: Path) -> list[Path]:
    return sorted(path for path in folder.iterdir() if (path / ".github").is_dir())


def copy_repositories(repositories: Sequence[Path], into: Path) -> list[Path]:
    copies = []
    for repository in repositories:
        copies.append(into / repository.name)
        shutil.copytree(repository, copies[-1], symlinks=True, ignore=shutil.ignore_patterns(".git"))
    return copies


def emptied(folder: Path) -> Callable[[], None]:
    return lambda: shutil.rmtree(folder, ignore_errors=True)


def edit(path: Path) -> Callable[[], None]:
    """A change to the file before each run, as between two commits: a comment line added at its end."""
    original = path.read_text(encoding="utf-8")
    edits = iter(range(1, 1 << 30))
    return lambda: path.write_text(f"{original}# edit {next(edits)}\n", encoding="utf-8")


def version(argv: list[str]) -> str:
    result = subprocess.run(argv, capture_output=True, text=True, check=False)
    words = (result.stdout + result.stderr).split()
    return next((word for word in words if word[:1].isdigit()), "?")


def console_script(name: str) -> str:
    """The console script installed beside this Python, so that the checkout being measured is what runs."""
    beside = Path(sysconfig.get_path("scripts")) / name
    return str(beside) if beside.is_file() else tools.find_binary(name, None)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path, help="a folder with one sub-folder per repository")
    parser.add_argument("--repeat", type=int, default=5, help="timed rounds (default 5)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed rounds before them (default 1)")
    parser.add_argument(
        "--copies",
        type=lambda value: sorted({int(n) for n in value.split(",")}),
        default=[1, 4, 16],
        help="copies of the folder ci-checks' memory is measured over (default 1,4,16)",
    )
    parser.add_argument("--memory-repeat", type=int, default=1, help="timed rounds of the memory runs (default 1)")
    args = parser.parse_args(argv)
    folder = args.folder.resolve()
    repositories = repositories_in(folder)
    if not repositories:
        parser.error(f"{folder} has no sub-folder with a .github folder")
    workflows = [f"{r.name}/{path}" for r in repositories for path in Repository(r).workflows]
    actions = [f"{r.name}/{path}" for r in repositories for path in Repository(r).actions]
    sizes = {path: (folder / path).stat().st_size for path in [*workflows, *actions]}
    size = sum(sizes.values())

    ci_checks = console_script("ci-checks")
    check_jsonschema = console_script("check-jsonschema")
    actionlint, shellcheck, zizmor = (tools.find_binary(name, None) for name in ("actionlint", "shellcheck", "zizmor"))
    names = [r.name for r in repositories]
    largest = max(repositories, key=lambda r: sum(sizes[p] for p in sizes if p.startswith(f"{r.name}/")))
    check = [ci_checks, "check", "--config", str(POLICY)]
    own = [*check, "--backends", "none", "--no-cache"]
    linted = [*check, "--backends", "all"]
    actionlint_shellcheck = [actionlint, "-no-color", "-pyflakes=", f"-shellcheck={shellcheck}"]
    zizmor_offline = [zizmor, "--offline", "--no-progress"]
    policy = "--config bench/speed-policy.yml"

    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="ci-checks-speed-") as temporary:
        scratch = Path(temporary)
        # The linters ci-checks runs are the ones measured beside it; no setting of the caller's applies.
        base_env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith("CI_CHECKS_") and key not in {"GITHUB_STEP_SUMMARY", "XDG_CACHE_HOME", *BYTECODE}
        }
        base_env |= {
            "CI_CHECKS_ACTIONLINT": actionlint,
            "CI_CHECKS_SHELLCHECK": shellcheck,
            "CI_CHECKS_ZIZMOR": zizmor,
            "XDG_CACHE_HOME": str(scratch / "xdg-cache"),
            # The Python tools run from compiled bytecode, as from a pip install, which compiles it: an
            # environment that forbids writing it (PYTHONDONTWRITEBYTECODE) or an editable install would
            # otherwise have them compile their source on every run. The warm-up rounds fill this folder.
            "PYTHONPYCACHEPREFIX": str(scratch / "bytecode"),
        }
        one = scratch / "one-file"
        (one / ".git").mkdir(parents=True)
        (one / ONE_FILE_PATH).parent.mkdir(parents=True)
        shutil.copyfile(ONE_FILE, one / ONE_FILE_PATH)
        edited = scratch / "one-file-edited"
        shutil.copytree(one, edited)

        def cmd(
            label: str,
            argv: list[str],
            ok: frozenset[int],
            shown: str,
            *,
            cwd: Path = folder,
            cache: Path | None = None,
            warm: bool = False,
            alias: str = "",
        ) -> Command:
            """A command; with `cache`, a cache folder of its own: warm (the warm-up fills it) or emptied each run."""
            env = {} if cache is None else {"XDG_CACHE_HOME": str(cache)}
            before = None if cache is None or warm else emptied(cache)
            return Command(label, argv, cwd, ok, shown, alias, env=env, before=before, needs_warm_up=warm)

        p1_ours = cmd(
            "ci-checks", [*own, *names], CI_CHECKS_OK, f"ci-checks check {policy} --backends none --no-cache REPO..."
        )
        p1_zizmor = cmd("zizmor", [*zizmor_offline, *names], ZIZMOR_OK, "zizmor --offline --no-progress REPO...")
        p1_schema = cmd(
            "check-jsonschema",
            [check_jsonschema, "--builtin-schema", "vendor.github-workflows", *workflows],
            CHECK_JSONSCHEMA_OK,
            "check-jsonschema --builtin-schema vendor.github-workflows WORKFLOW...",
        )
        p2_ours = cmd(
            "ci-checks",
            [*linted, "--no-cache", *names],
            CI_CHECKS_OK,
            f"ci-checks check {policy} --backends all --no-cache REPO...",
        )
        p2_actionlint = cmd(
            "actionlint + shellcheck",
            [*actionlint_shellcheck, *workflows],
            ACTIONLINT_OK,
            "actionlint -no-color -pyflakes= -shellcheck=SHELLCHECK WORKFLOW...",
        )

        def hook(
            label: str, options: list[str], shown: str, cache: str, warm: bool = False, cwd: Path = one
        ) -> Command:
            """The one file, as the pre-commit hook runs ci-checks on it."""
            return cmd(
                label,
                [ci_checks, "check", "--skip-unread-files", *options, ONE_FILE_PATH],
                CI_CHECKS_OK,
                f"ci-checks check --skip-unread-files {shown}",
                cwd=cwd,
                cache=scratch / cache,
                warm=warm,
            )

        p3_first = hook("ci-checks, first run", [], "FILE (empty cache)", "first-cache")
        p3_edited = hook("ci-checks, file just edited", [], "FILE (edited, warm cache)", "edited-cache", True, edited)
        p3_edited.before = edit(edited / ONE_FILE_PATH)
        p3_unchanged = hook("ci-checks, file unchanged", [], "FILE (warm cache)", "unchanged-cache", warm=True)
        p3_none = hook(
            "ci-checks --backends none", ["--backends", "none"], "--backends none FILE (empty cache)", "none"
        )
        p3_actionlint = cmd(
            "actionlint",
            [*actionlint_shellcheck, ONE_FILE_PATH],
            ACTIONLINT_OK,
            "actionlint -no-color -pyflakes= -shellcheck=SHELLCHECK FILE",
            cwd=one,
        )
        p3_zizmor = cmd(
            "zizmor", [*zizmor_offline, ONE_FILE_PATH], ZIZMOR_OK, "zizmor --offline --no-progress FILE", cwd=one
        )

        def cold_and_warm(name: str, targets: list[str], shown: str) -> tuple[Command, Command]:
            cold, warm = (
                cmd(
                    f"ci-checks {state} ({name})",
                    [*linted, "--cache-dir", str(scratch / f"{state}-{name}"), *targets],
                    CI_CHECKS_OK,
                    f"ci-checks check {policy} --backends all --cache-dir {state.upper()} {shown}",
                    cache=scratch / f"{state}-{name}",
                    warm=state == "warm",
                    alias=state,
                )
                for state in ("cold", "warm")
            )
            return cold, warm

        p4_cold, p4_warm = cold_and_warm("every repository", names, "REPO...")
        p4_one_cold, p4_one_warm = cold_and_warm(largest.name, [largest.name], largest.name)

        # Untimed, before anything is measured: fills the bytecode folder for every module these runs import.
        primed = [
            cmd("ci-checks", [*linted, "--no-cache", str(one)], CI_CHECKS_OK, "ci-checks (compiling)"),
            cmd(
                "check-jsonschema", [*p1_schema.argv[:3], str(one / ONE_FILE_PATH)], CHECK_JSONSCHEMA_OK, "(compiling)"
            ),
        ]
        for command in primed:
            run_once(command, base_env, scratch)

        timed = [
            p1_ours, p1_zizmor, p1_schema, p2_ours, p2_actionlint,
            p3_first, p3_edited, p3_unchanged, p3_none, p3_actionlint, p3_zizmor,
            p4_cold, p4_warm, p4_one_cold, p4_one_warm,
        ]  # fmt: skip
        measure(timed, args.repeat, args.warmup, base_env, scratch)

        most = max(args.copies)
        copies: list[list[str]] = []
        for index in range(most):
            copied = copy_repositories(repositories, scratch / "copies" / f"{index + 1:02}")
            copies.append([str(path) for path in copied])

        def over_copies(tool: str, argv: list[str], ok: frozenset[int], shown: str, n: int) -> Command:
            count = f"{n} {'copy' if n == 1 else 'copies'}"
            return cmd(
                f"{tool}, {count}",
                [*argv, *(path for copy in copies[:n] for path in copy)],
                ok,
                f"{shown} REPO... ({n}x)",
                alias=count if tool == "ci-checks" else f"{tool} at {count}",
            )

        own_shown = f"ci-checks check {policy} --backends none --no-cache"
        memory_ours = {n: over_copies("ci-checks", own, CI_CHECKS_OK, own_shown, n) for n in args.copies}
        zizmor_shown = "zizmor --offline --no-progress"
        memory_zizmor = {
            n: over_copies("zizmor", zizmor_offline, ZIZMOR_OK, zizmor_shown, n) for n in sorted({1, most})
        }
        measure([*memory_ours.values(), *memory_zizmor.values()], args.memory_repeat, 0, base_env, scratch)
    load_after = os.getloadavg()

    least = memory_ours[min(args.copies)]
    rows = [
        Row("P1 own checks", p1_ours, goals=[Goal(0.7, p1_zizmor), Goal(0.2, p1_schema)]),
        Row("P1 own checks", p1_zizmor),
        Row("P1 own checks", p1_schema),
        Row("P2 everything", p2_ours, goals=[Goal(0.45, p2_actionlint)]),
        Row("P2 everything", p2_actionlint),
        *(
            Row("P3 one file", ours, compared=[(p3_actionlint, False), (p3_zizmor, False)], goals=[Goal(0.1)])
            for ours in (p3_first, p3_edited, p3_unchanged, p3_none)
        ),
        Row("P3 one file", p3_actionlint),
        Row("P3 one file", p3_zizmor),
        Row("P4 re-check", p4_cold),
        Row("P4 re-check", p4_warm, goals=[Goal(0.15, p4_cold)]),
        Row("P4 re-check", p4_one_cold),
        Row("P4 re-check", p4_one_warm, goals=[Goal(0.15, p4_one_cold)]),
        *(
            Row(
                "memory",
                ours,
                compared=[] if ours is least else [(least, False), (least, True)],
                goals=[Goal(2.0, memory_zizmor[1], memory=True)] if n == most else [],
            )
            for n, ours in memory_ours.items()
        ),
        *(Row("memory", theirs) for theirs in memory_zizmor.values()),
    ]
    versions = {
        "ci-checks": __version__,
        "actionlint": version([actionlint, "-version"]),
        "shellcheck": version([shellcheck, "--version"]),
        "zizmor": version([zizmor, "--version"]),
        "check-jsonschema": version([check_jsonschema, "--version"]),
    }
    cpus = os.cpu_count()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cpus
    print(
        f"folder: {folder} ({len(repositories)} repositories, {len(workflows) + len(actions)} files: "
        f"{len(workflows)} workflows, {len(actions)} actions, {size / 1000:.0f} kB); largest: {largest.name}"
    )
    print(
        f"machine: {cpus} CPUs ({usable} usable); load average (1, 5, 15 min) "
        f"{' '.join(f'{n:.2f}' for n in load_before)} before, {' '.join(f'{n:.2f}' for n in load_after)} after"
    )
    print("tools: " + ", ".join(f"{name} {number}" for name, number in versions.items()))
    print(
        f"runs: median of {args.repeat} timed rounds after {args.warmup} untimed, commands in turns; "
        f"memory: {args.memory_repeat} round(s) over {', '.join(map(str, args.copies))} copies\n"
    )
    print(table(rows))
    print("\ncommands (REPO...: every repository of the folder, WORKFLOW...: their workflows, FILE: P3's file):")
    for row in rows:
        print(f"  {row.measurement}, {row.command.label}: {row.command.shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
