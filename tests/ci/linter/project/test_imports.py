"""What `ci-checks check FILE --backends none` imports: only what that file needs, and next to nothing when
nothing has changed since the last run.

A pre-commit hook checks one or a few files; every library imported and not
used is start-up time paid on each commit. The run goes through the CLI's
`main` in a fresh interpreter, which then lists the modules it holds.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.ci.linter.conftest import MakeRepo

PROBE = (
    "import sys\n"
    "from ci_checks.cli.main import main\n"
    "code = main(sys.argv[1:])\n"
    "sys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules)))\n"
    "sys.exit(code)\n"
)
NEVER = (
    "jsonschema",  # the explaining validator: only for a document the fast one rejects
    "ci_checks.policy",  # only with a configuration that has rules
    "ci_checks.config.schema",
    "ci_checks.backends.external",
    "ci_checks.backends.actionlint",
    "ci_checks.backends.shellcheck",
    "ci_checks.backends.zizmor",
    "ci_checks.backends.mirror",
    "ci_checks.backends.linter_config",
    "ci_checks.engine.baseline",
    "ci_checks.engine.changes",
    "ci_checks.engine.fixes",
    "ci_checks_checkpoint",
    "multiprocessing",  # one repository: no workers
    "torch",
)
STEPS_ONLY = """\
on: push
permissions: {}
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
"""
WITH_A_SCRIPT = STEPS_ONLY + "      - run: bash tools/build.sh\n"
POLICY = """\
rules:
  - id: no-curl
    kind: forbid
    where: {workflow: .github/workflows/ci.yml}
    forbid: [{command: curl}]
"""


def _imported(root: Path, *options: str, target: str = ".github/workflows/ci.yml") -> tuple[int, set[str]]:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, "check", target, "--backends", "none", *options],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    _, marker, listed = result.stderr.rpartition("\nMODULES ")
    assert marker, result.stderr
    return result.returncode, set(listed.split())


def _loaded(modules: set[str], name: str) -> bool:
    return any(module == name or module.startswith(name + ".") for module in modules)


@pytest.mark.parametrize("workflow", [STEPS_ONLY, WITH_A_SCRIPT], ids=["steps only", "with a script"])
def test_one_file_imports_no_linter_policy_engine_or_slow_validator(make_repo: MakeRepo, workflow: str) -> None:
    root = make_repo({".github/workflows/ci.yml": workflow, "tools/build.sh": "echo build\n"})
    code, modules = _imported(root, "--no-cache")
    assert code == 0
    assert "ci_checks.config.registry" in modules and "ci_checks.rules.schema" in modules  # it did check the file
    assert [name for name in NEVER if _loaded(modules, name)] == []
    # tree-sitter only when there is a script to parse
    assert _loaded(modules, "tree_sitter") == (workflow is WITH_A_SCRIPT)


def test_a_schema_error_or_a_policy_imports_what_explains_it(make_repo: MakeRepo) -> None:
    root = make_repo(
        {
            ".github/workflows/ci.yml": STEPS_ONLY.replace("runs-on", "runs-onn"),
            ".github/ci-checks.yml": POLICY,
        }
    )
    code, modules = _imported(root, "--no-cache")
    assert code == 1
    assert _loaded(modules, "jsonschema") and _loaded(modules, "ci_checks.policy")


CHECKING = (
    "ci_checks.config.registry",
    "ci_checks.engine.check",
    "ci_checks.config.load",
    "ci_checks.config.selection",
    "ci_checks.model",
    "ci_checks.model.loading",
    "ci_checks.syntax.shell",
    "ci_checks.rules.schema",
    "yaml",
    "jsonschema_rs",
    "tree_sitter",
)
"""What checking a file takes: a run reused from the cache needs none of it."""


def test_a_kept_run_imports_nothing_that_checks(make_repo: MakeRepo, tmp_path: Path) -> None:
    root = make_repo(
        {".github/workflows/ci.yml": WITH_A_SCRIPT + "      - run: curl x\n", ".github/ci-checks.yml": POLICY}
    )
    cache = ["--cache-dir", str(tmp_path / "cache")]
    first_code, first = _imported(root, *cache)
    kept_code, kept = _imported(root, *cache)
    assert first_code == kept_code == 1  # the policy's finding, both times
    assert all(
        _loaded(first, name) for name in ("ci_checks.config.registry", "ci_checks.model", "ci_checks.syntax.shell")
    )
    assert [name for name in (*CHECKING, *NEVER) if _loaded(kept, name)] == []


def test_a_run_with_exclusions_is_kept_and_they_still_hold(make_repo: MakeRepo, tmp_path: Path) -> None:
    skipped = ".github/workflows/skipped.yml"
    root = make_repo({".github/workflows/ci.yml": STEPS_ONLY, skipped: STEPS_ONLY.replace("runs-on", "runs-onn")})
    (root / ".github/ci-checks.yml").write_text(f"exclude: [{skipped}]\n")
    whole = ["--cache-dir", str(tmp_path / "cache")]
    assert _imported(root, *whole, target=".")[0] == 0
    code, kept = _imported(root, *whole, target=".")
    assert code == 0 and not _loaded(kept, "ci_checks.config.registry")  # reused, exclusions and all
    (root / ".github/ci-checks.yml").write_text("exclude: []\n")
    assert _imported(root, *whole, target=".")[0] == 1  # the excluded workflow is checked again, and is not valid
