"""JSON-schema validation of workflows and composite actions, read the way GitHub reads them.

The schemas are SchemaStore's, vendored by `check-jsonschema` (`vendored.py`).
Where SchemaStore and GitHub disagree, GitHub wins: every difference is one
entry of `OVERRIDES` (`overrides.py`), built from GitHub's own reading of
events, inputs and permissions (`github.py`). `CHECKS` are what GitHub
verifies beyond any schema (`checks.py`). `validate` runs both
(`validation.py`), and each error becomes one positioned message, said as a
person would (`messages.py`).
"""

from __future__ import annotations

from ci_checks.rules.schema.checks import CHECKS
from ci_checks.rules.schema.overrides import OVERRIDES
from ci_checks.rules.schema.validation import validate, validator
from ci_checks.rules.schema.vendored import SCHEMA_FILES, vendor_directory

__all__ = ["CHECKS", "OVERRIDES", "SCHEMA_FILES", "validate", "validator", "vendor_directory"]
