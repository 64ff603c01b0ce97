"""Time each kind of bad input through `ci-checks check`, and the alias bomb through the parser alone.

    python bench/bad_inputs.py

Each line is the best of --repeat in-process runs of the CLI on one error
fixture from tests/ci/fixtures/err, plus a 64 MiB file against the default size
cap, written to a temporary folder for the run.
"""

from __future__ import annotations

import argparse
import io
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from ci_checks.cli import main as cli
from ci_checks.core import source
from ci_checks.syntax import yamlpos

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "ci" / "fixtures" / "err"
CASES = {
    "on: key with an unknown event": "cc020_workflow_schema_on_key.yml",
    "duplicate key": "cc011_duplicate_key.yml",
    "billion laughs": "cc012_yaml_limit_billion_laughs.yml",
    "nesting 300 deep": "cc012_yaml_limit_nesting.yml",
    "binary": "cc002_binary_file.yml",
    "not UTF-8": "cc003_invalid_encoding.yml",
    "tab-indented": "cc010_yaml_syntax_tab.yml",
    "empty": "cc013_empty_file_zero_bytes.yml",
}


def check(path: Path) -> Callable[[], object]:
    return lambda: cli.main(["check", str(path), "--backends", "none"], out=io.StringIO(), err=io.StringIO())


def best(repeat: int, action: Callable[[], object]) -> float:
    action()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    for label, name in CASES.items():
        elapsed = best(args.repeat, check(FIXTURES / name))
        print(f"{label:32} {elapsed * 1000:8.2f} ms  (ci-checks check)")
    with tempfile.TemporaryDirectory() as folder:
        big = Path(folder) / "big.yml"
        big.write_bytes(b"on: push\n" + b"#" * (64 << 20) + b"\n")
        elapsed = best(args.repeat, check(big))
        print(f"{'64 MiB file over the size cap':32} {elapsed * 1000:8.2f} ms  (ci-checks check)")
    bomb = source.read("bomb.yml", FIXTURES / "cc012_yaml_limit_billion_laughs.yml")
    elapsed = best(args.repeat, lambda: yamlpos.parse(bomb))
    print(f"{'billion laughs, parse only':32} {elapsed * 1000:8.2f} ms  (yamlpos.parse)")


if __name__ == "__main__":
    main()
