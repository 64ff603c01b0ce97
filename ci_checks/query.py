"""The query API: a repository's CI files, loaded for tests that ask structural questions.

```python
repo = CIRepository(".")
override = repo.workflow("_run-ci-rocm.yml").step("Install Megatron").script.branch('[ -n "$MEGATRON_PR" ]')
assert override.comes_before("git checkout -f FETCH_HEAD", "pip install -e .")
assert override.occurrences("amd_patch") == []
```

Lookups that find nothing raise LookupError naming what exists instead, and a
file that cannot be modelled raises ValueError with its positioned problems,
so that a failing test says why.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from pathlib import Path

from ci_checks.config import load as config
from ci_checks.config import registry
from ci_checks.core.diagnostics import Diagnostic, Occurrence
from ci_checks.core.globs import compile_glob
from ci_checks.core.repository import WORKFLOW_DIR, FileKind, Repository, find_root
from ci_checks.engine.options import Options
from ci_checks.engine.outcome import Outcome, Request
from ci_checks.engine.runs import check_repository
from ci_checks.model import Action, Workflow
from ci_checks.model.loading import LoadedFile, Workspace
from ci_checks.model.values import occurrences
from ci_checks.policy import PolicyRule
from ci_checks.rules.rule import RuleGroup
from ci_checks.syntax.dockerfile import Dockerfile


class CIRepository:
    """A repository found from `path` (its root: the nearest folder with `.git`, else `.github`)."""

    def __init__(self, path: str | Path = ".", config_ref: str | None = None) -> None:
        self.repository = Repository(find_root(Path(path)))
        self._workspace = Workspace(self.repository)
        self.config_ref = config_ref
        """A git revision to read the configuration from instead of the work tree (see `config_source`)."""

    @property
    def root(self) -> Path:
        return self.repository.root

    def file(self, path: str) -> LoadedFile:
        """Any file of the repository, by its repo-relative path, read and (for its kind) parsed."""
        relative = path.removeprefix("./")
        if not self.repository.exists(relative) or (self.root / relative).is_dir():
            raise LookupError(f"{self.root} has no file {relative!r}")
        loaded = self._workspace.load(relative)
        if loaded.source.problem is not None:
            raise ValueError(f"{relative}: {loaded.source.problem.message}")
        return loaded

    def workflow(self, name: str) -> Workflow:
        """A workflow by file name in `.github/workflows` (`ci.yml`) or by repo-relative path."""
        relative = name if "/" in name else f"{WORKFLOW_DIR}/{name}"
        if not self.repository.exists(relative):
            known = ", ".join(Path(path).name for path in self.repository.workflows)
            raise LookupError(f"no workflow {name!r}; workflows: {known or 'none'}")
        workflow = self._modelled(relative, FileKind.WORKFLOW).workflow
        assert workflow is not None
        return workflow

    def action(self, path: str) -> Action:
        """A composite action by its folder (`.github/actions/setup`) or its `action.yml` path."""
        relative = path.removeprefix("./").rstrip("/")
        if not relative.endswith((".yml", ".yaml")):
            relative = next(
                (
                    f"{relative}/{name}"
                    for name in ("action.yml", "action.yaml")
                    if self.repository.exists(f"{relative}/{name}")
                ),
                f"{relative}/action.yml",
            )
        if not self.repository.exists(relative):
            raise LookupError(f"no action {path!r}; actions: {', '.join(self.repository.actions) or 'none'}")
        action = self._modelled(relative, FileKind.ACTION).action
        assert action is not None
        return action

    def _modelled(self, relative: str, kind: FileKind) -> LoadedFile:
        """The file read as a workflow or action; ValueError with its positioned problems when it cannot be."""
        loaded = self._workspace.load(relative, kind)
        if loaded.workflow is None and loaded.action is None:
            raise ValueError(_unusable(loaded))
        return loaded

    def dockerfile(self, path: str) -> Dockerfile:
        loaded = self.file(path)
        if loaded.dockerfile is None:
            raise ValueError(f"{path} is not a Dockerfile (expected Dockerfile, Dockerfile.* or *.dockerfile)")
        return loaded.dockerfile

    def occurrences(self, text: str, files: str | Sequence[str] = "**") -> list[Occurrence]:
        """Where `text` occurs in the files matching the path globs `files`, in path order."""
        globs = [compile_glob(pattern) for pattern in ([files] if isinstance(files, str) else files)]
        found: list[Occurrence] = []
        for path in self.repository.files:
            if any(glob.matches(path) for glob in globs):
                loaded = self._workspace.load(path)
                if loaded.source.problem is None:
                    found.extend(occurrences(loaded.source, None, text))
        return found

    @cached_property
    def config(self) -> config.Config:
        """The repository's configuration (ConfigError, positioned, when it is invalid or not a regular file)."""
        return config.of_repository(self.repository, self.config_ref)

    @property
    def policy(self) -> list[PolicyRule]:
        return self.config.rules

    def check(self, policy_rules: Sequence[PolicyRule] | None = None, built_in: bool = True) -> Outcome:
        """Run ci-checks over the whole repository as `ci-checks check --backends none` does: the built-in rules
        (unless `built_in` is False) and the policy rules (those the configuration selects, or `policy_rules`)."""
        settings = self.config
        chosen = None if policy_rules is None else list(policy_rules)
        options = Options(backends=[], config_ref=self.config_ref)
        if not built_in:
            ids = (rule.id for rule in (settings.rules if chosen is None else chosen))
            options.select = [*_POLICY_ONLY, *ids]
            chosen = list(settings.rules) if chosen is None else chosen
        return check_repository(self.repository, Request.whole(), options, settings, chosen)

    def findings(self, rule_id: str) -> list[Diagnostic]:
        """The findings of one policy rule, by id."""
        rules = [rule for rule in self.policy if rule.id == rule_id]
        if not rules:
            raise LookupError(f"no policy rule {rule_id!r}; rules: {', '.join(r.id for r in self.policy) or 'none'}")
        return self.check(rules, built_in=False).diagnostics


_POLICY_ONLY = sorted(registry.codes_of(RuleGroup.POLICY, RuleGroup.POLICY_INPUT, RuleGroup.SOURCE))
"""What a check of policy rules alone selects: their findings, and those of files they read but cannot read."""


def _unusable(loaded: LoadedFile) -> str:
    if loaded.source.problem is not None:
        return f"{loaded.path}: {loaded.source.problem.message}"
    issues = "; ".join(f"{i.span.line}:{i.span.column}: {i.message}" for i in loaded.document.issues)
    return f"{loaded.path} cannot be read as a {loaded.kind.value}: {issues or 'its top level is not a mapping'}"
