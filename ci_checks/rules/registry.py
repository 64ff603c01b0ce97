"""The rule registry: one table of every rule, and lookup by code, code prefix or name.

A rule lives in `ci_checks/rules/<code>_<name>.py`. Its module docstring is its
documentation, with the sections *What it does*, *Why it matters*, *Example*
and *Fix*; the module defines `RULE`. Codes are never reused: a retired rule
keeps its number out of circulation.
"""

from __future__ import annotations

import difflib

from ci_checks.rules import rule_modules
from ci_checks.rules.rule import Rule, RuleGroup

RULES: tuple[Rule, ...] = tuple(module.RULE for module in rule_modules())
BY_CODE = {rule.code: rule for rule in RULES}
BY_NAME = {rule.name: rule for rule in RULES}
RETIRED_CODES: frozenset[str] = frozenset()
"""Codes of rules that were removed: no rule may take one again, as old reports, baselines and ignore comments
still name them."""


def codes_of(*groups: RuleGroup) -> frozenset[str]:
    """The codes of the rules in `groups`."""
    return frozenset(rule.code for rule in RULES if rule.group in groups)


def lookup(code_or_name: str) -> Rule | None:
    return BY_CODE.get(code_or_name.upper()) or BY_NAME.get(code_or_name.lower())


def suggestion(word: str) -> str:
    """A ' (did you mean X?)' hint for a mistyped code or rule name, or ''."""
    close = difflib.get_close_matches(word, [*BY_CODE, *BY_NAME], n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def matching(selector: str) -> list[Rule]:
    """Rules a selector names: an exact code, a code prefix such as `CC0`, or a rule name."""
    rule = lookup(selector)
    if rule is not None:
        return [rule]
    prefix = selector.upper()
    return [rule for rule in RULES if rule.code.startswith(prefix)] if prefix else []
