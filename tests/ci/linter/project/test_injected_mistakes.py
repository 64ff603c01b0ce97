"""Mistakes GPU-CI teams ship, injected one at a time into a real GPU RL framework's workflows: each caught with no
configuration, and the intact workflows clean of that finding.

The framework's workflows are those of `radixark/miles` in the corpus CI_CHECKS_CORPUS names (see
`test_corpus.py`): a reusable ROCm workflow whose container maps the GPUs, CUDA and ROCm pull-request workflows
with their own concurrency groups, and runner labels passed as JSON lists. Without the corpus there is nothing
to inject into, and the tests are not collected; the metamorphic battery (`metamorphic.BUILT_IN`) makes the same
mistakes in a generated repository everywhere.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.ci.linter.conftest import run_cli
from tests.ci.linter.project.test_corpus import SHARED_CORPUS

FRAMEWORK = SHARED_CORPUS / "radixark__miles" if SHARED_CORPUS is not None else None
WORKFLOWS = ".github/workflows"


@dataclass(frozen=True)
class Mistake:
    id: str
    path: str
    edits: tuple[tuple[str, str], ...]
    """Each text that is there once, and what it becomes."""
    code: str
    """The rule that must report it (in either workflow, for two that collide)."""
    says: str
    """A piece of its message."""


MISTAKES = [
    Mistake(
        "rocm-container-loses-kfd",
        f"{WORKFLOWS}/_run-ci-rocm.yml",
        # `--privileged` maps every device of the host: with it, nothing would be lost.
        (("        --device=/dev/kfd\n", ""), ("        --privileged\n", "")),
        "CC046",
        "runs on an AMD GPU runner",
    ),
    Mistake(
        "runner-label-typo",
        f"{WORKFLOWS}/pr-test.yml",
        (("""runs_on: '["h200", "4gpu"]'""", """runs_on: '["h200", "4gup"]'"""),),
        "CC044",
        "(did you mean `4gpu`?)",
    ),
    Mistake(
        "gpu-model-typo",
        f"{WORKFLOWS}/pr-test.yml",
        (("""runs_on: '["h200", "8gpu"]'""", """runs_on: '["h2000", "8gpu"]'"""),),
        "CC044",
        "(did you mean `h200`?)",
    ),
    Mistake(
        "cuda-and-rocm-share-a-concurrency-group",
        f"{WORKFLOWS}/pr-test-rocm.yml",
        (("group: pr-test-rocm-${{ github.event.pull_request.number", "group: pr-test-${{ github.event.number"),),
        "CC049",
        "both run for `pull_request`",
    ),
]


def _findings(root: Path, code: str) -> list[str]:
    result = run_cli("check", root, "--select", code, "--output-format", "json")
    assert result.err == "", result.err
    return [d["message"] for d in json.loads(result.out)["diagnostics"]]


@pytest.mark.skipif(FRAMEWORK is None, reason="CI_CHECKS_CORPUS names no corpus")
@pytest.mark.parametrize("mistake", MISTAKES, ids=lambda mistake: mistake.id)
def test_the_injected_mistake_is_caught_with_no_configuration(tmp_path: Path, mistake: Mistake) -> None:
    assert FRAMEWORK is not None
    root = tmp_path / "miles"
    shutil.copytree(FRAMEWORK, root)
    (root / ".git").mkdir()
    assert not any(mistake.says in message for message in _findings(root, mistake.code))
    target = root / mistake.path
    text = target.read_text(encoding="utf-8")
    for old, new in mistake.edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    target.write_text(text, encoding="utf-8")
    assert any(mistake.says in message for message in _findings(root, mistake.code))
