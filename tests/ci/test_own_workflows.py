"""This repository's own reusable ROCm workflow, asked the seed's questions through the plugin's fixtures.

The same two assertions are policy rules in `.github/ci-checks.yml`
(`megatron-override-order`, `no-amd-patch`), which pytest collects as tests
because `ci_checks = true` is set in pyproject.toml.
"""

from __future__ import annotations


def test_megatron_override_installs_the_checked_out_ref_unpatched(workflow) -> None:  # type: ignore[no-untyped-def]
    override = workflow("_run-ci-rocm.yml").step("Install Megatron").script.branch('[ -n "$MEGATRON_PR" ]')
    assert override.comes_before("git checkout -f FETCH_HEAD", "pip install -e .")
    assert override.occurrences("amd_patch") == []


def test_checkout_comes_first_and_keeps_no_credentials(workflow) -> None:  # type: ignore[no-untyped-def]
    for name in ("_run-ci.yml", "_run-ci-rocm.yml"):
        first = workflow(name).job("checkpoint").steps[0]
        assert first.uses is not None and first.uses.name == "actions/checkout"
        assert first.with_["persist-credentials"].text == "false"


def test_the_repository_has_no_amd_patch_in_workflows(ci_repo) -> None:  # type: ignore[no-untyped-def]
    assert ci_repo.occurrences("amd_patch", files=".github/workflows/*.yml") == []


def test_cuda_and_rocm_paths_take_the_same_inputs(workflow) -> None:  # type: ignore[no-untyped-def]
    cuda, rocm = workflow("_run-ci.yml"), workflow("_run-ci-rocm.yml")
    assert cuda.workflow_call is not None and rocm.workflow_call is not None
    assert list(cuda.workflow_call.inputs) == list(rocm.workflow_call.inputs)
    assert list(rocm.workflow_call.inputs) == [
        "runs_on",
        "container_image",
        "skip_dependency_install",
        "ref",
        "megatron_ref",
    ]
