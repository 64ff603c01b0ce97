"""Policy rules: the structural checks a repository defines for itself in its configuration file."""

from ci_checks.policy.evaluate import evaluate
from ci_checks.policy.model import Kind, Matcher, PolicyError, PolicyRule, StepSelector, Where, compile_rules

__all__ = ["Kind", "Matcher", "PolicyError", "PolicyRule", "StepSelector", "Where", "compile_rules", "evaluate"]
