"""Real-shaped workflows of ML repositories: exactly their expected findings, schema-valid JSON, exact positions.

The repositories of `tests/ci/fixtures/corpus/` are always checked, each against the findings written by hand
beside it (`corpus/<repository>.expected`, see `expectations.py`): a finding missing or one more fails. They are
GPU CI on CUDA and ROCm self-hosted runners (matrices of runner labels, containers with device options, reusable
workflows, a composite action), release and docs workflows (pwsh and python steps, `bash -l {0}` defaults, quoted
and plain scripts), and a bot (`pull_request_target`, github-script, a file with CRLF line endings). A larger
corpus is added when CI_CHECKS_CORPUS names a folder holding one folder per repository (each with its `.github/`);
`.ci/run` sets it where a copy is at hand. None of it is part of this project.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest

from ci_checks.core import own_schemas
from ci_checks.core.repository import FileKind, Repository
from ci_checks.model import Step
from ci_checks.model.loading import LoadedFile, load
from ci_checks.syntax.yamlpos import ScalarMap
from tests.ci.expectations import expected, printed
from tests.ci.linter.conftest import FIXTURES, run_cli
from tests.ci.linter.reporters.test_reporters import SARIF_SCHEMAS, validate_sarif

FIXTURE_CORPUS = FIXTURES / "corpus"
SHARED_CORPUS = Path(os.environ["CI_CHECKS_CORPUS"]) if os.environ.get("CI_CHECKS_CORPUS") else None


def _repositories(folder: Path) -> list[Path]:
    return sorted(path for path in folder.iterdir() if (path / ".github").is_dir())


REPOSITORIES = [
    *_repositories(FIXTURE_CORPUS),
    *(_repositories(SHARED_CORPUS) if SHARED_CORPUS is not None and SHARED_CORPUS.is_dir() else []),
]
_IDS = {path: f"{'fixture' if path.is_relative_to(FIXTURE_CORPUS) else 'corpus'}:{path.name}" for path in REPOSITORIES}


@pytest.fixture
def repository(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """The repository to check; a fixture one is copied out of this project, so that it is a repository root."""
    path: Path = request.param
    if not path.is_relative_to(FIXTURE_CORPUS):
        return path
    copy = tmp_path / path.name
    shutil.copytree(path, copy)
    (copy / ".git").mkdir()
    return copy


def test_the_corpus_is_there() -> None:
    fixtures = _repositories(FIXTURE_CORPUS)
    assert [path.name for path in fixtures] == ["cuda-training", "pr-bot", "rocm-kernels", "wheels-and-docs"]
    if SHARED_CORPUS is not None:  # named, so it must be there: a typo would silently check less
        assert _repositories(SHARED_CORPUS), f"CI_CHECKS_CORPUS={SHARED_CORPUS} holds no repository"


def _steps(repo: Path) -> Iterator[tuple[str, LoadedFile, list[Step]]]:
    """Each workflow and action of the repository, loaded, with its steps."""
    repository = Repository(repo)
    for path in repository.workflows + repository.actions:
        kind = FileKind.ACTION if path.endswith(("action.yml", "action.yaml")) else FileKind.WORKFLOW
        loaded = load(repository, path, kind)
        steps = list(loaded.workflow.steps()) if loaded.workflow else loaded.action.steps if loaded.action else []
        yield path, loaded, steps


@pytest.mark.parametrize("repository", _repositories(FIXTURE_CORPUS), ids=_IDS.get, indirect=True)
def test_a_fixture_repository_has_exactly_its_expected_findings(repository: Path) -> None:
    result = run_cli("check", repository)
    assert result.err == ""
    table = expected(FIXTURE_CORPUS / f"{repository.name}.expected")
    assert [str(finding) for finding in printed(result.out)] == [str(finding) for finding in table]
    assert result.code == (1 if table else 0)


@pytest.mark.parametrize("repository", REPOSITORIES, ids=_IDS.get, indirect=True)
def test_check_exits_0_or_1_with_schema_valid_json(repository: Path, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    result = run_cli("check", repository, "--output-format", "json", "--output", f"markdown={summary}")
    assert result.code in (0, 1), result.err
    assert result.err == ""
    jsonschema.Draft202012Validator(own_schemas.load(own_schemas.OUTPUT)).validate(json.loads(result.out))
    checked = len(Repository(repository).workflows + Repository(repository).actions)
    assert checked > 0 and f"{checked} files checked" in summary.read_text(encoding="utf-8")


@pytest.mark.parametrize("repository", REPOSITORIES, ids=_IDS.get, indirect=True)
def test_every_run_script_maps_back_to_its_source_exactly(repository: Path) -> None:
    checked = 0
    for path, loaded, steps in _steps(repository):
        for step in steps:
            if step.run is not None:
                assert ScalarMap(loaded.source, step.run).exact, f"{path}:{step.run.span.line}"
                checked += 1
    assert checked > 0


@pytest.mark.parametrize("repository", REPOSITORIES, ids=_IDS.get, indirect=True)
def test_command_spans_point_at_the_command_text(repository: Path) -> None:
    compared = 0
    for path, loaded, steps in _steps(repository):
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


@pytest.mark.parametrize("repository", REPOSITORIES, ids=_IDS.get, indirect=True)
def test_sarif_with_every_linter_validates_and_links_every_rule(repository: Path) -> None:
    result = run_cli("check", repository, "--backends", "all", "--output-format", "sarif")
    assert result.code in (0, 1), result.err
    log = json.loads(result.out)
    for schema_name in SARIF_SCHEMAS:
        validate_sarif(log, schema_name)
    [run] = log["runs"]
    for rule in run["tool"]["driver"]["rules"]:  # a link, or (a rule page not online yet) the documentation itself
        assert rule["helpUri"].startswith("https://") if "helpUri" in rule else rule["help"]["text"].strip(), rule
    assert not [result for result in run["results"] if result["ruleId"] in ("CC090", "CC091")], "a linter did not run"
