"""The seed: the Megatron override of a reusable ROCm workflow, asked about by structure.

The string test it replaces split the file on `if [ -n "$MEGATRON_PR" ]; then`
and on a ten-space `cd $GITHUB_WORKSPACE`, then compared `str.index` results.
Here the same questions are asked of the command tree, and the answers survive
re-indentation and a change of block-scalar style.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_checks.core import source
from ci_checks.model import Workflow
from ci_checks.syntax import yamlpos
from ci_checks.syntax.shell import Block
from tests.ci.linter.conftest import FIXTURES, copy_repository, run_cli
from tests.ci.linter.variants import reindent

AFTER = (FIXTURES / "seed" / "_run-ci-rocm.yml").read_text(encoding="utf-8")
BEFORE = (FIXTURES / "seed" / "_run-ci-rocm.before.yml").read_text(encoding="utf-8")
CONDITION = '[ -n "$MEGATRON_PR" ]'
CHECKOUT = "git checkout -f FETCH_HEAD"
INSTALL = "pip install -e ."


def override(text: str) -> Block:
    doc = yamlpos.parse(source.decode(".github/workflows/_run-ci-rocm.yml", text.encode()))
    workflow = Workflow.from_document(doc)
    assert workflow is not None, doc.issues
    script = workflow.step("Install Megatron").script
    assert script is not None
    return script.branch(CONDITION)


VARIANTS = {
    "as written": AFTER,
    "indented by 4": reindent(AFTER),
    "literal strip |-": AFTER.replace("run: |\n", "run: |-\n"),
    "both": reindent(AFTER).replace("run: |\n", "run: |-\n"),
}


@pytest.mark.parametrize("text", VARIANTS.values(), ids=VARIANTS.keys())
def test_checkout_and_install_lines_and_order_survive_reformatting(text: str) -> None:
    branch = override(text)
    checkout = branch.first(CHECKOUT)
    install = branch.first(INSTALL)
    assert checkout is not None and install is not None
    assert (checkout.span.line, install.span.line) == (30, 32)
    assert install.argv == ["pip", "install", "-e", ".", "--no-deps", "--break-system-packages"]
    assert branch.comes_before(CHECKOUT, INSTALL)
    assert not any("amd_patch" in word.value for command in branch.commands() for word in command.words)


def test_reindented_variant_is_the_same_workflow() -> None:
    def data(text: str) -> object:
        """The workflow's data, with the indentation inside scripts removed (it is re-indented too)."""
        doc = yamlpos.parse(source.decode("w.yml", text.encode()))
        assert doc.root is not None
        return unindent(yamlpos.to_plain(doc.root))

    def unindent(value: object) -> object:
        if isinstance(value, dict):
            return {k: unindent(v) for k, v in value.items()}
        if isinstance(value, list):
            return [unindent(v) for v in value]
        return "\n".join(line.lstrip() for line in value.split("\n")) if isinstance(value, str) else value

    four = reindent(AFTER)
    assert "    test:\n        runs-on:" in four
    assert data(four) == data(AFTER) != data(VARIANTS["literal strip |-"])


def test_columns_follow_the_indentation() -> None:
    two = override(AFTER).first(CHECKOUT)
    four = override(reindent(AFTER)).first(CHECKOUT)
    assert two is not None and four is not None
    assert (two.span.column, four.span.column) == (13, 23)


def test_install_outside_the_branch_is_not_the_branchs() -> None:
    branch = override(AFTER)
    assert len(branch.find(INSTALL)) == 1
    doc = yamlpos.parse(source.decode("w.yml", AFTER.encode()))
    workflow = Workflow.from_document(doc)
    assert workflow is not None
    script = workflow.step("Install Megatron").script
    assert script is not None
    assert [c.span.line for c in script.find(INSTALL)] == [32, 35]


def test_before_the_change_the_patch_is_applied_between_checkout_and_install() -> None:
    branch = override(BEFORE)
    applies = branch.find("git apply")
    assert [c.span.line for c in applies] == [32, 33, 34]
    patched = [c for c in branch.commands() if any("amd_patch" in w.value for w in c.words)]
    assert [c.span.line for c in patched] == [32, 33, 34, 35, 37]
    assert branch.comes_before(CHECKOUT, INSTALL)
    install = branch.first(INSTALL)
    assert install is not None and install.span.line == 40


SEED_REPOSITORY = FIXTURES / "seed" / "repository"
SEED_FINDINGS = [
    '.github/workflows/_run-ci-rocm.yml:35:34: CC041 `git apply --check "$GITHUB_WORKSPACE/docker/amd_patch/lat...` '
    "applies `docker/amd_patch/latest/megatron.patch`, which does not exist in the repository",
    '.github/workflows/_run-ci-rocm.yml:36:25: CC041 `git apply "$GITHUB_WORKSPACE/docker/amd_patch/latest/mega...` '
    "applies `docker/amd_patch/latest/megatron.patch`, which does not exist in the repository",
    "docker/Dockerfile.rocm:3:6: CC041 `COPY` source `docker/amd_patch/latest/megatron.patch` does not exist in the "
    "build context (the repository root)",
    "docker/amd_patch/sglv0.5.10/megatron.patch:1:1: CC042 patch `docker/amd_patch/sglv0.5.10/megatron.patch` is "
    "applied by nothing: no workflow, action, Dockerfile, script, Python, Makefile or CMake file names it",
]


def test_the_broken_nightly_rocm_image_is_reported_where_it_breaks(tmp_path: Path) -> None:
    """The deleted patch is still copied by Dockerfile.rocm and applied by the reusable ROCm workflow, and the
    duplicate under sglv0.5.10 is applied by nothing: with no configuration, exactly these findings."""
    result = run_cli("check", copy_repository(SEED_REPOSITORY, tmp_path), "--backends", "none")
    assert (result.code, result.err) == (1, "")
    assert result.headers == SEED_FINDINGS


def test_after_the_fix_only_the_duplicate_left_behind_is_reported(tmp_path: Path) -> None:
    """The fix removed the `COPY`, the `git apply` steps and the patch, and kept the unreferenced copy."""
    root = copy_repository(SEED_REPOSITORY, tmp_path)
    dockerfile = root / "docker" / "Dockerfile.rocm"
    dockerfile.write_text("".join(line for line in dockerfile.read_text().splitlines(True) if "amd_patch" not in line))
    workflow = root / ".github" / "workflows" / "_run-ci-rocm.yml"
    kept = [line for line in workflow.read_text().splitlines(True) if "git apply" not in line and line.strip() != "fi"]
    workflow.write_text("".join(kept) + "          fi\n")
    result = run_cli("check", root, "--backends", "none")
    assert result.headers == SEED_FINDINGS[3:]


def test_the_changed_dockerfile_and_patch_alone_are_judged_as_the_hook_passes_them(tmp_path: Path) -> None:
    root = copy_repository(SEED_REPOSITORY, tmp_path)
    changed = [root / "docker" / "Dockerfile.rocm", root / "docker" / "amd_patch" / "sglv0.5.10" / "megatron.patch"]
    result = run_cli("check", *changed, "--backends", "none", "--skip-unread-files")
    assert (result.code, result.err) == (1, "")
    assert result.headers == SEED_FINDINGS[2:]
    assert result.out.endswith("; 2 files checked.\n")


def test_a_copy_of_the_repository_that_is_no_checkout_has_no_dangling_reference_nor_orphan_patch(
    tmp_path: Path,
) -> None:
    """Without `.git` the folder may be the workflows alone, where the patch a step applies, or what applies a patch,
    may simply be missing: both checks judge only a checkout."""
    root = copy_repository(SEED_REPOSITORY, tmp_path)
    (root / ".git").rmdir()
    result = run_cli("check", root, "--backends", "none")
    assert (result.code, result.headers, result.err) == (0, [], "")
