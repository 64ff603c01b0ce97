"""A step uses the repository's files before the job checks the repository out.

## What it does
Follows each job's steps in order and reports a step that needs this
repository's files before `actions/checkout` has put them in the workspace:
a local action (`uses: ./...`), or a `run:` script that runs, applies or
installs a repository path (`bash scripts/x.sh`, `python tools/y.py`,
`./run.sh`, `source env.sh`, `git apply fix.patch`, `pip install -e .`,
`pip install -r requirements.txt`, `docker build -f docker/Dockerfile .`,
`make`, `cd python`), directly or through `$GITHUB_WORKSPACE` or
`${{ github.workspace }}`. Paths are taken relative to the step's
`working-directory`. When the checkout does come later in the job, that
checkout is reported too, with the steps that came before it.

A checkout of another repository (`repository: org/other`) does not count,
and files under its `path:` are that repository's. Once a step may have put
files in the workspace by other means (an action that is not a known setup
action, `git clone`, `curl`, `cp`, a file written by a redirection), later
steps are not judged. Container jobs are judged the same way: their
workspace is mounted from the runner. Reusable-workflow calls have no steps
and are not judged; paths built from variables are skipped, not guessed.

## Why it matters
Before the checkout the workspace is empty (or, on a self-hosted runner,
holds whatever the previous job left there). The step fails with "No such
file or directory", or worse, runs a stale script from an earlier run.

## Example
```yaml
steps:
  - run: pip install -r requirements.txt
  - uses: actions/checkout@v4
```

## Fix
Move `actions/checkout` before the first step that needs the repository.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from ci_checks.diagnostics import Diagnostic, Related, Severity, Span
from ci_checks.loading import LoadedFile
from ci_checks.model import Job, Step
from ci_checks.model.references import VERBS, Reference, checkout, references, start_directory
from ci_checks.repository import FileKind
from ci_checks.rule import Rule
from ci_checks.shell import Command, Redirect, Script

_HARMLESS_ACTIONS = re.compile(
    r"(actions/(setup-[\w.-]+|github-script|create-github-app-token|labeler|stale|attest-build-provenance)"
    r"|[\w.-]+/setup-[\w.-]+|docker/(setup-[\w-]+|login-action|metadata-action)|step-security/harden-runner"
    r"|aws-actions/configure-aws-credentials|google-github-actions/(auth|setup-gcloud)|azure/login"
    r"|[\w.-]+/free-disk-space[\w.-]*|[\w.-]+/maximize-build-space|ilammy/msvc-dev-cmd)\Z",
    re.IGNORECASE,
)
"""Actions that put nothing of the repository's in the workspace: after them the workspace is still empty."""

_PRODUCERS = {"wget", "curl", "tar", "unzip", "cp", "mv", "rsync", "ln", "scp", "aws", "gsutil", "azcopy", "svn", "hg",
              "rclone", "7z", "gunzip"}  # fmt: skip
_GIT_PRODUCERS = {"clone", "fetch", "checkout", "init", "pull", "worktree", "submodule", "switch", "reset", "restore"}


@dataclass(frozen=True)
class _Use:
    span: Span
    text: str


def check(file: LoadedFile) -> Iterator[Diagnostic]:
    if file.workflow is None:
        return
    for job in file.workflow.jobs.values():
        if not job.is_call:
            yield from _job(job)


def _job(job: Job) -> Iterator[Diagnostic]:
    late = next((step for step in job.steps if (found := checkout(step)) is not None and found.this_repository), None)
    uses = list(_uses_before(job, late))
    if late is not None and late.uses_node is not None:
        related = [Related(use.span, f"{use.text}, before the checkout") for use in uses]
        where = Related(late.uses_node.span, "the repository is checked out only here")
        for use in uses:
            yield RULE.diagnostic(
                use.span, f"{use.text} before `actions/checkout` puts the repository in the workspace", [where]
            )
        if uses:
            count = f"{len(uses)} use{'s' if len(uses) != 1 else ''}"
            message = f"`actions/checkout` comes after {count} of the repository's files in job '{job.id}'"
            message += "; move it before them"
            yield RULE.diagnostic(late.uses_node.span, message, related)
        return
    for use in uses:
        yield RULE.diagnostic(use.span, f"{use.text}, but job '{job.id}' never checks the repository out")


def _uses_before(job: Job, late: Step | None) -> Iterator[_Use]:
    """Each use of the repository's files before `late` (the checkout), until the workspace may hold other files."""
    elsewhere: list[str] = []
    for step in job.steps:
        if step is late:
            return
        found = checkout(step)
        if found is not None:
            if found.path is None or found.path == "":
                return  # another repository in the workspace itself, or somewhere unknown
            elsewhere.append(found.path)
            continue
        if step.uses is not None and step.uses_node is not None:
            if step.uses.kind == "local" and not _under(step.uses.path, elsewhere):
                yield _Use(step.uses_node.span, f"`uses: {step.uses.raw}` runs a local action")
            elif step.uses.kind == "repository" and not _HARMLESS_ACTIONS.match(step.uses.name):
                return  # an action that may fetch or create files
            continue
        script = step.script
        if script is None:
            continue
        producer = _first_producer(script)
        for reference in references(script, start_directory(step)):
            if producer is not None and reference.command.start >= producer.start:
                break
            if _counts(reference, elsewhere):
                yield _Use(reference.span, _describe(reference))
        if producer is not None:
            return


def _counts(reference: Reference, elsewhere: list[str]) -> bool:
    if reference.base != "workspace" or reference.outside or reference.path is None:
        return False
    if reference.kind == "cd" and reference.path == "":
        return False
    return not _under(reference.path, elsewhere)


def _under(path: str, folders: list[str]) -> bool:
    return any(path == folder or path.startswith(folder.rstrip("/") + "/") for folder in folders)


def _describe(reference: Reference) -> str:
    command = " ".join(reference.command.argv)
    shown = command if len(command) <= 60 else command[:57] + "..."
    if reference.kind in ("make", "install"):
        target = f"`{reference.path}`" if reference.path else "the repository"
        return f"`{shown}` {VERBS[reference.kind]} {target}"
    return f"`{shown}` {VERBS[reference.kind]} `{reference.path}`"


def _first_producer(script: Script) -> Command | None:
    """The first command that may put files in the workspace by other means than the checkout."""
    for command in script.commands():
        argv = command.argv
        name = argv[0].rsplit("/", 1)[-1] if argv else ""
        if name in _PRODUCERS or any(_writes_file(redirect) for redirect in command.redirects):
            return command
        if name == "git" and any(arg in _GIT_PRODUCERS for arg in argv[1:3]):
            return command
        if name == "gh" and argv[1:3] in (["repo", "clone"], ["pr", "checkout"], ["run", "download"]):
            return command
    return None


def _writes_file(redirect: Redirect) -> bool:
    """`> out.txt` writes a workspace file; `> /dev/null`, `>> "$GITHUB_ENV"` and `2>&1` do not."""
    target = redirect.target.value if redirect.target is not None else ""
    return redirect.operator in (">", ">>", "&>", ">|") and bool(target) and not target.startswith(("/", "$", "&"))


RULE = Rule(
    "CC040",
    "workspace-before-checkout",
    "A step uses the repository's files before `actions/checkout`",
    Severity.ERROR,
    __doc__,
    frozenset({FileKind.WORKFLOW}),
    check,
)
