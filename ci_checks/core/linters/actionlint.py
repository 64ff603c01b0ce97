"""actionlint: `AL-<kind>` codes, its kinds and their profiles, its documentation and configuration files."""

from __future__ import annotations

import re

from ci_checks.core.linters import Linter

CHECKS_PAGE = "https://github.com/rhysd/actionlint/blob/main/docs/checks.md"
SECTIONS = {
    "action": "check-action-format",
    "credentials": "check-hardcoded-credentials",
    "deprecated-commands": "check-deprecated-workflow-commands",
    "env-var": "check-env-var-names",
    "events": "check-webhook-events",
    "expression": "check-syntax-expression",
    "glob": "check-glob-pattern",
    "id": "check-job-step-ids",
    "if-cond": "if-cond-always-true",
    "job-needs": "check-job-deps",
    "matrix": "check-matrix-values",
    "permissions": "permissions",
    "pyflakes": "check-pyflakes-integ",
    "runner-label": "check-runner-labels",
    "shell-name": "check-shell-names",
    "shellcheck": "check-shellcheck-integ",
    "syntax-check": "check-unexpected-keys",
    "workflow-call": "check-reusable-workflows",
}
"""Each actionlint rule kind and the anchor of its section in actionlint's `docs/checks.md`.

A kind not listed here (a newer actionlint's, or a fork's) links to the page itself.
"""
KINDS = (
    "action",
    "branding",
    "cache-call-unrestricted",
    "credentials",
    "deprecated-commands",
    "env-var",
    "events",
    "expression",
    "glob",
    "id",
    "if-cond",
    "job-needs",
    "matrix",
    "permissions",
    "pyflakes",
    "required-actions",
    "run-script-length",
    "runner-label",
    "shell-name",
    "shell-syntax",
    "shellcheck",
    "step-id",
    "syntax-check",
    "timeout-check",
    "workflow-call",
    "workflow-run",
)
"""actionlint's rule kinds (its `rule_*.go` files and `syntax-check`), as `AL-<kind>` names them."""
UPKEEP = frozenset({"cache-call-unrestricted"})
"""Kinds that are upkeep advice rather than breakage (a reusable workflow's cache scope): in `security` and `all`."""


def _docs_url(code: str) -> str:
    section = SECTIONS.get(code.removeprefix("AL-"))
    return f"{CHECKS_PAGE}#{section}" if section else CHECKS_PAGE


LINTER = Linter(
    name="actionlint",
    prefix="AL-",
    code_pattern=re.compile(r"AL-[a-z0-9]+(-[a-z0-9]+)*\Z"),
    docs_url=_docs_url,
    what="an actionlint check, run by ci-checks over every workflow",
    backend="ci_checks.backends.actionlint",
    version_question=("-version",),
    version_answer=re.compile(r"\b\d+\.\d+\.\d+"),
    checks={kind: "security" if kind in UPKEEP else "correctness" for kind in KINDS},
    # A runtime deprecated but still run, a `description` the Marketplace wants: advice, where breakage is not.
    advice={"action": re.compile(r'runtime "[^"]*" is deprecated|description is required in metadata')},
    config_files=(".github/actionlint.yaml", ".github/actionlint.yml"),
)
