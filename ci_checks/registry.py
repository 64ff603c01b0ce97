"""The rule registry, the public face of `ci_checks.config.registry`: every rule, and lookup by code, prefix or name."""

from __future__ import annotations

from ci_checks.config.registry import BY_CODE, BY_NAME, RULES, lookup, matching, suggestion

__all__ = ["BY_CODE", "BY_NAME", "RULES", "lookup", "matching", "suggestion"]
