"""What the external linters share: finding their binaries, running them under a time limit, and failing.

A linter is looked up, in order, at the path given by option, in its
`CI_CHECKS_<NAME>` environment variable, on PATH, and in the scripts folder of
the running Python (so that the wheels of a virtual environment work without
activating it). Only absolute PATH entries are searched: a relative entry
would be looked up from the current folder, which may be the checked
repository, and nothing from there is ever run. A folder on PATH that cannot
be searched is passed over. Before it is trusted with any file, a binary must
say it is that linter (`--version`): one named by option or environment
variable that is missing or is not that linter is a `NamedBinaryError`
(exit code 2), so that CI never goes green without the linter it asked for.

Every linter process runs in a process group of its own and is registered
while it runs, so that an interrupted run (Ctrl-C, SIGTERM) ends them all at
once (`stop_all`), and their private folders are removed as the run unwinds.
A folder left by a run that was killed outright is removed by the next run
(`scratch_folder`).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import stat
import subprocess
import sysconfig
import tempfile
import threading
import time
from collections.abc import Container, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ci_checks.backends.cache import ResultCache, binary_identity, digest
from ci_checks.core.linters import LINTERS

# Windows finds `actionlint.exe` when asked for `actionlint`; elsewhere a name is the file name.
_SUFFIXES = ("", *os.environ.get("PATHEXT", ".EXE").lower().split(os.pathsep)) if os.name == "nt" else ("",)
_SUMMARY_CHARS = 200
_QUOTED = (re.compile(r"\"[^\n]*\""), re.compile(r"`[^\n]*`"), re.compile(r"(?<![A-Za-z0-9])'[^'\n]*'"))
"""Quoted text, from the first quote to the last of its kind on a line: what is between may quote a file."""
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_EXCERPT = re.compile(r"\s*(\d+\s*)?[|=^]|\s*-->|\s*\.\.\.\s*$")
_CAUSE = re.compile(r"\s*\d+: (?P<cause>.+)")
_VERIFY_LIMIT_S = 30.0
_SCRATCH = re.compile(r"ci-checks-[a-z]+-(?P<pid>\d+)-")


class Unavailable(Exception):
    """The linter cannot be run: not installed, or too old. The message says which and what to do (CC090)."""


class BackendFailed(Exception):
    """The linter was started but gave no usable findings. The message says why (CC091).

    `timed_out` failures stop the linter for the whole run: there is no time left to try its files one by one.
    """

    def __init__(self, message: str, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out


class NamedBinaryError(Exception):
    """A linter named by option or environment variable is missing or is not that linter: exit code 2."""


def _env_var(name: str) -> str:
    return f"CI_CHECKS_{name.upper()}"


def find_binary(name: str, explicit: str | None) -> str:
    """The executable to run for the linter `name`; `explicit` is the path given by option, if any.

    NamedBinaryError when the option or the environment variable names something that is not an executable file;
    Unavailable when the linter is found nowhere else.
    """
    found = named_binary(name, explicit)
    if found is not None:
        return found[0]
    for folder in [*_path_folders(), Path(sysconfig.get_path("scripts"))]:
        candidate = _in_folder(folder, name)
        if candidate is not None:
            return candidate
    raise Unavailable(
        f"{name} is not installed, so it checked nothing; install it with `pip install 'ci-checks[linters]'`, "
        f"or give its path with --{name} or ${_env_var(name)}"
    )


def named_binary(name: str, explicit: str | None) -> tuple[str, str] | None:
    """The binary named by option or environment variable, and which of them named it; None when neither does."""
    for value, origin in ((explicit, f"--{name}"), (os.environ.get(_env_var(name)), f"${_env_var(name)}")):
        if value:
            found = _executable(value)
            if found is None:
                raise NamedBinaryError(f"{origin} names {value!r}, which is not an executable file")
            return found, origin
    return None


def verify(name: str, binary: str, cwd: Path, cache: ResultCache | None = None) -> str:
    """What `binary` says to its version question; BackendFailed unless it says it the way the linter `name` does."""
    linter = LINTERS[name]
    question, answer = linter.version_question, linter.version_answer
    said = version(binary, question, cwd, cache)
    if said is None or answer.search(said) is None:
        raise BackendFailed(f"{binary} is not {name}: `{' '.join([Path(binary).name, *question])}` did not say so")
    return said


_VERSIONS: dict[tuple[str, tuple[str, ...]], str | None] = {}


def version(binary: str, question: Sequence[str], cwd: Path, cache: ResultCache | None = None) -> str | None:
    """A binary's answer to its version question (None when it fails), asked once per run.

    With `cache`, an answer is also kept between runs for as long as the binary
    has the same path, size and modification time: asking takes a linter tens
    of milliseconds, as long as checking one file.
    """
    key = (binary, tuple(question))
    if key in _VERSIONS:
        return _VERSIONS[key]
    stored_key = None
    if cache is not None:
        with contextlib.suppress(OSError):
            stored_key = digest("version", binary_identity(binary), list(question))
    if stored_key is not None and cache is not None:
        kept = cache.get([stored_key], str).get(stored_key)
        if kept is not None:
            _VERSIONS[key] = kept
            return kept
    finished = run([[binary, *question]], cwd, TimeLimit(_VERIFY_LIMIT_S))[0]
    said = (finished.stdout + finished.stderr).decode("utf-8", errors="replace")
    _VERSIONS[key] = said if finished.returncode == 0 else None
    if stored_key is not None and cache is not None and finished.returncode == 0:
        cache.put({stored_key: said})
    return _VERSIONS[key]


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
    """Whether `path` is an executable regular file; a folder that cannot be searched holds none."""
    try:
        return stat.S_ISREG(path.stat().st_mode) and os.access(path, os.X_OK)
    except (OSError, ValueError):
        return False


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

    def output(self, accepted: Container[int], folders: Sequence[Path] = ()) -> str:
        """Standard output as text; BackendFailed, with a summary of stderr, for another exit status."""
        if self.returncode not in accepted:
            raise BackendFailed(f"exited with status {self.returncode}: {tail(self.stderr, *folders)}")
        return self.stdout.decode("utf-8", errors="replace")


_RUNNING: set[subprocess.Popen[bytes]] = set()
_RUNNING_LOCK = threading.Lock()
_STOPPED = threading.Event()
"""Set by `stop_all`: no linter starts until the next run calls `allow_runs`."""


def run(
    commands: Sequence[Sequence[str]], cwd: Path, limit: TimeLimit, env: Mapping[str, str] | None = None
) -> list[Finished]:
    """Run the commands side by side and wait for all of them.

    Raises BackendFailed when one cannot start or the limit passes first (all
    are then killed, with anything they started).
    """
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for argv in commands:
            with _RUNNING_LOCK:  # started and registered at once, so that `stop_all` ends it or it never starts
                if _STOPPED.is_set():
                    raise BackendFailed("not started: the run is being stopped")
                process = subprocess.Popen(
                    argv,
                    cwd=cwd,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    start_new_session=True,
                )
                _RUNNING.add(process)
            processes.append(process)
        finished = []
        for process in processes:
            out, err = process.communicate(timeout=limit.left())
            finished.append(Finished(process.returncode, out, err))
        return finished
    except subprocess.TimeoutExpired:
        message = f"did not finish within {limit.seconds:g} s (raise the limit with --backend-timeout)"
        raise BackendFailed(message, timed_out=True) from None
    except OSError as error:
        raise BackendFailed(f"could not be started: {error.strerror or error}") from None
    finally:
        for process in processes:
            if process.poll() is None:
                _kill(process)
                process.communicate()
            with _RUNNING_LOCK:
                _RUNNING.discard(process)


def allow_runs() -> None:
    """Let linters start again: a new run begins."""
    _STOPPED.clear()


def stop_all() -> None:
    """End every linter process now running, and what each started, and start no other (an interrupted run)."""
    with _RUNNING_LOCK:
        _STOPPED.set()
        running = list(_RUNNING)
    for process in running:
        _kill(process)


def _kill(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (OSError, AttributeError):
        with contextlib.suppress(OSError):
            process.kill()


@contextlib.contextmanager
def scratch_folder(kind: str) -> Iterator[Path]:
    """A private folder (mode 0700) for copies of the checked files, removed afterwards.

    It is memory-backed (/dev/shm) where the system has that, which makes
    writing a thousand small files cheap; its name holds this process's id, so
    that a folder left behind by a run that was killed outright (SIGKILL, a
    power cut) is recognised and removed by the next run.
    """
    parent = _scratch_parent()
    _sweep(parent)
    folder = Path(tempfile.mkdtemp(prefix=f"ci-checks-{kind}-{os.getpid()}-", dir=parent))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _scratch_parent() -> str:
    shared_memory = Path("/dev/shm")
    usable = shared_memory.is_dir() and os.access(shared_memory, os.W_OK | os.X_OK)
    return str(shared_memory) if usable else tempfile.gettempdir()


def _sweep(parent: str) -> None:
    """Remove the scratch folders of this user's runs whose process is gone."""
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return
    for entry in entries:
        match = _SCRATCH.match(entry.name)
        if match is None or int(match["pid"]) == os.getpid() or _alive(int(match["pid"])):
            continue
        try:
            owned = entry.is_dir(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_uid == os.getuid()
        except (OSError, AttributeError):
            continue
        if owned:
            shutil.rmtree(entry.path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def unreadable(expected: str, error: Exception, output: str) -> BackendFailed:
    """The failure for output that is not what the linter should print; what it printed is not quoted."""
    return BackendFailed(f"printed output that is not {expected} ({type(error).__name__}, {len(output)} characters)")


def tail(stderr: bytes, *folders: Path) -> str:
    """What a failed linter said, as one bounded line that quotes nothing it read.

    A linter's error may quote the file it could not read (a configuration
    linked to a secret, say), and the message ends up in annotations and
    SARIF: quoted text is replaced by `"…"`, source excerpts are dropped, the
    private `folders` are removed from paths, and the line is cut to a few
    hundred characters. Of a chain of causes, the last is kept.
    """
    text = _ANSI.sub("", stderr.decode("utf-8", errors="replace"))
    for folder in folders:
        text = text.replace(f"{folder}{os.sep}", "").replace(str(folder), ".")
    lines = [line.strip() for line in text.splitlines() if line.strip() and not _EXCERPT.match(line)]
    causes = [match["cause"] for line in lines if (match := _CAUSE.match(line))]
    chosen = causes[-1] if causes else (lines[-1] if lines else "it printed nothing on stderr")
    for quoted in _QUOTED:
        chosen = quoted.sub("\0", chosen)
    cut = min((chosen.find(quote) for quote in '"`' if quote in chosen), default=-1)
    if cut >= 0:  # a quote left open: what follows it may be the start of a quotation
        chosen = chosen[:cut] + "\0"
    chosen = chosen.replace("\0", '"…"')
    return chosen if len(chosen) <= _SUMMARY_CHARS else chosen[: _SUMMARY_CHARS - 1] + "…"


def path_key(path: Path | str) -> str:
    """A path as a linter may print it back (relative to `cwd` or absolute) compared with the one given."""
    return os.path.normcase(os.path.normpath(path))


def char_column(line_text: str, byte_column: int) -> int:
    """The 1-based character column of a 1-based UTF-8 byte column of `line_text`, at most just past its end."""
    return len(line_text.encode("utf-8")[: max(byte_column - 1, 0)].decode("utf-8", errors="ignore")) + 1
