"""Imported once by the crash test's fork server, so that every writer and verifier it forks starts with
torch and DCP loaded instead of spending seconds importing them.

torch._dynamo is among them: DCP's first save imports it (DTensor's dispatch), which took
0.44 s of each writer's 0.45 s warm-up here. Megatron-Core and the project's `--import`
modules are not imported here: Megatron-Core's `strategies.torch` calls
`torch.cuda.is_available()` at import (and a project's modules may do more), which initialises
the CUDA or ROCm driver; a process forked after that cannot use the device ("Cannot
re-initialize CUDA in forked subprocess"). Each forked process imports them itself, after the
fork.
"""

import torch._dynamo

from ci_checks.checkpoint import backends, crash, saving

__all__ = ["backends", "crash", "saving", "torch"]
