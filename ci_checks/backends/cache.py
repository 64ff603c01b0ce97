"""Linter results kept between runs: one SQLite file, rows keyed by a digest of everything that decides them.

A key is the SHA-256 of the linter binary's identity (resolved path, size,
modification time), the options it runs with, a format version and the exact
text it reads, so a row is only ever read back for the same input to the same
binary. The values are what the linter printed about that input; a row that
does not read back as the caller expects is a miss.

The cache never decides a finding: when its folder cannot be made, the file is
locked by another run for too long, or is not a database, the run goes on
without it and every input is checked. Rows unused for `KEEP_DAYS` days are
removed when new ones are written, so the file does not grow without bound.

The default folder is in the user's cache folder, outside any checked
repository, so a pull request cannot plant results in it; the rows only ever
hold what the linter itself said.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TypeVar

FILE_NAME = "results.sqlite3"
KEEP_DAYS = 30
_LOCK_WAIT_S = 5.0
_BATCH = 500  # below SQLite's limit on the number of parameters of one statement
T = TypeVar("T")
_SCHEMA = "CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, value TEXT NOT NULL, used INTEGER NOT NULL)"


def default_folder() -> tuple[Path | None, str]:
    """`$XDG_CACHE_HOME/ci-checks`, else `$HOME/.cache/ci-checks`, and why there is none when neither will do.

    Each must be an absolute path other than `/` (a relative one would be read
    from the current folder, which may be the checked repository), and `$HOME`
    an existing folder this user can write; none is made up from the password
    database.
    """
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if xdg and Path(xdg).is_absolute() and Path(xdg) != Path(xdg).parent:
        return Path(xdg) / "ci-checks", ""
    home = os.environ.get("HOME")
    if home is None:
        return None, "$HOME is not set"
    if not home or not Path(home).is_absolute():
        return None, f"$HOME ({home!r}) is not an absolute path"
    if Path(home) == Path(home).parent:
        return None, "$HOME is the file system's root"
    if not _usable(Path(home)):
        return None, f"$HOME ({home!r}) is not a folder this user can write"
    return Path(home) / ".cache" / "ci-checks", ""


def _usable(folder: Path) -> bool:
    return folder.is_dir() and os.access(folder, os.W_OK | os.X_OK)


def binary_identity(binary: str) -> list[str | int]:
    """What tells one build of a linter from another without running it."""
    resolved = Path(binary).resolve()
    status = resolved.stat()
    return [str(resolved), status.st_size, status.st_mtime_ns]


ENVIRONMENT_PREFIXES = ("CI_CHECKS_", "SHELLCHECK_", "ZIZMOR_", "ACTIONLINT_")
"""Environment variables that may change what ci-checks or a linter finds: every one set is part of a key."""


def environment() -> list[tuple[str, str]]:
    return sorted((name, value) for name, value in os.environ.items() if name.startswith(ENVIRONMENT_PREFIXES))


def digest(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode("utf-8")).hexdigest()


class ResultCache:
    """Rows of text values by key, read and written in batches; silent and empty once anything goes wrong.

    `hits` and `misses` count the keys asked for that were found and read back, and the others.
    """

    def __init__(self, folder: Path) -> None:
        self._connection: sqlite3.Connection | None = None
        self.hits = 0
        self.misses = 0
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._connection = sqlite3.connect(folder / FILE_NAME, timeout=_LOCK_WAIT_S, isolation_level=None)
            self._connection.execute(_SCHEMA)
        except (OSError, sqlite3.Error):
            self.close()

    def get(self, keys: Iterable[str], read: Callable[[str], T]) -> dict[str, T]:
        """`read` of the stored values of those of `keys` that have one it reads without TypeError or ValueError."""
        wanted = list(dict.fromkeys(keys))
        stored: dict[str, str] = {}
        if self._connection is not None:
            try:
                for start in range(0, len(wanted), _BATCH):
                    batch = wanted[start : start + _BATCH]
                    marks = ",".join("?" * len(batch))
                    rows = self._connection.execute(f"SELECT key, value FROM results WHERE key IN ({marks})", batch)
                    stored.update(rows.fetchall())
            except sqlite3.Error:
                self.close()
                stored = {}
            self._mark_used(list(stored))
        found: dict[str, T] = {}
        for key, value in stored.items():
            try:
                found[key] = read(value)
            except (TypeError, ValueError):
                continue
        self.hits += len(found)
        self.misses += len(wanted) - len(found)
        return found

    def put(self, values: Mapping[str, str]) -> None:
        """Store the values, in one transaction, and drop rows nobody has read for `KEEP_DAYS` days."""
        if self._connection is None or not values:
            return
        today = _today()
        try:
            with self._connection:
                self._connection.execute("BEGIN IMMEDIATE")
                self._connection.executemany(
                    "INSERT OR REPLACE INTO results (key, value, used) VALUES (?, ?, ?)",
                    [(key, value, today) for key, value in values.items()],
                )
                self._connection.execute("DELETE FROM results WHERE used < ?", (today - KEEP_DAYS,))
        except sqlite3.Error:
            self.close()

    def _mark_used(self, keys: list[str]) -> None:
        """Mark the rows used today, unless another run holds the file for too long: they are still good to read."""
        if self._connection is None:
            return
        today = _today()
        try:
            for start in range(0, len(keys), _BATCH):
                batch = keys[start : start + _BATCH]
                marks = ",".join("?" * len(batch))
                self._connection.execute(
                    f"UPDATE results SET used = ? WHERE key IN ({marks}) AND used < ?", [today, *batch, today]
                )
        except sqlite3.Error:
            return

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def _today() -> int:
    return int(time.time() // 86400)
