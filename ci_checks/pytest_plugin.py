"""The pytest plugin: fixtures for structural tests of CI files, and policy rules collected as tests.

Fixtures:
- `ci_repo`: a `CIRepository` of the pytest root folder's repository (session-wide;
  override it in a conftest.py to test another folder);
- `workflow`: a factory, `workflow("_run-ci-rocm.yml")`, over `ci_repo`.

With `--ci-checks` (or `ci_checks = true` in the ini file), each rule of the
repository's policy (`.github/ci-checks.yml`, or `[tool.ci-checks]` in
pyproject.toml) is a test item named after its id; a failing one shows each
finding as `path:line:col`, the source line and the rule message. An invalid
policy file is a collection error that says where.

ci-checks' own modules are imported only when a fixture or the option is used,
so that installing ci-checks costs other test suites nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr

    from ci_checks.check import Outcome
    from ci_checks.model import Workflow
    from ci_checks.policy import PolicyRule
    from ci_checks.query import CIRepository

_POLICY_PATH = pytest.StashKey[Path]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ci-checks")
    group.addoption(
        "--ci-checks",
        action="store_true",
        dest="ci_checks",
        help="collect each rule of the repository's ci-checks policy as a test",
    )
    parser.addini("ci_checks", type="bool", default=False, help="collect ci-checks policy rules as tests")


def pytest_configure(config: pytest.Config) -> None:
    if not (config.getoption("ci_checks") or config.getini("ci_checks")):
        return
    from ci_checks import config as ci_config
    from ci_checks.repository import Repository, find_root

    repository = Repository(find_root(config.rootpath))
    found = ci_config.find(repository)
    if found is None:
        return
    path = found[1].resolve()
    config.stash[_POLICY_PATH] = path
    if not any(Path(arg.split("::")[0]).resolve() == path for arg in config.args):
        config.args.append(str(path))  # the policy file usually lies outside the test paths, in .github/


@pytest.hookimpl(tryfirst=True)
def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Let a folder walk enter the hidden folder of the policy file (`.github`), and take only that file there.

    pytest skips hidden folders, and it folds the policy file added to the
    arguments into a folder argument that contains it.
    """
    policy = config.stash.get(_POLICY_PATH, None)
    if policy is None:
        return None
    path = collection_path.resolve()
    if path == policy or path in policy.parents:
        return False
    hidden = next((folder for folder in policy.parents if folder.name.startswith(".")), None)
    if hidden is not None and hidden in path.parents:
        return True
    return None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    policy = parent.config.stash.get(_POLICY_PATH, None)
    if policy is not None and file_path.resolve() == policy:
        return PolicyFile.from_parent(parent, path=file_path)
    return None


class PolicyFile(pytest.File):
    """The policy file: one item per rule."""

    def collect(self) -> Iterator[pytest.Item]:
        from ci_checks import config as ci_config
        from ci_checks.query import CIRepository

        repository = CIRepository(self.path.parent)
        try:
            rules = repository.policy
        except ci_config.ConfigError as error:
            span = error.span
            raise self.CollectError(f"{span.path}:{span.line}:{span.column}: {error.message}") from None
        for rule in rules:
            yield PolicyItem.from_parent(self, name=rule.id, rule=rule, repository=repository)


class PolicyFailure(Exception):
    def __init__(self, outcome: Outcome) -> None:
        super().__init__(f"{len(outcome.diagnostics)} finding(s)")
        self.outcome = outcome


class PolicyItem(pytest.Item):
    def __init__(self, *, rule: PolicyRule, repository: CIRepository, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rule = rule
        self.repository = repository

    def runtest(self) -> None:
        outcome = self.repository.check([self.rule], built_in=False)
        if outcome.diagnostics:
            raise PolicyFailure(outcome)

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> str | TerminalRepr:
        if isinstance(excinfo.value, PolicyFailure):
            from ci_checks.reporters import text

            outcome = excinfo.value.outcome
            return text.render(outcome.diagnostics, outcome.sources, outcome.files).rstrip()
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.rule.span.line - 1, f"ci-checks policy rule {self.rule.id}"


@pytest.fixture(scope="session")
def ci_repo(pytestconfig: pytest.Config) -> CIRepository:
    """The repository that contains the pytest root folder, loaded for structural questions."""
    from ci_checks.query import CIRepository

    return CIRepository(pytestconfig.rootpath)


@pytest.fixture
def workflow(ci_repo: CIRepository) -> Callable[[str], Workflow]:
    """`workflow("ci.yml")`: a workflow of `ci_repo` by file name or repo-relative path."""
    return ci_repo.workflow
