"""CC042 orphan-patch: which patches of a small checkout something refers to, and which it reports as orphans."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_checks.core.own_output import written_by_ci_checks
from tests.ci.linter.conftest import MakeRepo, run_cli

PATCH = "diff --git a/x b/x\n"


def _workflow(run: str) -> dict[str, str]:
    """A workflow whose one step runs `run`."""
    job = f"  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: {run}\n"
    return {".github/workflows/ci.yml": f"on: push\njobs:\n{job}"}


def _python(root: str, *lines: str) -> str:
    """A Python file that sets `ROOT` to `root` (a path built from `__file__`), then says these lines."""
    return f"from pathlib import Path\nROOT = {root}\n" + "".join(line + "\n" for line in lines)


def _orphans(make_repo: MakeRepo, files: dict[str, str]) -> list[str]:
    """The patches CC042 reports in a checkout of these files (and a workflow that names no patch), in order."""
    root = make_repo({**_workflow("make"), **files})
    result = run_cli("check", root, "--select", "CC042", "--backends", "none", "--output-format", "concise")
    assert result.err == ""
    reported = [header.split(":", 1)[0] for header in result.headers]
    assert result.code == (1 if reported else 0)
    return reported


def test_a_python_glob_anchored_in_a_real_folder_names_the_patches_it_matches(make_repo: MakeRepo) -> None:
    """`(ROOT / "patches").glob("*.patch")` names the patches in `patches/`, not a `.diff` there nor one deeper."""
    tool = _python("Path(__file__).resolve().parents[1]", 'FOUND = (ROOT / "patches").glob("*.patch")')
    files = {"tools/apply.py": tool, "patches/a.patch": PATCH, "patches/b.diff": PATCH, "patches/old/c.patch": PATCH}
    assert _orphans(make_repo, files) == ["patches/b.diff", "patches/old/c.patch"]


def test_a_python_glob_of_everything_in_a_folder_names_no_patch(make_repo: MakeRepo) -> None:
    """A last segment of `*` or `**` lists whatever the folder holds, and a glob in the repository root or in a
    folder that does not exist names nothing: the patches stay orphans."""
    tool = _python(
        "Path(__file__).parent",
        'EVERYTHING = [(ROOT / "docker" / "patches").glob("*"), (ROOT / "contrib").glob("**")]',
        'ELSEWHERE = [ROOT.glob("*.patch"), (ROOT / "missing").glob("*.patch")]',
    )
    files = {"setup_tools.py": tool, "docker/patches/a.patch": PATCH, "contrib/b.patch": PATCH, "c.patch": PATCH}
    assert _orphans(make_repo, files) == ["c.patch", "contrib/b.patch", "docker/patches/a.patch"]


def test_a_python_glob_without_a_wildcard_names_the_one_path_it_spells(make_repo: MakeRepo) -> None:
    """`(ROOT / "patches").glob("fix.patch")` yields `patches/fix.patch` alone (it stopped orphan-patch with an
    internal error); `ROOT.glob("")` raises, naming no patch in the root."""
    tool = _python("Path(__file__).parent", 'FIXES = [(ROOT / "patches").glob("fix.patch"), ROOT.glob("")]')
    files = {"apply.py": tool, "patches/fix.patch": PATCH, "patches/other.patch": PATCH, "root.patch": PATCH}
    assert _orphans(make_repo, files) == ["patches/other.patch", "root.patch"]


def test_a_python_path_to_a_folder_names_the_patches_directly_in_it(make_repo: MakeRepo) -> None:
    """`ROOT / "patches"` names the patches in `patches/` even where the file never says `.patch`: not a `patches/`
    folder elsewhere, nor the patches in a folder below it (the retired ones)."""
    tool = (
        "from pathlib import Path\n"
        'PATCHES = Path(__file__).resolve().parents[1] / "patches"  # not the retired ones\n'
        "def names():\n"
        "    return sorted(path.name for path in PATCHES.iterdir())\n"
    )
    files = {
        "tools/apply.py": tool,
        "patches/a.patch": PATCH,
        "patches/retired/b.patch": PATCH,
        "contrib/patches/c.patch": PATCH,
    }
    assert _orphans(make_repo, files) == ["contrib/patches/c.patch", "patches/retired/b.patch"]


def test_python_that_names_a_patch_beside_it_is_read_without_naming_the_folder(make_repo: MakeRepo) -> None:
    """A Python file that says `.patch` (or `.diff`) is read even when no folder that holds patches is named in it."""
    files = {
        "hotfixes/apply_patch.py": 'from pathlib import Path\nFIX = Path(__file__).parent / "fix.patch"\n',
        "hotfixes/apply_diff.py": 'from pathlib import Path\nFIX = Path(__file__).parent / "fix.diff"\n',
        "hotfixes/fix.patch": PATCH,
        "hotfixes/fix.diff": PATCH,
        "hotfixes/unused.patch": PATCH,
    }
    assert _orphans(make_repo, files) == ["hotfixes/unused.patch"]


def test_a_python_glob_of_everything_in_a_folder_of_unknown_place_names_no_patch(make_repo: MakeRepo) -> None:
    """`glob.glob("docker/patches/*")` lists whatever the folder holds; `glob.glob("ci/patches/*.patch")` names the
    patches that match its end."""
    tool = 'import glob\nALL = glob.glob("docker/patches/*")\nPATCHES = glob.glob("ci/patches/*.patch")\n'
    files = {"tools/list.py": tool, "docker/patches/a.patch": PATCH, "ci/patches/b.patch": PATCH}
    assert _orphans(make_repo, files) == ["docker/patches/a.patch"]


def test_a_bare_name_or_glob_in_a_makefile_names_the_patches_in_its_own_folder(make_repo: MakeRepo) -> None:
    """`*.patch` and `fix.diff` in `deps/Makefile` name `deps/*.patch` and `deps/fix.diff`: not a patch in the root,
    a folder below, nor another `fix.diff`."""
    makefile = "apply:\n\tfor p in *.patch; do patch -p1 < $$p; done\n\tpatch -p1 < fix.diff\n"
    files = {
        "deps/Makefile": makefile,
        "deps/a.patch": PATCH,
        "deps/sub/b.patch": PATCH,
        "deps/fix.diff": PATCH,
        "legacy/fix.diff": PATCH,
        "c.patch": PATCH,
    }
    assert _orphans(make_repo, files) == ["c.patch", "deps/sub/b.patch", "legacy/fix.diff"]


def test_a_bare_name_no_folder_holds_names_every_patch_of_that_name_unless_one_is_named_precisely(
    make_repo: MakeRepo,
) -> None:
    makefile = "PATCH := megatron.patch\nFIX := fix.patch\nFIXED := nv/fix.patch\n"
    files = {
        "make/rules.mk": makefile,
        "docker/amd/megatron.patch": PATCH,
        "docker/nv/megatron.patch": PATCH,
        "docker/amd/fix.patch": PATCH,
        "docker/nv/fix.patch": PATCH,
    }
    assert _orphans(make_repo, files) == ["docker/amd/fix.patch"]


def test_a_makefile_path_compares_after_its_last_variable_dot_dot_or_leading_slash(make_repo: MakeRepo) -> None:
    """`$(TOP)/docker/amd/megatron.patch` names the patch whose path ends so, `../shared/common.patch` the one whose
    path ends `shared/common.patch`, `./patches` the folder beside the Makefile, and `$(TOP)/deps/extra/numactl` the
    folder whose path ends so."""
    makefile = (
        "TOP := $(CURDIR)/..\n"
        "PATCH_DIR = ./patches\n"
        "NUMA_PATCHES = $(TOP)/deps/extra/numactl\n"
        "apply:\n"
        "\tpatch -p1 < $(TOP)/docker/amd/megatron.patch\n"
        "\tpatch -p1 < ../shared/common.patch\n"
    )
    files = {
        "native/Makefile": makefile,
        "native/patches/a.patch": PATCH,
        "deps/extra/numactl/fix.patch": PATCH,
        "docker/amd/megatron.patch": PATCH,
        "docker/nv/megatron.patch": PATCH,
        "shared/common.patch": PATCH,
    }
    assert _orphans(make_repo, files) == ["docker/nv/megatron.patch"]


def test_a_text_mention_that_is_no_valid_glob_names_no_patch_and_stops_nothing(make_repo: MakeRepo) -> None:
    """`deps/fix**.patch` (a `**` inside a segment) is no glob ci-checks can match: it names no patch, and the
    patch `deps/*.diff` names is still told from the orphan."""
    makefile = "apply:\n\tpatch -p1 < deps/fix**.patch\n\tpatch -p1 < deps/*.diff\n"
    files = {"Makefile": makefile, "deps/fix1.patch": PATCH, "deps/fix2.diff": PATCH}
    assert _orphans(make_repo, files) == ["deps/fix1.patch"]


def test_a_dockerfile_copy_glob_names_the_patches_it_matches_and_those_in_folders_it_matches(
    make_repo: MakeRepo,
) -> None:
    """`COPY contrib/* /opt/contrib/` copies the folders in `contrib/` whole, and `COPY extra* /opt/` the folder
    `extras/`; `COPY patches/*.patch` copies no folder below `patches/`."""
    dockerfile = (
        "FROM ubuntu:24.04\nCOPY patches/*.patch /tmp/patches/\nCOPY contrib/* /opt/contrib/\nCOPY extra* /opt/\n"
    )
    files = {
        "Dockerfile": dockerfile,
        "patches/a.patch": PATCH,
        "patches/old/b.patch": PATCH,
        "contrib/lib/c.patch": PATCH,
        "extras/deep/d.patch": PATCH,
    }
    assert _orphans(make_repo, files) == ["patches/old/b.patch"]


def test_a_package_json_that_uses_patch_package_names_its_patches_folder(make_repo: MakeRepo) -> None:
    """patch-package applies `patches/` beside the `package.json` that runs it, whatever that folder is called;
    a `package.json` without it applies nothing."""
    uses = '{"scripts": {"postinstall": "patch-package"}}\n'
    files = {
        "web/package.json": uses,
        "web/patches/a.patch": PATCH,
        "web/legacy/b.patch": PATCH,
        "api/package.json": '{"name": "api", "version": "1.0.0"}\n',
        "api/patches/c.patch": PATCH,
        "site[v2]/package.json": uses,
        "site[v2]/patches/d.patch": PATCH,
    }
    assert _orphans(make_repo, files) == ["api/patches/c.patch", "web/legacy/b.patch"]


def test_a_patch_a_step_reads_from_outside_the_repository_is_no_mention_of_one_inside(make_repo: MakeRepo) -> None:
    """`cd /tmp && git apply fix.patch` applies `/tmp/fix.patch`: the word is followed through the file model,
    and not read again as a bare name that would name `patches/fix.patch`."""
    files = {**_workflow("cd /tmp && git apply fix.patch"), "patches/fix.patch": PATCH}
    assert _orphans(make_repo, files) == ["patches/fix.patch"]


def test_a_patch_fed_to_patch_after_cd_elsewhere_is_read_there(make_repo: MakeRepo) -> None:
    """`cd /tmp && patch -p1 < fix.patch` reads `/tmp/fix.patch`, as `git apply` after the same `cd` does."""
    files = {**_workflow("cd /tmp && patch -p1 < fix.patch"), "patches/fix.patch": PATCH}
    assert _orphans(make_repo, files) == ["patches/fix.patch"]
    files = {**_steps("run: cd patches && patch -p1 < fix.patch"), "patches/fix.patch": PATCH}
    assert _orphans(make_repo, files) == []


def _steps(*steps: str) -> dict[str, str]:
    """A workflow whose job has these steps (`uses: ...` or a `run:` script), after a checkout of the repository."""
    written = "".join(f"      - {step}\n" for step in ("uses: actions/checkout@v4", *steps))
    return {".github/workflows/ci.yml": f"on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n{written}"}


def test_what_a_step_applies_or_copies_is_followed_past_an_action_that_may_write_anything(make_repo: MakeRepo) -> None:
    """After an action ci-checks does not know, `patches/a.patch` is still the checkout's; `cp -r docker/patches`
    copies the folder whole, the patches below it too."""
    steps = _steps("uses: acme/prepare@v1", "run: git apply patches/a.patch && cp -r docker/patches /tmp/")
    files = {**steps, "patches/a.patch": PATCH, "patches/b.patch": PATCH, "docker/patches/old/c.patch": PATCH}
    assert _orphans(make_repo, files) == ["patches/b.patch"]


def test_a_step_that_applies_a_folder_applies_no_patch_in_it(make_repo: MakeRepo) -> None:
    """`git apply patches` is refused by git: a folder read as a patch names none of the patches in it."""
    assert _orphans(make_repo, {**_steps("run: git apply patches"), "patches/a.patch": PATCH}) == ["patches/a.patch"]


def test_a_dockerfile_copies_from_each_context_it_is_built_with(make_repo: MakeRepo) -> None:
    """`docker/Dockerfile.base` is built from a context nothing says; `docker/Dockerfile.rocm`, which no job builds,
    is read with the root and its own folder as context: `COPY patches /opt/patches` copies `docker/patches` whole."""
    steps = _steps('run: docker build -f docker/Dockerfile.base "$CONTEXT"')
    files = {
        **steps,
        "docker/Dockerfile.base": "FROM ubuntu:24.04\n",
        "docker/Dockerfile.rocm": "FROM ubuntu:24.04\nCOPY patches /opt/patches\nCOPY fix.patch /opt/\n",
        "docker/patches/old/a.patch": PATCH,
        "docker/fix.patch": PATCH,
        "docker/unused.patch": PATCH,
    }
    assert _orphans(make_repo, files) == ["docker/unused.patch"]


def test_a_document_that_tells_a_person_to_apply_a_patch_refers_to_it(make_repo: MakeRepo) -> None:
    """A command in a fenced or indented block, in inline code, in a reStructuredText literal block or on a line of
    plain text applies the patches it names (`git apply`, `git -C dir am`, `patch -p1 <`, `$ ` prompt and
    continued lines too); a name in prose, or in code that applies nothing, documents a patch and applies none."""
    readme = """# Building against the vendored kernels

Before building, apply the fixes:

```bash
$ git apply patches/fused-adam.patch
git -C third_party/flash am \\
    ../../patches/flash/0001-cuda-12.patch
ls patches/unused
```

Or, for the ROCm build, `patch -p1 < patches/rocm/hipify.diff`.

    cat patches/old/gcc.patch | patch -p1

`patches/retired.patch` was upstreamed in 2.4; see also patches/notes.patch.
"""
    install = """Building
========

.. code-block:: console

   git am contrib/series/0002-nccl.patch

``git apply contrib/inline.patch`` works as well; contrib/prose.patch is kept for reference.
"""
    files = {
        "README.md": readme,
        "docs/install.rst": install,
        "INSTALL.txt": "To build:\n  git apply deps/plain.patch\nthen make.\nThe deps/told.patch is old.\n",
        "patches/fused-adam.patch": PATCH,
        "patches/flash/0001-cuda-12.patch": PATCH,
        "patches/rocm/hipify.diff": PATCH,
        "patches/old/gcc.patch": PATCH,
        "patches/unused/x.patch": PATCH,
        "patches/retired.patch": PATCH,
        "patches/notes.patch": PATCH,
        "contrib/series/0002-nccl.patch": PATCH,
        "contrib/inline.patch": PATCH,
        "contrib/prose.patch": PATCH,
        "deps/plain.patch": PATCH,
        "deps/told.patch": PATCH,
    }
    assert _orphans(make_repo, files) == [
        "contrib/prose.patch",
        "deps/told.patch",
        "patches/notes.patch",
        "patches/retired.patch",
        "patches/unused/x.patch",
    ]


def test_a_markdown_fence_ends_only_with_its_own_kind_and_a_command_outside_code_applies_nothing(
    make_repo: MakeRepo,
) -> None:
    """A `~~~` inside a ``` block is code, not its end; after the block ends, an unindented `git apply` in prose is
    a sentence about the patch, not a command shown as one."""
    readme = "```\n~~~\ngit apply a.patch\n```\nThen git apply b.patch as well.\n"
    files = {"README.md": readme, "a.patch": PATCH, "b.patch": PATCH}
    assert _orphans(make_repo, files) == ["b.patch"]


def _ci_checks(root: Path, *args: str) -> tuple[int, str, str]:
    result = run_cli(*args, "--select", "CC042", "--backends", "none", "--no-cache", root)
    return result.code, result.out, result.err


def test_a_baseline_of_orphan_patches_accepts_them_check_after_check(
    make_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The baseline lists the orphans' paths; it is no mention of them, so the next check finds the same orphans
    and the baseline accepts them, and writing it again changes nothing."""
    root = make_repo({**_workflow("make"), "patches/a.patch": PATCH, "patches/b.diff": PATCH})
    monkeypatch.chdir(root)
    baseline = ".github/ci-checks-baseline.json"
    wrote = _ci_checks(root, "baseline", "write", baseline)
    assert wrote == (0, f"Wrote 2 findings to {baseline}; `check --baseline {baseline}` accepts them.\n", "")
    written = (root / baseline).read_text()
    for _ in range(2):
        code, out, err = _ci_checks(root, "check", "--baseline", baseline)
        assert (code, out, err) == (
            0,
            "No problems found; 3 files checked.\n",
            f"ci-checks: {baseline} accepted 2 findings\n",
        )
        assert _ci_checks(root, "baseline", "write", baseline) == wrote
        assert (root / baseline).read_text() == written


def test_a_report_ci_checks_wrote_into_the_repository_is_no_mention(make_repo: MakeRepo) -> None:
    """Reports of an earlier run, kept in the checkout in every format, are told by their content; a file the run is
    told to write is skipped by its path, whatever it holds before it is written."""
    root = make_repo({**_workflow("make"), "patches/a.patch": PATCH, "patches/b.patch": PATCH})
    reports = {
        "json": "ci.json",
        "sarif": "ci.sarif.json",
        "junit": "ci.xml",
        "markdown": "ci.md",
        "text": "ci.txt",
        "concise": "ci-concise.txt",
        "github": "ci-github.txt",
    }
    outputs = [f"--output={name}={root / 'reports' / file}" for name, file in reports.items()]
    (root / "reports").mkdir()
    first = _ci_checks(root, "check", *outputs)
    again = _ci_checks(root, "check")
    assert first[0] == again[0] == 1 and first[1] == again[1].replace("9 files", "2 files")
    for file in reports.values():
        assert written_by_ci_checks((root / "reports" / file).read_text()), file
    (root / "reports" / "next.txt").write_text("git apply patches/a.patch\n")
    assert "patches/a.patch" not in _ci_checks(root, "check")[1]
    assert "patches/a.patch" in _ci_checks(root, "check", f"--output=concise={root / 'reports' / 'next.txt'}")[1]


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "web", "version": "1.0.0", "scripts": {"postinstall": "patch-package"}}',
        '{"version": 1, "findings": [{"path": "a.patch"}]}',
        '{"version": 1, "diagnostics": [{"path": "a.patch", "code": "X"}]}',
        '{"runs": [{"tool": {"driver": {"name": "other"}}}]}',
        '{"runs": [{"tool": 5}]}',
        '{"runs": []}',
        '{"version": 1, "findings": [',
        "[1, 2]",
        "",
        "# Patches\n\nApply with `git apply patches/a.patch`.\n",
        "Found the bug in patches/a.patch; 2 files checked.\n",
        '<?xml version="1.0"?>\n<testsuites name="pytest">\n',
    ],
)
def test_a_file_shaped_otherwise_is_not_taken_for_one_ci_checks_wrote(text: str) -> None:
    assert not written_by_ci_checks(text)
