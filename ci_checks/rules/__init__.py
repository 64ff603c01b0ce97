"""Built-in rules. `RULE_NAMES` is their table: one module per rule, in code order.

The rules whose findings other layers make are declared beside that code:
CC090 and CC091 in `ci_checks.backends.notices`, CC100-CC103 in the policy's
rule kinds (`ci_checks.policy.kinds`), CC104 and CC106 in
`ci_checks.policy.findings`, CC105 in `ci_checks.config.suppression`.
`ci_checks.config.registry` gathers them all.
"""

import importlib
from types import ModuleType

RULE_NAMES = (
    "cc001_file_too_large",
    "cc002_binary_file",
    "cc003_invalid_encoding",
    "cc004_unreadable_file",
    "cc010_yaml_syntax",
    "cc011_duplicate_key",
    "cc012_yaml_limit",
    "cc013_empty_file",
    "cc014_unsupported_yaml",
    "cc020_workflow_schema",
    "cc021_action_schema",
    "cc030_invalid_uses",
    "cc031_deprecated_workflow_command",
    "cc032_mangled_number",
    "cc040_workspace_before_checkout",
    "cc041_dangling_reference",
    "cc042_orphan_patch",
    "cc043_self_hosted_timeout",
    "cc044_unknown_runner_label",
    "cc045_untrusted_self_hosted",
    "cc046_gpu_container_devices",
    "cc047_stale_install",
    "cc048_unprovided_file",
    "cc049_concurrency_collision",
    "cc050_reusable_call_contract",
    "cc051_missing_working_directory",
    "cc052_impossible_event",
    "cc053_missing_mount_source",
    "cc054_undeclared_runner_label",
    "cc055_unknown_shell",
    "cc092_linter_config",
)

_DECLARED_ELSEWHERE = {
    "CC090": "backend-unavailable",
    "CC091": "backend-failed",
    "CC100": "policy-order",
    "CC101": "policy-forbid",
    "CC102": "policy-require",
    "CC103": "policy-parity",
    "CC104": "policy-no-match",
    "CC105": "unused-ignore",
    "CC106": "policy-unreadable-input",
}
NAMES_BY_CODE = dict(
    sorted(
        {
            **{module[:5].upper(): module[6:].replace("_", "-") for module in RULE_NAMES},
            **_DECLARED_ELSEWHERE,
        }.items()
    )
)
"""Every rule's name by its code, in code order, read off the tables: reporters and the selection of rules name
and recognise every code without importing a rule, the policy or the linters."""


def rule_modules() -> tuple[ModuleType, ...]:
    """The rule modules, in code order (imported on first use: together they take tens of milliseconds)."""
    return tuple(importlib.import_module(f"{__name__}.{name}") for name in RULE_NAMES)
