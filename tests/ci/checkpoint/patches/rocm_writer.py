"""The workaround the seed removed, installed the way the consumer project installed it.

A subclass of Megatron-Core's `FileSystemWriterAsync` whose `preload_tensors` forces
`non_blocking=False`, put in place of the class in `filesystem_async` before
`strategies.torch` is imported (which binds the name). The project forced it only where
`torch.version.hip` is set; a CPU test has no HIP, so this one forces it everywhere. The
harness must see the save go through it and fail.
"""

import sys
import warnings

with warnings.catch_warnings():  # Megatron-Core warns about optional fused kernels at import
    warnings.simplefilter("ignore")
    from megatron.core.dist_checkpointing.strategies import filesystem_async
    from megatron.core.dist_checkpointing.strategies.filesystem_async import FileSystemWriterAsync

if "megatron.core.dist_checkpointing.strategies.torch" in sys.modules:
    raise ImportError("strategies.torch is imported already: this patch would never reach the strategy")


class ROCmFileSystemWriterAsync(FileSystemWriterAsync):  # type: ignore[misc]
    @staticmethod
    def preload_tensors(*args, **kwargs):
        if "non_blocking" in kwargs:
            kwargs["non_blocking"] = False
        elif len(args) > 1 and isinstance(args[-1], bool):
            args = (*args[:-1], False)  # non_blocking is the last positional argument
        return FileSystemWriterAsync.preload_tensors(*args, **kwargs)


filesystem_async.FileSystemWriterAsync = ROCmFileSystemWriterAsync
