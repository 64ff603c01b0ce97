"""`ci-checks init`: a starter `.github/ci-checks.yml` that passes `ci-checks check` as written.

It names the repository's own workflows and steps in one commented example
rule per kind, so that turning one on is a matter of deleting `# `, and lists
the self-hosted runner labels its workflows use.
"""

from __future__ import annotations

from pathlib import Path

from ci_checks import output_files
from ci_checks.loading import Workspace
from ci_checks.model import Workflow
from ci_checks.repository import FileKind, Repository

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
    labels = sorted(
        {
            ", ".join(job.runs_on.labels)
            for workflow in workflows
            for job in workflow.jobs.values()
            if job.runs_on is not None and "self-hosted" in job.runs_on.labels
        }
    )
    runners = "".join(f"#   [{label_set}]\n" for label_set in labels) or "#   (none found)\n"
    return f"""# ci-checks configuration: README.md of ci-checks documents every key.
version: 1

# Rules to run (default: all, less the linters' info-level notes) and to leave out:
# select: [CC0, CC1, AL, SC, ZZ]
# ignore: [mangled-number]
# severity: {{ZZ-unpinned-uses: warning}}

# Self-hosted runner labels the workflows use:
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
