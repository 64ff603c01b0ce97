"""Rule kinds: what a rule says about its items. `RULE_KINDS` is the registry table, one module per kind."""

from ci_checks.policy.kinds import forbid, order, parity, require
from ci_checks.policy.model import RuleKind

RULE_KINDS: tuple[RuleKind, ...] = (order.KIND, forbid.KIND, require.KIND, parity.KIND)
BY_NAME = {kind.name: kind for kind in RULE_KINDS}
