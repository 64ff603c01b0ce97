"""The run folder: everything one run writes, in one place that goes when the run ends. No torch here.

    ci-checks-checkpoint-XXXXXXXX/
      owner.json    the process that owns the run: pid, start (clock ticks after boot), boot id
      options.json  the run's options, read by every rank
      tmp/          TMPDIR of every process of the run: multiprocessing's pymp-* folders, torch's caches
                    (or tmp-folder, naming one elsewhere when this path is too long for the sockets
                    multiprocessing makes there)
      saves/        the checkpoints, the reference writes, the crash test's areas
      sessions/     an empty file per session a process of the run made, named by the session's id
      journal/      rank-R.jsonl: the stages each rank entered; results.jsonl and outcome.json: what
                    rank 0 found; errors.jsonl: what ended a rank early; .reserve: space set aside
                    for the journal, given up when the disk under test is full

The folder is made under a hidden name and renamed once `owner.json` is in it, so a folder of
this name always says who owns it. One whose owner is gone (killed with SIGKILL) is found by
the next run in the same place, which ends what is left of its processes (only in the boot the
folder was made in, and only those whose environment names the folder) and removes it. It is
removed under the hidden name `.NAME.removing`, `owner.json` last: a removal cut short by a
kill is finished by the next run once that owner is gone.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import re
import shutil
import socket
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ci_checks_checkpoint import processes, report
from ci_checks_checkpoint.options import Deadline

PREFIX = "ci-checks-checkpoint-"
# multiprocessing makes AF_UNIX sockets in TMPDIR (pymp-XXXXXXXX/listener-XXXXXXXX, 33 bytes below it); such a
# path holds at most 107 bytes.
_LONGEST_TMPDIR = 107 - 33 - 8
_SHORT_TMPDIRS = (Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"))
_TMP_FOLDER = "tmp-folder"
_OWNER = "owner.json"
_REMOVING = ".removing"
# What RunFolder.remove renames a run folder to: tempfile.mkdtemp's 8 characters after the prefix.
_REMOVAL = re.compile(r"\." + re.escape(PREFIX) + r"[a-z0-9_]{8}" + re.escape(_REMOVING))
_OPTIONS = "options.json"
_OUTCOME = "outcome.json"
_RESULTS = "results.jsonl"
_ERRORS = "errors.jsonl"
# The environment variable that names the run folder to the processes of a run.
ENVIRONMENT = "CI_CHECKS_CHECKPOINT_RUN"


@dataclass(frozen=True)
class Owner:
    pid: int
    started: int
    boot: str
    host: str = ""

    @classmethod
    def this_process(cls) -> Owner:
        return cls(os.getpid(), processes.started(os.getpid()) or 0, processes.boot_id(), socket.gethostname())

    @property
    def alive(self) -> bool:
        """Whether the owner still runs; a run of another host (a shared file system) is taken to, since
        this host cannot tell."""
        return self.host != socket.gethostname() or processes.alive(self.pid, self.started, self.boot)


@dataclass(frozen=True)
class Stage:
    """What a rank was doing: `what` names it in a report; `backend` is the backend it belongs to, if any."""

    rank: int
    what: str
    backend: str | None
    since: float  # time.time() when it began


# The kind of RankError of a rank a signal killed: written down for it by the process that collected its exit.
DIED = "died"


@dataclass(frozen=True)
class RankError:
    """What ended a rank before it finished: `kind` is usage, environment, internal, timeout or DIED."""

    rank: int
    kind: str
    message: str
    stage: str | None


class RunTimedOut(BaseException):
    """The run reached its --timeout: raised where a rank would begin its next stage, or gives up waiting.
    A BaseException, so that no handler of a failed save or load takes it for one."""


_RESERVE = ".reserve"
_RESERVE_BYTES = 1 << 20
_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})


def _reserved(write: Callable[[], object], journal: Path) -> None:
    """Write; when the disk is full (the checkpoints filled it, or the test fills it on purpose), give up
    the space the journal set aside for that and write again."""
    try:
        write()
    except OSError as error:
        if error.errno not in _FULL or not (journal / _RESERVE).exists():
            raise
        (journal / _RESERVE).unlink(missing_ok=True)
        write()


def _append(path: Path, record: dict[str, Any]) -> None:
    def write() -> None:
        # One write of one line: lines from several processes never interleave.
        with path.open("a", encoding="utf-8") as stream:
            stream.write(json.dumps(record) + "\n")

    _reserved(write, path.parent)


def _lines(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return []
    found = []
    for line in text.splitlines():
        with contextlib.suppress(ValueError):  # a line cut short by a kill
            found.append(json.loads(line))
    return found


class RunFolder:
    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(cls, parent: Path, options: dict[str, Any]) -> RunFolder:
        """A new run folder in `parent`, owned by this process. OSError if it cannot be made."""
        hidden = Path(tempfile.mkdtemp(prefix="." + PREFIX, dir=parent))
        try:
            for part in ("tmp", "saves", "sessions", "journal"):
                (hidden / part).mkdir()
            (hidden / "journal" / _RESERVE).write_bytes(bytes(_RESERVE_BYTES))
            (hidden / _OPTIONS).write_text(json.dumps(options), encoding="utf-8")
            (hidden / _OWNER).write_text(json.dumps(asdict(Owner.this_process())), encoding="utf-8")
            final = hidden.with_name(hidden.name.removeprefix("."))
            if len(str(final / "tmp")) > _LONGEST_TMPDIR:
                (hidden / _TMP_FOLDER).write_text(str(_short_tmp()), encoding="utf-8")
            hidden.rename(final)
        except OSError:
            shutil.rmtree(hidden, ignore_errors=True)
            raise
        return cls(final)

    @classmethod
    def of_this_process(cls) -> RunFolder | None:
        """The run folder this process belongs to, from its environment."""
        named = os.environ.get(ENVIRONMENT)
        return cls(Path(named)) if named else None

    @property
    def tmp(self) -> Path:
        try:
            return Path((self.path / _TMP_FOLDER).read_text(encoding="utf-8"))
        except OSError:
            return self.path / "tmp"

    @property
    def saves(self) -> Path:
        return self.path / "saves"

    @property
    def journal(self) -> Path:
        return self.path / "journal"

    def owner(self) -> Owner | None:
        try:
            return Owner(**json.loads((self.path / _OWNER).read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            return None

    def options(self) -> dict[str, Any]:
        found: dict[str, Any] = json.loads((self.path / _OPTIONS).read_text(encoding="utf-8"))
        return found

    # -- sessions ---------------------------------------------------------------------------

    def record_session(self) -> None:
        """Say that this process leads a session of the run (called right after os.setsid())."""
        with contextlib.suppress(OSError):  # a run folder already removed: the run is being ended
            (self.path / "sessions" / str(os.getsid(0))).touch()

    def sessions(self) -> list[int]:
        try:
            return [int(entry.name) for entry in (self.path / "sessions").iterdir() if entry.name.isdigit()]
        except OSError:
            return []

    def processes(self, since: int) -> list[int]:
        """The live processes of the run's recorded sessions that started at or after `since` and were started
        with this folder in their environment: every process of the run inherits it, and a process that
        merely took over a recorded session id (a pid reused since) does not have it."""
        here = os.path.realpath(self.path)
        found = []
        for pid in processes.members(self.sessions(), since):
            named = processes.environment_variable(pid, ENVIRONMENT)
            if named is not None and os.path.realpath(named) == here:
                found.append(pid)
        return found

    # -- the journal ------------------------------------------------------------------------

    def enter(self, rank: int, what: str, backend: str | None = None) -> None:
        with contextlib.suppress(OSError):
            _append(self.journal / f"rank-{rank}.jsonl", {"what": what, "backend": backend, "since": time.time()})

    def stages(self) -> list[Stage]:
        """The stage each rank was last in, by rank."""
        found = []
        for path in sorted(self.journal.glob("rank-*.jsonl"), key=lambda p: int(p.stem.removeprefix("rank-"))):
            records = _lines(path)
            if records:
                rank = int(path.stem.removeprefix("rank-"))
                found.append(Stage(rank, records[-1]["what"], records[-1]["backend"], records[-1]["since"]))
        return found

    def add_result(self, result: report.Result) -> None:
        with contextlib.suppress(OSError):
            _append(self.journal / _RESULTS, asdict(result))

    def results(self) -> list[report.Result]:
        return [report.result_from_json(record) for record in _lines(self.journal / _RESULTS)]

    def add_error(self, error: RankError) -> None:
        with contextlib.suppress(OSError):
            _append(self.journal / _ERRORS, asdict(error))

    def errors(self) -> list[RankError]:
        return [RankError(**record) for record in _lines(self.journal / _ERRORS)]

    def write_platform(self, platform: dict[str, Any]) -> None:
        """What rank 0 knows of the platform so far, for a report of a run that does not finish."""
        self._write_atomically("platform.json", json.dumps(platform))

    def platform(self) -> dict[str, Any]:
        try:
            found: dict[str, Any] = json.loads((self.journal / "platform.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return found

    def write_outcome(self, outcome: report.Outcome) -> None:
        self._write_atomically(_OUTCOME, report.to_json(outcome))

    def outcome(self) -> report.Outcome | None:
        try:
            return report.from_json((self.journal / _OUTCOME).read_text(encoding="utf-8"))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _write_atomically(self, name: str, text: str) -> None:
        partial = self.journal / f".{name}.{os.getpid()}"
        _reserved(lambda: partial.write_text(text, encoding="utf-8"), self.journal)
        partial.rename(self.journal / name)

    # -- the end ----------------------------------------------------------------------------

    def remove(self) -> None:
        """Remove the folder; renamed first, so that a process of the run still writing finds its path gone
        instead of refilling the folder while it is removed. `owner.json` goes last: a removal cut short
        (the remover killed) leaves a `.removing` folder that still says whose it is, which the next run
        in the same place finishes once that owner is gone."""
        tmp = self.tmp
        doomed = self.path
        if not _REMOVAL.fullmatch(self.path.name):  # else a removal cut short, finished here
            doomed = self.path.with_name("." + self.path.name + _REMOVING)
            with contextlib.suppress(OSError):
                self.path.rename(doomed)
        if tmp == self.path / "tmp" or tmp.name.startswith(PREFIX + "tmp-"):  # of its own making, not any path
            shutil.rmtree(tmp, ignore_errors=True)
        for path in (doomed, self.path):
            _remove_owner_last(path)


def _remove_owner_last(folder: Path) -> None:
    try:
        entries = [entry for entry in folder.iterdir() if entry.name != _OWNER]
    except OSError:
        return
    for entry in entries:
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                entry.unlink()
    for last in (folder / _OWNER).unlink, folder.rmdir:  # the owner.json a removal cut short may have lost
        with contextlib.suppress(OSError):
            last()


def _short_tmp() -> Path:
    """A new folder whose path is short enough for multiprocessing's sockets."""
    for base in (Path(tempfile.gettempdir()), *_SHORT_TMPDIRS):
        if len(str(base)) + 30 <= _LONGEST_TMPDIR and base.is_dir() and os.access(base, os.W_OK | os.X_OK):
            return Path(tempfile.mkdtemp(prefix=PREFIX + "tmp-", dir=base))
    raise OSError(f"no temporary folder with a path shorter than {_LONGEST_TMPDIR} characters")


def left_behind(parent: Path) -> Iterator[RunFolder]:
    """The run folders in `parent` whose owner is gone: left by a run that was killed."""
    try:
        entries = sorted(parent.glob(PREFIX + "*"))
    except OSError:
        return
    for entry in entries:
        folder = RunFolder(entry)
        owner = folder.owner()
        if entry.is_dir() and not entry.is_symlink() and owner is not None and not owner.alive:
            yield folder


def removals_cut_short(parent: Path) -> Iterator[RunFolder]:
    """The `.removing` folders in `parent` whose removal was cut short: named as RunFolder.remove names them,
    and without a live owner (a run removing its folder at this moment has one, until its folder is empty)."""
    try:
        entries = sorted(parent.glob("." + PREFIX + "*" + _REMOVING))
    except OSError:
        return
    for entry in entries:
        folder = RunFolder(entry)
        if not _REMOVAL.fullmatch(entry.name) or not entry.is_dir() or entry.is_symlink():
            continue
        owner = folder.owner()
        if owner is None or not owner.alive:
            yield folder


def remove_left_behind(parent: Path) -> list[tuple[Path, int]]:
    """End what is left of the processes of every run folder in `parent` whose owner is gone, and remove it,
    and finish every removal cut short there: each folder with how many processes were ended."""
    removed: list[tuple[Path, int]] = []
    for cut_short in removals_cut_short(parent):
        cut_short.remove()
        removed.append((cut_short.path, 0))
    for folder in left_behind(parent):
        owner = folder.owner()
        ended: list[int] = []
        # No process outlives the boot it ran in: in another boot the folder's pids and start times are
        # those of unrelated processes.
        if owner is not None and owner.boot == processes.boot_id():
            ended = processes.end(functools.partial(folder.processes, owner.started))
            processes.remove_shared_memory(ended)
        folder.remove()
        removed.append((folder.path, len(ended)))
    return removed


class Stages:
    """One rank's stages, written down as it enters them, so that a run that is ended names where each
    rank was; the deadline is checked at every stage."""

    def __init__(self, folder: RunFolder, rank: int, deadline: Deadline) -> None:
        self.folder = folder
        self.rank = rank
        self.deadline = deadline
        self.current: str | None = None

    def enter(self, what: str, backend: str | None = None) -> None:
        if self.deadline.expired():
            raise RunTimedOut(self.current)
        self.current = what
        self.folder.enter(self.rank, what, backend)
