"""A pull request writes every file of the checked repository: each attack here is built for real.

Real symbolic links, FIFOs and git repositories, the real linters, the CLI in
a subprocess where streams and signals are what is tested, and real pytest
(pytester, in a subprocess where imports are what is tested). Secrets are
files outside the repository that nothing may quote.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ci_checks.backends import tools
from tests.ci.conftest import PROJECT
from tests.ci.linter.conftest import MakeRepo, run_cli
from tests.ci.linter.stopping import HANG, HeldLinter

WORKFLOW = ".github/workflows/ci.yml"
SECRET = 'token = "https://user:ghp_0123456789abcdefSECRET@github.com"\n'
INJECTION = """\
on: pull_request
permissions: {}
jobs:
  greet:
    runs-on: ubuntu-latest
    steps:
      - run: echo "${{ github.event.pull_request.title }}"
"""
CLEAN = """\
on: push
permissions: {}
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - run: echo build
"""


def _outside(tmp_path: Path, name: str, content: str) -> Path:
    target = tmp_path / "outside" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content, encoding="utf-8")
    return target


def _every_format(root: Path, *options: str) -> dict[str, str]:
    """The output of every format for one repository, from one run (`--output FORMAT=FILE`), and standard error."""
    reports = {name: root.parent / f"report.{name}" for name in ("json", "sarif", "github", "junit", "markdown")}
    result = run_cli("check", root, *(f"--output={name}={path}" for name, path in reports.items()), *options)
    assert "Traceback" not in result.err and "internal error" not in result.err, result.err
    outputs = {name: path.read_text(encoding="utf-8") for name, path in reports.items()}
    return {"text": result.out, **outputs, "stderr": result.err}


def _cli(*arguments: str | Path, **options: object) -> subprocess.CompletedProcess[str]:
    """ci-checks as its own process, the way CI runs it."""
    command = [sys.executable, "-m", "ci_checks.cli", *map(str, arguments)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False, **options)  # type: ignore[call-overload, no-any-return]


# --- 1. leaks through linter configurations and linter errors -----------------------------------------------


@pytest.mark.parametrize("name", [".github/zizmor.yml", "zizmor.yml", ".github/actionlint.yaml"])
def test_a_linter_configuration_linked_outside_is_never_read(make_repo: MakeRepo, tmp_path: Path, name: str) -> None:
    root = make_repo({WORKFLOW: INJECTION})
    secret = _outside(tmp_path, "secret.toml", "root:x:0:0:root:/root:/bin/bash\n" + SECRET)
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    (root / name).symlink_to(secret)
    outputs = _every_format(root, "--backends", "actionlint,zizmor")
    for output in outputs.values():
        assert "ghp_" not in output and "root:x" not in output
    findings = json.loads(run_cli("check", root, "--output-format", "json", "--backends", "actionlint,zizmor").out)[
        "diagnostics"
    ]
    linter = "zizmor" if "zizmor" in name else "actionlint"
    assert {
        "code": "CC004",
        "path": name,
        "line": 1,
        "column": 1,
        "message": "symbolic link points outside the repository; configuration is read only from regular files, "
        f"not through links; {linter} ran without it",
    }.items() <= next(d for d in findings if d["path"] == name).items()
    # The linter still ran, without the configuration.
    assert any(d["code"].startswith("ZZ-" if linter == "zizmor" else "AL-") for d in findings)


def test_a_linter_error_quotes_nothing_it_read(make_repo: MakeRepo) -> None:
    # A regular configuration inside the repository, which zizmor rejects, quoting the value it could not use.
    root = make_repo({WORKFLOW: INJECTION, ".github/zizmor.yml": f"rules: {json.dumps(SECRET)}\n"})
    outputs = _every_format(root, "--backends", "zizmor")
    assert all("ghp_" not in output for output in outputs.values())
    assert (
        'CC092 zizmor cannot use this configuration (rules: invalid type: string "…", expected a map)'
        in (outputs["text"])
    )


def test_a_summary_of_a_linter_error_is_one_bounded_line_without_quotes() -> None:
    stderr = (
        b"error: configuration error in /scratch/repository/.github/workflows/ci.yml\n"
        b"Caused by:\n    0: invalid configuration syntax\n"
        b'    1: invalid type: string "' + SECRET.strip().encode() * 40 + b'", expected struct RawConfig\n'
        b"  |\n3 | token = secret\n  | ^^^^^\n"
    )
    summary = tools.tail(stderr, Path("/scratch/repository"))
    assert summary == 'invalid type: string "…", expected struct RawConfig'
    assert len(tools.tail(b"x" * 5000)) <= 200


# --- 2. local actions outside the repository ----------------------------------------------------------------

OUTSIDE_ACTION = """\
name: outside
description: an action outside the repository
inputs:
  secret_input_name: {required: true}
runs: {using: composite, steps: []}
"""


def test_a_local_action_outside_the_repository_is_an_error_and_no_linter_reads_it(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    outside = _outside(tmp_path, "action/action.yml", OUTSIDE_ACTION).parent
    steps = (
        "      - uses: actions/checkout@v4\n      - uses: ./../outside/action\n      - uses: ./.github/actions/linked\n"
    )
    root = make_repo({WORKFLOW: CLEAN.replace("      - run: echo build\n", steps)})
    (root / ".github" / "actions").mkdir()
    (root / ".github" / "actions" / "linked").symlink_to(outside)
    # actionlint used to read the action outside and name its inputs; the copy it reads now names nothing there.
    outputs = _every_format(root, "--backends", "all")
    assert all("secret_input_name" not in output and str(tmp_path) not in output for output in outputs.values())
    headers = run_cli("check", root, "--backends", "all").headers
    assert [h for h in headers if " CC041 " in h] == [
        f"{WORKFLOW}:8:15: CC041 `uses: ./../outside/action` leads outside the repository; it is not followed",
        f"{WORKFLOW}:9:15: CC041 `uses: ./.github/actions/linked` leads outside the repository; it is not followed",
    ]


# --- 3. configuration from outside the repository, and a plugin that followed it ----------------------------


@pytest.mark.parametrize("name", [".github/ci-checks.yml", "pyproject.toml"])
def test_a_configuration_linked_outside_is_a_positioned_error(make_repo: MakeRepo, tmp_path: Path, name: str) -> None:
    text = "[tool.ci-checks]\nsecret_key = 1\n" if name.endswith(".toml") else "secret_key: 1\n"
    root = make_repo({WORKFLOW: CLEAN})
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    (root / name).symlink_to(_outside(tmp_path, "settings", text))
    result = run_cli("check", root)
    assert (result.code, result.out) == (2, "")
    assert result.err == (
        f"{name}:1:1: error: symbolic link points outside the repository; configuration is read only from "
        "regular files, not through links\n"
    )


POLICY = """\
version: 1
rules:
  - id: no-make
    kind: forbid
    where: {files: [".github/workflows/*.yml"]}
    forbid:
      - command: make
"""


def test_the_plugin_never_takes_the_folder_a_linked_policy_leads_to_as_the_repository(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / ".github" / "workflows").mkdir(parents=True)
    (elsewhere / ".github" / "ci-checks.yml").write_text(POLICY)
    (elsewhere / ".github" / "workflows" / "ci.yml").write_text(CLEAN)
    (pytester.path / ".github").mkdir()
    (pytester.path / ".github" / "ci-checks.yml").symlink_to(elsewhere / ".github" / "ci-checks.yml")
    result = pytester.runpytest("--ci-checks")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*.github/ci-checks.yml:1:1: symbolic link points outside the repository*"])
    assert "no-make" not in result.stdout.str()


# --- 4. the plugin runs nothing of the repository's ----------------------------------------------------------

SHADOWS = ("yaml", "jsonschema", "tree_sitter", "tree_sitter_bash", "regex", "referencing", "check_jsonschema")


def test_the_plugin_imports_no_module_of_the_checked_repository(pytester: pytest.Pytester) -> None:
    (pytester.path / ".github" / "workflows").mkdir(parents=True)
    (pytester.path / ".github" / "workflows" / "ci.yml").write_text(CLEAN)
    (pytester.path / ".github" / "ci-checks.yml").write_text(POLICY.replace("command: make", "command: cmake"))
    pytester.makepyprojecttoml('[tool.pytest.ini_options]\npythonpath = ["."]\nci_checks = true\n')
    for name in SHADOWS:
        planted = f"import pathlib\npathlib.Path('ran-{name}').write_text('')\nraise SystemExit('planted {name} ran')\n"
        if name == "check_jsonschema":
            (pytester.path / name).mkdir()
            (pytester.path / name / "__init__.py").write_text(planted)
        else:
            (pytester.path / f"{name}.py").write_text(planted)
    pytester.makepyfile(test_uses_the_fixture="def test_it(ci_repo):\n    assert ci_repo.check().diagnostics == []\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    assert sorted(path.name for path in pytester.path.glob("ran-*")) == []


# --- 5. a killed run leaves no copies and no linters --------------------------------------------------------


@pytest.fixture
def held(tmp_path: Path) -> Iterator[HeldLinter]:
    """A shellcheck that waits, once started, until the run that started it kills it (see `stopping.py`)."""
    with HeldLinter(tmp_path / "held") as linter:
        yield linter


def _stoppable(held: HeldLinter, *arguments: str | Path) -> subprocess.Popen[str]:
    """`ci-checks check ARGUMENTS` as its own process, with the linter that waits to be killed."""
    command = [
        sys.executable,
        "-m",
        "ci_checks.cli",
        "check",
        *arguments,
        "--backends",
        "shellcheck",
        "--no-cache",
    ]
    # A process started with SIGINT ignored (a shell's background job, say) passes that on: the run starts with the
    # default, as it does from a terminal or a CI runner.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return subprocess.Popen(
            list(map(str, command)), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=held.environment
        )
    finally:
        signal.signal(signal.SIGINT, previous)


def _copies(*pids: int) -> set[Path]:
    """The scratch folders of these processes (their names hold the pid of the process that made them)."""
    scratch = Path(tools._scratch_parent())
    return {folder for pid in pids for folder in scratch.glob(f"ci-checks-*-{pid}-*")}


def _stop(process: subprocess.Popen[str], stop: int, code: int, folders: set[Path]) -> None:
    """Send the signal; the run must end with its exit code, say why in one line, and leave none of its copies."""
    assert folders, "the scripts shellcheck reads are in scratch folders of the run"
    process.send_signal(stop)
    _, err = process.communicate(timeout=HANG)
    assert process.returncode == code
    assert "Traceback" not in err and err.strip() in ("ci-checks: terminated", "ci-checks: interrupted")
    assert not any(folder.exists() for folder in folders)


@pytest.mark.parametrize(("stop", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_stopped_run_ends_its_linters_and_removes_its_copies(
    make_repo: MakeRepo, held: HeldLinter, stop: int, code: int
) -> None:
    process = _stoppable(held, make_repo({WORKFLOW: CLEAN}))
    linters, _ = held.started(process)
    _stop(process, stop, code, _copies(process.pid))
    assert held.ended(linters)


def test_the_copies_of_a_run_killed_outright_are_removed_by_the_next_run(make_repo: MakeRepo, held: HeldLinter) -> None:
    process = _stoppable(held, make_repo({WORKFLOW: CLEAN}))
    linters, _ = held.started(process)
    folders = _copies(process.pid)
    process.kill()
    process.communicate(timeout=HANG)
    assert folders and all(folder.exists() for folder in folders)
    assert held.running(linters)  # the linter, in a process group of its own, outlives the run: `held` ends it
    assert run_cli("check", make_repo({WORKFLOW: CLEAN}), "--backends", "shellcheck").code == 0
    assert not any(folder.exists() for folder in folders)


# --- 6. a pull request that switches the linters off ---------------------------------------------------------


def test_a_linter_configuration_that_turns_checks_off_says_what_it_turns_off(make_repo: MakeRepo) -> None:
    zizmor_config = "rules:\n  template-injection:\n    disable: true\n  artipacked:\n    remap:\n      severity: low\n"
    actionlint_config = 'paths:\n  ".github/workflows/**/*.yml":\n    ignore: [".*"]\n'
    root = make_repo(
        {WORKFLOW: INJECTION, ".github/zizmor.yml": zizmor_config, ".github/actionlint.yaml": actionlint_config}
    )
    headers = run_cli("check", root, "--backends", "actionlint,zizmor").headers
    assert headers == [
        ".github/actionlint.yaml:3:5: CC092 actionlint's configuration turns checks off: errors matching '.*' "
        "ignored in '.github/workflows/**/*.yml'",
        ".github/zizmor.yml:3:5: CC092 zizmor's configuration turns checks off: audit 'template-injection' "
        "disabled; 'artipacked' severity changed to 'low'",
    ]


# --- 7. the rules of the base branch --------------------------------------------------------------------------


def _git(root: Path, *arguments: str) -> None:
    identity = ["-c", "user.name=ci", "-c", "user.email=ci@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", *identity, *arguments], cwd=root, check=True, capture_output=True)


@pytest.fixture
def pull_request(tmp_path: Path) -> Path:
    """A base commit with a policy and no linter configuration, then a pull request that loosens both."""
    root = tmp_path / "repository"
    (root / ".github" / "workflows").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / WORKFLOW).write_text(INJECTION)
    (root / ".github" / "ci-checks.yml").write_text(POLICY.replace("command: make", "command: echo"))
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    (root / ".github" / "ci-checks.yml").write_text("version: 1\n")
    (root / ".github" / "zizmor.yml").write_text("rules:\n  template-injection:\n    disable: true\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "pull request")
    # The checked repository's own git configuration and hooks are never read: a monitor command and a hook
    # that would leave a mark, then a line no git can read, which fails every git command that reads the file.
    marker = tmp_path / "git-ran-repository-code"
    hook = root / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    _git(root, "config", "core.fsmonitor", str(hook))
    with (root / ".git" / "config").open("a") as config:
        config.write("[[[ not a configuration line\n")
    return root


def test_config_ref_judges_a_pull_request_by_the_rules_of_its_base(pull_request: Path) -> None:
    worktree = run_cli("check", pull_request, "--backends", "zizmor")
    assert not [h for h in worktree.headers if "CC101" in h or "ZZ-template-injection" in h]
    base = run_cli("check", pull_request, "--backends", "zizmor", "--config-ref", "HEAD^1")
    assert [h.split(": ", 1)[1].split(" ")[0] for h in base.headers if "no-make" in h or "template" in h] == [
        "CC101",
        "ZZ-template-injection",
    ]
    assert not (pull_request.parent / "git-ran-repository-code").exists()


def test_config_ref_naming_no_commit_is_exit_2(pull_request: Path) -> None:
    result = run_cli("check", pull_request, "--config-ref", "no-such-branch")
    assert (result.code, result.err) == (
        2,
        f"ci-checks: error: --config-ref 'no-such-branch' names no commit of the repository at {pull_request}\n",
    )
    assert run_cli("check", pull_request, "--config-ref", "--upload-pack=x").code == 2


def test_the_plugin_reads_the_policy_of_the_base_too(pull_request: Path) -> None:
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--ci-checks", "-q"]
    worktree = subprocess.run(command, cwd=pull_request, capture_output=True, text=True, check=False)
    assert worktree.returncode == pytest.ExitCode.NO_TESTS_COLLECTED, worktree.stdout
    base = subprocess.run(
        [*command, "--ci-checks-config-ref", "HEAD^1"], cwd=pull_request, capture_output=True, text=True, check=False
    )
    assert base.returncode == pytest.ExitCode.TESTS_FAILED, base.stdout
    assert ".github/workflows/ci.yml:7:14: CC101 `echo` is forbidden here [no-make]" in base.stdout


def test_our_own_pull_request_check_uses_the_base_configuration() -> None:
    workflow = (PROJECT / ".github" / "workflows" / "pr-checks.yml").read_text()
    # action.yml's config-ref input, which passes --config-ref
    assert "config-ref: ${{ github.event_name == 'pull_request' && 'HEAD^1' || 'HEAD' }}" in workflow
    assert "fetch-depth: 2" in workflow


# --- 17. links, FIFOs and folders where files are expected --------------------------------------------------


def test_a_workflows_folder_linked_outside_is_reported_not_counted_as_clean(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    outside = tmp_path / "outside" / "workflows"
    outside.mkdir(parents=True)
    (outside / "ci.yml").write_text(INJECTION)
    root = make_repo({"README.md": "x\n"})
    (root / ".github").mkdir()
    (root / ".github" / "workflows").symlink_to(outside)
    result = run_cli("check", root)
    assert result.code == 1
    assert result.headers == [".github/workflows:1:1: CC004 symbolic link points outside the repository; not read"]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (os.mkfifo, "a FIFO, not a regular file; not read"),
        (lambda path: path.mkdir(), "a folder, not a regular file; not read"),
        (
            lambda path: path.symlink_to(os.devnull),
            "symbolic link points outside the repository; configuration is read "
            "only from regular files, not through links",
        ),
        (lambda path: path.symlink_to("missing.yml"), "symbolic link to a file that does not exist; not read"),
        (lambda path: path.symlink_to(path.name), "symbolic link loop (the link leads back to itself); not read"),
    ],
    ids=["fifo", "folder", "dev-null", "dangling", "loop"],
)
def test_a_policy_file_that_is_not_a_file_is_a_positioned_error(
    make_repo: MakeRepo, make: Callable[[Path], object], message: str
) -> None:
    root = make_repo({WORKFLOW: CLEAN})
    make(root / ".github" / "ci-checks.yml")
    result = run_cli("check", root)
    assert (result.code, result.err) == (2, f".github/ci-checks.yml:1:1: error: {message}\n")


def test_links_under_a_files_glob_each_say_what_they_are(make_repo: MakeRepo, tmp_path: Path) -> None:
    policy = POLICY.replace('[".github/workflows/*.yml"]', '["docker/**/*.sh"]').replace(
        "command: make", "text: amd_patch"
    )
    root = make_repo({".github/ci-checks.yml": policy, "real/y.sh": "amd_patch\n", "docker/ok.sh": "true\n"})
    outside = _outside(tmp_path, "scripts/x.sh", "git apply amd_patch\n").parent
    docker = root / "docker"
    (docker / "outside").symlink_to(outside)
    (docker / "inside").symlink_to(root / "real")
    (docker / "dangling.sh").symlink_to("nothing.sh")
    (docker / "loop.sh").symlink_to("loop.sh")
    os.mkfifo(docker / "fifo.sh")
    rule = "; not checked by this rule [no-make]"
    assert run_cli("check", root).headers == [
        f"docker/dangling.sh:1:1: CC106 symbolic link to a file that does not exist; not read{rule}",
        f"docker/fifo.sh:1:1: CC106 a FIFO, not a regular file; not read{rule}",
        "docker/inside:1:1: CC106 symbolic link to a folder; folders are not entered through links, so nothing "
        f"under it is checked{rule}",
        f"docker/loop.sh:1:1: CC106 symbolic link loop (the link leads back to itself); not read{rule}",
        f"docker/outside:1:1: CC106 symbolic link points outside the repository; not read{rule}",
    ]


# --- 18. unknown names in the configuration's select and ignore -------------------------------------------


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("select: [CC0, duplicate-keys]\n", "1:15: error: unknown rule 'duplicate-keys' (did you mean duplicate-key?)"),
        ("ignore:\n  - CC011\n  - CC999\n", "3:5: error: unknown rule 'CC999'"),
    ],
)
def test_an_unknown_rule_in_the_configuration_is_positioned(make_repo: MakeRepo, content: str, expected: str) -> None:
    root = make_repo({WORKFLOW: CLEAN, ".github/ci-checks.yml": content})
    result = run_cli("check", root)
    assert result.code == 2
    assert result.err.startswith(f".github/ci-checks.yml:{expected}")


# --- 19. a home folder that is not one -------------------------------------------------------------------------


@pytest.mark.parametrize("home", [".", "", "/", None], ids=["relative", "empty", "root", "unset"])
def test_without_a_usable_home_nothing_is_kept_between_runs(
    make_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch, home: str | None
) -> None:
    root = make_repo({WORKFLOW: CLEAN.replace("echo build", "echo $x")})
    monkeypatch.delenv("CI_CHECKS_CACHE_DIR")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    if home is None:
        monkeypatch.delenv("HOME", raising=False)
    else:
        monkeypatch.setenv("HOME", home)
    monkeypatch.chdir(root)
    existed = Path("/.cache").exists()
    result = run_cli("check", root, "--backends", "shellcheck", "--select", "SC")
    assert (result.code, [h.split()[1] for h in result.headers]) == (0, ["SC2086"])  # an info: exit code 0
    assert result.err.count("ci-checks: note: findings are not kept between runs: ") == 1
    assert not (root / ".cache").exists()
    assert Path("/.cache").exists() == existed


# --- 20. file names that are not UTF-8 -------------------------------------------------------------------------


def test_a_file_name_that_is_not_utf8_is_escaped_the_same_way_in_every_format(make_repo: MakeRepo) -> None:
    root = make_repo({})
    workflows = root / ".github" / "workflows"
    workflows.mkdir(parents=True)
    # The byte 0xE9 alone is not UTF-8: Python holds it as a lone surrogate, as it reads such names from disk.
    (workflows / os.fsdecode(b"caf\xe9.yml")).write_bytes(
        CLEAN.replace("    runs-on:", "    runs-on: x\n    runs-on:").encode()
    )
    outputs = _every_format(root)
    for name, output in outputs.items():
        if name == "stderr":
            assert output == ""
            continue
        # GitHub's workflow commands escape `%` itself, and Markdown escapes the dot.
        assert "caf%E9.yml" in output.replace("%25", "%").replace("\\.", "."), name
        assert "\\udc" not in output and not any("\ud800" <= char <= "\udfff" for char in output), name
    json.loads(outputs["json"])
    json.loads(outputs["sarif"])
