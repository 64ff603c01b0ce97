"""Time `ci-checks check` over a folder of repositories against the YAML parse floor.

    python bench/check_corpus.py CORPUS [--repeat 5]

CORPUS holds one folder per repository (each with a .github/ folder). The
floor is libyaml's event parse of the same workflow and action files, the
first stage of ci-checks' read path; the ratio says what everything after it
(model, shell trees, schema validation, rules, output) costs. The external
linters are left out (`--backends none`); `bench/backends.py` times them. Times are the best
of --repeat runs in one process, after one warm-up run.
"""

from __future__ import annotations

import argparse
import io
import time
from pathlib import Path

import yaml

from ci_checks.cli import main as cli
from ci_checks.core.repository import Repository

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def best_of(repeat: int, action: object) -> float:
    assert callable(action)
    action()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    repositories = sorted(p for p in args.corpus.iterdir() if (p / ".github").is_dir())
    files = []
    for folder in repositories:
        repository = Repository(folder)
        files += [repository.root / f for f in [*repository.workflows, *repository.actions]]
    texts = [f.read_text(encoding="utf-8", errors="replace") for f in files]
    size = sum(len(t.encode()) for t in texts)

    def parse_floor() -> None:
        for text in texts:
            for _ in yaml.parse(text, Loader=_Loader):
                pass

    def check_all() -> None:
        for folder in repositories:
            argv = ["check", str(folder), "--backends", "none", "--output-format", "json"]
            cli.main(argv, out=io.StringIO(), err=io.StringIO())

    floor = best_of(args.repeat, parse_floor)
    checked = best_of(args.repeat, check_all)
    print(f"repositories: {len(repositories)}  files: {len(files)}  bytes: {size:,}")
    print(f"parse floor (libyaml events): {floor * 1000:8.1f} ms")
    print(f"ci-checks check (all rules):  {checked * 1000:8.1f} ms")
    print(f"ratio to the parse floor:     {checked / floor:8.1f}x")


if __name__ == "__main__":
    main()
