"""psutil made absent in every process that imports this (`--import`), before Megatron-Core's strategies
are: `None` in sys.modules is how Python itself marks a module as not importable. It stands in for an
environment without psutil, which cannot be produced in one that has it; Megatron-Core's forked writer
then really dies, and its parent really waits forever."""

import sys

sys.modules["psutil"] = None  # type: ignore[assignment]
