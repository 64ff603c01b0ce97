"""`ci-checks init`: a starter `.github/ci-checks.yml` that passes `ci-checks check` as written.

It names the repository's own workflows and steps in one commented example
rule per kind, so that turning one on is a matter of deleting `# `, and holds
the runner inventory its workflows imply (`model.inventory`), for the team to
check and keep.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ci_checks.core import output_files
from ci_checks.core.repository import FileKind, Repository
from ci_checks.model import Workflow
from ci_checks.model.loading import Workspace
from ci_checks.model.runners import GENERIC_LABELS, RunnerInventory
from ci_checks.rules.context import RepositoryContext

CONFIG = ".github/ci-checks.yml"


class InitError(Exception):
    """The starter configuration cannot be written; the message says why (exit code 2)."""


def starter(repository: Repository) -> str:
    workspace = Workspace(repository)
    workflows: list[Workflow] = []
    for relative in repository.workflows:
        workflow = workspace.load(relative, FileKind.WORKFLOW).workflow
        if workflow is not None:
            workflows.append(workflow)
    first = workflows[0].path if workflows else ".github/workflows/ci.yml"
    steps = [step for workflow in workflows for step in workflow.steps() if step.name and step.script is not None]
    step = next((s.name for s in steps if s.name), "Install")
    command = next(
        (" ".join(c.argv[:3]) for s in steps[:1] if s.script for c in s.script.commands()), "pip install -e ."
    )
    reusable = [w.path for w in workflows if w.workflow_call is not None][:2]
    parity = reusable if len(reusable) == 2 else [first, first.replace(".yml", "-rocm.yml")]
    runners = _runners(RepositoryContext(workspace, [], lambda path: True).inferred.inventory)
    return f"""# ci-checks configuration: README.md of ci-checks documents every key.
version: 1

# Which linter findings to keep: correctness (the default: what breaks or exposes), security (and the hardening
# advice: unpinned actions, permissions), all (and the linters' info-level notes).
# profile: security
# Rules to run (default: the profile's) and to leave out:
# select: [CC0, CC1, AL, SC, ZZ]
# ignore: [mangled-number]
# severity: {{ZZ-unpinned-uses: warning}}

{runners}
rules: []
# One example rule per kind. To turn some on, write `rules:` for `rules: []` and remove the `# ` before
# their lines.
#
#  - id: checkout-before-install
#    kind: order
#    where: {{workflow: "{first}"}}
#    order:
#      - step: {{uses: actions/checkout}}
#      - command: {command}
#
#  - id: no-stale-patch
#    kind: forbid
#    where: {{files: [".github/workflows/*.yml", "**/Dockerfile*"]}}
#    forbid:
#      - text: amd_patch
#
#  - id: checkout-without-credentials
#    kind: require
#    where: {{workflow: ".github/workflows/*.yml", step: {{uses: actions/checkout}}}}
#    require:
#      - with: {{persist-credentials: false}}
#
#  - id: step-{_slug(step)}-has-a-timeout
#    kind: require
#    where: {{workflow: "{first}", step: {_selector(step)}}}
#    require:
#      - key: timeout-minutes
#
#  - id: cuda-rocm-parity
#    kind: parity
#    workflows: [{", ".join(parity)}]
#    compare: [inputs, secrets, steps]
"""


def _runners(inventory: RunnerInventory) -> str:
    """The runners the workflows imply, as a `runners:` inventory that says where each vendor was read."""
    head = (
        "# The runners the workflows ask for, as ci-checks reads them from the labels, the containers and\n"
        "# .github/actionlint.yaml. Check each vendor and `self-hosted`; with this inventory every runs-on label\n"
        "# must be one of these runners' (CC044), and actionlint knows them all.\n"
    )
    if not inventory:
        return head + "# runners: {}  (none found: every job runs on GitHub's own runners)\n"
    lines = [head, "runners:\n"]
    for runner in inventory.runners:
        labels = sorted(runner.labels, key=lambda label: (label != "self-hosted", label not in GENERIC_LABELS, label))
        lines.append(f"  {_plain(runner.name)}:\n    labels: [{', '.join(_plain(label) for label in labels)}]\n")
        if runner.vendor is not None:
            lines.append(f"    vendor: {runner.vendor}  # read from `{runner.telling or runner.name}`\n")
        if not runner.self_hosted:
            lines.append("    self-hosted: false  # nothing says it is self-hosted: a larger runner of GitHub's?\n")
    return "".join(lines)


def _plain(text: str) -> str:
    """`text` as a YAML scalar: plain where it can be, else double-quoted."""
    return text if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._/-]*", text) else json.dumps(text)


def _selector(name: str) -> str:
    """A step name as a selector: a glob, or `{literal: ...}` when the name holds glob characters."""
    quoted = '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return f"{{literal: {quoted}}}" if any(char in name for char in "*?[\\") else quoted


def _slug(name: str) -> str:
    return "-".join("".join(char if char.isalnum() else " " for char in name.lower()).split()) or "step"


def write(repository: Repository, force: bool) -> Path:
    path = repository.root / CONFIG
    if (path.exists() or path.is_symlink()) and not force:
        raise InitError(f"{CONFIG} exists already; --force replaces it")
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise InitError(f"{CONFIG} is not a regular file; not replaced")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        output_files.write(path, starter(repository), [repository.real_root])
    except output_files.OutputError as error:
        raise InitError(str(error)) from None
    return path
