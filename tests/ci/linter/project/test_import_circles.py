"""No module of `ci_checks` imports, directly or through others, a module that imports it.

The graph is built from the syntax trees of the package's modules, and every
import statement counts wherever it is written: at module level, under
`if TYPE_CHECKING:` and inside functions. An import deferred into a function
(to keep start-up light, see `test_imports.py`) or kept for type checking
still says that one module needs the other; counting it means a circle cannot
be hidden by moving its import into a function.

`from package import name` is an edge to the module `package.name` when there
is one, else to `package` (its `__init__`). Importing `a.b` also runs `a`'s
`__init__`, but that implicit edge is not counted: a package that imports its
own submodules would otherwise always be a circle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import ci_checks

PACKAGE = Path(ci_checks.__file__).parent


def modules(package: Path) -> dict[str, tuple[Path, bool]]:
    """Every module of the package by dotted name, with its file and whether it is a package's `__init__`."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = [package.name, *path.relative_to(package).with_suffix("").parts]
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def imported(name: str, path: Path, is_package: bool, known: dict[str, tuple[Path, bool]]) -> Iterator[str]:
    """The package's modules that the module's import statements name, anywhere in it."""
    here = name.split(".") if is_package else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            source = ".".join([*base, *([node.module] if node.module else [])])
            for alias in node.names:
                target = f"{source}.{alias.name}"
                if target in known:
                    yield target
                elif source in known:
                    yield source


def import_graph(package: Path) -> dict[str, set[str]]:
    known = modules(package)
    return {
        name: {target for target in imported(name, path, is_package, known) if target != name}
        for name, (path, is_package) in known.items()
    }


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle through each group of modules that import one another (Tarjan's strongly connected components),
    each written as the path `a -> b -> ... -> a`."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(graph.get(module, ())):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == module:
                    break
            if len(group) > 1:
                groups.append(group)

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return [_path_through(group, graph) for group in groups]


def _path_through(group: set[str], graph: dict[str, set[str]]) -> list[str]:
    """A circle inside a group of modules that all reach one another: from its first module, back to it."""
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        module = frontier.pop(0)
        for target in sorted(graph[module] & group):
            if target == start:
                return [*paths[module], start]
            if target not in paths:
                paths[target] = [*paths[module], target]
                frontier.append(target)
    raise AssertionError(f"{sorted(group)} is not a circle")


def test_no_module_of_ci_checks_is_in_an_import_circle() -> None:
    found = circles(import_graph(PACKAGE))
    assert [" -> ".join(path) for path in found] == []


def test_a_circle_through_a_function_or_type_checking_import_is_found(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "from pkg.a import A\n",
        "a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.sub import b\nA = 1\n",
        "sub/__init__.py": "",
        "sub/b.py": "def later():\n    from ..c import C\n",
        "c.py": "import pkg.a\nC = 2\n",
        "d.py": "from pkg import a, sub\n",
    }
    for name, text in files.items():
        (package / name).write_text(text)
    graph = import_graph(package)
    assert graph["pkg.d"] == {"pkg.a", "pkg.sub"}
    assert circles(graph) == [["pkg.a", "pkg.sub.b", "pkg.c", "pkg.a"]]
