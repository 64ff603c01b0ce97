"""The checkpoint-save harness: real PyTorch DCP and Megatron-Core saves, verified bit for bit.

`main` is torch-free to import; torch (the `checkpoint` extra) is imported when it runs. It is imported when first
asked for: pytest loads the package for its fixture (`ci_checks_checkpoint.fixture`) after it has put the tested
repository's folders on `sys.path`, where a module the command imports could be shadowed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ci_checks_checkpoint.command import main

__all__ = ["main"]


def __getattr__(name: str) -> object:
    if name == "main":
        from ci_checks_checkpoint.command import main

        return main
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
