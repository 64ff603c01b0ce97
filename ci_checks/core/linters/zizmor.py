"""zizmor: `ZZ-<audit>` codes, its audits and their profiles, its documentation and configuration files.

An audit that finds something exploitable now is `correctness`'s, at high
confidence; `HARDENING`'s advise hardening, and are `security`'s (as is any
finding zizmor is less sure of).
"""

from __future__ import annotations

import re

from ci_checks.core.linters import Linter

AUDITS_PAGE = "https://docs.zizmor.sh/audits/"
AUDITS = (
    "adhoc-packages",
    "anonymous-definition",
    "archived-uses",
    "artipacked",
    "bot-conditions",
    "cache-poisoning",
    "concurrency-limits",
    "dangerous-triggers",
    "dependabot-cooldown",
    "dependabot-execution",
    "excessive-permissions",
    "forbidden-uses",
    "github-app",
    "github-env",
    "hardcoded-container-credentials",
    "impostor-commit",
    "insecure-commands",
    "insecure-url-scheme",
    "known-vulnerable-actions",
    "misfeature",
    "obfuscation",
    "overprovisioned-secrets",
    "ref-confusion",
    "ref-version-mismatch",
    "secrets-inherit",
    "secrets-outside-env",
    "self-hosted-runner",
    "self-repository",
    "stale-action-refs",
    "superfluous-actions",
    "template-injection",
    "typosquat-uses",
    "undocumented-permissions",
    "unpinned-images",
    "unpinned-tools",
    "unpinned-uses",
    "unredacted-secrets",
    "unsafe-checkout",
    "unsound-condition",
    "unsound-contains",
    "unsound-ternary",
    "use-trusted-publishing",
)
"""zizmor's audits (1.33), as `ZZ-<audit>` names them."""
HARDENING = frozenset(
    [
        # what is pinned, and to what
        "unpinned-uses",
        "unpinned-images",
        "unpinned-tools",
        "stale-action-refs",
        "ref-version-mismatch",
        "archived-uses",
        "self-repository",
        # what a job may do, and with which secrets
        "excessive-permissions",
        "undocumented-permissions",
        "secrets-inherit",
        "secrets-outside-env",
        "self-hosted-runner",
        "concurrency-limits",
        # how the workflow is written and kept up
        "adhoc-packages",
        "anonymous-definition",
        "misfeature",
        "obfuscation",
        "superfluous-actions",
        "use-trusted-publishing",
        "dependabot-cooldown",
        "dependabot-execution",
    ]
)
"""zizmor's audits that advise hardening rather than find something exploitable now: in `security` and `all`."""

LINTER = Linter(
    name="zizmor",
    prefix="ZZ-",
    code_pattern=re.compile(r"ZZ-[a-z0-9]+(-[a-z0-9]+)*\Z"),
    docs_url=lambda code: f"{AUDITS_PAGE}#{code.removeprefix('ZZ-')}",
    what="a zizmor audit, run by ci-checks over every workflow and composite action",
    backend="ci_checks.backends.zizmor",
    version_question=("--version",),
    version_answer=re.compile(r"\bzizmor \d+\.\d+"),
    checks={audit: "security" if audit in HARDENING else "correctness" for audit in AUDITS},
    sure="high",
    # zizmor's own order of discovery from the repository root.
    config_files=(".github/zizmor.yml", ".github/zizmor.yaml", "zizmor.yml", "zizmor.yaml"),
)
