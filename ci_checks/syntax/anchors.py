"""Where an inline comment sits, in terms a change cannot fake by copying a line: its anchor.

Under `--config-ref REF` a comment of a checked file that turns a check off
(ci-checks' `# ci-checks: ignore[...]`, zizmor's `# zizmor: ignore[...]`, a
`# shellcheck disable=...` directive in a `run:` script) counts only where
REF's file has the same comment on the same anchor. The anchor is

- the comment's own text;
- the key path of the line the comment covers in a workflow or action
  (`jobs.build.steps[name=Build].run`; a sequence item is named by its `id`,
  else its `name`, else its position), empty in any other file;
- the text it covers: that line, or, where a step, a job (any key whose value
  is a block) or a Dockerfile instruction starts on it, every line of that
  block, each without its indentation.

So a comment copied next to new code covers other text, or sits under another
key, and is not the base's; a step or job whose ignore comment the base has
counts only while the change leaves it as it was. Each anchor of REF counts
as many times as REF has it: a second copy of a step with its comment is not
covered by the first one's.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from ci_checks.core.source import SourceFile
from ci_checks.syntax import yamlpos
from ci_checks.syntax.dockerfile import Dockerfile
from ci_checks.syntax.yamlpos import Mapping, Node, Scalar, Sequence

Anchor = tuple[str, str, str]
"""The comment's text, the key path of the line it covers, and the text it covers."""


@dataclass(frozen=True)
class Layout:
    """The key path of each line of one file, and the last line of each block (step, job, instruction) by its first."""

    source: SourceFile
    path_lines: list[int]
    paths: list[str]
    block_ends: dict[int, int]
    _covered: dict[int, str] = field(default_factory=dict)
    """The covered text by line, joined once however many comments cover a block (work stays linear)."""

    def anchor(self, comment: str, line: int) -> Anchor:
        """The anchor of `comment` when it covers `line`."""
        index = bisect.bisect_right(self.path_lines, line) - 1
        path = self.paths[index] if index >= 0 else ""
        covered = self._covered.get(line)
        if covered is None:
            last = max(line, min(self.block_ends.get(line, line), len(self.source.line_starts)))
            covered = "\n".join(self.source.line_text(number).strip() for number in range(line, last + 1))
            self._covered[line] = covered
        return comment.strip(), path, covered


def layout(source: SourceFile, root: Node | None, dockerfile: Dockerfile | None = None) -> Layout:
    """The layout of a file from its YAML tree (a workflow, an action) or its instructions (a Dockerfile)."""
    starts: dict[int, str] = {}
    ends: dict[int, int] = {}
    if root is not None:
        _walk(root, starts, ends)
    if dockerfile is not None:
        for instruction in dockerfile.instructions:
            _block(ends, instruction.span.line, instruction.span.end_line, instruction.span.end_column)
    lines = sorted(starts)
    return Layout(source, lines, [starts[line] for line in lines], ends)


def yaml_layout(source: SourceFile) -> Layout:
    """The layout of a YAML file read from elsewhere (REF's copy of a workflow)."""
    return layout(source, yamlpos.parse(source).root if source.problem is None else None)


class Trusted:
    """The anchors of REF's file: each may be claimed as many times as REF has it."""

    def __init__(self, anchors: Iterable[Anchor]) -> None:
        self._left = Counter(anchors)

    def claim(self, anchor: Anchor) -> bool:
        """Whether REF has this anchor not claimed yet (and claim it)."""
        if self._left[anchor] <= 0:
            return False
        self._left[anchor] -= 1
        return True


def next_code_line(source: SourceFile, line: int) -> int:
    """The first line after `line` that is neither blank nor only a comment (`line` itself when there is none)."""
    for following in range(line + 1, len(source.line_starts) + 1):
        text = source.line_text(following).strip()
        if text and not text.startswith("#"):
            return following
    return line


def _walk(root: Node, starts: dict[int, str], ends: dict[int, int]) -> None:
    """Record the key path of each node at its first line (a deeper node on the same line wins) and the last line
    of each block collection, visiting each node once (an alias repeats a node, not its text)."""
    seen: set[int] = set()
    stack: list[tuple[Node, str]] = [(root, "")]
    while stack:
        node, path = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        starts[node.span.line] = path
        children: list[tuple[Node, str]] = []
        if isinstance(node, Mapping):
            for key, value in node.items():
                child = f"{path}.{key.value}" if path else key.value
                children.append((value, child))
                if isinstance(value, (Mapping, Sequence)):
                    _block(ends, key.span.line, value.span.end_line, value.span.end_column)
                starts[key.span.line] = child
        elif isinstance(node, Sequence):
            for index, item in enumerate(node.items):
                children.append((item, f"{path}[{_item_name(item, index)}]"))
                if isinstance(item, Mapping):
                    _block(ends, item.span.line, item.span.end_line, item.span.end_column)
        # Pushed in reverse so that they are visited in document order, a deeper node after its parent.
        stack.extend(reversed(children))


def _block(ends: dict[int, int], first: int, end_line: int, end_column: int) -> None:
    """A block collection ends where the next token starts: a first column is the line before it."""
    last = end_line - 1 if end_column <= 1 and end_line > first else end_line
    ends[first] = max(ends.get(first, first), last)


def _item_name(item: Node, index: int) -> str:
    if isinstance(item, Mapping):
        for key in ("id", "name"):
            value = item.get(key)
            if isinstance(value, Scalar):
                return f"{key}={value.value}"
    return str(index)
