"""Built-in rules. `RULE_NAMES` is the registry table: one module per rule, in code order."""

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
    "cc090_backend_unavailable",
    "cc091_backend_failed",
    "cc092_linter_config",
    "cc100_policy_order",
    "cc101_policy_forbid",
    "cc102_policy_require",
    "cc103_policy_parity",
    "cc104_policy_no_match",
    "cc105_unused_ignore",
    "cc106_policy_unreadable_input",
)

NAMES_BY_CODE = {module[:5].upper(): module[6:].replace("_", "-") for module in RULE_NAMES}
"""Each rule's name by its code, read off the table: reporters name rules without importing them."""


def rule_modules() -> tuple[ModuleType, ...]:
    """The rule modules, in code order (imported on first use: together they take tens of milliseconds)."""
    return tuple(importlib.import_module(f"{__name__}.{name}") for name in RULE_NAMES)
