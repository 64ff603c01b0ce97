"""Mutation testing of the modules whose mistakes reach users, with mutmut.

    python scripts/mutation.py run rules               # every module of a group
    python scripts/mutation.py run ci_checks/engine/fixes.py  # one module (the group's tests)
    python scripts/mutation.py run --changed main      # the modules a change touched since `main`
    python scripts/mutation.py run --survivors fixes   # only the mutants that survived before
    python scripts/mutation.py run --sample 20 policy  # a fixed fifth of each module's mutants: an estimate
    python scripts/mutation.py run --sample 5 --at-least 40 rules  # and 40 of each module at least
    python scripts/mutation.py report [GROUP ...]      # killed / survived / equivalent per module
    python scripts/mutation.py survivors [MODULE ...]  # each survivor's diff, equivalents left out

Each group of modules is tested by the test files that exercise it (GROUPS below), not by the whole
suite: mutmut records which tests call each function and runs, for each mutant, only those of the
group's files, stopping at the first failure. A group works in `.mutation/<group>/` (mutmut's
`mutants/` folder is inside), so groups keep their results apart and a run of one module reuses the
results and the test map of the earlier runs of its group; a function whose code changed is tested
again. Subprocess-only tests, the checkpoint harness and the code-quality gates are not in any group:
mypy --strict (which the suite runs) checks every mutant instead, and a mutant it rejects is killed.

A mutant that no test can kill, because the mutated code behaves the same, is listed in
`tests/mutation-equivalent.txt` with the hash of its diff and a one-line reason; an entry whose mutant
changed or was killed is reported stale. The score of a module is killed / (mutants - equivalent).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / ".mutation"
EQUIVALENT = ROOT / "tests" / "mutation-equivalent.txt"
TARGET = 90.0


@dataclass(frozen=True)
class Group:
    modules: tuple[str, ...]  # globs of package files, relative to the project
    tests: tuple[str, ...]  # the test files (or node ids) that exercise them


_CLI = ("tests/ci/linter/cli/test_cli.py", "tests/ci/linter/rules/test_golden.py")
GROUPS: dict[str, Group] = {
    "schema": Group(
        ("ci_checks/rules/schema/*.py",),
        (
            "tests/ci/linter/rules/test_schema.py",
            "tests/ci/linter/rules/test_schema_fast_path.py",
            "tests/ci/linter/model/test_github_verdicts.py",
            "tests/ci/linter/rules/test_golden.py",
            "tests/ci/linter/project/test_corpus.py",
        ),
    ),
    "rules": Group(
        ("ci_checks/rules/*.py",),
        (
            "tests/ci/linter/rules/test_golden.py",
            "tests/ci/linter/project/test_corpus.py",
            "tests/ci/linter/model/test_file_model.py",
            "tests/ci/linter/model/test_runners.py",
            "tests/ci/linter/model/test_concurrency.py",
            "tests/ci/linter/model/test_reusable_calls.py",
            "tests/ci/linter/model/test_references.py",
            "tests/ci/linter/project/test_seed.py",
            "tests/ci/linter/rules/test_rule_context.py",
            "tests/ci/linter/rules/test_registry.py",
            "tests/ci/linter/model/test_model.py",
            "tests/ci/linter/engine/test_fixes.py",
            "tests/ci/linter/project/test_injected_mistakes.py",
            "tests/ci/linter/model/test_github_verdicts.py",
            "tests/ci/linter/project/test_metamorphic.py",
            "tests/ci/linter/rules/test_workspace_before_checkout.py",
            "tests/ci/linter/rules/test_orphan_patch.py",
        ),
    ),
    "model-files": Group(
        ("ci_checks/model/files/*.py",),
        (
            "tests/ci/linter/model/test_file_model.py",
            "tests/ci/linter/rules/test_workspace_before_checkout.py",
            "tests/ci/linter/rules/test_orphan_patch.py",
            "tests/ci/linter/rules/test_golden.py",
            "tests/ci/linter/project/test_corpus.py",
            "tests/ci/linter/project/test_seed.py",
            "tests/ci/linter/policy/test_seed_policy.py",
            "tests/ci/linter/policy/test_policy_constants_and_references.py",
            "tests/ci/linter/project/test_injected_mistakes.py",
            "tests/ci/linter/project/test_metamorphic.py",
        ),
    ),
    "policy": Group(
        ("ci_checks/policy/*.py", "ci_checks/policy/items/*.py", "ci_checks/policy/kinds/*.py"),
        (
            "tests/ci/linter/policy/test_policy.py",
            "tests/ci/linter/policy/test_policy_commands_and_scopes.py",
            "tests/ci/linter/policy/test_policy_constants_and_references.py",
            "tests/ci/linter/policy/test_policy_keys.py",
            "tests/ci/linter/policy/test_policy_validation_fast.py",
            "tests/ci/linter/policy/test_seed_policy.py",
            "tests/ci/linter/project/test_metamorphic.py",
            "tests/ci/linter/project/test_readme.py",
            "tests/ci/linter/rules/test_golden.py",
        ),
    ),
    "suppression": Group(
        ("ci_checks/config/suppression.py",),
        ("tests/ci/linter/engine/test_suppression.py", "tests/ci/linter/security/test_untrusted_surfaces.py", *_CLI),
    ),
    "baseline": Group(
        ("ci_checks/engine/baseline.py",),
        ("tests/ci/linter/engine/test_baseline.py", "tests/ci/linter/security/test_untrusted_surfaces.py"),
    ),
    "changes": Group(
        ("ci_checks/engine/changes.py",),
        ("tests/ci/linter/engine/test_new_since.py", "tests/ci/linter/security/test_untrusted_surfaces.py"),
    ),
    "settings": Group(
        ("ci_checks/config/selection.py",),
        ("tests/ci/linter/config/test_settings.py", "tests/ci/linter/config/test_per_file_ignores.py", *_CLI),
    ),
    "reporters": Group(
        ("ci_checks/reporters/*.py", "ci_checks/core/escaping.py", "ci_checks/engine/errors.py"),
        (
            "tests/ci/linter/reporters/test_reporters.py",
            "tests/ci/linter/cli/test_terminal.py",
            "tests/ci/linter/security/test_untrusted.py",
            "tests/ci/linter/security/test_untrusted_surfaces.py",
            "tests/ci/linter/security/test_fuzz_surfaces.py",
            *_CLI,
        ),
    ),
    "fixes": Group(("ci_checks/engine/fixes.py",), ("tests/ci/linter/engine/test_fixes.py",)),
}


# --- which modules --------------------------------------------------------------------------------------------


def _group_modules(group: Group) -> list[str]:
    found = {path.relative_to(ROOT).as_posix() for pattern in group.modules for path in ROOT.glob(pattern)}
    return sorted(found)


def _module_name(path: str) -> str:
    """`ci_checks/rules/cc040_x.py` -> `ci_checks.rules.cc040_x`, as mutmut names mutants."""
    name = path.removesuffix(".py").replace("/", ".")
    return name.removesuffix(".__init__")


def _mutant_patterns(path: str) -> list[str]:
    """The globs of mutmut's names for the mutants of one module's functions (`x_name`) and methods
    (`xǁClassǁname`): a package's `__init__.py` is not all the modules of the package."""
    return [f"{_module_name(path)}.x_*", f"{_module_name(path)}.xǁ*"]


def _owner(path: str) -> str | None:
    return next((name for name, group in GROUPS.items() if path in _group_modules(group)), None)


def _chosen(names: Iterable[str]) -> dict[str, list[str]]:
    """Group name -> the modules of it that were asked for (a group name asks for all of them)."""
    chosen: dict[str, list[str]] = {}
    for name in names:
        if name in GROUPS:
            chosen.setdefault(name, []).extend(_group_modules(GROUPS[name]))
            continue
        owner = _owner(name)
        if owner is None:
            raise SystemExit(f"{name} is neither a group ({', '.join(GROUPS)}) nor a module of one")
        chosen.setdefault(owner, []).append(name)
    return {group: sorted(set(modules)) for group, modules in chosen.items()}


def _changed_since(base: str) -> list[str]:
    """The modules of any group that differ from `base` (committed or not)."""
    out = subprocess.run(
        ["git", "diff", "--name-only", base, "--", "ci_checks"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return [path for path in out.split() if _owner(path) is not None]


# --- a group's working folder ---------------------------------------------------------------------------------


def _toml_list(values: Iterable[str]) -> str:
    return "[" + ", ".join(json.dumps(value) for value in values) + "]"


def _prepare(name: str) -> Path:
    """`.mutation/<group>/`: the project's pyproject.toml with mutmut's section, the package, and a copy of the
    files the tests read in `mutants/` (with a `.git` marker: the copy is a repository root of its own)."""
    group = GROUPS[name]
    work = WORK / name
    (work / "mutants").mkdir(parents=True, exist_ok=True)
    package = work / "ci_checks"
    if not package.is_symlink():
        package.symlink_to(os.path.relpath(ROOT / "ci_checks", work))
    settings = "\n".join(
        [
            "",
            "[tool.mutmut]",
            'source_paths = ["ci_checks"]',
            f"only_mutate = {_toml_list(_group_modules(group))}",
            f"pytest_add_cli_args_test_selection = {_toml_list(group.tests)}",
            'pytest_add_cli_args = ["-p", "no:cacheprovider"]',
            'type_check_command = ["mypy", "--strict", "--no-warn-unused-ignores", "--output", "json", "ci_checks"]',
            # A mutant's tests are stopped after (estimated seconds + constant) * multiplier of wall time, the
            # estimate being what they took unmutated. mutmut's 1 s and 15 times stop, as timeouts, mutants whose
            # first test builds what the unmutated run found cached (the schema validators) or that run on a busy
            # machine; 30 s and 5 times leave those to pass or fail, and still stop a mutant that loops.
            "timeout_constant = 30.0",
            "timeout_multiplier = 5.0",
            "",
        ]
    )
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8") + settings
    if not (work / "pyproject.toml").is_file() or (work / "pyproject.toml").read_text(encoding="utf-8") != pyproject:
        (work / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    _copy_project(work / "mutants")
    return work


def _copy_project(mutants: Path) -> None:
    """Everything git has or would add, but the package (mutmut copies it), in place of an earlier copy.

    The copy gets a `.git` folder of its own: a repository root, as the project is for the tests."""
    kept = {"ci_checks", "pyproject.toml", ".mypy_cache"}
    for entry in mutants.iterdir():
        if entry.name not in kept and not entry.name.startswith("mutmut"):
            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for relative in listed.split("\0"):
        source = ROOT / relative
        if not relative or relative.startswith("ci_checks/") or relative == "pyproject.toml":
            continue
        if not (source.is_file() or source.is_symlink()):
            continue  # deleted, not yet committed
        copy = mutants / relative
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, copy, follow_symlinks=False)
    (mutants / ".git").mkdir()


def _mutmut(work: Path, *args: str) -> int:
    environment = {**os.environ, "CI_CHECKS_CORPUS": "", "CI_CHECKS_HOSTILE": "default"}
    command = [sys.executable, "-m", "mutmut", *args]
    return subprocess.run(command, cwd=work, env=environment, check=False).returncode


# --- results --------------------------------------------------------------------------------------------------

# pytest's exit codes, and mutmut's own: 1 tests failed, 2 collection failed (a mutant that breaks the policy of
# this repository, which the pytest plugin collects as tests), 3 internal error, 37 mypy rejected the mutant.
_STATUS = {
    **dict.fromkeys((1, 2, 3, 37), "killed"),
    0: "survived",
    5: "no tests",
    33: "no tests",
    None: "not run",
}
_TIMEOUTS = {36, -24, 24, 152, 255}


def _status(exit_code: int | None) -> str:
    if exit_code in _TIMEOUTS:
        return "killed"  # ran past its CPU limit: the suite would not pass
    return _STATUS.get(exit_code, "suspicious")


def _results(name: str, module: str) -> dict[str, str]:
    """Mutant name -> status, for one module, from its group's last runs."""
    meta = WORK / name / "mutants" / f"{module}.meta"
    if not meta.is_file():
        return {}
    codes: dict[str, int | None] = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
    return {mutant: _status(code) for mutant, code in codes.items()}


@dataclass(frozen=True)
class Equivalent:
    mutant: str
    digest: str
    reason: str


def _equivalents() -> dict[str, Equivalent]:
    listed: dict[str, Equivalent] = {}
    for line in EQUIVALENT.read_text(encoding="utf-8").splitlines() if EQUIVALENT.is_file() else []:
        if line.strip() and not line.startswith("#"):
            mutant, digest, reason = line.split(maxsplit=2)
            listed[mutant] = Equivalent(mutant, digest, reason)
    return listed


def _diff(work: Path, module: str, mutant: str) -> str:
    from mutmut.configuration import reset_config
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    here = Path.cwd()
    os.chdir(work)
    try:
        reset_config()
        return get_diff_for_mutant(mutant, path=module)
    finally:
        os.chdir(here)


def _digest(diff: str) -> str:
    """What the mutant changes, without the lines that say where: stable while the function's code is."""
    changed = [line for line in diff.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    return hashlib.sha256("\n".join(changed).encode()).hexdigest()[:10]


_NOT_KILLED = ("survived", "no tests", "suspicious")


def _survivors(name: str, module: str, equivalents: dict[str, Equivalent]) -> Iterator[tuple[str, str, bool]]:
    """Each mutant of the module that no test killed, its diff, and whether the equivalents file lists it as it is."""
    for mutant, status in sorted(_results(name, module).items()):
        if status in _NOT_KILLED:
            diff = _diff(WORK / name, module, mutant)
            listed = equivalents.get(mutant)
            yield mutant, diff, listed is not None and listed.digest == _digest(diff)


# --- commands -------------------------------------------------------------------------------------------------


def _forget_test_map(work: Path) -> None:
    """mutmut maps tests to the functions they call once, in its stats file: a test written since is not run for a
    mutant until the map is made again, so survivors judged again after new tests need it rebuilt."""
    (work / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)


def _sample_rank(mutant: str) -> tuple[int, int]:
    """A mutant's place in its module's sampling order: the `percent` share a sample takes is a prefix of it."""
    digest = int(hashlib.sha256(mutant.encode()).hexdigest(), 16)
    return digest % 100, digest


def _in_sample(mutant: str, percent: int) -> bool:
    """Whether a mutant is in the `percent` share of a module's mutants that a sampled run tests: chosen by the
    hash of its name, so that a sample is the same on every run and a larger one contains a smaller."""
    return _sample_rank(mutant)[0] < percent


def _sampled(name: str, modules: list[str], percent: int, at_least: int = 0) -> list[str]:
    """The sampled mutants of the modules, and at least `at_least` of each module (all of a smaller one), so that
    a small module's score rests on more than a handful of mutants; a module without mutants adds none."""
    chosen: list[str] = []
    known = False
    for module in modules:
        ranked = sorted(_results(name, module), key=_sample_rank)
        known = known or bool(ranked)
        share = sum(1 for mutant in ranked if _in_sample(mutant, percent))
        chosen += ranked[: max(share, at_least)]
    if not known:
        raise SystemExit(f"{', '.join(modules)}: no mutants known yet; run once without --sample")
    return sorted(chosen)


def run(
    names: list[str],
    changed: str | None,
    survivors: bool,
    children: int,
    sample: int | None = None,
    at_least: int = 0,
) -> int:
    modules = [*names, *(_changed_since(changed) if changed else [])]
    if not modules:
        print("nothing to test")
        return 0
    status = 0
    for name, chosen in _chosen(modules).items():
        work = _prepare(name)
        if survivors:
            _forget_test_map(work)
            equivalents = _equivalents()
            patterns = [
                mutant
                for module in chosen
                for mutant, state in _results(name, module).items()
                if state in _NOT_KILLED and mutant not in equivalents
            ]
            if not patterns:
                continue
        elif sample is not None:
            patterns = _sampled(name, chosen, sample, at_least)
        else:
            patterns = [pattern for module in chosen for pattern in _mutant_patterns(module)]
        print(f"== {name}: {len(chosen)} module(s), tests: {' '.join(GROUPS[name].tests)}", flush=True)
        status |= _mutmut(work, "run", "--max-children", str(children), *patterns)
    return status | report(list(_chosen(modules)))


def report(names: list[str]) -> int:
    """Print killed / survived / equivalent per module and per group; 1 when a group is under the target or the
    equivalents file lists a mutant that no longer survives as it is written there."""
    equivalents = _equivalents()
    rows = []
    stale = []
    for name, chosen in _chosen(names or list(GROUPS)).items():
        totals: Counter[str] = Counter()
        for module in chosen:
            results = _results(name, module)
            counts = Counter("killed" if state == "killed" else "not run" for state in results.values())
            for mutant, _, listed in _survivors(name, module, equivalents):
                counts["equivalent" if listed else "survived"] += 1
                stale += [mutant] if mutant in equivalents and not listed else []
            stale += [
                mutant
                for mutant in equivalents
                if mutant.startswith(f"{_module_name(module)}.") and results.get(mutant) == "killed"
            ]
            counts["not run"] -= counts["survived"] + counts["equivalent"]
            totals.update(counts)
            rows.append((module, counts))
        rows.append((f"{name} (all)", totals))
    print(f"{'module':58} {'mutants':>7} {'killed':>7} {'survived':>8} {'equiv':>6} {'not run':>7} {'score':>7}")
    failing = 0
    for module, counts in rows:
        total = sum(counts.values())
        judged = total - counts["equivalent"] - counts["not run"]
        score = 100.0 * counts["killed"] / judged if judged else None
        failing += module.endswith("(all)") and (score is None or score < TARGET)
        shown = "-" if score is None else f"{score:.1f}%"
        print(
            f"{module:58} {total:7} {counts['killed']:7} {counts['survived']:8} {counts['equivalent']:6} "
            f"{counts['not run']:7} {shown:>7}"
        )
    for mutant in stale:
        print(f"stale in {EQUIVALENT.relative_to(ROOT)}: {mutant} (killed now, or changed since it was listed)")
    return 1 if failing or stale else 0


def show_survivors(names: list[str]) -> int:
    equivalents = _equivalents()
    for name, chosen in _chosen(names or list(GROUPS)).items():
        for module in chosen:
            for mutant, diff, listed in _survivors(name, module, equivalents):
                if not listed:
                    stale = " (listed as equivalent with another diff: stale)" if mutant in equivalents else ""
                    print(f"# {mutant} {_digest(diff)}{stale}\n{diff}\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    running = commands.add_parser("run", help="mutate modules and run their tests")
    running.add_argument("names", nargs="*", help="groups or module paths")
    running.add_argument("--changed", metavar="BASE", help="also the modules changed since BASE (git diff)")
    running.add_argument("--survivors", action="store_true", help="only the mutants that survived the last run")
    running.add_argument("--children", type=int, default=1, help="mutants tested at once (default 1)")
    running.add_argument(
        "--sample",
        type=int,
        choices=range(1, 100),
        metavar="PERCENT",
        help="only this share of each module's mutants, the same ones on every run (an estimate; report's `not run`"
        " column says how many were left)",
    )
    running.add_argument(
        "--at-least",
        type=int,
        default=0,
        metavar="N",
        help="with --sample: also N mutants of each module whose share is smaller (all of a module with fewer)",
    )
    reporting = commands.add_parser("report", help="killed / survived / equivalent per module")
    reporting.add_argument("names", nargs="*")
    surviving = commands.add_parser("survivors", help="the diff of each survivor not listed as equivalent")
    surviving.add_argument("names", nargs="*")
    arguments = parser.parse_args(argv)
    if arguments.command == "run" and arguments.at_least and arguments.sample is None:
        parser.error("--at-least goes with --sample")
    if arguments.command == "run":
        return run(
            arguments.names,
            arguments.changed,
            arguments.survivors,
            arguments.children,
            arguments.sample,
            arguments.at_least,
        )
    if arguments.command == "report":
        return report(arguments.names)
    return show_survivors(arguments.names)


if __name__ == "__main__":
    sys.exit(main())
