"""`run:` scripts as command trees, parsed with tree-sitter-bash.

A script becomes a `Script` (a `Block` of statements): simple commands with
their argv, pipelines, `&&`/`||` lists, if/elif/else with their conditions,
loops, case, functions, subshells and groups. Every node carries the exact
span of its text in the file the script came from.

The package is split by concern, each module importing only those before it:
`quoting` (shell text without a parser: word splitting, `${{ }}` masking),
`patterns` (which commands a pattern names), `tree` (the nodes, and the
questions a `Block` answers), `words` (word values) and `parse` (tree-sitter to
tree).
"""

from ci_checks.syntax.shell.parse import parse, parse_fragment
from ci_checks.syntax.shell.patterns import CommandPattern
from ci_checks.syntax.shell.quoting import canonical_word, expression_ranges, mask_expressions, split_words
from ci_checks.syntax.shell.tree import (
    AndOr,
    Assignment,
    Block,
    Case,
    CaseItem,
    Clause,
    Command,
    Function,
    Group,
    IfStatement,
    Locator,
    Loop,
    Negated,
    Pipeline,
    Redirect,
    Redirected,
    Script,
    ShellNode,
    Word,
    walk,
)

__all__ = [
    "AndOr",
    "Assignment",
    "Block",
    "Case",
    "CaseItem",
    "Clause",
    "Command",
    "CommandPattern",
    "Function",
    "Group",
    "IfStatement",
    "Locator",
    "Loop",
    "Negated",
    "Pipeline",
    "Redirect",
    "Redirected",
    "Script",
    "ShellNode",
    "Word",
    "canonical_word",
    "expression_ranges",
    "mask_expressions",
    "parse",
    "parse_fragment",
    "split_words",
    "walk",
]
