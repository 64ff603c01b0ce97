"""The pre-commit hook, run by the real `pre-commit try-repo` against throwaway git repositories.

pre-commit builds the hook's environment from this project (a pip install of a
snapshot of the working tree), once for both tests.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ci_checks.backends.cache import FILE_NAME
from tests.ci.conftest import PROJECT

CLEAN = """on: push
permissions: {}
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1
        with:
          persist-credentials: false
      - run: make
"""
POLICY = """version: 1
rules:
  - id: no-amd-patch
    kind: forbid
    where: {files: [".github/workflows/*.yml", "docker/Dockerfile*"]}
    forbid: [{text: amd_patch}]
"""


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def git_repo(root: Path, files: dict[str, str]) -> Path:
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content, encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    return root


def try_repo(root: Path, home: Path) -> subprocess.CompletedProcess[str]:
    pre_commit = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or "pre-commit"
    environment = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    # The hook runs as a user's would: every linter, and a shellcheck cache of its own.
    for name in ("GITHUB_STEP_SUMMARY", "CI_CHECKS_BACKENDS", "CI_CHECKS_CACHE_DIR"):
        environment.pop(name, None)
    environment["XDG_CACHE_HOME"] = str(home / "cache")
    return subprocess.run(
        [pre_commit, "try-repo", str(PROJECT), "ci-checks", "--all-files", "--verbose"],
        cwd=root,
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def test_the_hook_passes_on_a_clean_repository(tmp_path: Path, pre_commit_home: Path) -> None:
    root = git_repo(tmp_path, {".github/workflows/ci.yml": CLEAN, ".github/ci-checks.yml": POLICY})
    result = try_repo(root, pre_commit_home)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ci-checks" in result.stdout and "Passed" in result.stdout
    # --verbose shows the hook's output: had a linter been missing from its environment, CC090 would say so.
    assert "CC090" not in result.stdout
    assert (pre_commit_home / "cache" / "ci-checks" / FILE_NAME).is_file()


def test_the_hook_fails_with_positions_on_a_rule_violation(tmp_path: Path, pre_commit_home: Path) -> None:
    dockerfile = "FROM rocm/pytorch\nCOPY docker/amd_patch/megatron.patch /tmp/\n"
    root = git_repo(
        tmp_path,
        {".github/workflows/ci.yml": CLEAN, ".github/ci-checks.yml": POLICY, "docker/Dockerfile.rocm": dockerfile},
    )
    result = try_repo(root, pre_commit_home)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Failed" in result.stdout
    assert "docker/Dockerfile.rocm:2:13: CC101 'amd_patch' is forbidden here [no-amd-patch]" in result.stdout


def test_the_hook_runs_the_linters(tmp_path: Path, pre_commit_home: Path) -> None:
    workflow = CLEAN.replace("run: make", "run: rm $(ls)").replace("permissions: {}\n", "")
    root = git_repo(tmp_path, {".github/workflows/ci.yml": workflow})
    result = try_repo(root, pre_commit_home)
    assert result.returncode == 1, result.stdout + result.stderr
    assert ".github/workflows/ci.yml:9:17: SC2046 Quote this to prevent word splitting" in result.stdout
    assert ".github/workflows/ci.yml:3:3: ZZ-excessive-permissions overly broad permissions" in result.stdout
