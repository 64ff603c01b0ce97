"""The workflow and composite-action models: every field, every shape GitHub allows, leniency."""

from __future__ import annotations

from ci_checks.core import source
from ci_checks.model import Action, ActionRef, Workflow
from ci_checks.syntax import yamlpos

WORKFLOW = """\
name: CI
on:
  push:
    branches: [main]
  workflow_dispatch:
    inputs:
      debug: {type: boolean, default: false, description: Verbose logs}
      target: {type: choice, options: [cpu, rocm], required: true}
  workflow_call:
    inputs:
      runs_on: {type: string, required: true}
    secrets:
      HF_TOKEN: {required: true, description: Hub token}
    outputs:
      wheel: {description: The wheel, value: "${{ jobs.build.outputs.wheel }}"}
env:
  PYTHONUNBUFFERED: "1"
permissions: {contents: read}
concurrency: {group: ci, cancel-in-progress: true}
defaults:
  run:
    shell: bash -eo pipefail {0}
    working-directory: src
jobs:
  build:
    name: Build
    runs-on: [self-hosted, linux, mi300x]
    container:
      image: rocm/pytorch:latest
      options: --device=/dev/kfd --device=/dev/dri --group-add video
      env: {HIP_VISIBLE_DEVICES: "0"}
      volumes: [/data:/data]
    services:
      redis: redis:7
    strategy:
      fail-fast: false
      matrix: {python: ["3.10"]}
    needs: lint
    if: github.event_name == 'push'
    timeout-minutes: 90
    continue-on-error: false
    env: {A: b}
    defaults: {run: {shell: sh}}
    outputs: {wheel: "${{ steps.b.outputs.wheel }}"}
    environment: production
    steps:
      - uses: actions/checkout@v4
        with: {persist-credentials: false, fetch-depth: 0}
      - id: b
        name: Build wheel
        run: python -m build
        shell: bash
        env: {X: "1"}
        if: success()
        working-directory: python
        continue-on-error: true
        timeout-minutes: 10
      - uses: ./.github/actions/setup
      - uses: docker://alpine:3.20
      - uses: github/codeql-action/init@v3
  lint:
    runs-on: {group: gpu-runners, labels: [linux]}
    steps:
      - run: ruff check .
  dynamic:
    runs-on: ${{ fromJSON(inputs.runs_on) }}
    needs: [build, lint]
    steps: []
  call:
    uses: octo-org/ci/.github/workflows/test.yml@v2
    with: {python: "3.11"}
    secrets: inherit
  call-local:
    uses: ./.github/workflows/_run-ci-rocm.yml
    secrets: {token: "${{ secrets.HF_TOKEN }}"}
"""


def load(text: str, path: str = ".github/workflows/ci.yml") -> yamlpos.Document:
    return yamlpos.parse(source.decode(path, text.encode()))


def test_workflow_level_fields() -> None:
    workflow = Workflow.from_document(load(WORKFLOW))
    assert workflow is not None
    assert workflow.name == "CI"
    assert list(workflow.triggers) == ["push", "workflow_dispatch", "workflow_call"]
    push = workflow.triggers["push"]
    assert push.config is not None and push.config.get("branches") is not None
    dispatch = workflow.workflow_dispatch_inputs
    assert (dispatch["debug"].type, dispatch["debug"].description) == ("boolean", "Verbose logs")
    assert (dispatch["target"].options, dispatch["target"].required) == (["cpu", "rocm"], True)
    call = workflow.workflow_call
    assert call is not None
    assert call.inputs["runs_on"].required
    assert (call.secrets["HF_TOKEN"].required, call.secrets["HF_TOKEN"].description) == (True, "Hub token")
    wheel = call.outputs["wheel"]
    assert wheel.value is not None and wheel.value.text == "${{ jobs.build.outputs.wheel }}"
    assert workflow.env["PYTHONUNBUFFERED"].text == "1"
    assert workflow.permissions is not None and workflow.concurrency is not None
    assert (workflow.defaults.shell, workflow.defaults.working_directory) == ("bash -eo pipefail {0}", "src")
    assert list(workflow.jobs) == ["build", "lint", "dynamic", "call", "call-local"]


def test_normal_job_fields() -> None:
    workflow = Workflow.from_document(load(WORKFLOW))
    assert workflow is not None
    job = workflow.job("build")
    assert not job.is_call
    assert job.name == "Build"
    assert job.runs_on is not None and job.runs_on.labels == ["self-hosted", "linux", "mi300x"]
    assert job.container is not None
    assert job.container.image == "rocm/pytorch:latest"
    assert job.container.options is not None and "/dev/kfd" in job.container.options
    assert job.container.env["HIP_VISIBLE_DEVICES"].text == "0" and job.container.volumes == ["/data:/data"]
    assert job.services["redis"].image == "redis:7"
    assert job.strategy is not None and job.strategy.fail_fast is not None
    assert job.strategy.fail_fast.resolved is False and job.strategy.matrix is not None
    assert [n.value for n in job.needs] == ["lint"]
    assert job.if_ is not None and job.if_.text == "github.event_name == 'push'"
    assert job.timeout_minutes is not None and job.timeout_minutes.resolved == 90
    assert job.continue_on_error is not None and job.continue_on_error.resolved is False
    assert job.env["A"].text == "b" and job.defaults.shell == "sh"
    assert job.outputs["wheel"].text == "${{ steps.b.outputs.wheel }}"
    assert job.environment is not None
    assert (job.span.line, job.span.column) == (25, 3)


def test_runs_on_forms() -> None:
    workflow = Workflow.from_document(load(WORKFLOW))
    assert workflow is not None
    lint = workflow.job("lint").runs_on
    assert lint is not None and (lint.group, lint.labels) == ("gpu-runners", ["linux"])
    dynamic = workflow.job("dynamic").runs_on
    assert dynamic is not None and dynamic.expression == "${{ fromJSON(inputs.runs_on) }}" and dynamic.labels == []
    assert [n.value for n in workflow.job("dynamic").needs] == ["build", "lint"]


def test_reusable_workflow_calls() -> None:
    workflow = Workflow.from_document(load(WORKFLOW))
    assert workflow is not None
    call = workflow.job("call")
    assert call.is_call and call.uses is not None
    assert (call.uses.owner, call.uses.repo, call.uses.path, call.uses.ref) == (
        "octo-org",
        "ci",
        ".github/workflows/test.yml",
        "v2",
    )
    assert call.with_["python"].text == "3.11" and call.secrets_inherit and call.steps == []
    local = workflow.job("call-local")
    assert local.uses is not None and (local.uses.kind, local.uses.path) == (
        "local",
        ".github/workflows/_run-ci-rocm.yml",
    )
    assert local.secrets["token"].text == "${{ secrets.HF_TOKEN }}" and not local.secrets_inherit


def test_step_fields_and_uses_references() -> None:
    workflow = Workflow.from_document(load(WORKFLOW))
    assert workflow is not None
    checkout, build, local, docker, codeql = workflow.job("build").steps
    assert checkout.uses == ActionRef("repository", "actions/checkout@v4", "actions", "checkout", "", "v4")
    assert checkout.with_["persist-credentials"].resolved is False
    assert checkout.label == "actions/checkout@v4"
    assert (build.id, build.name, build.shell, build.working_directory) == ("b", "Build wheel", "bash", "python")
    assert build.run is not None and build.run.value == "python -m build"
    assert build.env["X"].text == "1"
    assert build.if_ is not None and build.if_.text == "success()"
    assert build.continue_on_error is not None and build.continue_on_error.resolved is True
    assert build.timeout_minutes is not None and build.timeout_minutes.resolved == 10
    assert workflow.step("Build wheel") is build and workflow.job("build").step("b") is build
    assert (local.uses.kind, local.uses.path) == ("local", ".github/actions/setup")  # type: ignore[union-attr]
    assert (docker.uses.kind, docker.uses.path) == ("docker", "alpine:3.20")  # type: ignore[union-attr]
    assert codeql.uses is not None and (codeql.uses.name, codeql.uses.path) == ("github/codeql-action/init", "init")
    assert (build.span.line, build.span.column) == (49, 9)


def test_effective_shell_follows_step_job_and_workflow_defaults() -> None:
    workflow = Workflow.from_document(load(WORKFLOW))
    assert workflow is not None
    assert workflow.job("build").steps[1].effective_shell == "bash"
    assert workflow.job("lint").steps[0].effective_shell == "bash -eo pipefail {0}"


def test_lookups_name_what_exists() -> None:
    workflow = Workflow.from_document(load(WORKFLOW))
    assert workflow is not None
    for lookup in (lambda: workflow.job("nope"), lambda: workflow.job("lint").step("nope")):
        try:
            lookup()
        except LookupError as error:
            assert "nope" in str(error) and ("build" in str(error) or "ruff" in str(error))
        else:
            raise AssertionError("no LookupError")


def test_malformed_parts_are_left_out_and_the_rest_is_modelled() -> None:
    text = (
        "on: [push, pull_request]\n"
        "jobs:\n"
        "  broken: [not, a, mapping]\n"
        "  odd:\n"
        "    runs-on: 42\n"
        "    needs: {a: b}\n"
        "    steps:\n"
        "      - just a string\n"
        "      - run: echo ok\n"
        "      - uses: {not: text}\n"
        "  nosteps:\n"
        "    runs-on: x\n"
        "    steps: oops\n"
    )
    workflow = Workflow.from_document(load(text))
    assert workflow is not None
    assert list(workflow.triggers) == ["push", "pull_request"]
    assert list(workflow.jobs) == ["odd", "nosteps"]
    odd = workflow.job("odd")
    assert odd.runs_on is not None and odd.runs_on.labels == ["42"]
    assert odd.needs == []
    assert [s.label for s in odd.steps] == ["run: echo ok", "step 3"]
    assert workflow.job("nosteps").steps == []


def test_unusable_documents_have_no_model() -> None:
    assert Workflow.from_document(load("a: [1,\n")) is None
    assert Workflow.from_document(load("- just\n- a list\n")) is None
    assert Action.from_document(load("")) is None


def test_string_trigger() -> None:
    workflow = Workflow.from_document(load("on: push\njobs: {}\n"))
    assert workflow is not None and list(workflow.triggers) == ["push"]


def test_composite_action_metadata() -> None:
    text = (
        "name: Setup\ndescription: Set up\n"
        "inputs:\n  version: {description: v, required: true, default: '3.10'}\n"
        "outputs:\n  path: {description: p, value: '${{ steps.s.outputs.path }}'}\n"
        "runs:\n  using: composite\n  steps:\n"
        "    - id: s\n      shell: bash\n      run: echo path=x >> $GITHUB_OUTPUT\n"
        "    - run: echo no shell\n"
    )
    action = Action.from_document(load(text, "action.yml"))
    assert action is not None
    assert (action.name, action.description, action.using, action.is_composite) == (
        "Setup",
        "Set up",
        "composite",
        True,
    )
    assert action.inputs["version"].required
    assert action.inputs["version"].default is not None and action.inputs["version"].default.text == "3.10"
    path = action.outputs["path"]
    assert path.value is not None and path.value.text == "${{ steps.s.outputs.path }}"
    first, second = action.steps
    assert first.script is not None and [c.name for c in first.script.commands()] == ["echo"]
    assert second.effective_shell is None and second.script is None
    assert action.step("s") is first


def test_uses_parse_errors_explain_themselves() -> None:
    assert "needs a ref" in str(ActionRef.parse("actions/checkout"))
    assert "expressions" in str(ActionRef.parse("${{ matrix.action }}"))
    assert isinstance(ActionRef.parse("docker://ghcr.io/x/y:1"), ActionRef)
    assert "docker://" in str(ActionRef.parse("docker://"))
