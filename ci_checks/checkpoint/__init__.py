"""The checkpoint-save harness: real PyTorch DCP and Megatron-Core saves, verified bit for bit.

`main` is torch-free to import; torch (the `checkpoint` extra) is imported when it runs.
"""

from ci_checks.checkpoint.command import main

__all__ = ["main"]
