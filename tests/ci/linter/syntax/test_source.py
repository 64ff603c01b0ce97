"""Reading files: size cap, encodings, line breaks, files that are not regular."""

from __future__ import annotations

import os
from pathlib import Path

from ci_checks.core import source
from ci_checks.core.repository import Repository
from ci_checks.core.source import ProblemKind


def test_utf8_with_bom_and_crlf_reads_as_plain_lines() -> None:
    file = source.decode("w.yml", b"\xef\xbb\xbfa: 1\r\nb: 2\rc: 3\n")
    assert file.problem is None
    assert file.text == "a: 1\nb: 2\nc: 3\n"
    assert [file.line_text(n) for n in (1, 2, 3)] == ["a: 1", "b: 2", "c: 3"]


def test_positions_count_characters_not_bytes() -> None:
    file = source.decode("w.yml", "name: é🚀x\n".encode())
    assert file.position(file.text.index("x")) == (1, 9)
    assert file.offset(1, 9) == file.text.index("x")


def test_only_newlines_break_lines_and_yaml_positions_are_converted() -> None:
    file = source.decode("w.yml", "a: 1\u2028b: 2\x85c\nd: 3\n".encode())
    # As editors, Python and GitHub count them: U+2028, U+2029 and U+0085 are characters within a line.
    assert file.position(file.text.index("b")) == (1, 6)
    assert file.position(file.text.index("d")) == (2, 1)
    # A YAML library counts them as breaks: its 3:1 (`c`) and 4:1 (`d`) are our 1:11 and 2:1.
    assert file.from_yaml_position(3, 1) == (1, 11)
    assert file.from_yaml_position(4, 1) == (2, 1)


def test_nul_byte_is_a_binary_file_positioned_at_the_byte() -> None:
    file = source.decode("w.yml", b"a: 1\nbb: \x00\n")
    assert file.problem is not None
    assert (file.problem.kind, file.problem.line, file.problem.column) == (ProblemKind.BINARY, 2, 5)


def test_invalid_utf8_is_positioned_at_the_first_bad_byte() -> None:
    file = source.decode("w.yml", "a: é\r\nb: ".encode() + b"\xff\n")
    assert file.problem is not None
    assert (file.problem.kind, file.problem.line, file.problem.column) == (ProblemKind.ENCODING, 2, 4)
    assert "0xff" in file.problem.message


def test_utf16_is_reported_as_an_unsupported_encoding() -> None:
    file = source.decode("w.yml", "on: push\n".encode("utf-16"))
    assert file.problem is not None
    assert file.problem.kind is ProblemKind.ENCODING
    assert "UTF-16" in file.problem.message


def test_size_cap_refuses_larger_files_and_accepts_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "w.yml"
    path.write_bytes(b"x" * 100)
    assert source.read("w.yml", path, max_bytes=100).problem is None
    refused = source.read("w.yml", path, max_bytes=99).problem
    assert refused is not None and refused.kind is ProblemKind.TOO_LARGE
    assert "99 bytes limit (100 bytes)" in refused.message


def test_fifo_is_not_read_and_does_not_block(tmp_path: Path) -> None:
    fifo = tmp_path / "w.yml"
    os.mkfifo(fifo)
    problem = source.read("w.yml", fifo).problem
    assert problem is not None
    assert (problem.kind, problem.message) == (ProblemKind.UNREADABLE, "a FIFO, not a regular file; not read")


def test_missing_file_is_unreadable(tmp_path: Path) -> None:
    problem = source.read("w.yml", tmp_path / "absent.yml").problem
    assert problem is not None and problem.kind is ProblemKind.UNREADABLE


def test_repository_never_reads_through_a_link_that_leaves_it(tmp_path: Path) -> None:
    outside = tmp_path / "secret.yml"
    outside.write_text("token: hunter2\n")
    root = tmp_path / "repo"
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / ".github" / "workflows" / "ci.yml").symlink_to(outside)
    (root / ".github" / "workflows" / "inside.yml").symlink_to(root / "README")
    (root / "README").write_text("on: push\n")
    repository = Repository(root)
    leaked = repository.read(".github/workflows/ci.yml")
    assert leaked.text == ""
    assert leaked.problem is not None and "outside the repository" in leaked.problem.message
    assert repository.read(".github/workflows/inside.yml").text == "on: push\n"


def test_repository_index_skips_linked_hidden_and_vendored_folders(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / "action.yml").write_text("name: x\n")
    root = tmp_path / "repo"
    for folder in ("a", ".venv/lib", "node_modules/pkg", "third_party/lib", ".github/actions/setup"):
        (root / folder).mkdir(parents=True)
        (root / folder / "action.yml").write_text("name: x\n")
    (root / "linked").symlink_to(outside)
    repository = Repository(root)
    assert repository.actions == [".github/actions/setup/action.yml", "a/action.yml"]


def test_format_size_uses_binary_units() -> None:
    assert [source.format_size(n) for n in (10, 4 << 20, 1536)] == ["10 bytes", "4 MiB", "1.5 KiB"]
