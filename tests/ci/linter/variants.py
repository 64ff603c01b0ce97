"""Reformattings of the seed workflow that change its text but not what it does.

String-splitting tests break on each of them; structural answers must not.
Every function takes and returns a whole workflow file whose override step is
`- name: Install Megatron` with `env:` and `run: |` keys.
"""

from __future__ import annotations

import re
from collections.abc import Callable

STEP = "      - name: Install Megatron\n"


def reindent(text: str) -> str:
    """2-space indentation becomes 4-space, keeping "- " items aligned with their content."""
    lines = []
    items: list[int] = []  # columns of the "- " items enclosing the current line
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        if not line.strip():
            lines.append(line)
            continue
        while items and items[-1] >= indent:
            items.pop()
        lines.append(" " * (2 * indent - 2 * len(items)) + line[indent:])
        if line[indent:].startswith("- "):
            items.append(indent)
    return "\n".join(lines) + "\n"


def strip_final_newline(text: str) -> str:
    """`run: |` becomes `run: |-`."""
    assert "run: |\n" in text
    return text.replace("run: |\n", "run: |-\n")


def reorder_keys(text: str) -> str:
    """The override step's keys in the order run, env, name instead of name, env, run."""
    first = re.search(r'^      - name: "?Install Megatron"?\n', text, re.MULTILINE)
    assert first is not None
    start = first.start()
    end = text.find("\n      - ", first.end())
    end = len(text) if end < 0 else end + 1
    groups: dict[str, list[str]] = {"name": ["        " + first.group().removeprefix("      - ")]}
    key = "name"
    for line in text[first.end() : end].splitlines(keepends=True):
        match = re.match(r"        ([a-z-]+):", line)
        if match:
            key = match.group(1)
        groups.setdefault(key, []).append(line)
    body = groups["run"] + groups["env"] + groups["name"]
    return text[:start] + "      - " + body[0].lstrip() + "".join(body[1:]) + text[end:]


def quote_step_names(text: str) -> str:
    assert "name: Install Megatron\n" in text
    return text.replace("name: Install Megatron\n", 'name: "Install Megatron"\n')


def insert_comments(text: str) -> str:
    """A YAML comment line at the top of the steps and a shell comment line at the top of the override branch."""
    text = text.replace("    steps:\n", "    steps:\n      # Overrides the image's Megatron-LM with a pull request.\n")
    marker = 'if [ -n "$MEGATRON_PR" ]; then\n'
    index = text.index(marker) + len(marker)
    line_start = text.rfind("\n", 0, index - len(marker)) + 1
    indent = text[line_start : index - len(marker)]
    return text[:index] + indent + "  # fetch the requested ref\n" + text[index:]


def everything(text: str) -> str:
    return reindent(reorder_keys(insert_comments(quote_step_names(strip_final_newline(text)))))


VARIANTS: dict[str, Callable[[str], str]] = {
    "as written": lambda text: text,
    "indented by 4": reindent,
    "literal strip |-": strip_final_newline,
    "keys reordered": reorder_keys,
    "quoted step name": quote_step_names,
    "comment lines": insert_comments,
    "all of them": everything,
}


def line_of(text: str, needle: str, after: str = "") -> tuple[int, int]:
    """1-based line and column of the first `needle` after the first `after`: expectations from the text itself."""
    index = text.index(needle, text.index(after) if after else 0)
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1
