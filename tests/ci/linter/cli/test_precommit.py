"""The pre-commit hook as README shows it, run by the real `pre-commit` against a clone of this repository.

The clone is tagged as a release is (`v` and the version in pyproject.toml, see README's "Versions and
tags"), and README's snippet is used as written but for `repo:`, which names the clone. pre-commit builds the
hook's environment from the clone at that tag (a pip install of it with the linters), once for all tests.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ci_checks import __version__
from ci_checks.backends.cache import FILE_NAME
from tests.ci.conftest import PROJECT

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

README = (PROJECT / "README.md").read_text(encoding="utf-8")
VERSION = tomllib.loads((PROJECT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


def readme_snippet() -> str:
    """The YAML block of README's pre-commit section."""
    section = README.split("\n## pre-commit\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert match is not None, "README's pre-commit section shows no configuration"
    return match.group(1)


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


@pytest.fixture(scope="module")
def released_clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clone of this repository with the release tag README's snippet names on its newest commit."""
    clone = tmp_path_factory.mktemp("release") / "ci-checks"
    subprocess.run(["git", "clone", "-q", str(PROJECT), str(clone)], check=True)
    rev = yaml.safe_load(readme_snippet())["repos"][0]["rev"]
    subprocess.run(["git", "-C", str(clone), "tag", "-f", rev], check=True, capture_output=True)
    return clone


def git_repo(root: Path, files: dict[str, str]) -> Path:
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content, encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    return root


def run_hook(root: Path, clone: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """`pre-commit run --all-files` with README's snippet as the repository's configuration."""
    snippet = readme_snippet()
    configuration = re.sub(r"(- repo: )\S+", lambda match: match.group(1) + str(clone), snippet, count=1)
    assert configuration != snippet
    (root / ".pre-commit-config.yaml").write_text(configuration, encoding="utf-8")
    subprocess.run(["git", "add", ".pre-commit-config.yaml"], cwd=root, check=True)
    pre_commit = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or "pre-commit"
    environment = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    # The hook runs as a user's would: every linter, and a shellcheck cache of its own.
    for name in ("GITHUB_STEP_SUMMARY", "CI_CHECKS_BACKENDS", "CI_CHECKS_CACHE_DIR"):
        environment.pop(name, None)
    environment["XDG_CACHE_HOME"] = str(home / "cache")
    return subprocess.run(
        [pre_commit, "run", "--all-files", "--verbose"],
        cwd=root,
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def test_the_release_tag_and_readme_agree_with_the_version() -> None:
    snippet = yaml.safe_load(readme_snippet())
    [repo] = snippet["repos"]
    assert repo["rev"] == f"v{VERSION}" == f"v{__version__}"
    assert [hook["id"] for hook in repo["hooks"]] == ["ci-checks"]
    major = VERSION.split(".")[0]
    assert f"uses: OWNER/ci-checks@v{major}" in README
    assert "`vMAJOR.MINOR.PATCH`" in README and "`vMAJOR`" in README
    hooks = yaml.safe_load((PROJECT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert [hook["id"] for hook in hooks] == ["ci-checks"]


def test_the_hook_passes_on_a_clean_repository(tmp_path: Path, released_clone: Path, pre_commit_home: Path) -> None:
    root = git_repo(tmp_path, {".github/workflows/ci.yml": CLEAN, ".github/ci-checks.yml": POLICY})
    result = run_hook(root, released_clone, pre_commit_home)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ci-checks" in result.stdout and "Passed" in result.stdout
    # --verbose shows the hook's output: had a linter been missing from its environment, CC090 would say so.
    assert "CC090" not in result.stdout
    assert (pre_commit_home / "cache" / "ci-checks" / FILE_NAME).is_file()


def test_the_hook_fails_with_positions_on_a_rule_violation(
    tmp_path: Path, released_clone: Path, pre_commit_home: Path
) -> None:
    dockerfile = "FROM rocm/pytorch\nCOPY docker/amd_patch/megatron.patch /tmp/\n"
    root = git_repo(
        tmp_path,
        {".github/workflows/ci.yml": CLEAN, ".github/ci-checks.yml": POLICY, "docker/Dockerfile.rocm": dockerfile},
    )
    result = run_hook(root, released_clone, pre_commit_home)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Failed" in result.stdout
    assert "docker/Dockerfile.rocm:2:13: CC101 'amd_patch' is forbidden here [no-amd-patch]" in result.stdout


def test_the_hook_runs_the_linters(tmp_path: Path, released_clone: Path, pre_commit_home: Path) -> None:
    injected = 'run: rm $(ls)\n      - run: echo "${{ github.event.head_commit.message }}"'
    workflow = CLEAN.replace("run: make", injected).replace("permissions: {}\n", "")
    root = git_repo(tmp_path, {".github/workflows/ci.yml": workflow})
    result = run_hook(root, released_clone, pre_commit_home)
    assert result.returncode == 1, result.stdout + result.stderr
    assert ".github/workflows/ci.yml:9:17: SC2046 Quote this to prevent word splitting" in result.stdout
    # zizmor's hardening advice (the permissions left open) waits for `--profile security`; an injection does not.
    assert ".github/workflows/ci.yml:10:24: ZZ-template-injection code injection" in result.stdout
    assert "ZZ-excessive-permissions" not in result.stdout
