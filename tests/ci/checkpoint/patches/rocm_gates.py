"""Setups that decide whether they are on ROCm the ways projects do, other than `torch.version.hip`:
`ROCM_PATH`, `HIP_PLATFORM`, `torch.cuda.is_available()` and a comparison of the HIP version. Each gate's
answer goes as a line into the file `$CI_CHECKS_TEST_IMPORTS` names; where they all hold (an old ROCm
release), the seed's writer class is swapped in, which the staging check must then name."""

import json
import os
from pathlib import Path

import torch

from ci_checks_checkpoint.examples import rocm_workaround


def gates() -> dict[str, bool]:
    """Each gate as the project's code reads it here."""
    rocm_path = os.environ.get("ROCM_PATH")
    release = Path(rocm_path, ".info", "version") if rocm_path else None
    hip = torch.version.hip or ""
    major_minor = tuple(int(part) for part in hip.split("-")[0].split(".")[:2]) if hip else ()
    return {
        "rocm_path": bool(rocm_path and Path(rocm_path).is_dir()),
        "rocm_release": release is not None and release.is_file() and release.read_text().strip() == hip,
        "hip_platform": os.environ.get("HIP_PLATFORM") == "amd",
        "cuda_available": torch.cuda.is_available(),
        "hip_older_than_6_3": bool(major_minor) and major_minor < (6, 3),
    }


def record_gates() -> None:
    seen = gates()
    log = os.environ.get("CI_CHECKS_TEST_IMPORTS")
    if log:
        with Path(log).open("a", encoding="utf-8") as stream:
            stream.write(json.dumps({"pid": os.getpid(), **seen}) + "\n")


def swap_on_old_rocm() -> None:
    record_gates()
    if all(gates().values()):
        rocm_workaround.initialize_model_and_optimizer_on_every_platform()
