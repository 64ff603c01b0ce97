"""Parsing scripts with tree-sitter-bash into the command tree (`ci_checks.syntax.shell.tree`)."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from ci_checks.core.diagnostics import Span
from ci_checks.syntax.shell.quoting import expression_ranges, mask_expressions
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
    read_conditions_with,
)
from ci_checks.syntax.shell.words import WORD_TYPES, WordDecoder

if TYPE_CHECKING:
    import tree_sitter


@cache
def _parser() -> tree_sitter.Parser:
    # Imported when the first script is parsed: a run that parses none never loads the parser.
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


_REDIRECT_TYPES = {"file_redirect", "heredoc_redirect", "herestring_redirect"}
_SEPARATORS = {";", ";;", "&", "\n", ";&", ";;&"}
_CLAUSE_SKIPPED = {"elif_clause", "else_clause", "fi", "if", "elif", "comment"}


class _OffsetLocator:
    """Spans relative to the script itself: for patterns and conditions given as text."""

    def span(self, start: int, end: int) -> Span:
        return Span("<pattern>", 1, start + 1, 1, end + 1)


MAX_NESTING = 100
"""Statements inside one another (`if` in `if`, `$( )` in `$( )`) that a script may have: real ones have a few."""


class _TooDeep(Exception):
    def __init__(self, node: tree_sitter.Node) -> None:
        super().__init__(node.type)
        self.node = node


class _Converter(WordDecoder):
    depth = 0
    """How many statements the one being read is inside."""

    def redirects(self, node: tree_sitter.Node) -> list[Redirect]:
        """A redirect node as `Redirect`s; a here-document may carry a nested file redirect."""
        start, end = self.bounds(node)
        operator = ""
        target: Word | None = None
        heredoc: str | None = None
        nested: list[Redirect] = []
        for child in node.children:
            kind = child.type
            if kind == "heredoc_body":
                heredoc = self.source(child)
            elif kind == "heredoc_start":
                target = self.word(child)
            elif kind in _REDIRECT_TYPES:
                nested.extend(self.redirects(child))
            elif kind in ("heredoc_end", "file_descriptor", "comment"):
                continue
            elif child.is_named:
                if target is None:
                    target = self.word(child)
            elif not operator:
                operator = self.source(child)
        return [Redirect(self.locator, start, end, operator, target, heredoc), *nested]

    def block(self, owner: tree_sitter.Node, nodes: list[tree_sitter.Node]) -> Block:
        statements: list[ShellNode] = []
        for child in nodes:
            statements.extend(self.statement(child))
        if nodes:
            start, _ = self.bounds(nodes[0])
            _, end = self.bounds(nodes[-1])
        else:
            start, end = self.bounds(owner)
        return Block(self.locator, start, end, statements, self.text[start:end])

    def statement(self, node: tree_sitter.Node) -> list[ShellNode]:
        """The statement(s) a node is; `_TooDeep` past `MAX_NESTING` statements inside one another."""
        self.depth += 1
        try:
            if self.depth > MAX_NESTING:
                raise _TooDeep(node)
            return self._statement(node)
        finally:
            self.depth -= 1

    def _statement(self, node: tree_sitter.Node) -> list[ShellNode]:
        kind = node.type
        if node.is_missing:
            start, end = self.bounds(node)
            self.errors.append(self.span(start, end))
            return []
        if kind in ("comment", "heredoc_body") or kind in _SEPARATORS or not node.is_named:
            return []
        start, end = self.bounds(node)
        if kind == "ERROR":
            self.errors.append(self.span(start, end))
            found: list[ShellNode] = []
            for child in node.named_children:
                found.extend(self.statement(child))
            return found
        if kind == "command":
            return [self.command(node)]
        if kind in ("declaration_command", "unset_command"):
            words = []
            for child in node.children:
                if child.type == "variable_assignment":
                    words.append(self.assignment_word(child))
                elif child.type != "comment":
                    words.append(self.word(child))
            return [Command(self.locator, start, end, words, text=self.text[start:end])]
        if kind in ("test_command",):
            return [Command(self.locator, start, end, self.test_words(node), text=self.text[start:end])]
        if kind in ("variable_assignment",):
            return [Assignment(self.locator, start, end, [self.assignment_word(node)])]
        if kind == "variable_assignments":
            words = [self.assignment_word(c) for c in node.named_children if c.type == "variable_assignment"]
            return [Assignment(self.locator, start, end, words)]
        if kind == "redirected_statement":
            return self.redirected(node)
        if kind == "pipeline":
            stages = [s for child in node.named_children for s in self.statement(child)]
            return [Pipeline(self.locator, start, end, stages)]
        if kind == "list":
            # `a && b || c` nests to the left, list(list(a, b), c): walked down in a loop, not by recursion,
            # so that a long chain is not mistaken for deep nesting.
            chain = [node]
            while chain[-1].named_children and chain[-1].named_children[0].type == "list":
                chain.append(chain[-1].named_children[0])
            items: list[ShellNode] = []
            operators: list[str] = []
            for level in reversed(chain):
                nested = level.named_children[0] if level is not chain[-1] else None
                for child in level.children:
                    if child.type in ("&&", "||"):
                        operators.append(child.type)
                    elif child.is_named and child != nested:
                        converted = self.statement(child)
                        if len(converted) == 1 and isinstance(converted[0], AndOr):
                            items.extend(converted[0].items)
                            operators.extend(converted[0].operators)
                        else:
                            items.extend(converted)
            return [AndOr(self.locator, start, end, items, operators)]
        if kind == "negated_command":
            inner = [s for child in node.named_children for s in self.statement(child)]
            return [Negated(self.locator, start, end, inner[0])] if len(inner) == 1 else inner
        if kind == "if_statement":
            return [self.if_statement(node)]
        if kind in ("while_statement", "for_statement", "c_style_for_statement"):
            return [self.loop(node)]
        if kind == "case_statement":
            return [self.case(node)]
        if kind == "function_definition":
            name_node = node.child_by_field_name("name")
            body_node = node.child_by_field_name("body")
            body = self.body_of(body_node) if body_node is not None else self.block(node, [])
            return [Function(self.locator, start, end, self.source(name_node) if name_node else "", body)]
        if kind in ("subshell", "compound_statement"):
            return [Group(self.locator, start, end, self.body_of(node), kind == "subshell")]
        if kind in ("do_group",):
            return list(self.body_of(node).statements)
        if kind in WORD_TYPES:
            return [Command(self.locator, start, end, [self.word(node)], text=self.text[start:end])]
        return []

    def body_of(self, node: tree_sitter.Node) -> Block:
        """The statements of a `{ }`, `( )` or `do ... done`, without the delimiters."""
        inner = [c for c in node.named_children if c.type != "comment"]
        return self.block(node, inner)

    def command(self, node: tree_sitter.Node) -> Command:
        start, end = self.bounds(node)
        words: list[Word] = []
        assignments: list[Word] = []
        redirects: list[Redirect] = []
        for child in node.children:
            kind = child.type
            if kind == "variable_assignment":
                assignments.append(self.assignment_word(child))
            elif kind == "command_name":
                words.extend(self.word(grandchild) for grandchild in child.named_children)
            elif kind in _REDIRECT_TYPES:
                redirects.extend(self.redirects(child))
            elif kind == "comment":
                continue
            elif child.is_named:
                words.append(self.word(child))
        return Command(self.locator, start, end, words, assignments, redirects, self.text[start:end])

    def redirected(self, node: tree_sitter.Node) -> list[ShellNode]:
        body_node = node.child_by_field_name("body")
        redirects = [r for c in node.children if c.type in _REDIRECT_TYPES for r in self.redirects(c)]
        if body_node is None:
            return []
        converted = self.statement(body_node)
        if len(converted) != 1 or not redirects:
            return converted
        target = converted[0]
        if isinstance(target, Command):
            target.redirects.extend(redirects)
            return [target]
        start, end = self.bounds(node)
        if isinstance(target, (AndOr, Pipeline)):
            # tree-sitter-bash hangs a redirection written after `a && b` or `a | b` on the whole list, where
            # bash gives it to the last command: `cd /tmp && patch -p1 < fix.patch` reads fix.patch in /tmp.
            _redirect_last(target, redirects, end)
            return [target]
        return [Redirected(self.locator, start, end, target, redirects)]

    def if_statement(self, node: tree_sitter.Node) -> IfStatement:
        start, end = self.bounds(node)
        clauses: list[Clause] = []
        clauses.append(self.clause(node, "if"))
        for child in node.named_children:
            if child.type == "elif_clause":
                clauses.append(self.clause(child, "elif"))
            elif child.type == "else_clause":
                body = [c for c in child.named_children if c.type != "comment"]
                clauses.append(Clause("else", None, self.block(child, body)))
        return IfStatement(self.locator, start, end, clauses)

    def clause(self, node: tree_sitter.Node, keyword: str) -> Clause:
        condition: list[tree_sitter.Node] = []
        body: list[tree_sitter.Node] = []
        seen_then = False
        for child in node.children:
            if child.type == "then":
                seen_then = True
            elif child.type in _CLAUSE_SKIPPED or not child.is_named:
                continue
            elif seen_then:
                body.append(child)
            else:
                condition.append(child)
        return Clause(keyword, self.block(node, condition), self.block(node, body))

    def loop(self, node: tree_sitter.Node) -> Loop:
        start, end = self.bounds(node)
        keyword = node.children[0].type if node.children else "for"
        body_node = node.child_by_field_name("body")
        body = self.body_of(body_node) if body_node is not None else self.block(node, [])
        if node.type == "while_statement":
            condition = [c for c in node.children_by_field_name("condition") if c.is_named]
            return Loop(self.locator, start, end, keyword, body, condition=self.block(node, condition))
        if node.type == "c_style_for_statement":
            return Loop(self.locator, start, end, "for ((", body)
        variable_node = node.child_by_field_name("variable")
        words = [self.word(c) for c in node.children_by_field_name("value")]
        variable = self.source(variable_node) if variable_node is not None else None
        return Loop(self.locator, start, end, keyword, body, variable, words)

    def case(self, node: tree_sitter.Node) -> Case:
        start, end = self.bounds(node)
        subject_node = node.child_by_field_name("value")
        items = []
        for item in node.named_children:
            if item.type != "case_item":
                continue
            pattern_nodes = item.children_by_field_name("value")
            patterns = [self.word(c) for c in pattern_nodes]
            body = [c for c in item.named_children if c.type != "comment" and c not in pattern_nodes]
            items.append(CaseItem(patterns, self.block(item, body)))
        subject = self.word(subject_node) if subject_node is not None else None
        return Case(self.locator, start, end, subject, items)


def parse(text: str, locator: Locator) -> Script:
    """Parse a bash/sh script; positions come from `locator`."""
    ranges = expression_ranges(text)
    masked = mask_expressions(text, ranges)
    converter = _Converter(text, masked, ranges, locator)
    tree = _parser().parse(converter.data)
    root = tree.root_node
    statements: list[ShellNode] = []
    try:
        for child in root.children:
            statements.extend(converter.statement(child))
    except _TooDeep as deep:
        start, end = converter.bounds(deep.node)
        problem = f"shell statements are nested more than {MAX_NESTING} deep"
        return Script(locator, 0, len(text), [], text, [converter.span(start, end)], problem)
    if root.has_error and not converter.errors:
        _collect_errors(converter, root)
    return Script(locator, 0, len(text), statements, text, converter.errors)


def parse_fragment(text: str) -> Script:
    """Parse a piece of shell given as text (a pattern, a condition); its spans count from 1:1 of the text."""
    return parse(text, _OffsetLocator())


read_conditions_with(parse_fragment)


def _collect_errors(converter: _Converter, root: tree_sitter.Node) -> None:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            start, end = converter.bounds(node)
            converter.errors.append(converter.span(start, end))
        elif node.has_error:
            stack.extend(node.children)


def _redirect_last(statement: AndOr | Pipeline, redirects: list[Redirect], end: int) -> None:
    """Gives `redirects` (written at the end of `statement`, up to offset `end`) to its last command."""
    items = statement.items if isinstance(statement, AndOr) else statement.stages
    last = items[-1]
    if isinstance(last, (AndOr, Pipeline)):
        _redirect_last(last, redirects, end)
    elif isinstance(last, Command):
        last.redirects.extend(redirects)
    else:
        items[-1] = Redirected(last.locator, last.start, end, last, redirects)
