"""A Megatron-Core writer that never returns: each process its forked writer starts to write a bucket blocks
for good, as the ROCm pinned-memory fault left them, and the writer waits for them forever. Nothing of
the save path is replaced but the body of that one step, which only a process started for it runs."""

import time
import warnings

with warnings.catch_warnings():  # Megatron-Core warns about optional fused kernels at import
    warnings.simplefilter("ignore")
    from megatron.core.dist_checkpointing.strategies.filesystem_async import FileSystemWriterAsync


def _never_returns(*args, **kwargs):
    while True:
        time.sleep(3600)


FileSystemWriterAsync.write_preloaded_data = staticmethod(_never_returns)
