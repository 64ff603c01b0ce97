"""The SchemaStore schemas of workflows and actions, as vendored by `check-jsonschema`.

The `check-jsonschema` package ships and updates them as package data
(`builtin_schemas/vendor`, Apache-2.0). Only the files are read: importing
its CLI would cost more than the validation.
"""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from typing import Any

from ci_checks.core.repository import FileKind

SCHEMA_FILES = {FileKind.WORKFLOW: "github-workflows.json", FileKind.ACTION: "github-actions.json"}

Schema = dict[str, Any]


class SchemaUnavailable(RuntimeError):
    pass


@cache
def vendor_directory() -> Path:
    spec = importlib.util.find_spec("check_jsonschema")
    if spec is None or not spec.submodule_search_locations:
        raise SchemaUnavailable("the check-jsonschema package, which ships the GitHub schemas, is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "builtin_schemas" / "vendor"
