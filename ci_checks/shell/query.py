"""Questions asked of a command tree: which commands match a pattern, what comes first, which branch.

These are the methods of `Block`, kept here so that the tree stays a plain
structure; every answer that can fail an assertion names the positions involved.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ci_checks.diagnostics import Answer, Occurrence, Span
from ci_checks.shell.patterns import CommandPattern
from ci_checks.shell.quoting import canonical_word, split_words

if TYPE_CHECKING:
    from ci_checks.shell.tree import Block, CaseItem, Clause, Command


def compiled(pattern: str | CommandPattern, without: Sequence[str] = (), exact: bool = False) -> CommandPattern:
    if isinstance(pattern, CommandPattern):
        if without or exact:
            return CommandPattern(pattern.words, pattern.without | {canonical_word(w) for w in without}, exact)
        return pattern
    return CommandPattern.parse(pattern, without, exact)


def find(
    block: Block, pattern: str | CommandPattern, without: Sequence[str] = (), exact: bool = False
) -> list[Command]:
    wanted = compiled(pattern, without, exact)
    return [command for command in block.commands() if wanted.matches_command(command)]


def comes_before(block: Block, first: str | CommandPattern, then: str | CommandPattern) -> Answer:
    a, b = block.first(first), block.first(then)
    for pattern, found in ((first, a), (then, b)):
        if found is None:
            raise LookupError(f"no command matches {str(pattern)!r} in this block")
    assert a is not None and b is not None
    before = a.start < b.start
    relation = "is written before" if before else "is not written before"
    return Answer(before, f"`{a.text}` ({_where(a.span)}) {relation} `{b.text}` ({_where(b.span)})")


def occurrences(block: Block, text: str) -> list[Occurrence]:
    found = []
    start = block.text.find(text) if text else -1
    while start >= 0:
        span = block.locator.span(block.start + start, block.start + start + len(text))
        found.append(Occurrence(span, text))
        start = block.text.find(text, start + 1)
    return found


def clauses(block: Block, condition: str) -> list[Clause]:
    from ci_checks.shell.parse import parse_fragment  # the parser builds trees: imported when first needed

    wanted_text = condition_key(condition)
    wanted_words = _words_key(parse_fragment(condition))
    return [
        clause
        for statement in block.if_statements()
        for clause in statement.clauses
        if clause.condition is not None
        and (condition_key(clause.condition.text) == wanted_text or _words_key(clause.condition) == wanted_words)
    ]


def branch(block: Block, condition: str | None, else_: bool, case: str | None, arm: str | None) -> Block:
    if case is not None or arm is not None:
        if case is None or arm is None or condition is not None or else_:
            raise ValueError("a case arm is selected by both `case` and `arm`, and nothing else")
        return _case_arm(block, case, arm)
    if condition is None:
        raise ValueError("name the condition of the if/elif branch")
    found = clauses(block, condition)
    if found and not else_:
        return found[0].body
    if found:
        for statement in block.if_statements():
            if found[0] in statement.clauses:
                last = statement.clauses[-1]
                if last.keyword == "else":
                    return last.body
                raise LookupError(f"the if statement with the condition {condition!r} has no else branch")
    seen = [
        clause.condition.text
        for statement in block.if_statements()
        for clause in statement.clauses
        if clause.condition is not None
    ]
    raise LookupError(f"no if/elif branch has the condition {condition!r}; conditions here: {seen}")


def case_arms(block: Block, subject: str, arm: str) -> list[CaseItem]:
    """The arms of `case SUBJECT in` (compared by value), at any depth, one of whose patterns is written `arm`."""
    wanted_subject, wanted_arm = canonical_word(_value(subject)), canonical_word(_value(arm))
    return [
        item
        for statement in block.cases()
        if statement.subject is not None and canonical_word(statement.subject.value) == wanted_subject
        for item in statement.items
        if any(canonical_word(pattern.value) == wanted_arm for pattern in item.patterns)
    ]


def _case_arm(block: Block, subject: str, arm: str) -> Block:
    found = case_arms(block, subject, arm)
    if found:
        return found[0].body
    seen = [
        f"case {statement.subject.text if statement.subject else '?'}: "
        + " | ".join(pattern.text for item in statement.items for pattern in item.patterns)
        for statement in block.cases()
    ]
    raise LookupError(f"no arm {arm!r} of a `case {subject} in`; case statements here: {seen}")


def _value(word: str) -> str:
    """A word as written in a policy or a test (`"$GPU_ARCH"`, `gfx94*`), without its quoting."""
    words = split_words(word)
    return words[0] if len(words) == 1 else word


def condition_key(text: str) -> str:
    return " ".join(text.replace(";", " ").split())


def _words_key(block: Block) -> list[list[str]]:
    return [[canonical_word(value) for value in command.argv] for command in block.commands()]


def _where(span: Span) -> str:
    return f"{span.path}:{span.line}:{span.column}"
