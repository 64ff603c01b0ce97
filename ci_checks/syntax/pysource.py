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
import posixpath
import warnings
from collections.abc import Callable
from dataclasses import dataclass

from ci_checks.core.diagnostics import Span
from ci_checks.core.source import SourceFile


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


def parse(text: str) -> ast.Module:
    """`ast.parse`, silent: what Python warns of while parsing (an escape such as `"\\d"`) is the scanned file's to
    hear, not ci-checks' output, and under `-W error` it would make a valid file unreadable."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text)


def facts(source: SourceFile) -> list[Fact] | PythonSyntaxError:
    """Every fact of the file in source order, or why it cannot be parsed."""
    try:
        tree = parse(source.text)
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


# ---------------------------------------------------------------------------
# Module-level constants, read as Python would iterate them, without running anything

Read = Callable[[str], str | None]
"""The text of a repo-relative file, or None when it cannot be read."""

_CONTAINERS: dict[str, Callable[[list[object]], object]] = {
    "frozenset": frozenset,
    "set": set,
    "tuple": tuple,
    "list": list,
    "reversed": lambda items: items[::-1],
    "sorted": sorted,  # type: ignore[dict-item]
}
"""The calls of one iterable that give a container of its elements, as Python makes them."""
_LARGEST = 1_000_000
"""The most elements and characters a constant may hold: a module of doublings (`B = A + A`) is not read whole."""
_FILES = 16
"""The most modules one constant may lead through by `from M import N`."""
_STEPS = 1_000_000
"""The most work reading one constant may take, all modules together, counted in values: each expression evaluated,
each element of a container built or hashed, each value of the plain copy given back. Constants share what they
name, so a file under a kilobyte of dicts that each name the one before sixteen times (`D2 = {"a": D1, "b": D1,
...}`) spells millions of values; past the budget the constant is unreadable, not built."""


class ConstantError(Exception):
    """Why a constant cannot be read without running the module."""


@dataclass(frozen=True)
class _Lazy:
    """A dict value, read only if something looks at it: `list(CONST)` of a dict gives its keys alone."""

    module: _Module
    node: ast.expr


def constant(read: Read, path: str, name: str) -> object:
    """`list(NAME)` of a module-level constant of the Python file at `path`: a dict's keys, a set's or a tuple's
    elements; a string or a number is itself. Raises ConstantError saying why it cannot be read.

    What it gives is made of None, str, int, float, bool, lists and dicts with str keys (`yamlpos.Plain`): a
    literal is one of those scalars, and every container is made a list or such a dict."""
    return _Modules(read).constant(path, name)


def _ordered(value: tuple[object, ...] | list[object] | set[object] | frozenset[object]) -> list[object]:
    """A set in a stable order (Python's own depends on hashing); a sequence as it is."""
    return sorted(value, key=repr) if isinstance(value, set | frozenset) else list(value)


class _Modules:
    def __init__(self, read: Read) -> None:
        self.read = read
        self.loaded: dict[str, _Module] = {}
        self.steps = 0
        """The work done so far, held to `_STEPS`."""
        self.sizes: dict[int, tuple[object, int]] = {}
        """The size of each container already measured, by identity (the container is kept so that its identity
        stays its own): a container that holds another many times is measured in the time of its own elements."""

    def constant(self, path: str, name: str) -> object:
        """`list(NAME)` of the constant, as `constant` gives it."""
        try:
            value = _unwrapped(self.module(path).value(name))
            if isinstance(value, dict):
                return [self.plain(key) for key in value]
            if isinstance(value, tuple | list | set | frozenset):
                return [self.plain(item) for item in _ordered(value)]
            return self.plain(value)
        except RecursionError:
            raise ConstantError(f"{name} in {path} is nested too deeply to be read") from None

    def spend(self, steps: int) -> None:
        self.steps += steps
        if self.steps > _STEPS:
            raise ConstantError(f"reading it takes more than {_STEPS:,} steps")

    def size(self, value: object) -> int:
        """How many elements and characters `value` spells, containers it holds counted at each place (dict values
        are read when looked at, and counted then)."""
        if isinstance(value, str):
            return len(value)
        if not isinstance(value, tuple | list | set | frozenset | dict):
            return 1
        known = self.sizes.get(id(value))
        if known is not None:
            return known[1]
        self.spend(len(value))
        size = len(value) + sum(self.size(item) for item in value)
        self.sizes[id(value)] = (value, size)
        return size

    def hashed(self, items: list[object]) -> None:
        """Spends what hashing these elements costs: a tuple is hashed through all it holds, each time."""
        self.spend(sum(self.size(item) for item in items))

    def plain(self, value: object) -> object:
        self.spend(1)
        value = _unwrapped(value)
        if isinstance(value, _Class):
            raise ConstantError(f"{value.node.name} in {value.module.path} is a class, not a value")
        if isinstance(value, dict):
            return {str(key): self.plain(item) for key, item in value.items()}
        if isinstance(value, tuple | list | set | frozenset):
            return [self.plain(item) for item in _ordered(value)]
        return value

    def module(self, path: str) -> _Module:
        if path not in self.loaded:
            if len(self.loaded) >= _FILES:
                raise ConstantError(f"reading it leads through more than {_FILES} modules")
            text = self.read(path)
            if text is None:
                raise ConstantError(f"{path} cannot be read")
            try:
                tree = parse(text)
            except SyntaxError as error:
                raise ConstantError(f"{path}:{error.lineno or 1} has a Python syntax error: {error.msg}") from None
            except (ValueError, RecursionError, MemoryError) as error:
                raise ConstantError(f"{path} cannot be parsed as Python: {type(error).__name__}") from None
            self.loaded[path] = _Module(self, path, tree)
        return self.loaded[path]

    def find(self, importer: str, module: str, level: int) -> str | None:
        """The repository file `from MODULE import ...` in `importer` reads: relative to it for a relative import,
        else from the root or from any folder above the importer (a `src/` layout)."""
        parts = [part for part in module.split(".") if part]
        folders = posixpath.dirname(importer).split("/") if posixpath.dirname(importer) else []
        if level:
            bases = ["/".join(folders[: len(folders) - level + 1])] if level - 1 <= len(folders) else []
        else:
            bases = ["/".join(folders[:depth]) for depth in range(len(folders) + 1)]
        for base in bases:
            stem = "/".join(part for part in (base, *parts) if part)
            for candidate in (f"{stem}.py", f"{stem}/__init__.py"):
                if candidate and self.read(candidate) is not None:
                    return candidate
        return None


class _Module:
    """The top-level bindings of one module: assignments, classes and `from ... import` names."""

    def __init__(self, modules: _Modules, path: str, tree: ast.Module) -> None:
        self.modules = modules
        self.path = path
        self.bindings: dict[str, list[ast.stmt]] = {}
        for statement in tree.body:
            for bound in _bound_names(statement):
                self.bindings.setdefault(bound, []).append(statement)
        self.values: dict[str, object] = {}
        self.reading: set[str] = set()

    def value(self, name: str) -> object:
        if name in self.values:
            return self.values[name]
        if name in self.reading:
            raise ConstantError(f"{name} in {self.path} is defined in terms of itself")
        statements = self.bindings.get(name)
        if not statements:
            raise ConstantError(f"{self.path} assigns no module-level {name!r}")
        last = max(index for index, statement in enumerate(statements) if not isinstance(statement, ast.AugAssign))
        self.reading.add(name)
        try:
            value: object = None
            for statement in statements[last:]:  # Python keeps the last binding, then what `+=` and `|=` add
                value = self._bind(statement, name, value)
        finally:
            self.reading.discard(name)
        self.values[name] = value
        return value

    def _bind(self, statement: ast.stmt, name: str, before: object) -> object:
        if isinstance(statement, ast.Assign | ast.AnnAssign) and statement.value is not None:
            return self.evaluate(statement.value)
        if isinstance(statement, ast.AugAssign) and statement.value is not None:
            return _operate(statement.op, before, self.evaluate(statement.value), self._where(statement))
        if isinstance(statement, ast.ClassDef):
            return _Class(self, statement)
        if isinstance(statement, ast.ImportFrom):
            for alias in statement.names:
                if (alias.asname or alias.name) == name:
                    found = self.modules.find(self.path, statement.module or "", statement.level)
                    if found is None:
                        raise ConstantError(f"{name} in {self.path} is imported from a module not in the repository")
                    return self.modules.module(found).value(alias.name)
        raise ConstantError(
            f"{name} in {self.path} is bound by {self._what(statement)}, which only running it would tell"
        )

    def evaluate(self, node: ast.expr) -> object:
        self.modules.spend(1)
        value = self._evaluate(node)
        if self.modules.size(value) > _LARGEST:
            raise ConstantError(f"{self._where(node)} holds more than {_LARGEST:,} elements or characters")
        return value

    def _evaluate(self, node: ast.expr) -> object:
        if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, str | int | float | bool)):
            return node.value
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            items = [item for element in node.elts for item in self._elements(element)]
            if isinstance(node, ast.Set):
                self.modules.hashed(items)
            return tuple(items) if isinstance(node, ast.Tuple) else set(items) if isinstance(node, ast.Set) else items
        if isinstance(node, ast.Dict):
            found: dict[object, object] = {}
            for key, item in zip(node.keys, node.values, strict=True):
                if key is None:
                    found.update(self._mapping(item))
                else:
                    hashable = _hashable(self.evaluate(key), self._where(key))
                    self.modules.hashed([hashable])
                    found[hashable] = _Lazy(self, item)
            return found
        if isinstance(node, ast.Name):
            return self.value(node.id)
        if isinstance(node, ast.Attribute):
            return _attribute(self.evaluate(node.value), node.attr, self._where(node))
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.BinOp):
            return _operate(node.op, self.evaluate(node.left), self.evaluate(node.right), self._where(node))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            operand = self.evaluate(node.operand)
            if isinstance(operand, int | float) and not isinstance(operand, bool):
                return -operand if isinstance(node.op, ast.USub) else operand
        raise ConstantError(f"{self._where(node)} is {self._what(node)}, which only running it would tell")

    def _elements(self, node: ast.expr) -> list[object]:
        if isinstance(node, ast.Starred):
            return list(_iterated(self.evaluate(node.value), self._where(node)))
        return [self.evaluate(node)]

    def _mapping(self, node: ast.expr) -> dict[object, object]:
        value = self.evaluate(node)
        self.modules.hashed([value])  # pairs are hashed as the dict is made
        return _mapping(value, self._where(node))

    def _call(self, node: ast.Call) -> object:
        where = self._where(node)
        function = node.func
        if isinstance(function, ast.Attribute) and not node.args and not node.keywords:
            owner = self.evaluate(function.value)
            if isinstance(owner, dict) and function.attr in ("keys", "values", "items", "copy"):
                if function.attr == "keys":
                    return list(owner)
                if function.attr == "values":
                    return [_forced(item) for item in owner.values()]
                if function.attr == "items":
                    return [(key, _forced(item)) for key, item in owner.items()]
                return dict(owner)
        if isinstance(function, ast.Name) and function.id not in self.bindings:
            if function.id == "dict" and len(node.args) <= 1:
                found = dict(self._mapping(node.args[0])) if node.args else {}
                for keyword in node.keywords:
                    if keyword.arg is None:
                        found.update(self._mapping(keyword.value))
                    else:
                        found[keyword.arg] = _Lazy(self, keyword.value)
                return found
            if function.id in _CONTAINERS and len(node.args) <= 1 and not node.keywords:
                items = list(_iterated(self.evaluate(node.args[0]), where)) if node.args else []
                self.modules.hashed(items)  # a set hashes them, `sorted` compares them
                try:
                    return _CONTAINERS[function.id](items)
                except TypeError:  # `sorted` of values that cannot be compared
                    raise ConstantError(f"{where} sorts values that cannot be compared") from None
        raise ConstantError(f"{where} calls {ast.unparse(function)}(), which only running it would tell")

    def _where(self, node: ast.AST) -> str:
        return f"{self.path}:{getattr(node, 'lineno', 1)}"

    def _what(self, node: ast.AST) -> str:
        if isinstance(node, ast.stmt):
            return _STATEMENTS.get(type(node), "a statement")
        text = ast.unparse(node).splitlines()[0]
        return f"`{text if len(text) <= 40 else text[:37] + '...'}`"


_STATEMENTS: dict[type[ast.stmt], str] = {
    ast.FunctionDef: "a `def`",
    ast.AsyncFunctionDef: "an `async def`",
    ast.Import: "an `import`",
    ast.AugAssign: "an augmented assignment",
}


@dataclass(frozen=True)
class _Class:
    """A module-level class, whose body's assignments (an Enum's members) can be read."""

    module: _Module
    node: ast.ClassDef

    def attribute(self, name: str, where: str) -> object:
        for statement in self.node.body:
            if isinstance(statement, ast.Assign | ast.AnnAssign) and statement.value is not None:
                targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                if any(isinstance(target, ast.Name) and target.id == name for target in targets):
                    return _Member(name, self.module.evaluate(statement.value))
        raise ConstantError(f"{where}: class {self.node.name} assigns no {name!r} in its body")


@dataclass(frozen=True)
class _Member:
    """`Class.NAME`: its value; `.value` and `.name` read as an Enum member's do."""

    name: str
    value: object


def _attribute(owner: object, name: str, where: str) -> object:
    if isinstance(owner, _Class):
        return owner.attribute(name, where)
    if isinstance(owner, _Member) and name in ("value", "name"):
        return owner.value if name == "value" else owner.name
    raise ConstantError(f"{where} reads `.{name}` of something that is not a class of the module")


def _forced(value: object) -> object:
    return value.module.evaluate(value.node) if isinstance(value, _Lazy) else value


def _unwrapped(value: object) -> object:
    value = _forced(value)
    return value.value if isinstance(value, _Member) else value


def _iterated(value: object, where: str) -> list[object]:
    value = _unwrapped(value)
    if isinstance(value, dict):
        return list(value)
    if isinstance(value, tuple | list | set | frozenset | str):
        return list(value)
    raise ConstantError(f"{where} iterates {_a(value)}")


def _mapping(value: object, where: str) -> dict[object, object]:
    value = _unwrapped(value)
    if isinstance(value, dict):
        return value
    if isinstance(value, list | tuple) and all(isinstance(pair, tuple | list) and len(pair) == 2 for pair in value):
        return {_hashable(key, where): item for key, item in value}
    raise ConstantError(f"{where} makes a dict of {_a(value)}")


def _hashable(value: object, where: str) -> object:
    value = _unwrapped(value)
    if isinstance(value, list | dict | set):
        raise ConstantError(f"{where} uses {_a(value)} as a dict key or set element")
    return value


def _operate(operator: ast.operator, left: object, right: object, where: str) -> object:
    left, right = _unwrapped(left), _unwrapped(right)
    if isinstance(operator, ast.Add) and type(left) is type(right) and isinstance(left, list | tuple | str):
        return left + right  # type: ignore[operator]
    if isinstance(operator, ast.Add | ast.Sub) and _number(left) and _number(right):
        return left + right if isinstance(operator, ast.Add) else left - right  # type: ignore[operator]
    if isinstance(operator, ast.BitOr) and isinstance(left, dict) and isinstance(right, dict):
        return {**left, **right}
    if isinstance(left, set | frozenset) and isinstance(right, set | frozenset):
        if isinstance(operator, ast.BitOr):
            return left | right
        if isinstance(operator, ast.Sub):
            return left - right
        if isinstance(operator, ast.BitAnd):
            return left & right
    sign = _SIGNS.get(type(operator), type(operator).__name__)
    raise ConstantError(f"{where} combines {_a(left)} and {_a(right)} with `{sign}`, which only running it would tell")


_SIGNS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Mod: "%", ast.BitOr: "|", ast.BitAnd: "&"}


def _a(value: object) -> str:
    if isinstance(value, _Class):
        return f"the class {value.node.name}"
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _bound_names(statement: ast.stmt) -> list[str]:
    """The names a top-level statement binds that a constant can be read from."""
    if isinstance(statement, ast.Assign):
        return [target.id for target in statement.targets if isinstance(target, ast.Name)]
    if isinstance(statement, ast.AnnAssign | ast.AugAssign) and isinstance(statement.target, ast.Name):
        return [statement.target.id]
    if isinstance(statement, ast.ClassDef):
        return [statement.name]
    if isinstance(statement, ast.ImportFrom):
        return [alias.asname or alias.name for alias in statement.names if alias.name != "*"]
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
        return [statement.name]
    if isinstance(statement, ast.Import):
        return [alias.asname or alias.name.split(".")[0] for alias in statement.names]
    return []
