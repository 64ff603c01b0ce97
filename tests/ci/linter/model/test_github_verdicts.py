"""ci-checks agrees with GitHub's own workflow parser on every generated workflow shape.

GitHub's verdicts (`@actions/workflow-parser`) are recorded in
`fixtures/github-verdicts.json` by `scripts/regenerate_github_verdicts.py`;
this test needs no node. Compared are the rules that say a file is not a
workflow GitHub can read: YAML problems (CC010-CC014) and the workflow schema
(CC020). A shape GitHub accepts must get none of their errors; a shape GitHub
rejects must get at least one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.ci.linter.conftest import FIXTURES, run_cli
from tests.ci.linter.model.github_shapes import shapes

RECORDED = json.loads((FIXTURES / "github-verdicts.json").read_text(encoding="utf-8"))
VALIDITY_RULES = "CC010,CC011,CC012,CC013,CC014,CC020"
_TEXT_DEFAULT = (
    "only the parser's conversion step insists on a YAML string for a string input's default; GitHub's service "
    "reads a number there as text, as it does for every other string (reusable workflows with `type: string` "
    "and `default: 120` are called daily in public ML repositories, and actionlint accepts them)"
)
PARSER_DEFECTS = {
    "on-repository-dispatch-string": "its schema gives `repository_dispatch` as a string the constant "
    "'branch_protection_rule' (a copy-paste slip); GitHub documents and runs `on: repository_dispatch`",
    "on-repository-dispatch-list": "the same slip, in a list of events",
    "on-workflow-dispatch-input-defaults": _TEXT_DEFAULT,
    "on-workflow-dispatch-input-string-default-boolean": _TEXT_DEFAULT,
    "on-workflow-call-input-default-number-for-string": _TEXT_DEFAULT,
}
"""Shapes the parser rejects where GitHub does not: ci-checks accepts them, and the recording must still show
the parser's verdict (so that an entry goes once the parser is fixed)."""


def _github_accepts(shape: dict[str, object]) -> bool:
    return bool(shape["accepted"]) != (shape["id"] in PARSER_DEFECTS)


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """ci-checks' error messages for each recorded shape, by shape id."""
    root = tmp_path_factory.mktemp("shapes")
    (root / ".git").mkdir()
    folder = root / ".github" / "workflows"
    folder.mkdir(parents=True)
    for shape in RECORDED["shapes"]:
        (folder / f"{shape['id']}.yml").write_text(shape["yaml"], encoding="utf-8")
    result = run_cli("check", root, "--output-format", "json", "--select", VALIDITY_RULES)
    assert result.err == ""
    found: dict[str, list[str]] = {shape["id"]: [] for shape in RECORDED["shapes"]}
    for diagnostic in json.loads(result.out)["diagnostics"]:
        if diagnostic["severity"] == "error":
            found[Path(diagnostic["path"]).stem].append(f"{diagnostic['code']} {diagnostic['message']}")
    return found


def test_the_recording_is_of_the_current_shapes() -> None:
    assert [(s["id"], s["yaml"]) for s in RECORDED["shapes"]] == [(s.id, s.yaml) for s in shapes()]
    assert RECORDED["parser"].startswith("@actions/workflow-parser ")


def test_the_shapes_are_many_and_of_both_kinds() -> None:
    accepted = [s for s in RECORDED["shapes"] if s["accepted"]]
    assert len(RECORDED["shapes"]) >= 300
    assert 100 <= len(accepted) <= len(RECORDED["shapes"]) - 100


def test_github_accepts_what_motivates_each_override_and_rejects_what_motivates_each_check() -> None:
    recorded = {s["id"]: s["accepted"] for s in RECORDED["shapes"]}
    overrides = {shape: accepted for shape, accepted in recorded.items() if shape.startswith("override-")}
    checks = {shape: accepted for shape, accepted in recorded.items() if shape.startswith("check-")}
    assert overrides and set(overrides.values()) == {True}
    assert checks and set(checks.values()) == {False}


def test_the_parser_defects_are_still_recorded_as_such() -> None:
    recorded = {s["id"]: s["accepted"] for s in RECORDED["shapes"]}
    assert {shape: recorded.get(shape) for shape in PARSER_DEFECTS} == dict.fromkeys(PARSER_DEFECTS, False)


def test_no_error_on_a_shape_github_accepts(verdicts: dict[str, list[str]]) -> None:
    contradicted = {s["id"]: verdicts[s["id"]] for s in RECORDED["shapes"] if _github_accepts(s) and verdicts[s["id"]]}
    assert contradicted == {}


def test_an_error_on_every_shape_github_rejects(verdicts: dict[str, list[str]]) -> None:
    missed = {s["id"]: s["errors"] for s in RECORDED["shapes"] if not _github_accepts(s) and not verdicts[s["id"]]}
    assert missed == {}
