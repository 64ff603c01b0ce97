"""The seed's workaround in the shape the project had it, which the staging check must catch (the GPU script's
`seed` step gives `main` to `--setup`; the tests use every function here): a subclass of Megatron-Core's
`FileSystemWriterAsync` whose `preload_tensors` forces `non_blocking=False` on HIP, swapped in inside
the project's own setup functions, under `if torch.version.hip:`, not when a module is imported:

- `initialize_model_and_optimizer()` (the training's setup) replaced the class in `filesystem_async`
  before the model was built;
- `main()` (a conversion tool's entry point) replaced it in `filesystem_async` and in
  `strategies.torch`, which binds the name when it is imported.

On a CPU or CUDA machine the HIP branch never runs: `--as-platform rocm` makes it run. The form
without the condition shows the swap itself caught where no emulation is asked for.
"""

import warnings
from typing import Any

import torch

with warnings.catch_warnings():  # Megatron-Core warns about optional fused kernels at import
    warnings.simplefilter("ignore")
    # megatron-core ships no type information: this module uses it as a project does, untyped
    from megatron.core.dist_checkpointing.strategies import filesystem_async
    from megatron.core.dist_checkpointing.strategies.filesystem_async import (
        FileSystemWriterAsync,
    )


class ROCmFileSystemWriterAsync(FileSystemWriterAsync):  # type: ignore[misc]
    """As the project wrote it: on HIP the copies to the host go without non_blocking."""

    @staticmethod
    def preload_tensors(*args: Any, **kwargs: Any) -> Any:
        if torch.version.hip:
            if "non_blocking" in kwargs:
                kwargs["non_blocking"] = False
            elif len(args) > 1 and isinstance(args[-1], bool):
                args = (*args[:-1], False)  # non_blocking is the last positional argument
        return FileSystemWriterAsync.preload_tensors(*args, **kwargs)


def initialize_model_and_optimizer() -> None:
    if torch.version.hip:
        filesystem_async.FileSystemWriterAsync = ROCmFileSystemWriterAsync


def main() -> None:
    if torch.version.hip:
        from megatron.core.dist_checkpointing.strategies import torch as torch_strategy

        filesystem_async.FileSystemWriterAsync = ROCmFileSystemWriterAsync
        torch_strategy.FileSystemWriterAsync = ROCmFileSystemWriterAsync


def initialize_model_and_optimizer_on_every_platform() -> None:
    filesystem_async.FileSystemWriterAsync = ROCmFileSystemWriterAsync


def initialize_model_and_optimizer_with(args: object, role: str) -> None:
    """The training's real signature takes arguments: --setup cannot call it, the Python API can."""
    initialize_model_and_optimizer()
