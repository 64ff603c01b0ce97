"""Positions as the Language Server Protocol counts them (0-based lines, code units of the agreed encoding) and as
ci-checks counts them (1-based lines and characters of the text as read): `ci_checks.server.documents`."""

from __future__ import annotations

import pytest

from ci_checks.server.documents import Document, characters, units


@pytest.mark.parametrize(
    ("encoding", "expected"),
    [("utf-16", [0, 1, 2, 4, 5]), ("utf-8", [0, 1, 3, 7, 8]), ("utf-32", [0, 1, 2, 3, 4])],
)
def test_lsp_positions_count_the_agreed_code_units(encoding: str, expected: list[int]) -> None:
    line = "aé😀b"  # 1, 1, 2 (a surrogate pair) and 1 UTF-16 units; 1, 2, 4 and 1 UTF-8 bytes
    assert [units(line[:index], encoding) for index in range(len(line) + 1)] == expected
    assert [characters(line, count, encoding) for count in expected] == list(range(len(line) + 1))
    # An offset inside a character counts that character out; one past the end is the end.
    assert characters(line, expected[2] + 1, encoding) == (2 if encoding != "utf-32" else 3)
    assert characters(line, 99, encoding) == len(line)


def test_documents_convert_spans_through_line_breaks_and_a_byte_order_mark() -> None:
    text = "\ufeffa: 1\r\nb: '😀'\rc: é\nlast"
    document = Document("file:///x.yml", text)
    assert [document.line(number) for number in range(4)] == ["\ufeffa: 1", "b: '😀'", "c: é", "last"]
    # Span columns count characters of the text as read (no byte-order mark); LSP ones UTF-16 units of the line.
    assert document.from_span(1, 1) == (0, 1)
    assert document.from_span(2, 5) == (1, 4) and document.from_span(2, 6) == (1, 6)
    assert document.to_span(1, 6) == (2, 6) and document.to_span(0, 1) == (1, 1)
    assert document.from_span(9, 1) == (3, 4)  # past the end: the end
    # An incremental edit across a CR line break, in UTF-16 units.
    document.apply("X", (1, 4), (2, 3))
    assert document.text == "\ufeffa: 1\r\nb: 'Xé\nlast"
    assert document.position(len(document.text)) == (2, 4)
    assert document.newline == "\r\n"
