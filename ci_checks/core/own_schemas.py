"""The JSON schemas this project defines (`schemas/` in the source tree, `ci_checks/schemas/` in the wheel)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

CONFIG = "ci-checks.schema.json"
OUTPUT = "ci-checks-output.schema.json"

_PACKAGE = Path(__file__).resolve().parents[1]


def schema_path(name: str) -> Path:
    """Inside an installed wheel the schemas sit in the package; in a source checkout, beside it."""
    for folder in (_PACKAGE / "schemas", _PACKAGE.parent / "schemas"):
        candidate = folder / name
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"schema {name} is missing from the installation")


@cache
def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(schema_path(name).read_text(encoding="utf-8"))
    return data
