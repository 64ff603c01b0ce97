"""The schema's fast pass (Rust, strict types) never accepts a document the explaining pass would reject.

So checking with the fast pass first, and explaining only what it rejects,
gives exactly the errors the explaining pass alone gives: over the recorded
GitHub shapes, the repository fixtures and, when at hand, the larger corpus.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ci_checks.core import source
from ci_checks.core.repository import FileKind
from ci_checks.rules import schema
from ci_checks.rules.schema import validation
from ci_checks.syntax import yamlpos
from tests.ci.linter.conftest import FIXTURES

SHAPES = json.loads((FIXTURES / "github-verdicts.json").read_text(encoding="utf-8"))["shapes"]


def _documents() -> list[tuple[str, str, FileKind]]:
    found = [(shape["id"], shape["yaml"], FileKind.WORKFLOW) for shape in SHAPES]
    folders = [FIXTURES]
    if os.environ.get("CI_CHECKS_CORPUS"):
        folders.append(Path(os.environ["CI_CHECKS_CORPUS"]))
    for folder in folders:
        for path in sorted(folder.rglob("*.y*ml")):
            if ".github" in path.parts and path.is_file():
                kind = FileKind.ACTION if path.name.startswith("action.") else FileKind.WORKFLOW
                found.append((str(path), path.read_text(encoding="utf-8", errors="replace"), kind))
    return found


DOCUMENTS = _documents()


def test_the_fast_pass_accepts_only_what_the_explaining_pass_accepts() -> None:
    accepted = 0
    for name, text, kind in DOCUMENTS:
        document = yamlpos.parse(source.decode(name, text.encode("utf-8")))
        if document.root is None or not document.usable:
            continue
        instance = yamlpos.to_plain(document.root)
        if validation._fast(kind).is_valid(validation._as_github_reads(instance)):
            accepted += 1
            errors = [error.message for error in schema.validator(kind).iter_errors(instance)]
            assert errors == [], f"{name}: the fast pass accepts what the explaining pass rejects: {errors[:1]}"
    assert accepted >= len(DOCUMENTS) // 3  # the fast pass does its job: most real documents skip the slow one


def test_scalars_github_reads_by_their_type_or_as_text_pass_the_fast_pass() -> None:
    """A step's `continue-on-error: true` (in a list) keeps its type; a reusable call's `with` values become text."""
    text = (
        "on: push\njobs:\n  t:\n    runs-on: x\n    steps:\n      - run: make\n"
        "        continue-on-error: true\n        timeout-minutes: 5\n"
        "  c:\n    uses: ./.github/workflows/x.yml\n    with:\n      n: 5\n      f: true\n"
    )
    root = yamlpos.parse(source.decode("w.yml", text.encode())).root
    assert root is not None
    instance = yamlpos.to_plain(root)
    assert validation._fast(FileKind.WORKFLOW).is_valid(validation._as_github_reads(instance))
