"""What a compiled policy is made of: rules, their scopes and items, and what an item finds.

Each item kind (`ci_checks/policy/items/`) and each rule kind
(`ci_checks/policy/kinds/`) is one module holding its schema, its
documentation and its evaluation; these are the types they share, with what
compiling hands them (`Place`, `RuleContext`, `ItemContext`; the functions are
in `compiling`) and the scopes they look into (`Where`, `Scope`; `scopes`
compiles and builds them). Nothing here imports those modules, which import it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ci_checks.core.config_files import ConfigError
from ci_checks.core.diagnostics import Diagnostic, Fix, Occurrence, Related, Severity, Span
from ci_checks.core.globs import Glob, matches_any
from ci_checks.model.steps import uses_matches
from ci_checks.policy import shapes
from ci_checks.rules.rule import Rule

if TYPE_CHECKING:
    from ci_checks.core.repository import Repository
    from ci_checks.model import Entry, Job, Step
    from ci_checks.model.loading import LoadedFile, Workspace
    from ci_checks.model.reading import Path
    from ci_checks.syntax import shell
    from ci_checks.syntax.shell import Block
    from ci_checks.syntax.yamlpos import Node

Covers = Callable[[str], bool]
"""Whether a repo-relative path is among what was asked to be checked."""

Locate = Callable[[list[str | int], bool], Span]
"""From a JSON path in the configuration to the span of the key there (True) or of its value (False)."""

JsonPath = list[str | int]


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
    count: Count | None = None
    """`count:`, set after the item is compiled (`ci_checks.policy.items`)."""

    def __init__(self, kind: str, description: str) -> None:
        self.kind = kind
        self.description = description

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

    def __init__(self, kind: str, problem: Unreadable) -> None:
        super().__init__(kind, f"a `{kind}` item")
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
        return Diagnostic(self.kind.rule.code, self.id, self.severity, message, span, related, fix, policy_id=self.id)


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


@dataclass(frozen=True)
class Branch:
    """A branch of a step's script: by an `if`/`elif` condition (its `else` with `else_`), or a `case` arm."""

    condition: str | None = None
    else_: bool = False
    case: str | None = None
    arm: str | None = None

    def __str__(self) -> str:
        if self.case is not None:
            return f"`{self.arm})` arm of `case {self.case}`"
        return f"`else` of the `{self.condition}`" if self.else_ else f"`{self.condition}`"

    def blocks(self, script: Block) -> list[tuple[Block, Span]]:
        """The branch bodies in a script, each with where it is written (its condition, `else`, or pattern)."""
        if self.case is not None and self.arm is not None:
            arms = script.case_arms(self.case, self.arm)
            return [(item.body, item.patterns[0].span if item.patterns else item.body.span) for item in arms]
        assert self.condition is not None
        clauses = script.clauses(self.condition)
        if not self.else_:
            return [(clause.body, clause.condition.span) for clause in clauses if clause.condition is not None]
        found = []
        for statement in script.if_statements():
            last = statement.clauses[-1]
            if last.keyword == "else" and any(clause in statement.clauses for clause in clauses):
                found.append((last.body, last.body.span))
        return found


@dataclass(frozen=True)
class Named:
    """A name written without glob characters in a list of `where` (`job: [build, test]`): it must exist."""

    part: str
    glob: Glob
    span: Span


@dataclass(frozen=True, eq=False)
class Where:
    span: Span
    files: tuple[Glob, ...] = ()
    workflows: tuple[Glob, ...] = ()
    actions: tuple[Glob, ...] = ()
    triggers: tuple[Glob, ...] = ()
    jobs: tuple[Glob, ...] = ()
    step: StepSelector | None = None
    branch: Branch | None = None
    named: tuple[Named, ...] = ()

    @property
    def shapes(self) -> tuple[shapes.Shape, ...]:
        """What a `key:` PATH is relative to in the scopes this selects."""
        if self.triggers:
            found = [shape for name, shape in shapes.TRIGGERS.items() if matches_any(self.triggers, name)]
            return tuple(found) or (shapes.ANYTHING,)
        if self.step is not None:
            return (shapes.STEP,)
        if self.jobs:
            return (shapes.JOB,)
        if self.workflows and not self.actions:
            return (shapes.WORKFLOW,)
        if self.actions and not self.workflows:
            return (shapes.ACTION,)
        return (shapes.WORKFLOW, shapes.ACTION)

    @property
    def has_nodes(self) -> bool:
        """Whether its scopes are YAML (so `key:` items apply); a script branch is not."""
        return self.branch is None


@dataclass(eq=False)
class Scope:
    """One place a rule looks into. `file` is None for the repository scope of rules without `where`."""

    file: LoadedFile | None
    label: str
    anchor: Span
    """Where a finding about the whole scope (a missing item) is reported."""
    start: int = 0
    end: int = 0
    """File offsets of the scope's text; unused when `block` is set."""
    steps: list[Step] = field(default_factory=list)
    jobs: list[Job] = field(default_factory=list)
    block: Block | None = None
    whole_file: bool = False
    node: Node | None = None
    node_path: Path = ()
    """Where `node` (what `key:` PATHs are relative to) sits in its file."""
    workspace: Workspace | None = None

    @property
    def path(self) -> str | None:
        return self.file.path if self.file is not None else None

    def commands(self) -> Iterator[shell.Command]:
        if self.block is not None:
            yield from self.block.commands()
        elif self.whole_file and self.file is not None:
            yield from self.file.commands()
        else:
            for step in self.steps:
                if step.script is not None:
                    yield from step.script.commands()

    def search(self, finditer: Callable[[str, int, int], Iterator[tuple[int, int]]]) -> list[Occurrence]:
        """Occurrences of what `finditer(text, start, end)` finds in the scope's text."""
        if self.block is not None:
            script = self.block
            found = []
            for start, end in finditer(script.text, 0, len(script.text)):
                span = script.locator.span(script.start + start, script.start + end)
                found.append(Occurrence(span, script.text[start:end]))
            return found
        if self.file is None:
            return []
        text = self.file.source.text
        return [Occurrence(self.file.source.span(s, e), text[s:e]) for s, e in finditer(text, self.start, self.end)]

    def mappings(self, section: str) -> Iterator[dict[str, Entry]]:
        """The `with` or `env` mappings of the scope and of everything inside it, with where each sits."""
        if self.block is not None or self.file is None:
            return
        workflow = self.file.workflow
        if self.whole_file and workflow is not None and section == "env":
            yield workflow.env
        for job in self.jobs:
            yield job.with_ if section == "with" else job.env
        for step in self.steps:
            yield step.with_ if section == "with" else step.env


class SearchTimedOut(Exception):
    """An item's search took longer than its limit in one file (a pathological regular expression); `span` is where
    the item is written."""

    def __init__(self, item: Item, span: Span, path: str, seconds: float) -> None:
        super().__init__(path)
        self.item = item
        self.span = span
        self.path = path
        self.seconds = seconds


@dataclass
class Place:
    """A part of the configuration being compiled: its JSON path, and how to find spans in the file."""

    locate: Locate
    path: JsonPath
    repository: Repository | None = None

    def at(self, *parts: str | int) -> Place:
        return Place(self.locate, [*self.path, *parts], self.repository)

    def span(self, *parts: str | int, key: bool = False) -> Span:
        return self.locate([*self.path, *parts], key)

    def error(self, message: str, *parts: str | int, key: bool = False) -> PolicyError:
        return PolicyError(message, self.span(*parts, key=key))


@dataclass
class RuleContext:
    place: Place
    kind: RuleKind


@dataclass
class ItemContext:
    place: Place
    kind: RuleKind
    where: Any
    """The rule's compiled `Where` (None for rules without one)."""
    shapes: tuple[Any, ...] = ()
    """What `key:` PATHs are relative to in the scopes the rule's items look into."""
