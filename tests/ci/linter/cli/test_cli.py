"""The `ci-checks` command line: paths, output formats, selection, configuration and exit codes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest

from ci_checks.core import own_schemas
from tests.ci.conftest import PROJECT
from tests.ci.linter.conftest import FIXTURES, MakeRepo, run_cli

CLEAN = "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ok\n"
DUPLICATE = "on: push\njobs:\n  t:\n    runs-on: a\n    runs-on: b\n    steps:\n      - run: echo ok\n"
DEPRECATED = 'on: push\njobs:\n  t:\n    runs-on: a\n    steps:\n      - run: echo "::set-output name=v::1"\n'


def output_validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(own_schemas.load(own_schemas.OUTPUT))


def test_this_repository_is_clean() -> None:
    result = run_cli("check", PROJECT)
    assert (result.code, result.err) == (0, "")
    assert result.out.startswith("No problems found;")


def test_default_path_is_the_repository_of_the_working_directory(
    make_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo({".github/workflows/a.yml": DUPLICATE, "src/deep/x.txt": ""})
    monkeypatch.chdir(root / "src" / "deep")
    result = run_cli("check")
    assert result.code == 1
    assert result.headers == [".github/workflows/a.yml:5:5: CC011 duplicate key 'runs-on'"]


def test_a_folder_checks_only_what_is_under_it(make_repo: MakeRepo) -> None:
    root = make_repo(
        {
            ".github/workflows/a.yml": DUPLICATE,
            "tools/action.yml": "name: t\ndescription: d\nruns: {using: composite, steps: [{run: x}]}\n",
        }
    )
    assert [h.split(":")[0] for h in run_cli("check", root / "tools").headers] == ["tools/action.yml"]
    assert [h.split(":")[0] for h in run_cli("check", root).headers] == [".github/workflows/a.yml", "tools/action.yml"]


def test_text_output_shows_the_source_line_and_a_caret_underline(make_repo: MakeRepo) -> None:
    root = make_repo({".github/workflows/a.yml": DUPLICATE})
    result = run_cli("check", root)
    assert result.out == (
        ".github/workflows/a.yml:5:5: CC011 duplicate key 'runs-on'\n"
        "  |\n"
        "5 |     runs-on: b\n"
        "  |     ^^^^^^^\n"
        "  = note: first defined here at 4:5\n"
        "\n"
        "Found 1 problem (1 error); 1 file checked.\n"
    )


def test_fixes_are_shown_and_warnings_fail_the_run(make_repo: MakeRepo) -> None:
    root = make_repo({".github/workflows/a.yml": DEPRECATED})
    result = run_cli("check", root)
    assert result.code == 1
    assert '  = fix (write to $GITHUB_OUTPUT): echo "v=1" >> "$GITHUB_OUTPUT"' in result.out.splitlines()
    assert result.out.endswith("Found 1 problem (1 warning); 1 file checked.\n")


def test_json_output_matches_its_schema_and_carries_related_spans_and_fixes(make_repo: MakeRepo) -> None:
    root = make_repo({".github/workflows/a.yml": DUPLICATE, ".github/workflows/b.yml": DEPRECATED})
    result = run_cli("check", root, "--output-format", "json")
    document = json.loads(result.out)
    output_validator().validate(document)
    first, second = document["diagnostics"]
    assert "url" not in first  # rule pages are not online until `[project.urls]` names where (test_reporters)
    assert first == {
        "code": "CC011",
        "rule": "duplicate-key",
        "severity": "error",
        "path": ".github/workflows/a.yml",
        "line": 5,
        "column": 5,
        "end_line": 5,
        "end_column": 12,
        "message": "duplicate key 'runs-on'",
        "related": [
            {
                "path": ".github/workflows/a.yml",
                "line": 4,
                "column": 5,
                "end_line": 4,
                "end_column": 12,
                "message": "first defined here",
            }
        ],
    }
    assert second["fix"]["edits"] == [
        {
            "path": ".github/workflows/b.yml",
            "line": 6,
            "column": 14,
            "end_line": 6,
            "end_column": 43,
            "replacement": 'echo "v=1" >> "$GITHUB_OUTPUT"',
        }
    ]


def test_json_output_of_a_clean_run() -> None:
    result = run_cli("check", FIXTURES / "ok" / "cc013_empty_file.yml", "--output-format", "json")
    assert (result.code, json.loads(result.out)) == (0, {"version": 1, "diagnostics": []})


BAD_INPUTS = {
    "on: key": ("err/cc020_workflow_schema_on_key.yml", []),
    "duplicate key": ("err/cc011_duplicate_key.yml", []),
    "billion laughs": ("err/cc012_yaml_limit_billion_laughs.yml", []),
    "over the size cap": ("err/cc001_file_too_large.yml", ["--max-file-size", "64"]),
    "binary": ("err/cc002_binary_file.yml", []),
    "not UTF-8": ("err/cc003_invalid_encoding.yml", []),
    "tab-indented": ("err/cc010_yaml_syntax_tab.yml", []),
    "empty": ("err/cc013_empty_file_zero_bytes.yml", []),
}


@pytest.mark.parametrize(("fixture", "options"), BAD_INPUTS.values(), ids=BAD_INPUTS.keys())
def test_each_bad_input_gives_one_positioned_diagnostic(fixture: str, options: list[str]) -> None:
    result = run_cli("check", *options, FIXTURES / fixture, "--output-format", "json")
    assert (result.code, result.err) == (1, "")
    [diagnostic] = json.loads(result.out)["diagnostics"]
    assert diagnostic["path"].endswith(fixture)
    assert diagnostic["line"] >= 1 and diagnostic["column"] >= 1


def test_a_file_over_the_default_cap_is_refused(make_repo: MakeRepo) -> None:
    root = make_repo({".github/workflows/big.yml": "on: push\n" + "# padding\n" * 500_000})
    assert run_cli("check", root).headers[0].startswith(".github/workflows/big.yml:1:1: CC001 file is larger than")


def test_fifos_and_links_out_of_the_repository_are_reported_not_read(make_repo: MakeRepo, tmp_path: Path) -> None:
    root = make_repo({".github/workflows/ok.yml": CLEAN})
    os.mkfifo(root / ".github" / "workflows" / "pipe.yml")
    (tmp_path / "secret.yml").write_text("on: push\n")
    (root / ".github" / "workflows" / "link.yml").symlink_to(tmp_path / "secret.yml")
    result = run_cli("check", root)
    assert result.headers == [
        ".github/workflows/link.yml:1:1: CC004 symbolic link points outside the repository; not read",
        ".github/workflows/pipe.yml:1:1: CC004 a FIFO, not a regular file; not read",
    ]


def test_select_and_ignore(make_repo: MakeRepo) -> None:
    root = make_repo({".github/workflows/a.yml": DUPLICATE, ".github/workflows/b.yml": DEPRECATED})
    assert [h.split()[1] for h in run_cli("check", root, "--select", "CC03").headers] == ["CC031"]
    assert [h.split()[1] for h in run_cli("check", root, "--ignore", "duplicate-key").headers] == ["CC031"]
    result = run_cli("check", root, "--ignore", "CC011,deprecated-workflow-command")
    assert (result.code, result.headers) == (0, [])


def test_unknown_selector_is_a_usage_error_with_a_suggestion(make_repo: MakeRepo) -> None:
    root = make_repo({".github/workflows/a.yml": CLEAN})
    result = run_cli("check", root, "--select", "duplicate-keys")
    assert result.code == 2
    assert "unknown rule 'duplicate-keys' (did you mean duplicate-key?)" in result.err


@pytest.mark.parametrize(
    "args",
    [
        ["check", "/nonexistent/path"],
        ["check", "--output-format", "xml"],
        ["nope"],
        ["check", "--max-file-size", "big"],
    ],
)
def test_usage_errors_exit_2_without_a_traceback(args: list[str]) -> None:
    result = run_cli(*args)
    assert result.code == 2
    assert result.err.startswith("ci-checks: error:")
    assert "Traceback" not in result.err


def test_a_file_that_is_not_yaml_is_read_by_policy_rules_only(make_repo: MakeRepo) -> None:
    policy = "rules:\n  - {id: no-todo, kind: forbid, where: {files: '*.txt'}, forbid: [{text: TODO}]}\n"
    root = make_repo({"notes.txt": "hello\nTODO: x\n", ".github/ci-checks.yml": policy})
    result = run_cli("check", root / "notes.txt")
    assert (result.code, result.headers) == (1, ["notes.txt:2:1: CC101 'TODO' is forbidden here [no-todo]"])
    # A changed policy may change findings anywhere, so naming it checks the whole repository.
    assert run_cli("check", root / ".github" / "ci-checks.yml").headers == result.headers


def test_configuration_file_selects_excludes_and_sizes(make_repo: MakeRepo) -> None:
    root = make_repo(
        {
            ".github/ci-checks.yml": "version: 1\nignore: [CC031]\nexclude: ['.github/workflows/skip*']\n",
            ".github/workflows/a.yml": DEPRECATED,
            ".github/workflows/skip-me.yml": DUPLICATE,
        }
    )
    result = run_cli("check", root)
    assert (result.code, result.headers) == (0, [])
    assert "1 file checked" in result.out


def test_pyproject_configuration(make_repo: MakeRepo) -> None:
    root = make_repo({"pyproject.toml": '[tool.ci-checks]\nmax-file-size = "1KiB"\n', ".github/workflows/a.yml": CLEAN})
    (root / ".github" / "workflows" / "big.yml").write_text(CLEAN + "#" * 2000 + "\n")
    assert [h.split()[1] for h in run_cli("check", root).headers] == ["CC001"]


def test_explicit_config_overrides_the_repositorys(make_repo: MakeRepo, tmp_path: Path) -> None:
    root = make_repo({".github/ci-checks.yml": "ignore: [CC011]\n", ".github/workflows/a.yml": DUPLICATE})
    assert run_cli("check", root).code == 0
    other = tmp_path / "strict.yml"
    other.write_text("version: 1\n")
    assert run_cli("check", root, "--config", other).code == 1


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("version: 1\nignroe: [CC011]\n", "2:1: error: unknown configuration key 'ignroe' (did you mean 'ignore'?)"),
        ("version: 2\n", "1:10: error: version must be 1"),
        ("select: CC011\n", "1:9: error: select must be of type array"),
        ("max-file-size: huge\n", "1:16: error: max-file-size must be a number of bytes or a size such as 4MiB"),
        # At the end of the file, which is the end of its last line: there is no line 2.
        ("select: [CC011\n", "1:15: error:"),
        ("- a list\n", "1:1: error: the configuration must be a mapping"),
    ],
)
def test_bad_configuration_is_a_positioned_error_with_exit_2(make_repo: MakeRepo, content: str, expected: str) -> None:
    root = make_repo({".github/ci-checks.yml": content, ".github/workflows/a.yml": CLEAN})
    result = run_cli("check", root)
    assert result.code == 2
    assert result.err.startswith(".github/ci-checks.yml:" + expected)


def test_bad_pyproject_configuration_points_at_the_key(make_repo: MakeRepo) -> None:
    root = make_repo({"pyproject.toml": "[project]\nname = 'x'\n\n[tool.ci-checks]\nselct = ['CC0']\n"})
    result = run_cli("check", root)
    assert result.code == 2
    assert result.err.startswith(
        "pyproject.toml:5:1: error: unknown configuration key 'selct' (did you mean 'select'?)"
    )


def test_a_crashing_rule_is_an_internal_error_and_the_others_still_report(
    make_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Test double: no real input makes a rule crash (that would be a bug to fix), so one is made to.
    from ci_checks.rules import cc032_mangled_number

    def explode(scalar: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(cc032_mangled_number, "_as_github_text", explode)
    root = make_repo({".github/workflows/a.yml": DUPLICATE.replace("on: push\n", "on: push\nenv: {A: 1.0}\n")})
    result = run_cli("check", root)
    assert result.code == 2
    assert "CC011" in result.out
    assert "internal error: CC032 mangled-number failed on .github/workflows/a.yml: RuntimeError('boom')" in result.err


def test_version_and_help_exit_0() -> None:
    assert run_cli("--version").code == 0
    assert run_cli("check", "--help").code == 0


def test_backends_come_from_the_option_the_environment_or_the_configuration(
    make_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo({".github/workflows/a.yml": CLEAN, ".github/ci-checks.yml": "backends: [shellcheck]\n"})
    missing = ["--shellcheck", str(root / "no-shellcheck"), "--actionlint", str(root / "no-actionlint")]
    monkeypatch.delenv("CI_CHECKS_BACKENDS")
    # A linter named by option that is not there is an error: only the configuration's shellcheck is looked for.
    result = run_cli("check", root, *missing)
    assert (result.code, result.out) == (2, "")
    assert (
        result.err
        == f"ci-checks: error: --shellcheck names {str(root / 'no-shellcheck')!r}, which is not an executable file\n"
    )
    monkeypatch.setenv("CI_CHECKS_BACKENDS", "actionlint")
    assert "ci-checks: error: --actionlint names" in run_cli("check", root, *missing).err
    assert run_cli("check", root, *missing, "--backends", "none").code == 0
    monkeypatch.setenv("CI_CHECKS_BACKENDS", "pylint")
    result = run_cli("check", root)
    assert result.code == 2 and "CI_CHECKS_BACKENDS: unknown backend 'pylint'" in result.err
    assert run_cli("check", root, "--backends", "pylint").code == 2


def test_linter_codes_in_select_ignore_and_inline_ignores(make_repo: MakeRepo) -> None:
    script = 'run: |\n          echo "::set-output name=a::1"\n          cd $HOME\n          echo $(ls)'
    workflow = CLEAN.replace("run: echo ok", script)
    root = make_repo({".github/workflows/a.yml": workflow})

    def codes(*options: str) -> list[str]:
        return [header.split()[1] for header in run_cli("check", root, "--backends", "shellcheck", *options).headers]

    # SC2086 and SC2005 are shellcheck's info notes: off unless selected.
    assert codes() == ["CC031", "SC2046"]
    assert codes("--select", "CC0,SC") == ["CC031", "SC2086", "SC2005", "SC2046"]
    assert codes("--select", "CC0,SC", "--ignore", "sc2086,SC2005") == ["CC031", "SC2046"]
    assert codes("--select", "SC2086") == ["SC2086"]
    (root / ".github" / "workflows" / "a.yml").write_text(
        workflow.replace("cd $HOME", "cd $HOME  # ci-checks: ignore[SC2086]")
    )
    assert codes("--select", "CC0,SC2086", "--report-unused-ignores") == ["CC031"]
