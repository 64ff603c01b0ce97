"""Real workflows from ML repositories: no crash, schema-valid JSON, and exact script positions.

The corpus is not part of this project. Point CI_CHECKS_CORPUS at a folder
holding one folder per repository (each with its `.github/`); without it these
tests are skipped, and reported as skipped.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest

from ci_checks import own_schemas
from ci_checks.loading import load
from ci_checks.repository import FileKind, Repository
from ci_checks.yamlpos import ScalarMap
from tests.ci.conftest import run_cli

CORPUS = Path(os.environ["CI_CHECKS_CORPUS"]) if os.environ.get("CI_CHECKS_CORPUS") else None
REPOSITORIES = sorted(p for p in CORPUS.iterdir() if (p / ".github").is_dir()) if CORPUS else []
needs_corpus = pytest.mark.skipif(CORPUS is None, reason="CI_CHECKS_CORPUS is not set")


@needs_corpus
@pytest.mark.parametrize("repository", REPOSITORIES, ids=lambda p: p.name)
def test_check_exits_0_or_1_with_schema_valid_json(repository: Path) -> None:
    result = run_cli("check", repository, "--output-format", "json")
    assert result.code in (0, 1), result.err
    assert result.err == ""
    jsonschema.Draft202012Validator(own_schemas.load(own_schemas.OUTPUT)).validate(json.loads(result.out))


@needs_corpus
@pytest.mark.parametrize("repository", REPOSITORIES, ids=lambda p: p.name)
def test_every_run_script_maps_back_to_its_source_exactly(repository: Path) -> None:
    repo = Repository(repository)
    checked = 0
    for path in repo.workflows + repo.actions:
        kind = FileKind.ACTION if path.endswith(("action.yml", "action.yaml")) else FileKind.WORKFLOW
        loaded = load(repo, path, kind)
        steps = list(loaded.workflow.steps()) if loaded.workflow else loaded.action.steps if loaded.action else []
        for step in steps:
            if step.run is not None:
                assert ScalarMap(loaded.source, step.run).exact, f"{path}:{step.run.span.line}"
                checked += 1
    assert checked > 0


@needs_corpus
@pytest.mark.parametrize("repository", REPOSITORIES, ids=lambda p: p.name)
def test_command_spans_point_at_the_command_text(repository: Path) -> None:
    repo = Repository(repository)
    compared = 0
    for path in repo.workflows + repo.actions:
        kind = FileKind.ACTION if path.endswith(("action.yml", "action.yaml")) else FileKind.WORKFLOW
        loaded = load(repo, path, kind)
        steps = list(loaded.workflow.steps()) if loaded.workflow else loaded.action.steps if loaded.action else []
        text = loaded.source.text
        for step in steps:
            script = step.script
            if script is None or step.run is None or step.run.style != "|":
                continue
            for command in script.commands():
                span = command.span
                start = loaded.source.offset(span.line, span.column)
                end = loaded.source.offset(span.end_line, span.end_column)
                if "\n" not in command.text:
                    assert text[start:end] == command.text, f"{path}:{span.line}:{span.column}"
                    compared += 1
    assert compared > 0
