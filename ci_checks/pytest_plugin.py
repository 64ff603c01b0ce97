"""The pytest plugin: fixtures for structural tests of CI files, and policy rules collected as tests.

Fixtures:
- `ci_repo`: a `CIRepository` of the pytest root folder's repository (session-wide;
  override it in a conftest.py to test another folder);
- `workflow`: a factory, `workflow("_run-ci-rocm.yml")`, over `ci_repo`.

With `--ci-checks` (or `ci_checks = true` in the ini file), each rule of the
repository's policy (`.github/ci-checks.yml`, or `[tool.ci-checks]` in
pyproject.toml) is a test item named after its id; a failing one shows each
finding as `path:line:col`, the source line and the rule message. An invalid
policy file, or one that is a link or not a regular file, is a collection
error that says where; the repository is always the one of the pytest root
folder, never the folder a link leads to. `--ci-checks-config-ref REF` (or
`ci_checks_config_ref = REF`) reads the policy from that git revision instead
of the work tree.

ci-checks' own modules are imported only when a fixture or the option is used,
so that installing ci-checks costs other test suites nothing. Whatever they
import, and whatever the libraries they use import, while ci-checks' code runs
is found only among the installed packages (`installed_imports`), never in
the folders pytest puts on `sys.path` for the checked repository
(`pythonpath`, `rootdir`, conftest and test folders): a repository's
`lib/yaml.py` or `tomllib.py` is not run by the plugin. A library that
something else imported from the repository before the plugin needed it is a
usage error.
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pytest

from ci_checks.core import installed_imports

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr

    from ci_checks.core.diagnostics import Span
    from ci_checks.engine.outcome import Outcome
    from ci_checks.model import Workflow
    from ci_checks.policy import PolicyRule
    from ci_checks.query import CIRepository

_POLICY_PATH = pytest.StashKey[Path]()
_REPOSITORY = pytest.StashKey["CIRepository"]()


_INSTALLED = installed_imports.install()
_MODULES = (
    "ci_checks.query",
    "ci_checks.config.load",
    "ci_checks.core.config_source",
    "ci_checks.reporters.formats",
    "ci_checks.core.escaping",
    "ci_checks.rules.schema",
)
_LIBRARIES = ("yaml", "jsonschema", "referencing", "rpds", "tree_sitter", "tree_sitter_bash", "regex")


@functools.cache
def _ci_checks() -> dict[str, ModuleType]:
    """ci-checks' modules, imported (once) from the installed packages, and the libraries checked to come from
    there (one imported earlier by something else may not)."""
    modules = {name: importlib.import_module(name) for name in (*_MODULES, *_LIBRARIES)}
    modules["ci_checks.rules.schema"].vendor_directory()
    for name in _LIBRARIES:
        origin = getattr(modules[name], "__file__", None) or ""
        if not installed_imports.within(origin, _INSTALLED.path):
            raise pytest.UsageError(
                f"ci-checks: the module {name!r} was imported from {origin!r}, not from the installed packages "
                "(a conftest.py imported the repository's own?); ci-checks will not run with it"
            )
    return modules


def _escaping() -> ModuleType:
    return _ci_checks()["ci_checks.core.escaping"]


def _positioned(span: Span, message: str) -> str:
    """A configuration's mistake as pytest prints it: one line, quoting the file as every report does."""
    escaping = _escaping()
    return f"{escaping.path(span.path)}:{span.line}:{span.column}: {escaping.one_line(message)}"


def _written(path: str | os.PathLike[str]) -> Path:
    """An absolute path with its symbolic links kept as written: a link to elsewhere is not where it points."""
    return Path(os.path.abspath(path))  # noqa: PTH100


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ci-checks")
    group.addoption(
        "--ci-checks",
        action="store_true",
        dest="ci_checks",
        help="collect each rule of the repository's ci-checks policy as a test",
    )
    group.addoption(
        "--ci-checks-config-ref",
        dest="ci_checks_config_ref",
        metavar="REF",
        help="read the ci-checks policy from this git revision (e.g. origin/main) instead of the work tree",
    )
    parser.addini("ci_checks", type="bool", default=False, help="collect ci-checks policy rules as tests")
    parser.addini("ci_checks_config_ref", default="", help="git revision to read the ci-checks policy from")


def _config_ref(config: pytest.Config) -> str | None:
    return config.getoption("ci_checks_config_ref") or str(config.getini("ci_checks_config_ref")) or None


def pytest_configure(config: pytest.Config) -> None:
    if not (config.getoption("ci_checks") or config.getini("ci_checks")):
        return
    modules = _ci_checks()
    ci_config = modules["ci_checks.config.load"]
    repository = modules["ci_checks.query"].CIRepository(config.rootpath, config_ref=_config_ref(config))
    config.stash[_REPOSITORY] = repository
    sources = modules["ci_checks.core.config_source"]
    try:
        files = sources.open_source(repository.repository, repository.config_ref)
        try:
            found = ci_config.find(files)
        finally:
            files.close()
    except ci_config.ConfigError as error:  # a link, a folder, a FIFO where the policy file should be
        span = error.span
        raise pytest.UsageError(_positioned(span, error.message)) from None
    except sources.ConfigSourceError as error:  # the ref names no commit, git is missing
        raise pytest.UsageError(f"ci-checks: {_escaping().one_line(str(error))}") from None
    if found is None:
        return
    # The file where it is written in the work tree, never where a link there points to.
    path = Path(os.path.normpath(repository.root / found.path))
    if not path.is_file():
        raise pytest.UsageError(f"ci-checks: {found.path}, read from {repository.config_ref}, is not in the work tree")
    config.stash[_POLICY_PATH] = path
    if not any(_written(arg.split("::")[0]) == path for arg in config.args):
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
    path = _written(collection_path)
    if path == policy or path in policy.parents:
        return False
    hidden = next((folder for folder in policy.parents if folder.name.startswith(".")), None)
    if hidden is not None and hidden in path.parents:
        return True
    return None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    policy = parent.config.stash.get(_POLICY_PATH, None)
    if policy is not None and _written(file_path) == policy:
        return PolicyFile.from_parent(parent, path=file_path)
    return None


class PolicyFile(pytest.File):
    """The policy file: one item per rule."""

    def collect(self) -> Iterator[pytest.Item]:
        ci_config = _ci_checks()["ci_checks.config.load"]
        repository = self.config.stash[_REPOSITORY]
        try:
            rules = repository.policy
        except ci_config.ConfigError as error:
            span = error.span
            raise self.CollectError(_positioned(span, error.message)) from None
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
            formats = _ci_checks()["ci_checks.reporters.formats"]
            rendered: str = formats.FORMATS["text"](excinfo.value.outcome)
            return rendered.rstrip()
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.rule.span.line - 1, f"ci-checks policy rule {self.rule.id}"


@pytest.fixture(scope="session")
def ci_repo(pytestconfig: pytest.Config) -> CIRepository:
    """The repository that contains the pytest root folder, loaded for structural questions."""
    query = _ci_checks()["ci_checks.query"]
    repository: CIRepository = query.CIRepository(pytestconfig.rootpath, config_ref=_config_ref(pytestconfig))
    return repository


@pytest.fixture
def workflow(ci_repo: CIRepository) -> Callable[[str], Workflow]:
    """`workflow("ci.yml")`: a workflow of `ci_repo` by file name or repo-relative path."""
    return ci_repo.workflow
