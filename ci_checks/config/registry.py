"""The rule registry: one table of every rule, and lookup by code, code prefix or name.

A built-in rule lives in `ci_checks/rules/<code>_<name>.py` (listed by
`ci_checks.rules.RULE_NAMES`): its module docstring is its documentation, with
the sections *What it does*, *Why it matters*, *Example* and *Fix*, and the
module defines `RULE`. A rule whose findings another layer makes is declared,
with the same documentation, beside the code that makes them: the linters'
notices about their own run in `ci_checks.backends.notices`, each policy rule
kind's in its module of `ci_checks.policy.kinds`, what a policy rule says
about what it reads in `ci_checks.policy.findings`, the unused ignore in
`ci_checks.config.suppression`. Codes are never reused: a retired rule keeps
its number out of circulation.

Every code and name is known from `ci_checks.rules.NAMES_BY_CODE` alone, which
is all that choosing what a run keeps needs. The table of rules (`RULES`,
`BY_CODE`, `BY_NAME`) is built on first use: the declarations beside the
policy and the linters import their code, which a run without a policy or
linters never loads.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from functools import cache

from ci_checks.rules import NAMES_BY_CODE, rule_modules
from ci_checks.rules.rule import Rule, RuleGroup

__all__ = [
    "BY_CODE",
    "BY_NAME",
    "CODES_BY_NAME",
    "NAMES_BY_CODE",
    "RETIRED_CODES",
    "RULES",
    "built_in",
    "codes_matching",
    "codes_of",
    "lookup",
    "matching",
    "suggestion",
]

RULES: tuple[Rule, ...]
"""Every rule, in code order (built on first use, as are `BY_CODE` and `BY_NAME`)."""
BY_CODE: dict[str, Rule]
BY_NAME: dict[str, Rule]
CODES_BY_NAME = {name: code for code, name in NAMES_BY_CODE.items()}
RETIRED_CODES: frozenset[str] = frozenset()
"""Codes of rules that were removed: no rule may take one again, as old reports, baselines and ignore comments
still name them."""


@cache
def built_in() -> tuple[Rule, ...]:
    """The rules of `ci_checks/rules/`, the ones a run checks files and repositories with, in code order."""
    return tuple(module.RULE for module in rule_modules())


@dataclass(frozen=True)
class _Table:
    rules: tuple[Rule, ...]
    by_code: dict[str, Rule]
    by_name: dict[str, Rule]


@cache
def _table() -> _Table:
    from ci_checks.backends import notices
    from ci_checks.config import suppression
    from ci_checks.policy import findings
    from ci_checks.policy.kinds import forbid, order, parity, require

    declared = (
        notices.UNAVAILABLE,
        notices.FAILED,
        order.RULE,
        forbid.RULE,
        require.RULE,
        parity.RULE,
        findings.NO_MATCH,
        suppression.UNUSED_IGNORE,
        findings.UNREADABLE_INPUT,
    )
    rules = tuple(sorted((*built_in(), *declared), key=lambda rule: rule.code))
    return _Table(rules, {rule.code: rule for rule in rules}, {rule.name: rule for rule in rules})


def __getattr__(name: str) -> object:
    """`RULES`, `BY_CODE` and `BY_NAME`, built when first read."""
    if name == "RULES":
        return _table().rules
    if name == "BY_CODE":
        return _table().by_code
    if name == "BY_NAME":
        return _table().by_name
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def codes_of(*groups: RuleGroup) -> frozenset[str]:
    """The codes of the rules in `groups`."""
    return frozenset(rule.code for rule in _table().rules if rule.group in groups)


def _code(code_or_name: str) -> str | None:
    upper = code_or_name.upper()
    return upper if upper in NAMES_BY_CODE else CODES_BY_NAME.get(code_or_name.lower())


def lookup(code_or_name: str) -> Rule | None:
    code = _code(code_or_name)
    return _table().by_code[code] if code is not None else None


def suggestion(word: str) -> str:
    """A ' (did you mean X?)' hint for a mistyped code or rule name, or ''."""
    close = difflib.get_close_matches(word, [*NAMES_BY_CODE, *CODES_BY_NAME], n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def codes_matching(selector: str) -> list[str]:
    """The codes of the rules a selector names: an exact code, a code prefix such as `CC0`, or a rule name."""
    code = _code(selector)
    if code is not None:
        return [code]
    prefix = selector.upper()
    return [code for code in NAMES_BY_CODE if code.startswith(prefix)] if prefix else []


def matching(selector: str) -> list[Rule]:
    """Rules a selector names: an exact code, a code prefix such as `CC0`, or a rule name."""
    return [_table().by_code[code] for code in codes_matching(selector)]
