"""Under `--config-ref`, nothing a pull request adds turns a check off: each attack is a real git repository with a
base commit and a pull-request commit, checked with `--config-ref HEAD^1`.

- an ignore comment the base has, copied next to new code (ci-checks' and zizmor's): trust goes by anchor, the
  key path and the text the comment covers, not by the line's text anywhere in the file;
- a `# shellcheck disable=...` directive added to a `run:` script;
- a `.gitmodules` entry added over a folder that a `uses:` leads into.
"""

from __future__ import annotations

from pathlib import Path

from tests.ci.linter.conftest import run_cli
from tests.ci.linter.hostile import commit_all

WORKFLOW = ".github/workflows/ci.yml"
BASE_REF = ("--config-ref", "HEAD^1")


def _pull_request(tmp_path: Path, base: dict[str, str], change: dict[str, str]) -> Path:
    root = tmp_path / "repository"
    for files, message in ((base, "base"), (change, "pull request")):
        for name, content in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(content)
        commit_all(root, message)
    return root


def _codes(headers: list[str]) -> list[str]:
    return [" ".join(header.split(" ")[:2]) for header in headers]


# --- an ignore comment of the base, copied next to new code ---------------------------------------------------

SELF_HOSTED = """\
on: push
permissions: {}
jobs:
  # ci-checks: ignore-next-line[CC043] the smoke test ends by itself
  smoke:
    runs-on: [self-hosted, linux]
    steps:
      - run: ./smoke.sh
"""
TRAIN = """\
  # ci-checks: ignore-next-line[CC043] the smoke test ends by itself
  train:
    runs-on: [self-hosted, linux]
    steps:
      - run: python train.py
"""


def test_a_ci_checks_ignore_copied_from_the_base_next_to_a_new_job_suppresses_nothing(tmp_path: Path) -> None:
    root = _pull_request(tmp_path, {WORKFLOW: SELF_HOSTED}, {WORKFLOW: SELF_HOSTED + TRAIN})
    assert run_cli("check", root, "--backends", "none", "--select", "CC043").headers == []  # as written
    result = run_cli("check", root, "--backends", "none", "--select", "CC043,CC092", *BASE_REF)
    # The base's own comment still covers the base's job; the copy covers nothing.
    assert _codes(result.headers) == [f"{WORKFLOW}:9:3: CC092", f"{WORKFLOW}:10:3: CC043"]
    assert "is not in HEAD^1 on the same key and text" in result.headers[0]


STEP_IGNORED = """\
on: push
permissions: {}
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - name: Report  # ci-checks: ignore[CC031] reviewed
        run: echo "::set-output name=version::1"
"""


def test_a_ci_checks_ignore_over_a_step_the_change_edits_suppresses_nothing(tmp_path: Path) -> None:
    # The comment's line is the base's; the step it covers is not.
    change = STEP_IGNORED.replace("::set-output name=version::1", "::set-env name=LD_PRELOAD::/tmp/x.so")
    root = _pull_request(tmp_path, {WORKFLOW: STEP_IGNORED}, {WORKFLOW: change})
    result = run_cli("check", root, "--backends", "none", "--select", "CC031,CC092", *BASE_REF)
    assert _codes(result.headers) == [f"{WORKFLOW}:7:23: CC092", f"{WORKFLOW}:8:14: CC031"]
    # Unchanged, the base's comment is the base's configuration.
    unchanged = _pull_request(tmp_path / "unchanged", {WORKFLOW: STEP_IGNORED}, {"README.md": "a later change\n"})
    assert run_cli("check", unchanged, "--backends", "none", "--select", "CC031,CC092", *BASE_REF).headers == []


INJECTED = """\
on: pull_request
permissions: {}
jobs:
  greet:
    runs-on: ubuntu-latest
    steps:
      - name: Greet
        run: echo "${{ github.event.pull_request.title }}"  # zizmor: ignore[template-injection]
"""
COPIED = """\
      - name: Label
        run: echo "${{ github.event.pull_request.title }}"  # zizmor: ignore[template-injection]
"""


def test_a_zizmor_ignore_copied_from_the_base_into_a_new_step_is_cut(tmp_path: Path) -> None:
    root = _pull_request(tmp_path, {WORKFLOW: INJECTED}, {WORKFLOW: INJECTED + COPIED})
    zizmor = ("--backends", "zizmor", "--profile", "all", "--select", "ZZ-template-injection,CC092")
    assert run_cli("check", root, *zizmor).headers == []  # zizmor honours both as written
    result = run_cli("check", root, *zizmor, *BASE_REF)
    assert _codes(result.headers) == [f"{WORKFLOW}:10:24: ZZ-template-injection", f"{WORKFLOW}:10:61: CC092"]


# --- a shellcheck directive the change adds --------------------------------------------------------------------

UNQUOTED = """\
on: push
permissions: {}
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - name: Build
        run: |
          # shellcheck disable=SC2086
          make $FLAGS
      - name: Test
        run: |
          pytest $ARGS
"""


def test_a_shellcheck_directive_the_change_adds_is_not_read(tmp_path: Path) -> None:
    for directive in ("disable=SC2086", "disable=all"):
        change = UNQUOTED.replace("          pytest", f"          # shellcheck {directive}\n          pytest")
        root = _pull_request(tmp_path / directive, {WORKFLOW: UNQUOTED}, {WORKFLOW: change})
        shellcheck = ("--backends", "shellcheck", "--select", "SC2086,CC092")
        assert run_cli("check", root, *shellcheck).headers == []  # shellcheck honours it as written
        result = run_cli("check", root, *shellcheck, *BASE_REF)
        # The base's directive still covers `make $FLAGS`.
        assert _codes(result.headers) == [f"{WORKFLOW}:13:11: CC092", f"{WORKFLOW}:14:18: SC2086"], directive
        assert "this `shellcheck` directive is not in HEAD^1" in result.headers[0]


def test_a_shellcheck_directive_of_the_base_copied_before_new_code_is_not_read(tmp_path: Path) -> None:
    change = UNQUOTED.replace("          pytest", "          # shellcheck disable=SC2086\n          pytest")
    change = change.replace("      - name: Test\n", "      - name: Build\n")  # the same step name, too
    root = _pull_request(tmp_path, {WORKFLOW: UNQUOTED}, {WORKFLOW: change})
    result = run_cli("check", root, "--backends", "shellcheck", "--select", "SC2086,CC092", *BASE_REF)
    assert _codes(result.headers) == [f"{WORKFLOW}:13:11: CC092", f"{WORKFLOW}:14:18: SC2086"]


# --- a .gitmodules entry the change adds ----------------------------------------------------------------------

USES_VENDOR = """\
on: push
permissions: {}
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: ./vendor/setup
"""


def test_a_gitmodules_entry_the_change_adds_turns_nothing_off(tmp_path: Path) -> None:
    gitmodules = '[submodule "vendor"]\n\tpath = vendor\n\turl = https://example.com/vendor.git\n'
    root = _pull_request(tmp_path, {WORKFLOW: USES_VENDOR}, {".gitmodules": gitmodules})
    assert run_cli("check", root, "--backends", "none", "--select", "CC041").headers == []  # as written
    result = run_cli("check", root, "--backends", "none", "--select", "CC041,CC092", *BASE_REF)
    assert _codes(result.headers) == [f"{WORKFLOW}:8:15: CC041", ".gitmodules:2:2: CC092"]
    assert "`vendor` is no submodule in HEAD^1" in result.headers[1]
    # An entry the base has is the base's: the folder is a submodule's.
    later = _pull_request(tmp_path / "later", {WORKFLOW: USES_VENDOR, ".gitmodules": gitmodules}, {"a": "b\n"})
    assert run_cli("check", later, "--backends", "none", "--select", "CC041,CC092", *BASE_REF).headers == []
