"""Facts about a Python file, read from its syntax tree: it is parsed, never imported or run.

A fact is a dotted name with its exact span:
- `name`: an identifier where it is used or defined (`x`, the `attr` of `a.attr`,
  a `def`/`class` name, an imported name);
- `import`: what an import statement brings in (`a.b` for `import a.b`,
  `a.b.C` for `from a.b import C`, with `.` prefixes for relative imports);
- `assign`: an assignment target made of names and attributes (`mod.Cls` in
  `mod.Cls = X`, and in `setattr(mod, "Cls", X)`);
- `subclass`: a base class of a `class` statement (`fs.FileSystemWriterAsync`).
"""

from __future__ import annotations

import ast
import enum
from dataclasses import dataclass

from ci_checks.diagnostics import Span
from ci_checks.source import SourceFile


class FactKind(enum.Enum):
    NAME = "name"
    IMPORT = "import"
    ASSIGN = "assign"
    SUBCLASS = "subclass"


@dataclass(frozen=True, slots=True)
class Fact:
    kind: FactKind
    value: str
    span: Span


@dataclass(frozen=True, slots=True)
class PythonSyntaxError:
    message: str
    span: Span


def facts(source: SourceFile) -> list[Fact] | PythonSyntaxError:
    """Every fact of the file in source order, or why it cannot be parsed."""
    try:
        tree = ast.parse(source.text, filename=source.path)
    except SyntaxError as error:
        line = error.lineno or 1
        column = _column(source, line, (error.offset or 1) - 1, in_bytes=False)
        return PythonSyntaxError(f"Python syntax error: {error.msg}", Span.point(source.path, line, column))
    except (RecursionError, MemoryError, ValueError) as error:
        return PythonSyntaxError(f"Python file cannot be parsed: {type(error).__name__}", Span.point(source.path))
    collector = _Collector(source)
    try:
        collector.visit(tree)
    except RecursionError:
        return PythonSyntaxError("Python file is nested too deeply to be read", Span.point(source.path))
    return sorted(collector.found, key=lambda fact: (fact.span.line, fact.span.column, fact.kind.value))


def _column(source: SourceFile, line: int, offset: int, in_bytes: bool = True) -> int:
    """1-based character column of a 0-based offset that `ast` counts in UTF-8 bytes."""
    if not in_bytes:
        return offset + 1
    text = source.line_text(line)
    return len(text.encode("utf-8")[:offset].decode("utf-8", errors="replace")) + 1


def dotted(node: ast.expr) -> str | None:
    """`a.b.c` for a chain of attributes on a name; None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr}" if base is not None else None
    return None


class _Collector(ast.NodeVisitor):
    def __init__(self, source: SourceFile) -> None:
        self.source = source
        self.found: list[Fact] = []

    def span(self, node: ast.AST) -> Span:
        line = getattr(node, "lineno", 1)
        end_line = getattr(node, "end_lineno", None) or line
        column = _column(self.source, line, getattr(node, "col_offset", 0))
        end_column = _column(self.source, end_line, getattr(node, "end_col_offset", None) or 0)
        return Span(self.source.path, line, column, end_line, end_column)

    def add(self, kind: FactKind, value: str, span: Span) -> None:
        self.found.append(Fact(kind, value, span))

    def name_span(self, node: ast.AST, keyword: str, name: str) -> Span:
        """The span of the name after `def`/`class` in a definition's first line."""
        line = node.lineno  # type: ignore[attr-defined]
        text = self.source.line_text(line)
        start = text.find(keyword + " ", max(_column(self.source, line, node.col_offset) - 1, 0))  # type: ignore[attr-defined]
        position = text.find(name, start + len(keyword)) if start >= 0 else -1
        if position < 0:
            return self.span(node)
        return Span(self.source.path, line, position + 1, line, position + 1 + len(name))

    def visit_Name(self, node: ast.Name) -> None:
        self.add(FactKind.NAME, node.id, self.span(node))

    def visit_Attribute(self, node: ast.Attribute) -> None:
        whole = self.span(node)
        if whole.end_line == whole.line:
            whole = Span(
                whole.path, whole.end_line, whole.end_column - len(node.attr), whole.end_line, whole.end_column
            )
        self.add(FactKind.NAME, node.attr, whole)
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.add(FactKind.NAME, node.name, self.name_span(node, "def", node.name))
        self.generic_visit(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self.add(FactKind.NAME, node.name, self.name_span(node, "def", node.name))
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.add(FactKind.NAME, node.name, self.name_span(node, "class", node.name))
        for base in node.bases:
            name = dotted(base)
            if name is not None:
                self.add(FactKind.SUBCLASS, name, self.span(base))
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            span = self.span(alias)
            self.add(FactKind.IMPORT, alias.name, span)
            self.add(FactKind.NAME, alias.asname or alias.name.split(".")[0], span)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = "." * node.level + (node.module or "")
        for alias in node.names:
            span = self.span(alias)
            separator = "" if module.endswith(".") or not module else "."
            self.add(FactKind.IMPORT, f"{module}{separator}{alias.name}", span)
            self.add(FactKind.NAME, alias.asname or alias.name, span)

    def assigned(self, target: ast.expr) -> None:
        if isinstance(target, ast.Tuple | ast.List):
            for item in target.elts:
                self.assigned(item)
            return
        if isinstance(target, ast.Starred):
            self.assigned(target.value)
            return
        name = dotted(target)
        if name is not None:
            self.add(FactKind.ASSIGN, name, self.span(target))

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self.assigned(target)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.assigned(node.target)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.assigned(node.target)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        # setattr(module, "Name", value) rebinds module.Name just as an assignment does.
        if isinstance(node.func, ast.Name) and node.func.id == "setattr" and len(node.args) >= 2:
            owner, attribute = dotted(node.args[0]), node.args[1]
            if owner is not None and isinstance(attribute, ast.Constant) and isinstance(attribute.value, str):
                self.add(FactKind.ASSIGN, f"{owner}.{attribute.value}", self.span(node))
        self.generic_visit(node)
