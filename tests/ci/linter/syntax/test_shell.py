"""Shell command trees of `run:` scripts: structure, words, patterns, branches and exact positions."""

from __future__ import annotations

import pytest

from ci_checks.core import source
from ci_checks.model import Workflow
from ci_checks.syntax import shell, yamlpos
from ci_checks.syntax.shell import AndOr, Case, CommandPattern, Function, Group, IfStatement, Loop, Pipeline, Redirected


def workflow(text: str) -> Workflow:
    doc = yamlpos.parse(source.decode(".github/workflows/w.yml", text.encode()))
    built = Workflow.from_document(doc)
    assert built is not None, doc.issues
    return built


def script_of(run_block: str, shell_line: str = "") -> shell.Script:
    """The script of a one-step workflow whose step is `run_block` (already indented for the step)."""
    text = "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - " + shell_line + run_block
    script = workflow(text).jobs["t"].steps[0].script
    assert script is not None
    return script


def where(node: shell.ShellNode) -> tuple[int, int]:
    return node.span.line, node.span.column


def test_simple_command_argv_removes_quotes_and_keeps_variables_symbolic() -> None:
    script = script_of("""run: FOO=1 git -C "$DIR" commit -m 'a message' --author=${AUTHOR} $'x' "a${b}c" \\"q\\"\n""")
    [command] = script.commands()
    assert command.argv == [
        "git",
        "-C",
        "$DIR",
        "commit",
        "-m",
        "a message",
        "--author=${AUTHOR}",
        "x",
        "a${b}c",
        '"q"',
    ]
    assert [word.static for word in command.words] == [True, True, False, True, True, True, False, True, False, True]
    assert [a.value for a in command.assignments] == ["FOO=1"]
    assert command.name == "git"


def test_compound_statements_keep_their_structure() -> None:
    script = script_of(
        "run: |\n"
        "          a | b && c || d\n"
        "          if e; then f; elif g; then h; else i; fi\n"
        "          for x in 1 2; do j; done\n"
        "          while k; do l; done\n"
        '          case "$y" in a|b) m;; *) n;; esac\n'
        "          fn() { o; }\n"
        "          ( p ) ; { q; }\n"
        "          while read -r r; do s; done < <(t)\n"
    )
    kinds = [type(s) for s in script.statements]
    assert kinds == [AndOr, IfStatement, Loop, Loop, Case, Function, Group, Group, Redirected]
    and_or = script.statements[0]
    assert isinstance(and_or, AndOr) and and_or.operators == ["&&", "||"]
    assert isinstance(and_or.items[0], Pipeline)
    branches = script.statements[1]
    assert isinstance(branches, IfStatement)
    assert [c.keyword for c in branches.clauses] == ["if", "elif", "else"]
    assert [c.condition.text if c.condition else None for c in branches.clauses] == ["e", "g", None]
    case = script.statements[4]
    assert isinstance(case, Case) and [[w.value for w in item.patterns] for item in case.items] == [["a", "b"], ["*"]]
    groups = script.statements[6:8]
    assert [g.subshell for g in groups if isinstance(g, Group)] == [True, False]
    assert [c.name for c in script.commands()] == [*"abcdefghijklmnopq", "read", "s", "t"]


def test_commands_in_conditions_and_substitutions_are_found_in_order() -> None:
    script = script_of('run: if git diff --quiet; then V=$(git describe); echo "$(date)" > "$(mktemp)"; fi\n')
    assert [c.argv for c in script.commands()] == [
        ["git", "diff", "--quiet"],
        ["git", "describe"],
        ["echo", "$(date)"],
        ["date"],
        ["mktemp"],
    ]


def test_here_document_bodies_are_not_commands() -> None:
    script = script_of("run: |\n          cat <<EOF > setup.cfg\n          pip install -e .\n          EOF\n")
    [command] = script.commands()
    assert command.name == "cat"
    assert command.redirects[0].heredoc == "pip install -e .\n"
    assert command.redirects[1].target is not None and command.redirects[1].target.value == "setup.cfg"


def test_a_redirection_after_a_list_or_a_pipeline_belongs_to_its_last_command() -> None:
    """bash gives `< fix.patch` in `cd /tmp && patch -p1 < fix.patch` to `patch`, as it does in `a | b > out`;
    tree-sitter-bash hangs it on the whole list. A group or a subshell keeps its own redirections."""
    script = script_of("run: |\n          cd /tmp && patch -p1 < fix.patch\n          a < in | b > out || c\n"
                       "          (x && y) > log\n")  # fmt: skip
    redirected = {c.name: [r.target.value for r in c.redirects if r.target] for c in script.commands()}
    assert redirected == {"cd": [], "patch": ["fix.patch"], "a": ["in"], "b": ["out"], "c": [], "x": [], "y": []}
    assert isinstance(script.statements[-1], Redirected)


def test_expressions_are_masked_but_words_keep_their_text() -> None:
    script = script_of("run: echo ${{ format('{0} }}', inputs.x) }} \"${{ inputs.y }}\" && make\n")
    echo, make = script.commands()
    assert echo.argv == ["echo", "${{ format('{0} }}', inputs.x) }}", "${{ inputs.y }}"]
    assert [w.static for w in echo.words] == [True, False, False]
    assert where(make) == (6, 74)


def test_every_block_style_gives_exact_file_positions() -> None:
    cases = {
        "run: |\n          cd a\n          make\n": [(7, 11), (8, 11)],
        "run: |-\n          cd a\n          make\n": [(7, 11), (8, 11)],
        "run: |+\n          cd a\n          make\n\n": [(7, 11), (8, 11)],
        "run: |2\n            cd a\n          make\n": [(7, 13), (8, 11)],
        "run: >\n          cd a;\n          make\n": [(7, 11), (8, 11)],
        "run: cd a;\n          make\n": [(6, 14), (7, 11)],
        "run: cd a; make\n": [(6, 14), (6, 20)],
        'run: "cd a\\n  make"\n': [(6, 15), (6, 23)],
        "run: 'cd a;\n\n          make'\n": [(6, 15), (8, 11)],
    }
    for block, expected in cases.items():
        script = script_of(block)
        assert [where(c) for c in script.commands()] == expected, block
        assert [c.name for c in script.commands()] == ["cd", "make"], block


def test_spans_cover_the_command_exactly() -> None:
    script = script_of("run: |\n          git checkout -f FETCH_HEAD   # done\n")
    [command] = script.commands()
    span = command.span
    assert (span.line, span.column, span.end_line, span.end_column) == (7, 11, 7, 37)


def test_non_posix_shells_are_not_parsed() -> None:
    text = (
        "on: push\ndefaults:\n  run:\n    shell: bash\njobs:\n"
        "  py:\n    runs-on: ubuntu-latest\n    steps:\n      - shell: python\n        run: print('x')\n"
        "  win:\n    runs-on: windows-latest\n    defaults:\n      run:\n        shell: pwsh\n"
        "    steps:\n      - run: Write-Host x\n      - shell: bash\n        run: echo x\n"
        "  win-default:\n    runs-on: [windows-2022]\n    steps:\n      - run: dir\n"
    )
    built = workflow(text.replace("defaults:\n  run:\n    shell: bash\n", ""))
    assert built.jobs["py"].steps[0].script is None
    assert built.jobs["win"].steps[0].script is None
    assert built.jobs["win"].steps[1].script is not None
    assert built.jobs["win-default"].steps[0].effective_shell == "pwsh"
    assert built.jobs["win-default"].steps[0].script is None
    with_default = workflow(text)
    assert with_default.jobs["win-default"].steps[0].effective_shell == "bash"


@pytest.mark.parametrize(
    ("argv", "matches"),
    [
        ("pip install -e . --no-deps --break-system-packages", True),
        ("python -m pip install -e .", True),
        ("python3.11 -m pip install --upgrade -e .", True),
        ("sudo -E env PIP_NO_CACHE=1 /usr/bin/pip install -e .", True),
        ('pip install "-e" "."', True),
        ("pip install -e ./python", False),
        ("pip install .", False),
        ("pip3 install -e .", False),
        ("echo pip install -e .", False),
    ],
)
def test_command_pattern_words_in_order_after_the_program(argv: str, matches: bool) -> None:
    [command] = script_of(f"run: {argv}\n").commands()
    assert CommandPattern.parse("pip install -e .").matches(command.argv) is matches
    # The quick answer from the programs the command runs agrees, for those it reaches through wrappers too.
    assert command.matches("pip install -e .") is matches
    assert ("pip" in command.programs) is (argv.split(maxsplit=1)[0] != "echo" and "pip3" not in argv)


def test_command_pattern_normalises_braces_and_rejects_bad_patterns() -> None:
    [command] = script_of('run: cd "${GITHUB_WORKSPACE}"\n').commands()
    assert command.matches("cd $GITHUB_WORKSPACE")
    with pytest.raises(ValueError, match="needs at least a program"):
        CommandPattern.parse("  ")
    with pytest.raises(ValueError, match="invalid command pattern"):
        CommandPattern.parse("echo 'open")


def test_branch_is_selected_by_its_condition() -> None:
    script = script_of(
        "run: |\n"
        '          if [ -n "$MEGATRON_PR" ]; then\n'
        "            git checkout -f FETCH_HEAD\n"
        "            pip install -e .\n"
        '          elif [ -n "$OTHER" ]; then\n'
        "            pip install -e .\n"
        "          fi\n"
    )
    for condition in ('[ -n "$MEGATRON_PR" ]', "[ -n $MEGATRON_PR ]", '[  -n "$MEGATRON_PR"  ];'):
        branch = script.branch(condition)
        assert [c.name for c in branch.commands()] == ["git", "pip"]
    assert where(next(script.branch('[ -n "$OTHER" ]').commands())) == (11, 13)
    with pytest.raises(LookupError, match=r"conditions here: \['\[ -n \"\$MEGATRON_PR\" \]', '\[ -n \"\$OTHER\" \]'\]"):
        script.branch('[ -z "$MEGATRON_PR" ]')


def test_comes_before_compares_first_occurrences_and_names_what_is_missing() -> None:
    script = script_of("run: |\n          pip install -e .\n          git checkout -f FETCH_HEAD\n")
    assert script.comes_before("pip install -e .", "git checkout -f FETCH_HEAD")
    assert not script.comes_before("git checkout -f FETCH_HEAD", "pip install -e .")
    with pytest.raises(LookupError, match="git apply"):
        script.comes_before("git apply x.patch", "pip install -e .")


def test_parse_errors_are_recorded_not_raised() -> None:
    script = script_of("run: |\n          if then fi (\n          echo after\n")
    assert script.errors
    assert "echo" in [c.name for c in script.commands()]


def test_non_ascii_scripts_map_positions_by_character() -> None:
    script = script_of('run: echo "✓ é 🚀" && make\n')
    assert [where(c) for c in script.commands()] == [(6, 14), (6, 30)]
