"""`ci-checks init`: a starter configuration that passes `check` as written, and whose examples are valid rules."""

from __future__ import annotations

import re
from pathlib import Path

from ci_checks.config import load as config
from ci_checks.core.repository import Repository
from tests.ci.linter.conftest import MakeRepo, run_cli

WORKFLOW = """on: push
jobs:
  gpu:
    runs-on: [self-hosted, linux, mi300x]
    timeout-minutes: 30
    steps:
      - uses: actions/checkout@v4
        with: {persist-credentials: false}
      - name: Test [fast] "quick"
        run: pip install -e . && pytest
"""


def test_init_writes_a_configuration_that_passes_check_and_whose_examples_compile(make_repo: MakeRepo) -> None:
    root = make_repo({".github/workflows/ci.yml": WORKFLOW})
    result = run_cli("init", root)
    path = root / ".github" / "ci-checks.yml"
    assert (result.code, result.out) == (0, f"Wrote {path}; `ci-checks check` reads it.\n")
    text = path.read_text()
    assert (
        "runners:\n  mi300x:\n    labels: [self-hosted, linux, mi300x]\n    vendor: amd  # read from `mi300x`\n" in text
    )
    inventory = config.load(".github/ci-checks.yml", path, Repository(root)).runners
    assert [(r.name, sorted(r.labels), r.vendor, r.self_hosted) for r in inventory.runners] == [
        ("mi300x", ["linux", "mi300x", "self-hosted"], "amd", True)
    ]
    assert run_cli("check", root).code == 0
    enabled = text.replace("rules: []\n", "rules:\n")
    enabled = re.sub(r"^#(  - id:|    )", lambda match: match.group(1), enabled, flags=re.MULTILINE)
    path.write_text(enabled)
    rules = config.load(".github/ci-checks.yml", path, Repository(root)).rules
    assert [rule.kind.name for rule in rules] == ["order", "forbid", "require", "require", "parity"]
    assert "{literal:" in enabled


def test_init_does_not_replace_a_configuration_unless_forced(make_repo: MakeRepo) -> None:
    root = make_repo({".github/workflows/ci.yml": WORKFLOW, ".github/ci-checks.yml": "version: 1\n"})
    result = run_cli("init", root)
    assert (result.code, result.err) == (
        2,
        "ci-checks: error: .github/ci-checks.yml exists already; --force replaces it\n",
    )
    assert (root / ".github" / "ci-checks.yml").read_text() == "version: 1\n"
    assert run_cli("init", root, "--force").code == 0
    target = Path(root / "elsewhere.yml")
    target.write_text("x: 1\n")
    (root / ".github" / "ci-checks.yml").unlink()
    (root / ".github" / "ci-checks.yml").symlink_to(target)
    assert run_cli("init", root, "--force").code == 2
    assert target.read_text() == "x: 1\n"


def test_init_writes_what_it_cannot_tell_as_such(make_repo: MakeRepo) -> None:
    hosted = WORKFLOW.replace("[self-hosted, linux, mi300x]", "ubuntu-latest")
    root = make_repo(
        {".github/workflows/ci.yml": hosted, ".github/workflows/b.yml": hosted.replace("ubuntu-latest", "big-box")}
    )
    assert run_cli("init", root).code == 0
    text = (root / ".github" / "ci-checks.yml").read_text()
    assert "  big-box:\n    labels: [big-box]\n    self-hosted: false  # nothing says it is self-hosted" in text
    assert run_cli("check", root).code == 0
    (root / ".github" / "workflows" / "b.yml").unlink()
    assert run_cli("init", root, "--force").code == 0
    assert "# runners: {}  (none found" in (root / ".github" / "ci-checks.yml").read_text()
