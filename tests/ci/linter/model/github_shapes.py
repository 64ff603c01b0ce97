"""Workflow shapes for the differential test against GitHub's own workflow parser.

Each shape is a small workflow that varies one thing: a top-level key, a
trigger and its filters, a permission, a job key, a step key, or a value
GitHub coerces (null, a boolean or a number where a string is wanted, YAML's
`!` tag). Valid and invalid variants come side by side, so both "no error
where GitHub accepts" and "an error where GitHub rejects" are exercised.

`scripts/regenerate_github_verdicts.py` records GitHub's verdict on every
shape in `tests/ci/fixtures/github-verdicts.json`; `test_github_verdicts.py`
compares ci-checks' verdicts with that file. The shapes that motivate the
schema overrides (`ci_checks.rules.schema.OVERRIDES`) and of the checks
beyond the schema (`CHECKS`) are included, so each is shown to follow GitHub.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ci_checks.rules.schema import CHECKS, OVERRIDES


@dataclass(frozen=True)
class Shape:
    id: str
    yaml: str


STEP = "      - run: make\n"
JOB = "  build:\n    runs-on: ubuntu-latest\n    steps:\n" + STEP


def workflow(on: str = "on: push\n", top: str = "", jobs: str = JOB) -> str:
    return f"{top}{on}jobs:\n{jobs}"


def job(body: str, steps: str = STEP) -> str:
    """A job `build` on ubuntu-latest with extra keys (each line indented four spaces)."""
    return "  build:\n    runs-on: ubuntu-latest\n" + body + ("    steps:\n" + steps if steps else "")


def step(body: str) -> str:
    """A job `build` with one step written as given (its lines indented eight spaces after `- `)."""
    return job("", "      - " + body)


EVENTS_WITH_TYPES = {
    "branch_protection_rule": "created",
    "check_run": "completed",
    "check_suite": "completed",
    "discussion": "created",
    "discussion_comment": "created",
    "issue_comment": "created",
    "issues": "opened",
    "label": "created",
    "merge_group": "checks_requested",
    "milestone": "closed",
    "project": "created",
    "project_card": "moved",
    "project_column": "updated",
    "pull_request": "opened",
    "pull_request_review": "submitted",
    "pull_request_review_comment": "created",
    "pull_request_target": "labeled",
    "registry_package": "published",
    "release": "published",
    "watch": "started",
    "workflow_run": "completed",
}
EVENTS_WITHOUT_TYPES = (
    "create",
    "delete",
    "deployment",
    "deployment_status",
    "fork",
    "gollum",
    "page_build",
    "public",
    "push",
    "repository_dispatch",
    "status",
    "workflow_call",
    "workflow_dispatch",
)
PERMISSIONS = (
    "actions",
    "artifact-metadata",
    "attestations",
    "checks",
    "contents",
    "deployments",
    "discussions",
    "id-token",
    "issues",
    "models",
    "packages",
    "pages",
    "pull-requests",
    "repository-projects",
    "security-events",
    "statuses",
)


def _top_level() -> list[Shape]:
    return [
        Shape("top-name-string", workflow(top="name: CI\n")),
        Shape("top-name-number", workflow(top="name: 5\n")),
        Shape("top-name-boolean", workflow(top="name: true\n")),
        Shape("top-name-null", workflow(top="name:\n")),
        Shape("top-name-mapping", workflow(top="name: {a: b}\n")),
        Shape("top-run-name", workflow(top="run-name: Deploy by ${{ github.actor }}\n")),
        Shape("top-run-name-sequence", workflow(top="run-name: [a]\n")),
        Shape("top-env", workflow(top="env:\n  A: x\n  B: 1\n  C: true\n")),
        Shape("top-env-null-value", workflow(top="env:\n  X:\n")),
        Shape("top-env-mapping-value", workflow(top="env:\n  X: {a: b}\n")),
        Shape("top-env-sequence", workflow(top="env: [a]\n")),
        Shape("top-env-expression", workflow(top="env: ${{ fromJSON(vars.ENV) }}\n")),
        Shape("top-defaults-run", workflow(top="defaults:\n  run:\n    shell: bash\n    working-directory: src\n")),
        Shape("top-defaults-unknown", workflow(top="defaults:\n  run:\n    shel: bash\n")),
        Shape("top-defaults-sequence", workflow(top="defaults: [run]\n")),
        Shape("top-concurrency-string", workflow(top="concurrency: ci-${{ github.ref }}\n")),
        Shape("top-concurrency-mapping", workflow(top="concurrency:\n  group: ci\n  cancel-in-progress: true\n")),
        Shape(
            "top-concurrency-cancel-expression",
            workflow(top="concurrency:\n  group: ci\n  cancel-in-progress: ${{ github.ref != 'refs/heads/main' }}\n"),
        ),
        Shape("top-concurrency-no-group", workflow(top="concurrency:\n  cancel-in-progress: true\n")),
        Shape(
            "top-concurrency-cancel-string", workflow(top="concurrency:\n  group: ci\n  cancel-in-progress: 'yes'\n")
        ),
        Shape("top-permissions-read-all", workflow(top="permissions: read-all\n")),
        Shape("top-permissions-write-all", workflow(top="permissions: write-all\n")),
        Shape("top-permissions-empty", workflow(top="permissions: {}\n")),
        Shape("top-permissions-bad-shorthand", workflow(top="permissions: read\n")),
        Shape("top-unknown-key", workflow(top="nme: CI\n")),
        Shape("top-description", workflow(top="description: Builds and tests\n")),
        Shape("top-cache-mode", workflow(top="cache-mode: read\n")),
        Shape("top-concurrency-queue", workflow(top="concurrency:\n  group: ci\n  queue: max\n")),
        Shape("top-concurrency-queue-single", workflow(top="concurrency:\n  group: ci\n  queue: single\n")),
        Shape("top-concurrency-queue-unknown", workflow(top="concurrency:\n  group: ci\n  queue: all\n")),
        Shape("job-concurrency-queue", workflow(jobs=job("    concurrency:\n      group: g\n      queue: max\n"))),
        Shape("job-uses-self", workflow(jobs="  call:\n    uses: $/.github/workflows/reusable.yml\n")),
        Shape(
            "on-schedule-timezone-empty",
            workflow(on="on:\n  schedule:\n    - cron: '0 4 * * *'\n      timezone: ''\n"),
        ),
        Shape("top-missing-jobs", "on: push\n"),
        Shape("top-missing-on", "jobs:\n" + JOB),
        Shape("top-jobs-sequence", "on: push\njobs:\n  - build\n"),
        Shape("top-jobs-empty", "on: push\njobs: {}\n"),
    ]


def _triggers() -> list[Shape]:
    shapes: list[Shape] = []
    for event in [*EVENTS_WITH_TYPES, *EVENTS_WITHOUT_TYPES]:
        name = event.replace("_", "-")
        shapes.append(Shape(f"on-{name}-string", workflow(on=f"on: {event}\n")))
        shapes.append(Shape(f"on-{name}-list", workflow(on=f"on: [{event}, push]\n")))
        shapes.append(Shape(f"on-{name}-null", workflow(on=f"on:\n  {event}:\n")))
    for event, activity in EVENTS_WITH_TYPES.items():
        name = event.replace("_", "-")
        shapes.append(Shape(f"on-{name}-types", workflow(on=f"on:\n  {event}:\n    types: [{activity}]\n")))
        shapes.append(Shape(f"on-{name}-types-string", workflow(on=f"on:\n  {event}:\n    types: {activity}\n")))
    for event in ("pull_request", "issues", "release", "workflow_run"):
        name = event.replace("_", "-")
        shapes.append(Shape(f"on-{name}-unknown-type", workflow(on=f"on:\n  {event}:\n    types: [opend]\n")))
    for event in ("push", "pull_request", "pull_request_target"):
        name = event.replace("_", "-")
        for key in ("branches", "branches-ignore", "paths", "paths-ignore"):
            shapes.append(
                Shape(f"on-{name}-{key}", workflow(on=f"on:\n  {event}:\n    {key}: [main, 'releases/**']\n"))
            )
            shapes.append(Shape(f"on-{name}-{key}-string", workflow(on=f"on:\n  {event}:\n    {key}: '**'\n")))
        shapes.append(
            Shape(f"on-{name}-branches-mapping", workflow(on=f"on:\n  {event}:\n    branches: {{main: true}}\n"))
        )
        shapes.append(Shape(f"on-{name}-unknown-filter", workflow(on=f"on:\n  {event}:\n    branch: [main]\n")))
    for key in ("tags", "tags-ignore"):
        shapes.append(Shape(f"on-push-{key}", workflow(on=f"on:\n  push:\n    {key}: ['v*']\n")))
    shapes += [
        Shape(
            "on-push-branches-and-ignore",
            workflow(on="on:\n  push:\n    branches: [main]\n    branches-ignore: [dev]\n"),
        ),
        Shape("on-push-branches-empty-list", workflow(on="on:\n  push:\n    branches: []\n")),
        Shape("on-push-tags-empty-string", workflow(on="on:\n  push:\n    tags: ''\n")),
        Shape("on-pull-request-tags", workflow(on="on:\n  pull_request:\n    tags: ['v*']\n")),
        Shape("on-push-types", workflow(on="on:\n  push:\n    types: [created]\n")),
        Shape("on-unknown-event", workflow(on="on: pushh\n")),
        Shape("on-image-version", workflow(on="on:\n  image_version:\n    types: [ready]\n")),
        Shape("on-pull-request-comment", workflow(on="on: pull_request_comment\n")),
        Shape("on-check-suite-requested", workflow(on="on:\n  check_suite:\n    types: [requested]\n")),
        Shape("on-pull-request-stacked", workflow(on="on:\n  pull_request:\n    types: [stacked]\n")),
        Shape("on-repository-dispatch-types-string", workflow(on="on:\n  repository_dispatch:\n    types: deploy\n")),
        Shape("on-repository-dispatch-unknown-key", workflow(on="on:\n  repository_dispatch:\n    type: [deploy]\n")),
        Shape(
            "on-workflow-run-branches",
            workflow(on="on:\n  workflow_run:\n    workflows: [CI]\n    branches-ignore: [dev]\n"),
        ),
        Shape("on-workflow-run-paths", workflow(on="on:\n  workflow_run:\n    workflows: [CI]\n    paths: [src]\n")),
        Shape("on-issues-branches", workflow(on="on:\n  issues:\n    branches: [main]\n")),
        Shape("on-create-types", workflow(on="on:\n  create:\n    types: [tag]\n")),
        Shape("on-unknown-event-in-list", workflow(on="on: [push, pul_request]\n")),
        Shape("on-unknown-event-key", workflow(on="on:\n  pushh:\n")),
        Shape("on-empty-list", workflow(on="on: []\n")),
        Shape("on-number", workflow(on="on: 5\n")),
        Shape("on-schedule", workflow(on="on:\n  schedule:\n    - cron: '0 4 * * 1-5'\n")),
        Shape("on-schedule-steps", workflow(on="on:\n  schedule:\n    - cron: '*/15 0-6,20-23 * * *'\n")),
        Shape("on-schedule-names", workflow(on="on:\n  schedule:\n    - cron: '0 12 * JAN-MAR MON'\n")),
        Shape(
            "on-schedule-timezone",
            workflow(on="on:\n  schedule:\n    - cron: '0 4 * * *'\n      timezone: Europe/Paris\n"),
        ),
        Shape("on-schedule-four-fields", workflow(on="on:\n  schedule:\n    - cron: '0 4 * *'\n")),
        Shape("on-schedule-out-of-range", workflow(on="on:\n  schedule:\n    - cron: '61 4 * * *'\n")),
        Shape("on-schedule-macro", workflow(on="on:\n  schedule:\n    - cron: '@daily'\n")),
        Shape("on-schedule-string", workflow(on="on:\n  schedule: '0 4 * * *'\n")),
        Shape("on-schedule-no-cron", workflow(on="on:\n  schedule:\n    - {}\n")),
        Shape("on-schedule-null", workflow(on="on:\n  schedule:\n")),
        Shape("on-workflow-dispatch-sequence", workflow(on="on:\n  workflow_dispatch: []\n")),
        Shape("on-workflow-dispatch-empty-mapping", workflow(on="on:\n  workflow_dispatch: {}\n")),
        Shape("on-workflow-dispatch-unknown-key", workflow(on="on:\n  workflow_dispatch:\n    input: {}\n")),
        Shape(
            "on-workflow-run-workflows",
            workflow(on="on:\n  workflow_run:\n    workflows: [CI]\n    types: [completed]\n    branches: [main]\n"),
        ),
        Shape(
            "on-repository-dispatch-types",
            workflow(on="on:\n  repository_dispatch:\n    types: [deploy, my-custom-event]\n"),
        ),
        Shape("on-workflow-call-full", workflow(on=_WORKFLOW_CALL)),
        Shape(
            "on-workflow-call-input-no-type",
            workflow(on="on:\n  workflow_call:\n    inputs:\n      a:\n        required: true\n"),
        ),
        Shape(
            "on-workflow-call-input-choice",
            workflow(on="on:\n  workflow_call:\n    inputs:\n      a:\n        type: choice\n"),
        ),
        Shape("on-workflow-call-secret-null", workflow(on="on:\n  workflow_call:\n    secrets:\n      TOKEN:\n")),
        Shape(
            "on-workflow-call-output-no-value",
            workflow(on="on:\n  workflow_call:\n    outputs:\n      a:\n        description: x\n"),
        ),
    ]
    for kind, extra in (
        ("string", ""),
        ("boolean", ""),
        ("number", ""),
        ("environment", ""),
        ("choice", "        options: [a, b]\n"),
    ):
        text = (
            f"on:\n  workflow_dispatch:\n    inputs:\n      x:\n        type: {kind}\n        required: false\n{extra}"
        )
        shapes.append(Shape(f"on-workflow-dispatch-input-{kind}", workflow(on=text)))
    shapes += [
        Shape(
            "on-workflow-dispatch-input-bad-type",
            workflow(on="on:\n  workflow_dispatch:\n    inputs:\n      x:\n        type: list\n"),
        ),
        Shape(
            "on-workflow-dispatch-input-defaults",
            workflow(
                on=(
                    "on:\n  workflow_dispatch:\n    inputs:\n      a:\n        default: 3\n"
                    "      b:\n        type: boolean\n        default: false\n      c:\n"
                    "        description:\n"
                )
            ),
        ),
        Shape("on-workflow-dispatch-input-null", workflow(on="on:\n  workflow_dispatch:\n    inputs:\n      a:\n")),
        Shape(
            "on-workflow-dispatch-input-number-default-string",
            workflow(
                on="on:\n  workflow_dispatch:\n    inputs:\n      a:\n        type: number\n        default: '3'\n"
            ),
        ),
        Shape(
            "on-workflow-dispatch-input-boolean-default-string",
            workflow(
                on="on:\n  workflow_dispatch:\n    inputs:\n      a:\n        type: boolean\n        default: 'true'\n"
            ),
        ),
        Shape(
            "on-workflow-dispatch-input-string-default-boolean",
            workflow(
                on="on:\n  workflow_dispatch:\n    inputs:\n      a:\n        type: string\n        default: true\n"
            ),
        ),
        Shape(
            "on-workflow-dispatch-input-choice-no-options",
            workflow(on="on:\n  workflow_dispatch:\n    inputs:\n      a:\n        type: choice\n"),
        ),
        Shape(
            "on-workflow-call-input-default-number-for-string",
            workflow(on="on:\n  workflow_call:\n    inputs:\n      a:\n        type: string\n        default: 3\n"),
        ),
        Shape(
            "on-workflow-call-input-default-expression",
            workflow(
                on=(
                    "on:\n  workflow_call:\n    inputs:\n      a:\n        type: string\n"
                    "        default: ${{ github.ref }}\n"
                )
            ),
        ),
        Shape(
            "on-workflow-dispatch-input-required-string",
            workflow(on="on:\n  workflow_dispatch:\n    inputs:\n      a:\n        required: 'true'\n"),
        ),
    ]
    return shapes


_WORKFLOW_CALL = """on:
  workflow_call:
    inputs:
      runs_on:
        type: string
        required: true
        description: JSON list of labels
      debug:
        type: boolean
        default: false
      shards:
        type: number
        default: 2
    secrets:
      TOKEN:
        required: false
      OTHER:
        description: another
    outputs:
      version:
        description: the version
        value: ${{ jobs.build.outputs.version }}
"""


def _permissions() -> list[Shape]:
    shapes = []
    for scope in PERMISSIONS:
        for level in ("read", "write", "none"):
            shapes.append(Shape(f"permission-{scope}-{level}", workflow(top=f"permissions:\n  {scope}: {level}\n")))
        shapes.append(Shape(f"permission-{scope}-admin", workflow(top=f"permissions:\n  {scope}: admin\n")))
    shapes += [
        Shape("permission-code-quality-read", workflow(top="permissions:\n  code-quality: read\n")),
        Shape("permission-vulnerability-alerts-read", workflow(top="permissions:\n  vulnerability-alerts: read\n")),
        Shape("permission-copilot-requests-write", workflow(top="permissions:\n  copilot-requests: write\n")),
        Shape("permission-drives-read", workflow(top="permissions:\n  drives: read\n")),
        Shape("permission-unknown-scope", workflow(top="permissions:\n  content: read\n")),
        Shape("permission-boolean", workflow(top="permissions:\n  contents: true\n")),
        Shape(
            "permission-job-level",
            workflow(jobs=job("    permissions:\n      contents: read\n      pull-requests: write\n")),
        ),
        Shape("permission-job-read-all", workflow(jobs=job("    permissions: read-all\n"))),
        Shape("permission-job-unknown-scope", workflow(jobs=job("    permissions:\n      pullrequests: write\n"))),
    ]
    return shapes


_REUSABLE = "  call:\n    uses: ./.github/workflows/reusable.yml\n"


def _jobs() -> list[Shape]:
    cases = {
        "job-name": "    name: Build ${{ matrix.os }}\n",
        "job-name-number": "    name: 3\n",
        "job-if-string": "    if: github.event_name == 'push'\n",
        "job-if-expression": "    if: ${{ always() }}\n",
        "job-if-boolean": "    if: false\n",
        "job-if-number": "    if: 1\n",
        "job-timeout": "    timeout-minutes: 30\n",
        "job-timeout-expression": "    timeout-minutes: ${{ inputs.minutes }}\n",
        "job-timeout-string": "    timeout-minutes: '30'\n",
        "job-timeout-float": "    timeout-minutes: 2.5\n",
        "job-continue-on-error": "    continue-on-error: true\n",
        "job-continue-on-error-expression": "    continue-on-error: ${{ matrix.experimental }}\n",
        "job-continue-on-error-string": "    continue-on-error: 'true'\n",
        "job-env": "    env:\n      A: 1\n      B:\n",
        "job-env-sequence": "    env: [A]\n",
        "job-outputs": "    outputs:\n      version: ${{ steps.v.outputs.version }}\n",
        "job-outputs-sequence": "    outputs: [version]\n",
        "job-environment-string": "    environment: production\n",
        "job-environment-mapping": "    environment:\n      name: production\n      url: https://example.com\n",
        "job-environment-no-name": "    environment:\n      url: https://example.com\n",
        "job-environment-unknown-key": "    environment:\n      name: production\n      reviewers: [a]\n",
        "job-concurrency": "    concurrency:\n      group: ${{ github.workflow }}\n      cancel-in-progress: false\n",
        "job-defaults": "    defaults:\n      run:\n        shell: bash\n",
        "job-defaults-null-directory": "    defaults:\n      run:\n        working-directory:\n",
        "job-container-string": "    container: node:20\n",
        "job-container-mapping": (
            "    container:\n      image: rocm/pytorch:latest\n      options: --device=/dev/kfd --device=/dev/dri\n"
            "      env:\n        A: b\n      ports: [80]\n      volumes: ['/data:/data']\n"
            "      credentials:\n        username: u\n        password: ${{ secrets.P }}\n"
        ),
        "job-container-no-image": "    container:\n      options: --gpus all\n",
        "job-container-unknown-key": "    container:\n      image: node:20\n      option: --gpus all\n",
        "job-container-null-options": "    container:\n      image: node:20\n      options:\n",
        "job-services": "    services:\n      redis:\n        image: redis\n        ports: ['6379:6379']\n",
        "job-services-sequence": "    services: [redis]\n",
        "job-strategy-matrix": "    strategy:\n      matrix:\n        os: [ubuntu-latest]\n        py: ['3.10', 3]\n",
        "job-strategy-include-exclude": (
            "    strategy:\n      matrix:\n        os: [a, b]\n        include:\n          - os: c\n"
            "        exclude:\n          - os: a\n"
        ),
        "job-strategy-matrix-expression": "    strategy:\n      matrix: ${{ fromJSON(needs.plan.outputs.matrix) }}\n",
        "job-strategy-matrix-value-expression": (
            "    strategy:\n      matrix:\n        os: ${{ fromJSON(inputs.oses) }}\n"
        ),
        "job-strategy-fail-fast-only": "    strategy:\n      fail-fast: false\n",
        "job-strategy-fail-fast-string": "    strategy:\n      fail-fast: 'false'\n      matrix:\n        a: [1]\n",
        "job-strategy-max-parallel": "    strategy:\n      max-parallel: 2\n      matrix:\n        a: [1, 2]\n",
        "job-strategy-max-parallel-string": "    strategy:\n      max-parallel: '2'\n      matrix:\n        a: [1]\n",
        "job-strategy-matrix-scalar": "    strategy:\n      matrix:\n        os: ubuntu-latest\n",
        "job-strategy-unknown-key": "    strategy:\n      matrx:\n        a: [1]\n",
        "job-unknown-key": "    runs_on: ubuntu-latest\n",
        "job-snapshot": "    snapshot: my-image\n",
        "job-snapshot-mapping": "    snapshot:\n      image-name: my-image\n      version: '2.*'\n",
        "job-cancel-timeout-minutes": "    cancel-timeout-minutes: 5\n",
        "job-cache-mode": "    cache-mode: none\n",
        "job-with-on-normal-job": "    with:\n      a: b\n",
        "job-steps-empty": "    steps: []\n",
    }
    shapes = [
        Shape(name, workflow(jobs=job(body, "" if name == "job-steps-empty" else STEP))) for name, body in cases.items()
    ]
    runs_on = {
        "runs-on-list": "[self-hosted, linux, x64]",
        "runs-on-number": "5",
        "runs-on-null": "",
        "runs-on-empty-string": "''",
        "runs-on-expression": "${{ matrix.os }}",
        "runs-on-from-json": "${{ fromJSON(inputs.runs_on) }}",
        "runs-on-group": "\n      group: gpu-runners",
        "runs-on-group-labels": "\n      group: gpu-runners\n      labels: [mi300x]",
        "runs-on-unknown-key": "\n      grop: gpu-runners",
        "runs-on-empty-list": "[]",
    }
    for name, value in runs_on.items():
        shapes.append(Shape(name, workflow(jobs=f"  build:\n    runs-on: {value}\n    steps:\n{STEP}")))
    first = "  a:\n    runs-on: ubuntu-latest\n    steps:\n" + STEP
    second = "  b:\n    runs-on: ubuntu-latest\n    needs: {}\n    steps:\n" + STEP
    shapes += [
        Shape("needs-string", workflow(jobs=first + second.format("a"))),
        Shape("needs-list", workflow(jobs=first + second.format("[a]"))),
        Shape("needs-unknown-job", workflow(jobs=first + second.format("[nope]"))),
        Shape("needs-number", workflow(jobs=first + second.format("5"))),
        Shape(
            "needs-cycle", workflow(jobs=first.replace("    steps:", "    needs: b\n    steps:") + second.format("a"))
        ),
        Shape("needs-self", workflow(jobs=first + second.format("[b]"))),
    ]
    shapes += [
        Shape("job-missing-runs-on", workflow(jobs="  build:\n    steps:\n" + STEP)),
        Shape("job-id-starts-with-digit", workflow(jobs=JOB.replace("  build:", "  1build:"))),
        Shape("job-id-with-dot", workflow(jobs=JOB.replace("  build:", "  build.linux:"))),
        Shape("job-id-underscore", workflow(jobs=JOB.replace("  build:", "  _build-2:"))),
        Shape("job-null", workflow(jobs="  build:\n")),
        Shape("job-sequence", workflow(jobs="  build: [a]\n")),
        Shape("reusable-call", workflow(jobs=_REUSABLE)),
        Shape(
            "reusable-call-with-secrets",
            workflow(
                jobs=_REUSABLE
                + (
                    "    with:\n      runs_on: '[\"self-hosted\"]'\n      n: 2\n"
                    "      flag: true\n    secrets:\n      TOKEN: ${{ secrets.TOKEN }}\n"
                )
            ),
        ),
        Shape("reusable-call-secrets-inherit", workflow(jobs=_REUSABLE + "    secrets: inherit\n")),
        Shape("reusable-call-secrets-other-string", workflow(jobs=_REUSABLE + "    secrets: all\n")),
        Shape(
            "reusable-call-needs-if-strategy",
            workflow(
                jobs=first
                + _REUSABLE
                + (
                    "    needs: a\n    if: always()\n    strategy:\n      matrix:\n"
                    "        n: [1, 2]\n    permissions:\n      contents: read\n"
                    "    concurrency: x\n    name: Call\n"
                )
            ),
        ),
        Shape("reusable-call-remote", workflow(jobs="  call:\n    uses: octo/repo/.github/workflows/ci.yml@v1\n")),
        Shape("reusable-call-with-runs-on", workflow(jobs=_REUSABLE + "    runs-on: ubuntu-latest\n")),
        Shape("reusable-call-with-steps", workflow(jobs=_REUSABLE + "    steps:\n" + STEP)),
        Shape("reusable-call-with-env", workflow(jobs=_REUSABLE + "    env:\n      A: b\n")),
        Shape("reusable-call-with-timeout", workflow(jobs=_REUSABLE + "    timeout-minutes: 5\n")),
        Shape("reusable-call-with-sequence", workflow(jobs=_REUSABLE + "    with: [a]\n")),
    ]
    return shapes


def _steps() -> list[Shape]:
    cases = {
        "step-run": "run: make\n",
        "step-run-block": "run: |\n          make\n          make test\n",
        "step-run-boolean": "run: true\n",
        "step-run-number": "run: 5\n",
        "step-run-null": "run:\n",
        "step-run-sequence": "run: [make]\n",
        "step-uses": "uses: actions/checkout@v4\n",
        "step-uses-docker": "uses: docker://alpine:3.20\n",
        "step-uses-local": "uses: ./.github/actions/setup\n",
        "step-uses-null": "uses:\n",
        "step-uses-empty": "uses: ''\n",
        "step-uses-number": "uses: 5\n",
        "step-uses-without-ref": "uses: actions/checkout\n",
        "step-uses-and-run": "uses: actions/checkout@v4\n        run: make\n",
        "step-neither": "name: nothing\n",
        "step-empty-mapping": "{}\n",
        "step-name-only-null": "name:\n        run: make\n",
        "step-with": (
            "uses: actions/setup-python@v5\n        with:\n          python-version: '3.11'\n          cache: pip\n"
        ),
        "step-with-values": (
            "uses: a/b@v1\n        with:\n          n: 3\n          flag: false\n          token:\n          f: 1.5\n"
        ),
        "step-with-mapping-value": "uses: a/b@v1\n        with:\n          a: {b: c}\n",
        "step-with-sequence-value": "uses: a/b@v1\n        with:\n          a: [b]\n",
        "step-with-args-entrypoint": (
            "uses: docker://alpine\n        with:\n          args: echo hi\n          entrypoint: /bin/sh\n"
        ),
        "step-with-on-run-step": "run: make\n        with:\n          a: b\n",
        "step-env": "run: make\n        env:\n          A: x\n          B: 2\n          C:\n",
        "step-env-sequence": "run: make\n        env: [A]\n",
        "step-env-on-uses-step": "uses: a/b@v1\n        env:\n          A: x\n",
        "step-shell": "run: make\n        shell: bash -euo pipefail {0}\n",
        "step-shell-number": "run: make\n        shell: 5\n",
        "step-shell-null": "run: make\n        shell:\n",
        "step-shell-on-uses-step": "uses: a/b@v1\n        shell: bash\n",
        "step-working-directory": "run: make\n        working-directory: src\n",
        "step-working-directory-null": "run: make\n        working-directory:\n",
        "step-working-directory-number": "run: make\n        working-directory: 5\n",
        "step-working-directory-on-uses-step": "uses: a/b@v1\n        working-directory: src\n",
        "step-id": "id: build_1\n        run: make\n",
        "step-id-with-dot": "id: build.1\n        run: make\n",
        "step-id-starts-with-digit": "id: 1build\n        run: make\n",
        "step-id-number": "id: 5\n        run: make\n",
        "step-if": "if: success()\n        run: make\n",
        "step-if-boolean": "if: true\n        run: make\n",
        "step-if-expression": "if: ${{ failure() }}\n        run: make\n",
        "step-continue-on-error": "run: make\n        continue-on-error: true\n",
        "step-continue-on-error-expression": "run: make\n        continue-on-error: ${{ matrix.experimental }}\n",
        "step-continue-on-error-string": "run: make\n        continue-on-error: 'true'\n",
        "step-timeout": "run: make\n        timeout-minutes: 10\n",
        "step-timeout-string": "run: make\n        timeout-minutes: '10'\n",
        "step-timeout-expression": "run: make\n        timeout-minutes: ${{ inputs.t }}\n",
        "step-unknown-key": "run: make\n        working-dir: src\n",
        "step-background": "run: make\n        background: true\n",
        "step-background-uses": "uses: a/b@v1\n        background: true\n",
        "step-background-string": "run: make\n        background: 'yes'\n",
        "step-wait": "wait: build\n",
        "step-wait-known": "id: server\n        run: ./serve\n        background: true\n      - wait: server\n",
        "step-wait-list": "id: a\n        run: x\n        background: true\n      - id: b\n        run: y\n"
        "        background: true\n      - wait: [a, b]\n        name: Both\n        continue-on-error: true\n",
        "step-wait-later": "wait: server\n      - id: server\n        run: ./serve\n        background: true\n",
        "step-wait-itself": "id: a\n        wait: a\n",
        "step-wait-with-run": "id: a\n        run: x\n        background: true\n      - wait: a\n        run: make\n",
        "step-wait-with-if": "id: a\n        run: x\n        background: true\n      - wait: a\n        if: always()\n",
        "step-wait-all": "run: x\n        background: true\n      - wait-all:\n",
        "step-wait-all-true": "run: x\n        background: true\n      - wait-all: true\n",
        "step-wait-all-false": "run: x\n        background: true\n      - wait-all: false\n",
        "step-parallel": "parallel:\n          - run: a\n          - run: b\n",
        "step-parallel-uses": "parallel:\n          - uses: a/b@v1\n            with: {x: 1}\n          - run: b\n"
        "            shell: bash\n",
        "step-parallel-background": "parallel:\n          - run: a\n            background: true\n",
        "step-parallel-nested": "parallel:\n          - parallel:\n              - run: a\n",
        "step-parallel-wait": "id: a\n        run: x\n        background: true\n      - parallel:\n"
        "          - wait: a\n",
        "step-parallel-name": "name: Checks\n        parallel:\n          - run: a\n",
        "step-parallel-and-run": "run: a\n        parallel:\n          - run: b\n",
        "step-parallel-empty": "parallel: []\n",
        "step-cancel": "cancel: build\n",
        "step-cancel-known": "id: server\n        run: ./serve\n        background: true\n      - cancel: server\n",
        "step-cancel-list": "id: a\n        run: x\n        background: true\n      - cancel: [a]\n",
        "step-uses-self": "uses: $/.github/actions/setup\n",
        "step-uses-self-in-parallel": "parallel:\n          - uses: $/.github/actions/setup\n          - run: b\n",
        "step-scalar": "make\n",
    }
    shapes = [Shape(name, workflow(jobs=step(body))) for name, body in cases.items()]
    shapes += [
        Shape(
            "steps-duplicate-id",
            workflow(jobs=job("", "      - id: a\n        run: x\n      - id: a\n        run: y\n")),
        ),
        Shape(
            "steps-same-id-in-two-jobs",
            workflow(
                jobs=job("", "      - id: a\n        run: x\n")
                + job("", "      - id: a\n        run: y\n").replace("  build:", "  test:", 1)
            ),
        ),
        Shape("steps-mapping", workflow(jobs=job("", "").rstrip("\n") + "\n    steps:\n      a:\n        run: x\n")),
        Shape("steps-null", workflow(jobs=job("", "").rstrip("\n") + "\n    steps:\n")),
    ]
    return shapes


def _coercions() -> list[Shape]:
    cases = {
        "tag-non-specific-run": step("run: ! make\n"),
        "tag-non-specific-empty-run": step("run: !\n"),
        "tag-non-specific-runs-on": "  build:\n    runs-on: ! ubuntu-latest\n    steps:\n" + STEP,
        "tag-str-number-name": "  build:\n    name: !!str 5\n    runs-on: ubuntu-latest\n    steps:\n" + STEP,
        "tag-non-specific-timeout": job("    timeout-minutes: ! 5\n"),
        "coerce-concurrency-group-number": job("    concurrency: 5\n"),
        "coerce-environment-number": job("    environment: 5\n"),
        "coerce-environment-null": job("    environment:\n"),
        "coerce-container-image-number": job("    container:\n      image: 5\n"),
        "coerce-container-image-null": job("    container:\n      image:\n"),
        "coerce-container-null": job("    container:\n"),
        "coerce-step-name-number": step("name: 1\n        run: make\n"),
        "coerce-step-name-boolean": step("name: false\n        run: make\n"),
        "coerce-output-value-number": job("    outputs:\n      n: 1\n"),
        "coerce-output-value-null": job("    outputs:\n      n:\n"),
        "coerce-needs-number": "  a:\n    runs-on: ubuntu-latest\n    steps:\n"
        + STEP
        + "  1:\n    runs-on: ubuntu-latest\n    needs: a\n    steps:\n"
        + STEP,
        "coerce-services-image-number": job("    services:\n      db:\n        image: 5\n"),
        "coerce-matrix-values-mixed": job("    strategy:\n      matrix:\n        v: [1, true, null, x, {a: b}, [c]]\n"),
        "coerce-input-description-number": "",
        "coerce-defaults-shell-boolean": job("    defaults:\n      run:\n        shell: true\n"),
        "coerce-credentials-null": job(
            "    container:\n      image: a\n      credentials:\n        username:\n        password:\n"
        ),
        "coerce-runs-on-list-number": "  build:\n    runs-on: [self-hosted, 5]\n    steps:\n" + STEP,
        "coerce-runs-on-list-null": "  build:\n    runs-on: [self-hosted, null]\n    steps:\n" + STEP,
        "coerce-branches-number": "",
    }
    shapes = [Shape(name, workflow(jobs=body)) for name, body in cases.items() if body]
    shapes += [
        Shape(
            "coerce-input-description-number",
            workflow(on="on:\n  workflow_dispatch:\n    inputs:\n      a:\n        description: 5\n"),
        ),
        Shape("coerce-branches-number", workflow(on="on:\n  push:\n    branches: [1, 2.0]\n")),
        Shape("coerce-cron-number", workflow(on="on:\n  schedule:\n    - cron: 5\n")),
        Shape("coerce-run-name-number", workflow(top="run-name: 7\n")),
        Shape("coerce-permission-level-null", workflow(top="permissions:\n  contents:\n")),
    ]
    return shapes


def _overrides() -> list[Shape]:
    """The shapes that motivate each override (GitHub accepts them) and each check beyond the schema (it rejects
    them)."""
    return [
        *(Shape(f"override-{override.name}", override.shape) for override in OVERRIDES),
        *(Shape(f"check-{check.name}", check.shape) for check in CHECKS),
    ]


def shapes() -> list[Shape]:
    found = [*_top_level(), *_triggers(), *_permissions(), *_jobs(), *_steps(), *_coercions(), *_overrides()]
    ids = [shape.id for shape in found]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"shape ids used twice: {duplicates}")
    bad = [i for i in ids if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", i)]
    if bad:
        raise ValueError(f"shape ids that are not file names: {bad}")
    return found
