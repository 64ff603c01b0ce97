"""Throughput of every checkpoint backend against the references, as the median of several runs.

    python bench/checkpoint_throughput.py --size 1GiB --repeat 3 [--ranks 2] [-- --threads 4]

Each run is a fresh `python -m ci_checks_checkpoint` (with --nproc-per-node for --ranks), so every
run pays its own warm-up and none shares page cache state with the previous one's files.
One run is noisy on a shared machine; the median of a few is what the docs record. The last
two columns are the goals' ratios: blocking against the device-to-host copy (goal <= 1.5),
total against the synchronous save's (goal <= 1.25); "x raw" is the durable one (>= 0.8).
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
    harness = ["-m", "ci_checks_checkpoint", "--size", size, "--report-json", str(report), *extra]
    launcher = ["--nproc-per-node", str(ranks)] if ranks else []  # the harness starts torchrun itself
    subprocess.run([sys.executable, *harness, *launcher], check=True, capture_output=True, text=True)
    document: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    return document


def median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def _cell(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="1GiB")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ranks", type=int, default=0, help="ranks (--nproc-per-node; default: the harness's)")
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

    def column(backend: str, key: str) -> float | None:
        rows = [r for run in runs for r in run["results"] if (r["backend"], r["check"]) == (backend, "throughput")]
        return median([r[key] for r in rows])

    d2h, sync_total = column("d2h", "total_s"), column("dcp-sync", "total_s")
    print("| backend | GB/s | x raw | blocking s | total s | blocking / d2h | total / dcp-sync |")
    print("|---|---|---|---|---|---|---|")
    for row in [r for r in runs[0]["results"] if r["check"] == "throughput"]:
        backend = row["backend"]
        blocking, total = column(backend, "blocking_s"), column(backend, "total_s")
        to_d2h = blocking / d2h if blocking is not None and d2h else None
        to_sync = total / sync_total if backend not in ("raw", "d2h", "dcp-sync") and total and sync_total else None
        cells = [
            _cell(column(backend, "gb_per_s"), 2),
            _cell(column(backend, "ratio_to_raw"), 2),
            _cell(blocking, 3),
            _cell(total, 3),
            _cell(to_d2h, 2),
            _cell(to_sync, 2),
        ]
        print(f"| {backend} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
