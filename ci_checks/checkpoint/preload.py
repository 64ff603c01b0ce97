"""Imported once by the crash test's fork server, so that every writer it forks starts with torch,
DCP and (when installed) Megatron-Core already loaded instead of spending seconds importing them."""

from ci_checks.checkpoint import backends, crash
from ci_checks.checkpoint.options import installed

if installed("megatron.core"):
    for _name in ("", ".mapping", ".strategies.torch", ".strategies.async_utils", ".strategies.filesystem_async"):
        backends.megatron_module(_name)

__all__ = ["backends", "crash"]
