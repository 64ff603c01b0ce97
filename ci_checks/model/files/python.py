"""The paths a Python file names: only expressions that evaluate to a literal path or to an anchored glob.

The file is parsed, never imported or run. Expressions are evaluated as far as
they can be from what the file itself says: string literals, f-strings, `+`,
`os.path.join`, `os.path.dirname`, `pathlib.Path(...)`, `/`, `.parent`,
`.parents[N]`, `.resolve()`, `__file__`, and names assigned once in the file
from such expressions. A part that cannot be known (a parameter, a loop
variable, a call) stays unknown.

The work is bounded: a name's value is evaluated once, a text longer than
`_LONGEST` characters is unknown (no path is that long), and the whole file
may cost `_STEPS_PER_CHARACTER` steps for each of its characters, past
which every value is unknown. So forty lines of `b = a + a` that spell a
terabyte cost forty evaluations.

A mention is then:

- a path every part of which is known: anchored (built from `__file__`, so a
  repository path) or not (a string such as `"patches/fix.patch"`, whose
  folder is unknown);
- a glob (`glob.glob(...)`, `Path.glob`, `Path.rglob`) whose folder part is
  known, with unknown parts read as `*`.

So `glob.glob(f"{name}/*")` names nothing: its folder is unknown; and
`(ROOT / "patches").glob("*.patch")` names the patches in `patches/`.
"""

from __future__ import annotations

import ast
import posixpath
from dataclasses import dataclass

from ci_checks.core import globs
from ci_checks.core.source import SourceFile
from ci_checks.syntax.pysource import dotted, parse

_UNKNOWN = "\0"
_PATH_CALLS = {"Path", "PurePath", "PosixPath", "PurePosixPath", "pathlib.Path", "pathlib.PurePath"}
_PASSING_CALLS = {"str", "os.fspath", "os.path.abspath", "os.path.realpath", "os.path.normpath", "os.path.expanduser"}
_PASSING_METHODS = {"resolve", "absolute", "expanduser"}
_GLOB_CALLS = {"glob.glob", "glob.iglob", "glob"}
_JOINS = {"os.path.join", "os.path.dirname"}
_PATH_METHODS = {"glob", "rglob", "joinpath", *_PASSING_METHODS}
_LONGEST = 4_096
"""The longest text a value may spell, Linux's PATH_MAX: a longer one is no path, and is unknown."""
_STEPS_PER_CHARACTER = 16
"""The work a file may cost for each of its characters, counted as values evaluated and characters they spell:
linear in the file's size, with room for a name or a string evaluated in several places."""


@dataclass(frozen=True)
class _Value:
    """A path or string being evaluated: `text` with `_UNKNOWN` for parts that cannot be known; `anchored` when it
    starts at the repository root (built from `__file__`)."""

    text: str
    anchored: bool = False

    def joined(self, other: _Value) -> _Value:
        if other.anchored or other.text.startswith("/"):
            return other
        if not self.text:
            return _Value(other.text, self.anchored)
        return _Value(self.text.rstrip("/") + "/" + other.text, self.anchored)


@dataclass(frozen=True)
class PathMention:
    """A path a Python file names: a repository path when `anchored`, else a path relative to an unknown folder;
    `glob` for a glob pattern (unknown parts as `*`)."""

    path: str
    anchored: bool
    glob: bool


def path_mentions(source: SourceFile, path: str) -> list[PathMention]:
    """The paths the Python file at repository path `path` names; [] when it cannot be parsed."""
    try:
        tree = parse(source.text)
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        return []
    evaluator = _Evaluator(path, _assignments(tree), steps=_STEPS_PER_CHARACTER * len(source.text))
    found: list[PathMention] = []
    parts: set[int] = set()
    try:
        for node in ast.walk(tree):  # outer expressions first: the parts of a path are not paths themselves
            if id(node) in parts:
                continue
            mention = evaluator.mention(node)
            if mention is not None:
                found.append(mention)
            if _builds_path(node):
                parts.update(id(inner) for inner in ast.walk(node) if inner is not node)
    except RecursionError:
        return found
    return found


def _builds_path(node: ast.AST) -> bool:
    """Whether an expression makes a path or a pattern out of its parts (`/`, `+`, an f-string, `os.path.join`)."""
    if isinstance(node, ast.BinOp | ast.JoinedStr | ast.Subscript):
        return True
    if isinstance(node, ast.Attribute):
        return node.attr == "parent"
    if not isinstance(node, ast.Call):
        return False
    name = dotted(node.func)
    if name in _PATH_CALLS or name in _PASSING_CALLS or name in _GLOB_CALLS or name in _JOINS:
        return True
    return isinstance(node.func, ast.Attribute) and node.func.attr in _PATH_METHODS


def _assignments(tree: ast.Module) -> dict[str, ast.expr | None]:
    """Names assigned exactly one value in the file (by a plain `NAME = value`); None for any other name bound."""
    values: dict[str, ast.expr | None] = {}
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets, value = [node.target], None
        elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
            targets = [node.target]
        elif isinstance(node, ast.arg):
            values[node.arg] = None
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    single = isinstance(target, ast.Name) and value is not None and name.id not in values
                    values[name.id] = value if single else None
    return values


class _Evaluator:
    def __init__(self, path: str, names: dict[str, ast.expr | None], steps: int) -> None:
        self.folder = posixpath.dirname(path)
        self.file = path
        self.names = names
        self.active: set[str] = set()
        self.steps = steps
        """The work left; at 0 every value is unknown."""
        self.known: dict[str, _Value] = {}
        """The value of each name evaluated without meeting a name that was itself being evaluated."""
        self.cuts = 0
        """How many times a name was met while being evaluated (and read as unknown): a value found without such a
        cut is the name's own, whatever is being evaluated around it."""

    def mention(self, node: ast.AST) -> PathMention | None:
        if isinstance(node, ast.Call) and dotted(node.func) in _GLOB_CALLS and node.args:
            pattern = self.value(node.args[0])
        elif (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("glob", "rglob")
        ):
            if not node.args:
                return None
            middle = "**/" if node.func.attr == "rglob" else ""
            pattern = self.value(node.func.value).joined(_Value(middle + self.value(node.args[0]).text))
        else:
            value = self.value(node)
            if _UNKNOWN in value.text or not value.text or not _may_be_path(node, value):
                return None
            return PathMention(_clean(value.text, value.anchored), value.anchored, globs.has_wildcard(value.text))
        text = pattern.text
        if not pattern.anchored:
            literal = text.partition(_UNKNOWN)[0]
            if _UNKNOWN in text and "/" not in literal:
                return None  # `f"{name}/*"`: no folder is known
        cleaned = _clean(text.replace(_UNKNOWN, "*"), pattern.anchored)
        if not cleaned:
            return None
        return PathMention(cleaned, pattern.anchored, globs.has_wildcard(cleaned))  # `glob("x")` names x alone

    def value(self, node: ast.AST) -> _Value:
        """The value of an expression, as far as it can be known; unknown when it would spell more than `_LONGEST`
        characters or the file's work is spent."""
        if self.steps <= 0:
            return _Value(_UNKNOWN)
        self.steps -= 1
        value = self._value(node)
        self.steps -= len(value.text)
        return value if len(value.text) <= _LONGEST else _Value(_UNKNOWN)

    def _value(self, node: ast.AST) -> _Value:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return _Value(node.value)
        if isinstance(node, ast.JoinedStr):
            parts = [
                self.value(part.value) if isinstance(part, ast.FormattedValue) else self.value(part)
                for part in node.values
            ]
            return _Value("".join(part.text for part in parts), bool(parts) and parts[0].anchored)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Div):
            left, right = self.value(node.left), self.value(node.right)
            if isinstance(node.op, ast.Div):
                return left.joined(right)
            return _Value(left.text + right.text, left.anchored)
        if isinstance(node, ast.Name):
            return self._name(node.id)
        if isinstance(node, ast.Attribute):
            if node.attr == "parent":
                return _parent(self.value(node.value))
            return _Value(_UNKNOWN)
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "parents":
            index = node.slice.value if isinstance(node.slice, ast.Constant) else None
            if isinstance(index, int) and 0 <= index < 16:
                value = _parent(self.value(node.value.value))
                for _ in range(index):
                    value = _parent(value)
                return value
            return _Value(_UNKNOWN)
        if isinstance(node, ast.Call):
            return self._call(node)
        return _Value(_UNKNOWN)

    def _name(self, name: str) -> _Value:
        if name == "__file__":
            return _Value(self.file, anchored=True)
        known = self.known.get(name)
        if known is not None:
            return known
        expression = self.names.get(name)
        if expression is None:
            return _Value(_UNKNOWN)
        if name in self.active:
            self.cuts += 1
            return _Value(_UNKNOWN)
        cuts = self.cuts
        self.active.add(name)
        try:
            value = self.value(expression)
        finally:
            self.active.discard(name)
        if cuts == self.cuts and self.steps > 0:
            self.known[name] = value
        return value

    def _call(self, node: ast.Call) -> _Value:
        name = dotted(node.func)
        arguments = [self.value(argument) for argument in node.args]
        if name == "os.path.join" or name in _PATH_CALLS:
            if not arguments:
                return _Value("")
            value = arguments[0]
            for argument in arguments[1:]:
                value = value.joined(argument)
            return value
        if name == "os.path.dirname" and len(arguments) == 1:
            return _dirname(arguments[0])
        if name in _PASSING_CALLS and len(arguments) == 1:
            return arguments[0]
        if isinstance(node.func, ast.Attribute) and node.func.attr in _PASSING_METHODS and not node.args:
            return self.value(node.func.value)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "joinpath":
            value = self.value(node.func.value)
            for argument in arguments:
                value = value.joined(argument)
            return value
        return _Value(_UNKNOWN)


def _dirname(value: _Value) -> _Value:
    """`os.path.dirname`: the text before the last `/` (that of `"a/b/"` is `"a/b"`); unknown when no `/` is known
    and a part is unknown (it may hold one, or be an absolute path)."""
    if "/" not in value.text and _UNKNOWN in value.text:
        return _Value(_UNKNOWN)
    return _Value(posixpath.dirname(value.text), value.anchored)


def _parent(value: _Value) -> _Value:
    """`PurePath.parent`: a path ends at its last name (the parent of `"a/b/"` is `"a"`)."""
    return _dirname(_Value(value.text.rstrip("/"), value.anchored))


def _may_be_path(node: ast.AST, value: _Value) -> bool:
    """Whether a fully known value is worth a mention: built from `__file__`, or a string that holds a `/` or a
    file suffix (a plain word such as `"utf-8"` names no file). Names and parts of larger paths mention nothing
    themselves: the expression they are used in does."""
    if isinstance(node, ast.Name):
        return False
    return value.anchored or "/" in value.text or "." in value.text


def _clean(text: str, anchored: bool) -> str:
    """The path `text` spells, normalised ("" for its folder itself). An anchored text is relative to the
    repository root, whose own text is "": a `/` it starts with follows the root's real path (`f"{ROOT}/docker"`
    with `ROOT` the root is `/docker`, the repository's `docker`)."""
    normalised = posixpath.normpath(text.lstrip("/") if anchored else text)
    return "" if normalised == "." else normalised
