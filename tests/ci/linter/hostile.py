"""What the tests of untrusted input share: how a GitHub runner reads ci-checks' output, and small git repositories.

The runner reads what a step prints line by line, a line ending at `\\n`,
`\\r` or `\\r\\n`; a line whose text, once leading white space is trimmed,
starts with `::` is a workflow command, and so is `##[command]` anywhere in a
line. Other readers of logs also end lines at U+2028, U+2029, U+0085 and the
like; the check below splits at all of them.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

ANNOTATION = re.compile(
    r"::(error|warning|notice) file=[^,:\r\n]*,line=\d+,col=\d+,endLine=\d+,endColumn=\d+,title=[^:\r\n]*::[^\r\n]*"
)
"""A finding as the `github` format writes it: the one workflow command ci-checks writes on purpose."""
STOP_COMMANDS = re.compile(r"::stop-commands::[0-9a-f]{32}|::[0-9a-f]{32}::")
"""The pair that ci-checks writes around a diff that quotes a workflow command."""
_LINE_END = re.compile("\r\n|[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]")
_IGNORABLE = re.compile(
    "[\x00-\x08\x0e-\x1f\x7f-\x9f\xad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
"""Characters a culture-aware comparison (as .NET's default `StartsWith` and `IndexOf`) may pass over."""


def forged_lines(text: str, own: re.Pattern[str] | None = None) -> list[str]:
    """The lines of `text` a runner would obey as workflow commands, less those matching `own` in full.

    Strict: characters a comparison may ignore are dropped from each line before it is judged, and white space is
    trimmed from its start, so that `:\u200b:error::` and `#\u2060#[` count as commands too.
    """
    forged = []
    for line in _LINE_END.split(text):
        if own is not None and own.fullmatch(line):
            continue
        seen = _IGNORABLE.sub("", line)
        if "##[" in seen or seen.lstrip().startswith("::"):
            forged.append(line)
    return forged


def git(root: Path, *arguments: str) -> None:
    identity = ["-c", "user.name=ci", "-c", "user.email=ci@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", *identity, *arguments], cwd=root, check=True, capture_output=True)


def commit_all(root: Path, message: str) -> None:
    if not (root / ".git").exists():
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    git(root, "add", "-A")
    git(root, "commit", "-qm", message, "--allow-empty")


def cli(
    *arguments: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """ci-checks as its own process, the way CI runs it (`timeout` only guards against a hang)."""
    command = [sys.executable, "-m", "ci_checks.cli", *map(str, arguments)]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False, cwd=cwd, env=env)


NOBODY = 65534


@contextlib.contextmanager
def unprivileged() -> Iterator[None]:
    """As the user nobody (real and effective ids, so that `os.access` judges as nobody too), in this process:
    root passes every permission check, so a read-only file or folder is read-only only to someone else. The saved
    id keeps the way back to root. Where the tests run unprivileged already, nothing changes."""
    if os.geteuid() != 0:
        yield
        return
    os.setresgid(NOBODY, NOBODY, 0)
    os.setresuid(NOBODY, NOBODY, 0)
    try:
        yield
    finally:
        os.setresuid(0, 0, 0)
        os.setresgid(0, 0, 0)


@contextlib.contextmanager
def open_folder() -> Iterator[Path]:
    """A fresh folder anyone may enter and read (pytest's are private to their owner), removed afterwards."""
    folder = Path(tempfile.mkdtemp())
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder)
