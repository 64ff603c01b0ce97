"""Atomic commit of a checkpoint directory. No torch here.

A save goes into a fresh `NAME.partial-TOKEN` directory beside the checkpoints. Only when
every rank has finished is it made durable (each file and the directory fsynced) and renamed
to `NAME`, and the parent directory fsynced. A directory named without `.partial-` is
therefore complete, and a save never writes into an existing checkpoint: DCP writes
`.metadata` last, so a save killed half-way over an old checkpoint would leave the old
`.metadata` describing new data files.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

PARTIAL_MARK = ".partial-"
METADATA = ".metadata"  # DCP's index, written last by both DCP and Megatron-Core


class CommitError(Exception):
    pass


def fresh_partial(root: Path, name: str) -> Path:
    """Create an empty directory for the save of checkpoint `name`."""
    if PARTIAL_MARK in name:
        raise ValueError(f"checkpoint name {name!r} contains {PARTIAL_MARK!r}")
    path = root / f"{name}{PARTIAL_MARK}{secrets.token_hex(4)}"
    path.mkdir()
    return path


def final_name(partial: Path) -> Path:
    name, mark, _ = partial.name.partition(PARTIAL_MARK)
    if not mark:
        raise ValueError(f"{partial} is not a partial checkpoint directory")
    return partial.with_name(name)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def commit(partial: Path) -> Path:
    """Make `partial` durable and rename it into place; never replaces an existing checkpoint."""
    final = final_name(partial)
    for directory, _, files in os.walk(partial):
        for file in files:
            _fsync(Path(directory, file))
        _fsync(Path(directory))
    # rename() would silently replace an empty directory; a checkpoint name is used once.
    if final.exists() or final.is_symlink():
        raise CommitError(f"{final} already exists; a checkpoint is never saved over another")
    partial.rename(final)
    _fsync(final.parent)
    return final


def committed(root: Path) -> list[Path]:
    """The complete checkpoints under `root`, oldest name first."""
    return sorted(p for p in root.iterdir() if p.is_dir() and PARTIAL_MARK not in p.name)


def partials(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir() and PARTIAL_MARK in p.name)
