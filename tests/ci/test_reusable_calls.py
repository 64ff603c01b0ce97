"""What a reusable workflow reads, and the calls that do not give it (CC050)."""

from __future__ import annotations

import json
from pathlib import Path

from ci_checks import source, yamlpos
from ci_checks.model.contexts import reads
from tests.ci.conftest import run_cli

READING = """on: {workflow_call: {inputs: {upload: {type: boolean, default: false}}}}
jobs:
  t:
    if: inputs.upload && secrets['DEPLOY_KEY'] != ''
    runs-on: ubuntu-latest
    steps:
      - run: echo "${{ format('secrets.{0}', 'NOT_A_READ') }} ${{ secrets.HF_TOKEN }}"
        if: ${{ github.event.inputs.debug }}
"""


def test_reads_are_placed_exactly_and_carry_the_conditions_around_them() -> None:
    document = yamlpos.parse(source.decode("w.yml", READING.encode()))
    found = [
        (read.context, read.name, read.span.line, read.span.column, read.guards)
        for read in reads(document.root, document.source)
    ]
    job_if = "inputs.upload && secrets['DEPLOY_KEY'] != ''"
    assert found == [
        ("inputs", "upload", 4, 9, (job_if,)),
        ("secrets", "DEPLOY_KEY", 4, 26, (job_if,)),
        ("secrets", "HF_TOKEN", 7, 67, (job_if, "${{ github.event.inputs.debug }}")),
        ("github.event.inputs", "debug", 8, 17, (job_if, "${{ github.event.inputs.debug }}")),
    ]


CALLEE = """on:
  workflow_call:
    inputs:
      upload: {type: boolean, default: false}
jobs:
  t:
    runs-on: ubuntu-latest
    steps:
      - run: pytest
      - if: inputs.upload
        run: echo upload
        env: {KEY: "${{ secrets.UPLOAD_KEY }}"}
"""


def _findings(root: Path) -> list[tuple[str, int]]:
    result = run_cli("check", root, "--select", "CC050", "--output-format", "json")
    return [(d["path"], d["line"]) for d in json.loads(result.out)["diagnostics"]]


def test_a_secret_read_only_where_the_call_turns_it_off_need_not_be_passed(make_repo) -> None:  # type: ignore[no-untyped-def]
    caller = """on: push
jobs:
  plain: {uses: ./.github/workflows/callee.yml}
  uploads: {uses: ./.github/workflows/callee.yml, with: {upload: true}}
  decided-later: {uses: ./.github/workflows/callee.yml, with: {upload: "${{ github.ref == 'refs/heads/main' }}"}}
  inherits: {uses: ./.github/workflows/callee.yml, with: {upload: true}, secrets: inherit}
"""
    root = make_repo({".github/workflows/callee.yml": CALLEE, ".github/workflows/caller.yml": caller})
    assert _findings(root) == [(".github/workflows/caller.yml", 4), (".github/workflows/caller.yml", 5)]
