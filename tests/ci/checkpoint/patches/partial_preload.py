"""A project's writer whose `preload_tensors` is a `functools.partial` binding a large argument (here a
table of tensors): the repr of such a partial is as long as the values it binds, and the staging row
naming it must stay short."""

import functools
import warnings

import torch

with warnings.catch_warnings():  # Megatron-Core warns about optional fused kernels at import
    warnings.simplefilter("ignore")
    from megatron.core.dist_checkpointing.strategies import filesystem_async
    from megatron.core.dist_checkpointing.strategies.filesystem_async import FileSystemWriterAsync

_TABLE = [torch.arange(2000, dtype=torch.float32) for _ in range(4)]


def _preload(write_buckets, non_blocking=True, table=None):
    return FileSystemWriterAsync.preload_tensors(write_buckets, False)


class BoundPreloadWriter(FileSystemWriterAsync):  # type: ignore[misc]
    preload_tensors = staticmethod(functools.partial(_preload, table=_TABLE))


filesystem_async.FileSystemWriterAsync = BoundPreloadWriter
