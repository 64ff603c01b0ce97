"""Policy rules: the structural checks a repository defines for itself in its configuration file.

`model` holds the shared types; each rule kind is a module of `kinds`, each
item kind a module of `items`; `scopes` selects where rules look, `paths` and
`reading` address and read YAML as GitHub does, `schema` assembles the
configuration schema from the kinds' fragments, and `evaluate` runs rules.
"""

from ci_checks.policy.compile import compile_rules
from ci_checks.policy.evaluate import evaluate
from ci_checks.policy.findings import policy_codes
from ci_checks.policy.model import PolicyError, PolicyRule

__all__ = ["PolicyError", "PolicyRule", "compile_rules", "evaluate", "policy_codes"]
