"""Positioned YAML: exact spans, YAML 1.2 values, duplicate keys, aliases and limits."""

from __future__ import annotations

import math

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_checks.core import source
from ci_checks.core.diagnostics import Span
from ci_checks.syntax import yamlpos
from ci_checks.syntax.yamlpos import IssueKind, Mapping, Scalar, ScalarMap, Sequence


def parse(text: str) -> yamlpos.Document:
    return yamlpos.parse(source.decode("w.yml", text.encode()))


def spans(node: yamlpos.Node) -> tuple[int, int, int, int]:
    s = node.span
    return s.line, s.column, s.end_line, s.end_column


def test_every_node_has_its_exact_one_based_span() -> None:
    doc = parse("jobs:\n  test:\n    runs-on: [a, 'b']\n    steps:\n      - run: make\n")
    root = doc.root
    assert isinstance(root, Mapping)
    job = root.get("jobs")
    assert isinstance(job, Mapping)
    test = job.get("test")
    assert isinstance(test, Mapping)
    assert spans(job.key_node("test")) == (2, 3, 2, 7)  # type: ignore[arg-type]
    runs_on = test.get("runs-on")
    assert isinstance(runs_on, Sequence)
    assert spans(runs_on) == (3, 14, 3, 22)
    assert [spans(item) for item in runs_on.items] == [(3, 15, 3, 16), (3, 18, 3, 21)]
    steps = test.get("steps")
    assert isinstance(steps, Sequence)
    assert spans(steps) == (5, 7, 5, 18)
    assert spans(test) == (3, 5, 5, 18)


def test_keys_that_yaml11_reads_as_booleans_stay_strings() -> None:
    doc = parse("on: push\nyes: 1\nno: 2\ny: 3\nn: 4\noff: 5\nOn: 6\n")
    assert isinstance(doc.root, Mapping)
    assert list(doc.root.index) == ["on", "yes", "no", "y", "n", "off", "On"]
    assert yamlpos.to_plain(doc.root) == {"on": "push", "yes": 1, "no": 2, "y": 3, "n": 4, "off": 5, "On": 6}


def test_values_follow_the_yaml12_core_schema() -> None:
    doc = parse(
        "a: yes\nb: true\nc: 3.10\nd: 0o17\ne: 0x1F\nf: ~\ng: '1'\nh: .inf\ni: -.INF\nj: 010\nk:\nl: 1e3\nm: TRUE\n"
    )
    assert isinstance(doc.root, Mapping)
    plain = yamlpos.to_plain(doc.root)
    assert isinstance(plain, dict)
    assert plain == {
        "a": "yes",
        "b": True,
        "c": 3.1,
        "d": 15,
        "e": 31,
        "f": None,
        "g": "1",
        "h": math.inf,
        "i": -math.inf,
        "j": 10,
        "k": None,
        "l": 1000.0,
        "m": True,
    }
    nan = parse("x: .nan\n").root
    assert isinstance(nan, Mapping)
    value = nan.get("x")
    assert isinstance(value, Scalar) and math.isnan(value.resolved)  # type: ignore[arg-type]


def test_duplicate_keys_are_reported_with_the_first_definition() -> None:
    doc = parse("env:\n  A: 1\n  B: 2\n  A: 3\n")
    [issue] = doc.issues
    assert issue.kind is IssueKind.DUPLICATE_KEY
    assert (issue.span.line, issue.span.column) == (4, 3)
    assert issue.related is not None and (issue.related.line, issue.related.column) == (2, 3)
    env = doc.root.get("env")  # type: ignore[union-attr]
    assert isinstance(env, Mapping)
    assert yamlpos.to_plain(env) == {"A": 1, "B": 2}


def test_aliases_share_the_anchored_node() -> None:
    doc = parse("a: &x {k: v}\nb: *x\n")
    assert doc.issues == []
    root = doc.root
    assert isinstance(root, Mapping)
    assert root.get("a") is root.get("b")
    assert yamlpos.to_plain(root) == {"a": {"k": "v"}, "b": {"k": "v"}}


def test_billion_laughs_stops_at_the_alias_that_crosses_the_limit() -> None:
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]" for i in range(1, 12)]
    doc = parse("\n".join(lines) + "\n")
    [issue] = doc.issues
    assert issue.kind is IssueKind.LIMIT
    # l4's eighth alias takes the expansion past 100,000 nodes; nothing after it is read.
    assert (issue.span.line, issue.span.column) == (5, 45)
    assert not doc.usable


def test_recursive_alias_and_deep_nesting_are_limits_not_crashes() -> None:
    recursive = parse("a: &a [x, *a]\n")
    assert [i.kind for i in recursive.issues] == [IssueKind.LIMIT]
    for depth in (300, 5000):
        deep = parse("a: " + "[" * depth + "]" * depth + "\n")
        assert [i.kind for i in deep.issues] == [IssueKind.LIMIT]
    block = parse("a:\n" + "".join("  " * i + "-\n" for i in range(1, 400)))
    assert [(i.kind, i.span.line) for i in block.issues] == [(IssueKind.LIMIT, yamlpos.MAX_DEPTH + 1)]


def test_syntax_errors_point_where_the_mistake_is() -> None:
    quote = parse("a: 'open\nb: 2\n")
    [issue] = quote.issues
    assert (issue.kind, issue.span.line, issue.span.column) == (IssueKind.SYNTAX, 1, 4)
    tab = parse("a:\n\tb: 1\n")
    assert tab.issues[0].message == "tab character used for indentation; YAML allows only spaces"
    control = parse("a: \x07\n")
    assert (control.issues[0].span.line, control.issues[0].span.column) == (1, 4)
    assert "U+0007" in control.issues[0].message


def test_empty_and_comment_only_files_are_empty_documents() -> None:
    for text in ("", "# only a comment\n\n", "---\n"):
        doc = parse(text)
        assert [i.kind for i in doc.issues] == [IssueKind.EMPTY]
        assert doc.root is None


def test_merge_keys_and_custom_tags_are_unsupported() -> None:
    doc = parse("a: &a {x: 1}\nb:\n  <<: *a\nc: !Ref d\ne: !!str 3\n")
    assert [(i.kind, i.span.line) for i in doc.issues] == [(IssueKind.UNSUPPORTED, 3), (IssueKind.UNSUPPORTED, 4)]
    root = doc.root
    assert isinstance(root, Mapping)
    e = root.get("e")
    assert isinstance(e, Scalar) and e.resolved == "3"


def test_node_at_follows_json_paths() -> None:
    doc = parse("jobs:\n  t:\n    steps:\n      - run: a\n      - run: b\n")
    assert doc.root is not None
    node, key = yamlpos.node_at(doc.root, ["jobs", "t", "steps", 1, "run"])
    assert isinstance(node, Scalar) and node.value == "b"
    assert key is not None and (key.span.line, key.span.column) == (5, 9)


def _value_node(text: str) -> tuple[source.SourceFile, Scalar]:
    file = source.decode("w.yml", text.encode())
    doc = yamlpos.parse(file)
    assert doc.usable, doc.issues
    node = doc.root
    while isinstance(node, Mapping):
        node = node.pairs[-1][1]
    assert isinstance(node, Scalar)
    return file, node


SCALAR_STYLES = [None, "'", '"', "|", ">"]


@settings(max_examples=400, deadline=None)
@given(
    value=st.text(alphabet=st.sampled_from(list("ab :#-'\"\\\t\n{}[],&*!|>%@é\u00a0")), max_size=40),
    style=st.sampled_from(SCALAR_STYLES),
    width=st.sampled_from([8, 20, 80]),
    indent=st.sampled_from([2, 4]),
)
def test_scalar_map_reproduces_every_style_and_points_at_the_source(
    value: str, style: str | None, width: int, indent: int
) -> None:
    text = yaml.dump({"job": {"run": value}}, default_style=style, width=width, indent=indent, allow_unicode=True)
    file, node = _value_node(text)
    mapping = ScalarMap(file, node)
    assert mapping.exact
    assert len(mapping.offsets) == len(node.value)
    for char, offset in zip(node.value, mapping.offsets, strict=True):
        if char not in " \n" and node.style not in ('"',):
            assert file.text[offset] == char


def test_scalar_map_of_a_literal_block_with_explicit_indentation() -> None:
    file, node = _value_node("run: |2\n    indented\n  body\n")
    mapping = ScalarMap(file, node)
    assert node.value == "  indented\nbody\n"
    assert mapping.exact
    assert file.position(mapping.offsets[node.value.index("body")]) == (3, 3)


def _shape(node: yamlpos.Node | None) -> object:
    """Every node's type, span and value, for comparing two parses."""
    if node is None:
        return None
    where = spans(node)
    if isinstance(node, Scalar):
        return ("scalar", where, node.value, node.style, node.tag)
    if isinstance(node, Mapping):
        return ("mapping", where, [(_shape(k), _shape(v)) for k, v in node.pairs])
    assert isinstance(node, Sequence)
    return ("sequence", where, [_shape(item) for item in node.items])


def test_pure_python_parser_gives_the_same_tree_and_issues(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.ci.linter.conftest import FIXTURES

    files = sorted(p for p in FIXTURES.rglob("*.y*ml") if p.is_file() and not p.is_symlink())
    assert len(files) > 30
    results = {}
    for loader in (yaml.CSafeLoader, yaml.SafeLoader):
        monkeypatch.setattr(yamlpos, "_Loader", loader)
        results[loader] = [
            (_shape(doc.root), [(i.kind, spans_of(i.span)) for i in doc.issues])
            for doc in (yamlpos.parse(source.read(p.name, p)) for p in files)
        ]
    assert results[yaml.CSafeLoader] == results[yaml.SafeLoader]


def spans_of(span: Span) -> tuple[int, int]:
    return span.line, span.column
