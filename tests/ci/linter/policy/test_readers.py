"""The readers policy rules use: path globs, Dockerfiles and Python facts."""

from __future__ import annotations

import pytest

from ci_checks.core import source
from ci_checks.core.globs import GlobError, compile_glob
from ci_checks.syntax import dockerfile, pysource


@pytest.mark.parametrize(
    ("glob", "matching", "other"),
    [
        ("docker/Dockerfile*", ["docker/Dockerfile", "docker/Dockerfile.rocm"], ["docker/x/Dockerfile", "Dockerfile"]),
        ("**/*.py", ["a.py", "a/b/c.py"], ["a.pyc", "a/b.txt"]),
        ("a/**/b", ["a/b", "a/x/y/b"], ["a/xb", "b"]),
        ("a/**", ["a/b", "a/b/c"], ["ab"]),
        ("./x/[!a]?.yml", ["x/bc.yml"], ["x/ac.yml", "x/b/c.yml"]),
        (".github/workflows/*.yml", [".github/workflows/ci.yml"], [".github/workflows/a/ci.yml"]),
    ],
)
def test_globs_match_whole_segments(glob: str, matching: list[str], other: list[str]) -> None:
    compiled = compile_glob(glob)
    assert [path for path in matching + other if compiled.matches(path)] == matching


@pytest.mark.parametrize("glob", ["", "/etc/passwd", "a/../../b", "a/[bc", "x**", "a/[n-m].patch", "[!z-a]"])
def test_bad_globs_are_refused(glob: str) -> None:
    with pytest.raises(GlobError):
        compile_glob(glob)


def parse_dockerfile(text: str) -> dockerfile.Dockerfile:
    return dockerfile.parse(source.decode("Dockerfile", text.encode()))


def test_dockerfile_continuations_comments_and_directives() -> None:
    parsed = parse_dockerfile(
        "# escape=`\n"
        "FROM mcr.microsoft.com/windows\n"
        "RUN echo a `\n"
        "# dropped by Docker\n"
        "    b\n"
        'SHELL ["pwsh", "-c"]\n'
        "RUN Write-Host `\n"
        "    hi\n"
    )
    assert [(i.keyword, i.span.line, i.span.end_line) for i in parsed.instructions] == [
        ("FROM", 2, 2),
        ("RUN", 3, 5),
        ("SHELL", 6, 6),
        ("RUN", 7, 8),
    ]
    assert parsed.instructions[1].arguments == "echo a     b"
    echo = [c for c in parsed.commands() if c.name == "echo"]
    assert [(c.argv, c.span.line, c.span.column, c.span.end_line) for c in echo] == [(["echo", "a", "b"], 3, 5, 5)]
    assert [c.name for c in parsed.commands()] == ["FROM", "echo", "SHELL"]  # pwsh bodies are not shell
    assert len(parsed.scripts) == 1


def test_dockerfile_run_flags_and_heredocs() -> None:
    parsed = parse_dockerfile(
        "FROM x\n"
        "RUN --mount=type=cache,target=/root/.cache --network=none pip install -e .\n"
        "RUN <<-EOT\n\tset -e\n\tmake\nEOT\n"
        "COPY <<EOF /etc/conf\nkey=value\nEOF\n"
        "RUN python3 <<EOF\nimport sys\nEOF\n"
    )
    commands = [(c.argv, c.span.line, c.span.column) for c in parsed.commands()]
    assert commands == [
        (["FROM", "x"], 1, 1),
        (["pip", "install", "-e", "."], 2, 59),
        (["set", "-e"], 4, 2),
        (["make"], 5, 2),
        (["COPY", "<<EOF", "/etc/conf"], 7, 1),
        (["python3"], 10, 5),
    ]


def test_python_facts_with_exact_spans() -> None:
    text = (
        "import megatron.core as mc\n"
        "from .strategies import filesystem_async as fa\n"
        "class Writer(fa.FileSystemWriterAsync):\n"
        "    pass\n"
        "fa.FileSystemWriterAsync = Writer\n"
        'setattr(fa, "FileSystemWriterAsync", Writer)\n'
        "é = mc  # a non-ASCII name: columns count characters\n"
    )
    facts = pysource.facts(source.decode("m.py", text.encode()))
    assert isinstance(facts, list)
    found = {(f.kind.value, f.value, f.span.line, f.span.column, f.span.end_column) for f in facts}
    assert {
        ("import", "megatron.core", 1, 8, 27),
        ("import", ".strategies.filesystem_async", 2, 25, 47),
        ("name", "Writer", 3, 7, 13),
        ("subclass", "fa.FileSystemWriterAsync", 3, 14, 38),
        ("assign", "fa.FileSystemWriterAsync", 5, 1, 25),
        ("assign", "fa.FileSystemWriterAsync", 6, 1, 45),
        ("name", "é", 7, 1, 2),
        ("name", "mc", 7, 5, 7),
    } <= found


def test_python_syntax_errors_are_positioned() -> None:
    problem = pysource.facts(source.decode("m.py", b"x = 1\ndef f(:\n"))
    assert isinstance(problem, pysource.PythonSyntaxError)
    assert (problem.span.line, problem.span.column) == (2, 7)
    deep = pysource.facts(source.decode("m.py", ("x = " + "(" * 5000 + ")" * 5000 + "\n").encode()))
    assert isinstance(deep, pysource.PythonSyntaxError)
