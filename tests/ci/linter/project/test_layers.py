"""The tree shows the architecture: one package per layer, and imports that only go down.

`ci_checks` is built in layers, lowest first: `core` (files, positions,
findings, the repository's listing), `syntax` (positioned YAML, shell, Python
and Dockerfile trees), `model` (workflows, actions, steps, values, files),
`rules` (the built-in rules and their registry), `policy` (a repository's own
rules), `backends` (the external linters), `config` (reading the
configuration, choosing what runs), `engine` (a check from options to
outcome), `reporters` (positions become text), `server` and `cli` (the
front-ends). A module may import its own layer and the ones below, never one
above, so that no two packages need each other. The top level holds only the
public faces (`registry`, `query`, `pytest_plugin`) above every layer, and
`ci_checks/__init__.py`, which is the version alone and imports nothing.

The checkpoint harness is a package of its own, `ci_checks_checkpoint`: of the
linter it uses the bottom layer alone (sizes such as `4MiB` are read the same
way), and the linter reaches it only from its command line
(`ci-checks checkpoint`).

Edges are read from the syntax trees, as in `test_import_circles.py`: every
import statement counts, at module level, in a function or under
`if TYPE_CHECKING:`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.ci.linter.project.test_import_circles import PACKAGE, circles, import_graph

LAYERS = ("core", "syntax", "model", "rules", "policy", "backends", "config", "engine", "reporters", "server", "cli")
PUBLIC_FACES = frozenset({"__init__", "registry", "query", "pytest_plugin"})
HARNESS = PACKAGE.parent / "ci_checks_checkpoint"


def layer_of(module: str, layers: tuple[str, ...] = LAYERS) -> int:
    """A module's place in the stack: its layer's index; the package root (the version) lowest; the public faces
    above every layer."""
    parts = module.split(".")
    if len(parts) == 1:
        return -1
    if parts[1] in layers:
        return layers.index(parts[1])
    return len(layers)


def upward_imports(graph: dict[str, set[str]], layers: tuple[str, ...] = LAYERS) -> list[str]:
    return sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        for target in targets
        if layer_of(target, layers) > layer_of(module, layers)
    )


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The graph between packages: `ci_checks.engine.session -> ci_checks.core.source` is `engine -> core`."""
    packages: dict[str, set[str]] = {}
    for module, targets in graph.items():
        source = ".".join(module.split(".")[:2])
        packages.setdefault(source, set()).update(".".join(t.split(".")[:2]) for t in targets)
    return {source: targets - {source} for source, targets in packages.items()}


def _top_level_names(package: Path) -> tuple[set[str], set[str]]:
    modules = {path.stem for path in package.glob("*.py")}
    folders = {path.parent.name for path in package.glob("*/__init__.py")}
    return modules, folders


def _imported(package: Path) -> dict[str, set[str]]:
    """Each module of a package (its path) with the absolute module names its import statements name."""
    found: dict[str, set[str]] = {}
    for path in sorted(package.rglob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module)
        found[path.relative_to(package.parent).as_posix()] = names
    return found


def test_the_top_level_holds_the_public_faces_and_one_package_per_layer() -> None:
    modules, folders = _top_level_names(PACKAGE)
    assert modules == PUBLIC_FACES
    assert folders == set(LAYERS)


def test_the_package_root_is_the_version_alone() -> None:
    assert import_graph(PACKAGE)["ci_checks"] == set()


def test_no_import_runs_up_between_layers() -> None:
    assert upward_imports(import_graph(PACKAGE)) == []


def test_no_circle_between_packages() -> None:
    assert [" -> ".join(path) for path in circles(package_graph(import_graph(PACKAGE)))] == []


def test_the_checkpoint_harness_uses_the_linters_core_alone() -> None:
    linter = {name for names in _imported(HARNESS).values() for name in names if name.partition(".")[0] == "ci_checks"}
    assert linter == {"ci_checks.core.source"}


def test_the_linter_reaches_the_harness_from_its_command_line_only() -> None:
    imports = _imported(PACKAGE)
    assert sorted(
        path for path, names in imports.items() if any(n.startswith("ci_checks_checkpoint") for n in names)
    ) == ["ci_checks/cli/main.py"]


def test_no_module_of_the_harness_is_in_an_import_circle() -> None:
    assert circles(import_graph(HARNESS)) == []


@pytest.mark.parametrize(
    ("importer", "imported", "upward"),
    [
        ("low/a.py", "from pkg.high import b", True),
        ("low/a.py", "def later() -> None:\n    from pkg.high.b import B\n", True),
        ("high/b.py", "from pkg.low import a", False),
        ("registry.py", "from pkg.high import b", False),
        ("__init__.py", "from pkg.low import a", True),
    ],
)
def test_an_import_that_runs_up_is_found(tmp_path: Path, importer: str, imported: str, upward: bool) -> None:
    package = tmp_path / "pkg"
    for folder in ("low", "high"):
        (package / folder).mkdir(parents=True)
        (package / folder / "__init__.py").write_text("")
    (package / "low" / "a.py").write_text("A = 1\n")
    (package / "high" / "b.py").write_text("B = 2\n")
    (package / "registry.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / importer).write_text(imported + "\n")
    found = upward_imports(import_graph(package), ("low", "high"))
    assert bool(found) == upward, found


def test_a_circle_between_packages_is_found_where_no_module_circle_is() -> None:
    graph = {"p.a.x": {"p.b.y"}, "p.b.y": set(), "p.b.z": {"p.a.w"}, "p.a.w": set()}
    assert circles(graph) == []
    assert circles(package_graph(graph)) == [["p.a", "p.b", "p.a"]]
