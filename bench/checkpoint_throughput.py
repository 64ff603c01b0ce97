"""Throughput of every checkpoint backend against a raw write, as the median of several runs.

    python bench/checkpoint_throughput.py --size 1GiB --repeat 3 [--ranks 2] [-- --threads 4]

Each run is a fresh `python -m ci_checks.checkpoint` (under torchrun with --ranks), so every
run pays its own warm-up and none shares page cache state with the previous one's files.
One run is noisy on a shared machine; the median of a few is what the docs record.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any


def one_run(size: str, ranks: int, extra: list[str], report: Path) -> dict[str, Any]:
    harness = ["-m", "ci_checks.checkpoint", "--size", size, "--report-json", str(report), *extra]
    launcher = ["-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={ranks}"] if ranks else []
    subprocess.run([sys.executable, *launcher, *harness], check=True, capture_output=True, text=True)
    document: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    return document


def median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="1GiB")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ranks", type=int, default=0, help="run under torchrun with this many ranks")
    parser.add_argument("extra", nargs="*", help="more options for ci-checks checkpoint, after --")
    args = parser.parse_args()

    runs = []
    with tempfile.TemporaryDirectory() as folder:
        for index in range(args.repeat):
            runs.append(one_run(args.size, args.ranks, args.extra, Path(folder) / f"run-{index}.json"))
    platform = runs[0]["platform"]
    print(
        f"{platform['size_bytes'] / (1 << 30):.2f} GiB, world size {platform['world_size']}, {platform['device']}, "
        f"torch {platform['torch']}, megatron-core {platform['megatron_core']}, median of {args.repeat} runs"
    )
    print(f"| {'backend':<18} | GB/s | x raw | blocking s | total s | blocking / dcp-sync total |")
    print("|---|---|---|---|---|---|")
    rows = [r for r in runs[0]["results"] if r["check"] == "throughput"]
    sync_total = median(
        [
            r["total_s"]
            for run in runs
            for r in run["results"]
            if (r["backend"], r["check"]) == ("dcp-sync", "throughput")
        ]
    )
    for row in rows:
        same = [
            r for run in runs for r in run["results"] if (r["backend"], r["check"]) == (row["backend"], "throughput")
        ]
        gb, ratio, blocking, total = (
            median([r[key] for r in same]) for key in ("gb_per_s", "ratio_to_raw", "blocking_s", "total_s")
        )
        share = f"{blocking / sync_total:.0%}" if blocking is not None and sync_total else "-"
        cells = [f"{v:.2f}" if v is not None else "-" for v in (gb, ratio)] + [
            f"{v:.3f}" if v is not None else "-" for v in (blocking, total)
        ]
        print(f"| {row['backend']:<18} | " + " | ".join(cells) + f" | {share} |")


if __name__ == "__main__":
    main()
