"""Imported once by the fork server of the crash test and the resharding ranks, so that every process it forks
starts with torch and DCP loaded instead of spending seconds importing them.

torch._dynamo is among them: DCP's first save imports it (DTensor's dispatch), which took
0.44 s of each writer's 0.45 s warm-up here. Megatron-Core's `strategies.torch` and the
project's `--import` modules and `--setup` functions are never run here: `strategies.torch`
calls `torch.cuda.is_available()` at import (and a project's code may do more), which
initialises the CUDA or ROCm driver, and a process forked after that cannot use the device
("Cannot re-initialize CUDA in forked subprocess"); and the project's code must run before
`strategies.torch` binds the writer class. Each forked process runs them itself, after the fork.

On a build of torch without CUDA and HIP there is no driver to initialise, and the package
`megatron.core` (2.3 s of CPU time to import here, without a call into torch.cuda) is loaded
too, with its `filesystem_async`; not `strategies.torch`, so the order above holds. A GPU
build's processes import it after the fork: there its import may load Transformer Engine,
which does initialise the device.
"""

import contextlib

import torch
import torch._dynamo

from ci_checks_checkpoint import backends, crash, megatron, saving

if torch.version.cuda is None and torch.version.hip is None:
    with contextlib.suppress(ImportError):  # megatron-core is not installed: the DCP backends run without it
        megatron.module(".strategies.filesystem_async")

__all__ = ["backends", "crash", "saving", "torch"]
