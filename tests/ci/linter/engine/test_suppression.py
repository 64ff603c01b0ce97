"""Inline ignores in every kind of file, on the finding's line or on its step, job or instruction."""

from __future__ import annotations

from tests.ci.linter.conftest import MakeRepo, run_cli

POLICY = """version: 1
rules:
  - id: no-amd-patch
    kind: forbid
    where: {files: ["**/*.yml", "**/Dockerfile*", "**/*.sh", "**/*.py"]}
    forbid:
      - text: amd_patch
"""


def headers(make_repo: MakeRepo, files: dict[str, str], *args: str) -> list[str]:
    root = make_repo({".github/ci-checks.yml": POLICY, **files})
    return run_cli("check", root, "--select", "CC1", *args).headers


WORKFLOW = """on: push
jobs:
  build:  # ci-checks: ignore[CC101] this job still builds the 0.5 image
    runs-on: ubuntu-latest
    steps:
      - run: git apply /tmp/amd_patch/a.patch
  test:
    runs-on: ubuntu-latest
    steps:
      - name: Patch  # ci-checks: ignore[no-amd-patch]
        run: |
          git apply /tmp/amd_patch/b.patch
          git apply /tmp/amd_patch/c.patch
      - run: |
          git apply /tmp/amd_patch/d.patch  # ci-checks: ignore[no-amd-patch] reason
          git apply /tmp/amd_patch/e.patch
"""


def test_ignores_on_the_job_the_step_and_the_line_of_a_workflow(make_repo: MakeRepo) -> None:
    assert headers(make_repo, {".github/workflows/ci.yml": WORKFLOW}) == [
        ".github/workflows/ci.yml:16:26: CC101 'amd_patch' is forbidden here [no-amd-patch]"
    ]


def test_an_ignore_for_another_rule_suppresses_nothing(make_repo: MakeRepo) -> None:
    text = "jobs: {}\n# amd_patch  # ci-checks: ignore[CC031]\n"
    assert len(headers(make_repo, {".github/workflows/x.yml": text})) == 1


def test_dockerfile_ignores_cover_the_whole_instruction(make_repo: MakeRepo) -> None:
    dockerfile = (
        "FROM base\n"
        "# ci-checks: ignore[no-amd-patch] on its own line covers nothing below it\n"
        "COPY amd_patch /tmp/\n"
        "RUN cd /x && \\\n"
        "    git apply /tmp/amd_patch  # ci-checks: ignore[no-amd-patch]\n"
        "RUN echo amd_patch \\\n"
        "    done\n"
    )
    dockerfile = dockerfile.replace("RUN cd /x && \\\n", "RUN cd /x && \\\n")
    assert headers(make_repo, {"docker/Dockerfile": dockerfile}) == [
        "docker/Dockerfile:3:6: CC101 'amd_patch' is forbidden here [no-amd-patch]",
        "docker/Dockerfile:6:10: CC101 'amd_patch' is forbidden here [no-amd-patch]",
    ]
    continued = dockerfile.replace("RUN echo amd_patch \\\n", "RUN echo amd_patch \\  # ci-checks: ignore[CC101]\n")
    assert "docker/Dockerfile:6:10" not in " ".join(headers(make_repo, {"docker/Dockerfile": continued}))


def test_shell_script_and_python_comments(make_repo: MakeRepo) -> None:
    files = {
        "scripts/build.sh": "git apply amd_patch.diff  # ci-checks: ignore[no-amd-patch]\necho amd_patch\n",
        "tools/patch.py": (
            'PATCH = "amd_patch"  # ci-checks: ignore[no-amd-patch]\n'
            'NOTE = "a # ci-checks: ignore[no-amd-patch] amd_patch"  # a `#` in a string is text\n'
        ),
    }
    assert headers(make_repo, files) == [
        "scripts/build.sh:2:6: CC101 'amd_patch' is forbidden here [no-amd-patch]",
        "tools/patch.py:2:45: CC101 'amd_patch' is forbidden here [no-amd-patch]",
    ]


def test_unused_ignores_are_reported_only_when_asked(make_repo: MakeRepo) -> None:
    files = {"tools/patch.py": 'PATCH = "x"  # ci-checks: ignore[no-amd-patch]\n'}
    assert headers(make_repo, files) == []
    assert headers(make_repo, files, "--report-unused-ignores") == [
        "tools/patch.py:1:34: CC105 ignore[no-amd-patch] suppresses nothing here"
    ]


def test_an_ignore_inside_a_quoted_yaml_string_is_text(make_repo: MakeRepo) -> None:
    workflow = (
        "on: push\n"
        "jobs:\n"
        "  build:\n"
        "    runs-on: ubuntu-latest\n"
        "    steps:\n"
        '      - run: "git apply amd_patch # ci-checks: ignore[no-amd-patch]"\n'
        "      - run: 'git apply amd_patch # ci-checks: ignore[no-amd-patch]'\n"
        "      - run: git apply amd_patch # ci-checks: ignore[no-amd-patch]\n"
        '      - run: "git apply amd_patch" # ci-checks: ignore[no-amd-patch]\n'
        "      - run: |\n"
        "          git apply amd_patch # ci-checks: ignore[no-amd-patch] a comment of the script\n"
        '      - run: "echo \\"a # ci-checks: ignore[no-amd-patch]\\" amd_patch"\n'
    )
    assert headers(make_repo, {".github/workflows/ci.yml": workflow}) == [
        ".github/workflows/ci.yml:6:25: CC101 'amd_patch' is forbidden here [no-amd-patch]",
        ".github/workflows/ci.yml:7:25: CC101 'amd_patch' is forbidden here [no-amd-patch]",
        ".github/workflows/ci.yml:12:60: CC101 'amd_patch' is forbidden here [no-amd-patch]",
    ]


def test_an_ignore_next_line_comment_covers_the_next_line_that_is_code(make_repo: MakeRepo) -> None:
    """Docker reads a trailing `#` in an instruction as an argument: the own-line form is the one it accepts."""
    policy = (
        "rules:\n  - id: no-amd-patch\n    kind: forbid\n    where: {files: 'docker/Dockerfile*'}\n"
        "    forbid: [{text: amd_patch}]\n"
    )
    dockerfile = (
        "FROM rocm/pytorch\n"
        "# ci-checks: ignore-next-line[no-amd-patch] the 0.5 image still needs it\n"
        "\n"
        "# (kept until the 0.5 branch is retired)\n"
        "COPY docker/amd_patch/megatron.patch /tmp/amd_patch/megatron.patch\n"
        "RUN git apply /tmp/amd_patch/megatron.patch\n"
    )
    patch = "docker/amd_patch/megatron.patch"
    root = make_repo({".github/ci-checks.yml": policy, "docker/Dockerfile.rocm": dockerfile, patch: "diff\n"})
    result = run_cli("check", root, "--report-unused-ignores")
    assert [h.split(": CC101")[0] for h in result.headers] == ["docker/Dockerfile.rocm:6:20"]
    workflow = (
        "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      # ci-checks: ignore-next-line[duplicate-key]\n"
        "      - name: a\n        env: {A: 1, A: 2}\n        run: echo ok\n"
    )
    (root / "docker" / "Dockerfile.rocm").unlink()
    (root / patch).unlink()
    (root / ".github" / "ci-checks.yml").unlink()
    root = make_repo({".github/workflows/ci.yml": workflow})
    assert run_cli("check", root, "--report-unused-ignores").headers == []


def test_an_ignore_next_line_comment_covers_the_line_right_below_it_and_no_other(make_repo: MakeRepo) -> None:
    dockerfile = (
        "FROM base\n"
        "# ci-checks: ignore-next-line[no-amd-patch]\n"
        "COPY amd_patch /tmp/\n"
        "RUN echo amd_patch\n"
        "# ci-checks: ignore-next-line[no-amd-patch] the last line of the file\n"
        "RUN echo amd_patch\n"
    )
    assert headers(make_repo, {"docker/Dockerfile": dockerfile}) == [
        "docker/Dockerfile:4:10: CC101 'amd_patch' is forbidden here [no-amd-patch]"
    ]


def test_an_ignore_on_the_first_line_covers_the_last_line_of_a_step_and_of_an_instruction(make_repo: MakeRepo) -> None:
    workflow = (
        "on: push\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - name: Patch  # ci-checks: ignore[no-amd-patch]\n"
        "        run: git apply /tmp/amd_patch/b.patch\n"
    )
    dockerfile = "FROM base\n# ci-checks: ignore-next-line[CC101]\nRUN echo start \\\n    amd_patch\n"
    assert headers(make_repo, {".github/workflows/ci.yml": workflow, "docker/Dockerfile": dockerfile}) == []


def test_a_linter_failure_is_never_suppressed(make_repo: MakeRepo) -> None:
    workflow = "on: push  # ci-checks: ignore[CC091, zizmor]\njobs:\n  t:\n    runs-on: ubuntu-latest\n"
    result = run_cli(
        "check", make_repo({".github/workflows/ci.yml": workflow}), "--backends", "zizmor", "--backend-timeout", "0.001"
    )
    assert [header.split(" ", 2)[:2] for header in result.headers] == [[".github/workflows/ci.yml:1:1:", "CC091"]]


def test_codes_are_matched_in_any_case_and_a_linters_code_is_a_name_not_a_misspelling(make_repo: MakeRepo) -> None:
    workflow = (
        "on: push\n"
        "env:\n"
        "  A: 1\n"
        "  A: 2  # ci-checks: ignore[cc011]\n"
        "jobs:  # ci-checks: ignore[cc031, SC2086, nonsense]\n"
        "  t:\n"
        "    runs-on: ubuntu-latest\n"
    )
    result = run_cli("check", make_repo({".github/workflows/ci.yml": workflow}), "--report-unused-ignores")
    assert result.headers == [
        ".github/workflows/ci.yml:5:28: CC105 ignore[cc031] suppresses nothing here",
        ".github/workflows/ci.yml:5:35: CC105 ignore[SC2086] suppresses nothing here",
        ".github/workflows/ci.yml:5:43: CC105 ignore[nonsense] names no rule code, rule name or policy rule id",
    ]
