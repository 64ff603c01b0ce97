"""Where a workflow reads a context: each `secrets.X`, `inputs.X` and `github.event.inputs.X`, placed exactly.

Contexts are read inside `${{ }}` in any value, and anywhere in an `if:`
(which is an expression without them). Text inside a string literal
(`'secrets.X'`) is not a read; `secrets[...]` with a computed name is not
one that can be named.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from ci_checks.core.diagnostics import Span
from ci_checks.core.source import SourceFile
from ci_checks.model.expressions import EXPRESSION
from ci_checks.model.steps import ScalarLocator
from ci_checks.syntax.yamlpos import Mapping, Node, Scalar, Sequence

_READ = re.compile(
    r"(?<![\w.-])(?P<context>github\.event\.inputs|inputs|secrets)"
    r"(?:\.(?P<name>[A-Za-z_][A-Za-z0-9_-]*)|\[\s*'(?P<quoted>[^']+)'\s*\])",
    re.IGNORECASE,
)
_STRING = re.compile(r"'(?:[^']|'')*'")


@dataclass(frozen=True)
class Read:
    context: str
    """`secrets`, `inputs` or `github.event.inputs`, as GitHub names them (lower case)."""
    name: str
    span: Span
    """The whole reference, `secrets.HF_TOKEN`."""
    guards: tuple[str, ...] = ()
    """The `if:` conditions of the job and step it is read in: it is read only where they hold."""


def reads(root: Node | None, source: SourceFile) -> Iterator[Read]:
    """Every named read of `secrets`, `inputs` and `github.event.inputs` under `root`, in document order."""
    found: list[Read] = []
    stack: list[tuple[Node, bool, tuple[str, ...]]] = [(root, False, ())] if root is not None else []
    seen: set[int] = set()
    while stack:
        node, condition, guards = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, Scalar) and node.resolved is not None:
            found.extend(_in_scalar(node, condition, guards, source))
        elif isinstance(node, Mapping):
            test = node.get("if")
            inner = (*guards, test.value) if isinstance(test, Scalar) and test.resolved is not None else guards
            stack.extend((value, key.value == "if", inner) for key, value in node.items())
        elif isinstance(node, Sequence):
            stack.extend((item, False, guards) for item in node.items)
    yield from sorted(found, key=lambda read: (read.span.line, read.span.column))


def _in_scalar(node: Scalar, condition: bool, guards: tuple[str, ...], source: SourceFile) -> Iterator[Read]:
    text = node.value
    if not ("secrets" in text or "inputs" in text):
        return  # most values read neither
    bodies = [(0, len(text))] if condition and "${{" not in text else []
    bodies += [(match.start("body"), match.end("body")) for match in EXPRESSION.finditer(text)]
    locator = ScalarLocator(source, node)
    for start, end in bodies:
        body = _STRING.sub(_blank, text[start:end])
        for match in _READ.finditer(body):
            name = match.group("name") or match.group("quoted")
            span = locator.span(start + match.start(), start + match.end())
            yield Read(match.group("context").lower(), name, span, guards)


def _blank(match: re.Match[str]) -> str:
    """A string literal as spaces, so that nothing in it reads as a context, unless it names a property
    (`secrets['X']`)."""
    before = match.string[: match.start()].rstrip()
    return match.group() if before.endswith("[") else " " * len(match.group())
