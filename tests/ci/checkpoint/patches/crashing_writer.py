"""Project setups (`--setup tests.ci.checkpoint.patches.crashing_writer:FUNCTION`) after which a process of
Megatron-Core's async save dies of SIGSEGV, the ROCm pinned-memory fault's symptom: the process its
non-persistent queue forks for the save (`in_writer`), or one of those that process forks in turn to write a
bucket (`in_bucket_writer`). The process really receives the signal; only the body of that one step, which
only the forked process runs, is replaced."""

import os
import signal
import warnings

with warnings.catch_warnings():  # Megatron-Core warns about optional fused kernels at import
    warnings.simplefilter("ignore")
    from megatron.core.dist_checkpointing.strategies.filesystem_async import FileSystemWriterAsync


def _segfault(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGSEGV)


def in_writer() -> None:
    FileSystemWriterAsync.write_preloaded_data_multiproc = staticmethod(_segfault)


def in_bucket_writer() -> None:
    FileSystemWriterAsync.write_preloaded_data = staticmethod(_segfault)
