"""What a compiled policy is made of: rules, their scopes and items, and what an item finds.

Each item kind (`ci_checks/policy/items/`) and each rule kind
(`ci_checks/policy/kinds/`) is one module holding its schema, its
documentation and its evaluation; these are the types they share.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ci_checks.config_files import ConfigError
from ci_checks.diagnostics import Diagnostic, Fix, Related, Severity, Span
from ci_checks.globs import Glob
from ci_checks.model.steps import uses_matches
from ci_checks.rule import Rule

if TYPE_CHECKING:
    from ci_checks.loading import Workspace
    from ci_checks.model import Step
    from ci_checks.policy.compiling import ItemContext, RuleContext
    from ci_checks.policy.scopes import Scope, Where

Covers = Callable[[str], bool]
"""Whether a repo-relative path is among what was asked to be checked."""


class PolicyError(ConfigError):
    """A mistake in a policy, at its place in the configuration file."""


class Unreadable(Exception):
    """A value the policy reads from the repository (`from: {python: ...}`) that cannot be read there.

    Not a mistake in the policy: the repository may change under it. The item is not checked, and the rule that
    holds it reports why (CC106), while every other rule runs.
    """

    def __init__(self, message: str, span: Span) -> None:
        super().__init__(message)
        self.message = message
        self.span = span


@dataclass(frozen=True)
class Count:
    """`count: N` or `count: {min: A, max: B}`: how many times an item must be found in each scope."""

    minimum: int
    maximum: int | None

    def holds(self, found: int) -> bool:
        return found >= self.minimum and (self.maximum is None or found <= self.maximum)

    def __str__(self) -> str:
        if self.maximum == self.minimum:
            return f"exactly {self.minimum}"
        if self.maximum is None:
            return f"at least {self.minimum}"
        if self.minimum == 0:
            return f"at most {self.maximum}"
        return f"between {self.minimum} and {self.maximum}"


@dataclass(frozen=True, slots=True)
class Hit:
    """Something an item found: where, what (as a message shows it), and whether it satisfies the item.

    Only `key:` items with a comparator find things that do not satisfy them
    (a selected node whose value is wrong); `failure` then says why.
    """

    span: Span
    text: str
    satisfied: bool = True
    failure: str = ""
    value: str = ""
    """The value found, as a message shows it (`'read'`), for items that judge values."""
    context: str = ""
    """Where it is, when a message names it alone: ` in job 'test'` (empty in a whole file)."""

    @property
    def named(self) -> str:
        """How a message lists it among others: `` `[0].cron` = '0 1 * * *' ``, a command, a step's label."""
        text = self.text if len(self.text) <= 60 else self.text[:57] + "..."
        short = self.value and len(self.value) <= 40 and "\\n" not in self.value  # a script: named by its place
        return f"{text} = {self.value}" if short else text


class Item(ABC):
    """One item of a rule, compiled: it finds its hits inside a scope."""

    kind: str
    description: str
    """How findings name it: `` `git apply "$P"` ``, `a step {uses: actions/checkout}`."""
    span: Span
    count: Count | None = None

    def __init__(self, kind: str, description: str, span: Span, count: Count | None = None) -> None:
        self.kind = kind
        self.description = description
        self.span = span
        self.count = count

    @abstractmethod
    def find(self, scope: Scope) -> list[Hit]:
        """Every hit in the scope, in the order they are written."""

    def absent_because(self, scope: Scope) -> str:
        """Why the item is not found in a scope that lacks it, when a name in it drifted (`: nothing matches 'x'
        under `jobs` (keys there: ...)`); "" otherwise."""
        return ""

    def fix(self, scope: Scope) -> Fix | None:
        """Edits that would make the scope have the item, where that is mechanical; None elsewhere."""
        return None


class UnreadableItem(Item):
    """An item whose values could not be read from the repository; it finds nothing and is reported instead."""

    def __init__(self, kind: str, span: Span, problem: Unreadable) -> None:
        super().__init__(kind, f"a `{kind}` item", span)
        self.problem = problem

    def find(self, scope: Scope) -> list[Hit]:
        return []


@dataclass(frozen=True)
class ItemKind:
    """An item kind: its key, its schema (the item mapping's properties) and how to compile it."""

    key: str
    summary: str
    properties: Mapping[str, Any]
    """JSON schema of the item's keys: the kind's own key and its modifiers (`count` is added for `require`)."""
    compile: Callable[[Mapping[str, Any], ItemContext], Item]
    docs: str
    scoped: bool = True
    """False for items judged over the whole repository (`file:`), which take no `where`."""


@dataclass(frozen=True)
class Part:
    """Items and the scopes they are looked for in: a rule has one per mapping of its `where`, and one per item
    with a `where` of its own (for each mapping of the rule's)."""

    where: Where | None
    items: tuple[Item, ...]


@dataclass(frozen=True, eq=False)
class PolicyRule:
    id: str
    kind: RuleKind
    span: Span
    severity: Severity
    message: str | None = None
    where: Where | None = None
    items: tuple[Item, ...] = ()
    """The items of the part being judged (every item, for a rule as compiled)."""
    spec: Any = None
    """What only this rule's kind reads (`missing`, `across`, what a parity rule compares), as the kind compiled it."""
    parts: tuple[Part, ...] = ()

    def judged(self, part: Part) -> PolicyRule:
        """The rule as its kind judges one part: that part's scopes and items."""
        return replace(self, where=part.where, items=part.items, parts=(part,))

    def finding(self, span: Span, detail: str, related: tuple[Related, ...] = (), fix: Fix | None = None) -> Diagnostic:
        message = f"{detail}: {self.message}" if self.message else detail
        return Diagnostic(self.kind.rule.code, self.id, self.severity, message, span, related, fix)


_ABOUT_RULES = ("CC104", "CC106")
"""The codes of findings a policy rule makes about itself: it selects nothing, it cannot read a file."""


def policy_codes(rule: PolicyRule) -> tuple[str, ...]:
    """The codes a policy rule's findings can have."""
    return (rule.kind.rule.code, *_ABOUT_RULES)


@dataclass(frozen=True)
class RuleKind:
    """A rule kind: its name, the built-in rule its findings are, its schema, and its evaluation.

    `items` names the key holding the rule's items (`order`, `forbid`,
    `require`), or None for kinds without items. A kind checks each scope
    (`check_scope`) or the repository as a whole (`check_repository`).
    """

    name: str
    rule: Rule
    properties: Mapping[str, Any]
    required: tuple[str, ...]
    compile: Callable[[Mapping[str, Any], RuleContext], Any]
    docs: str
    items: str | None = None
    min_items: int = 1
    counts: bool = False
    """Whether its items take `count`."""
    check_scope: Callable[[PolicyRule, Scope], Iterator[Diagnostic]] | None = None
    item_shapes: Callable[[Any, Where], tuple[Any, ...]] | None = None
    """What `key:` PATHs are relative to, when the kind looks into other scopes than `where` selects."""
    merge_scopes: Callable[[PolicyRule, list[Scope]], list[Scope]] | None = None
    """How a rule's scopes are regrouped before they are checked (an order across jobs takes each workflow whole)."""
    check_repository: Callable[[PolicyRule, Workspace, Covers], Iterator[Diagnostic]] | None = None


@dataclass(frozen=True)
class StepSelector:
    """Which steps: `either` matches the name or the id; `uses` the `owner/repo[/path]`, or the whole value with `@`."""

    uses: Glob | None = None
    name: Glob | None = None
    id: Glob | None = None
    either: Glob | None = None
    text: str = field(default="", compare=False)

    def matches(self, step: Step) -> bool:
        if self.either is not None and not (self.either.matches(step.name) or self.either.matches(step.id)):
            return False
        if self.name is not None and not self.name.matches(step.name):
            return False
        if self.id is not None and not self.id.matches(step.id):
            return False
        if self.uses is not None:
            return step.uses is not None and uses_matches(self.uses, step.uses)
        return True

    def __str__(self) -> str:
        return self.text


class SearchTimedOut(Exception):
    """An item's search took longer than its limit in one file (a pathological regular expression)."""

    def __init__(self, item: Item, path: str, seconds: float) -> None:
        super().__init__(path)
        self.item = item
        self.path = path
        self.seconds = seconds
