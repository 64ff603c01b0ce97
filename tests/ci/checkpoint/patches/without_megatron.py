"""megatron made absent in every process that imports this (`--import`): `None` in sys.modules is how
Python itself marks a module as not importable. It stands in for an environment without megatron-core,
which cannot be produced in one that has it."""

import sys

sys.modules["megatron"] = None  # type: ignore[assignment]
