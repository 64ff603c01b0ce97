"""Property-based: hostile baselines, report paths and runs over several repositories never break a run, forge a
workflow command or write outside the checkout.

Each example builds one to three repositories whose files a pull request
wrote: workflow names and values, script names and a policy built from
pieces that end lines (`\\n`, `\\r`, U+2028, U+0085 ...), start workflow
commands (`::error::`, `::stop-commands::`, `##[add-mask]`), are trimmed as
white space or are percent-encodings (`%0A`); sometimes a configuration that
does not parse; report files, a job summary and a baseline at paths that run
through symbolic links, hard links, FIFOs and folders of the checkout toward
a victim folder outside; and baselines with such text in every field, or
that are no baseline at all. ci-checks runs once, in process, as the Action
runs it (from the first repository, `--output FORMAT=FILE` for every format).

The properties: the exit code is 0, 1 or 2; nothing is printed as an
internal error or a traceback; no line of standard output, standard error or
any report reads as a workflow command that ci-checks did not write (its own
`github` annotations); and nothing outside the repositories changed but the
reports asked for outside them.

Profiles (the second in a thorough run, `--thorough` or `CI_CHECKS_THOROUGH=1`, as `.ci/run` runs;
`CI_CHECKS_HOSTILE=default|thorough` chooses one either way):
- `default`: 40 examples without the linters and 3 with them, a few seconds;
- `thorough`: 300 examples without the linters and 15 with them.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ci_checks.cli import main as cli
from tests.ci.conftest import thorough
from tests.ci.linter.hostile import ANNOTATION, STOP_COMMANDS, forged_lines

PROFILE = os.environ.get("CI_CHECKS_HOSTILE", "thorough" if thorough() else "default")
EXAMPLES = {"default": (40, 3), "thorough": (300, 15)}[PROFILE]
_SETTINGS = {
    "deadline": None,
    "database": None,
    "derandomize": PROFILE == "default",
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
}
FORMATS = ("json", "sarif", "github", "junit", "markdown", "text")
PIECES = [
    "\n",
    "\r",
    "\r\n",
    "\u2028",
    "\u2029",
    "\x85",
    "\x0b",
    "\x0c",
    "\x1e",
    " ",
    "\t",
    "\u3000",
    "\xa0",
    "\u200b",
    "\ufeff",
    "\xad",
    "\u2060",
    "\ufe0f",
    "#\u200b#[add-mask]x",
    ":\u2060:error::forged",
    "::",
    "::error file=x,line=1::forged",
    "::stop-commands::pwned",
    "::add-mask::x",
    "##[",
    "##[add-mask]forged",
    "##[group]",
    "%0A",
    "%0D::",
    "%25",
    ":",
    ",",
    "\x1b[2K",
    "é",
    "🚀",
    "'",
    '"',
    "${{ github.event.issue.title }}",
]
TEXT = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=4)), max_size=6).map("".join)
NAMES = TEXT.map(lambda text: text.replace("/", "%").replace("\x00", "")).filter(
    lambda name: 0 < len(name.encode("utf-8", "surrogatepass")) < 200 and name not in (".", "..")
)
WORKFLOW = """\
on: push
permissions: {{}}
jobs:
  build:
    runs-on: [self-hosted, {label}]
    name: {name}
    steps:
      - uses: {uses}
      - run: echo {run}
"""
POLICY = """\
version: 1
rules:
  - id: no-text
    kind: forbid
    where: {{files: "scripts/*"}}
    forbid:
      - text: {text}
"""
REPORT_PLACES = ["plain", "linked file", "dangling link", "linked folder", "hard link", "fifo", "folder", "dot-dot"]
BASELINE_PLACES = ["outside", "inside", "linked file", "linked folder", "none"]


def _yaml(text: str) -> str:
    """A YAML double-quoted scalar holding exactly `text` (JSON's escapes are YAML's)."""
    return json.dumps(text, ensure_ascii=False)


@dataclass
class Repository:
    workflow_name: str
    values: tuple[str, str, str, str]
    script_name: str
    policy: str
    broken_config: bool


REPOSITORIES = st.builds(
    Repository,
    NAMES,
    st.tuples(TEXT, TEXT, TEXT, TEXT),
    NAMES,
    TEXT,
    st.integers(0, 7).map(lambda draw: draw == 7),  # a configuration that does not parse, one time in eight
)
BASELINE_ENTRY = st.fixed_dictionaries({"path": TEXT, "code": TEXT, "rule": TEXT, "fingerprint": TEXT, "message": TEXT})
_RECORDED = st.lists(BASELINE_ENTRY, max_size=4).map(lambda found: json.dumps({"version": 1, "findings": found}))
_NOT_BASELINES = st.one_of(
    st.sampled_from(
        [
            "",
            "[]",
            '{"version": 2, "findings": []}',
            '{"version": 1, "findings": [1]}',
            '{"version": 1, "findings": [{"path": 1}]}',
            "[" * 100_000,
            json.dumps({"version": 1, "findings": [dict.fromkeys(("code", "rule", "fingerprint", "message"), "")]}),
            '{"version": 1, "findings": [{"path": "\\ud800"}]}',
            "\ufeff{}",
        ]
    ),
    TEXT,
)
BASELINES = st.integers(0, 4).flatmap(lambda draw: _NOT_BASELINES if draw == 4 else _RECORDED)


@dataclass
class Run:
    repositories: list[Repository]
    report: str
    summary: str
    baseline: str
    baseline_text: str
    backends: str


def _mostly(usual: list[str], hostile: list[str]) -> st.SearchStrategy[str]:
    """One of `usual` four times in five, else one of `hostile`: a run refused early checks nothing."""
    return st.integers(0, 4).flatmap(lambda draw: st.sampled_from(hostile if draw == 4 else usual))


def _runs(backends: str) -> st.SearchStrategy[Run]:
    return st.builds(
        Run,
        st.lists(REPOSITORIES, min_size=1, max_size=3),
        _mostly(["plain"], REPORT_PLACES),  # most runs get as far as writing their reports
        _mostly(["none", "outside", "plain"], REPORT_PLACES),
        _mostly(["none", "outside", "inside"], BASELINE_PLACES),
        BASELINES,
        st.just(backends),
    )


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8", "surrogatepass"))


def _repository(root: Path, spec: Repository) -> None:
    (root / ".git").mkdir(parents=True)
    label, name, uses, run = spec.values
    workflow = WORKFLOW.format(label=_yaml(label), name=_yaml(name), uses=_yaml(uses), run=_yaml(run))
    _write(root / ".github" / "workflows" / "ci.yml", workflow)
    _write(root / ".github" / "workflows" / f"{spec.workflow_name}.yml", workflow)
    _write(root / "scripts" / spec.script_name, f"echo {spec.policy}\n")
    policy = "rules: [\n" if spec.broken_config else POLICY.format(text=_yaml(spec.policy or "x"))
    _write(root / ".github" / "ci-checks.yml", policy)


def _place(root: Path, place: str, name: str, victim: Path) -> Path:
    """A path in the repository for a file ci-checks writes or reads, made hostile as `place` says."""
    target = root / name
    if place == "linked file":
        target.symlink_to(victim)
    elif place == "dangling link":
        target.symlink_to(victim.parent / f"planted-{name}")
    elif place == "linked folder":
        (root / f"{name}.d").symlink_to(victim.parent)
        return root / f"{name}.d" / victim.name
    elif place == "hard link":
        os.link(victim, target)
    elif place == "fifo":
        os.mkfifo(target)
    elif place == "folder":
        target.mkdir()
    elif place == "dot-dot":
        (root / f"{name}.up").symlink_to(victim.parent)
        return root / f"{name}.up" / ".." / "escaped"
    return target


def _snapshot(folder: Path, skip: list[Path]) -> dict[str, bytes | str]:
    """Every entry under `folder` but those under `skip`: a file's bytes, or what else it is."""
    found: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        if any(path == place or place in path.parents for place in skip):
            continue
        if path.is_symlink():
            found[str(path)] = f"link to {path.readlink()}"
        elif path.is_file():
            found[str(path)] = path.read_bytes()
        else:
            found[str(path)] = "folder" if path.is_dir() else "special"
    return found


@contextlib.contextmanager
def _step_summary(path: Path | None) -> Iterator[None]:
    if path is not None:
        os.environ["GITHUB_STEP_SUMMARY"] = str(path)
    try:
        yield
    finally:
        os.environ.pop("GITHUB_STEP_SUMMARY", None)


def _check(run: Run) -> None:
    with tempfile.TemporaryDirectory(prefix="ci-checks-hostile-") as folder:
        top = Path(folder)
        victim = top / "outside" / "victim"
        _write(victim, "precious\n")
        _write(top / "outside" / "other", "also precious\n")
        roots = [top / f"repository-{index}" for index in range(len(run.repositories))]
        for root, spec in zip(roots, run.repositories, strict=True):
            _repository(root, spec)
        first = roots[0]
        reports = {
            name: _place(first, run.report if name == "sarif" else "plain", f"report.{name}", victim)
            for name in FORMATS
        }
        summary = None
        if run.summary == "outside":
            summary = top / "summary.md"
        elif run.summary != "none":
            summary = _place(first, run.summary, "summary.md", victim)
        options = [f"--output={name}={path}" for name, path in reports.items()]
        if run.baseline != "none":
            written = top / "baselines" / "baseline.json"
            _write(written, run.baseline_text)
            if run.baseline == "outside":
                baseline = written
            elif run.baseline == "inside":
                baseline = first / "baseline.json"
                _write(baseline, run.baseline_text)
            else:
                baseline = _place(first, run.baseline, "baseline.json", written)
            options += ["--baseline", str(baseline)]
        before = _snapshot(top, skip=roots)
        out, err = io.StringIO(), io.StringIO()
        arguments = ["check", *map(str, roots), *options, "--backends", run.backends, "--no-cache", "--jobs", "1"]
        with contextlib.chdir(first), _step_summary(summary):
            code = cli.main(arguments, out=out, err=err)
        assert code in (0, 1, 2), code
        event(f"exit code {code}")
        assert "Traceback" not in err.getvalue() and "internal error" not in err.getvalue(), err.getvalue()
        after = _snapshot(top, skip=roots)
        if summary is not None and run.summary == "outside" and str(summary) in after:
            before[str(summary)] = after[str(summary)]  # the one file outside that the caller asked for
        assert after == before, "a file outside the repositories changed"
        outputs = {"stdout": out.getvalue(), "stderr": err.getvalue()}
        for name, path in reports.items():
            if path.is_file() and not path.is_symlink():
                outputs[name] = path.read_text(encoding="utf-8", errors="surrogateescape")
        if summary is not None and summary.is_file() and not summary.is_symlink():
            outputs["summary"] = summary.read_text(encoding="utf-8")
        for name, text in outputs.items():
            own = ANNOTATION if name == "github" else STOP_COMMANDS
            assert forged_lines(text, own) == [], (name, forged_lines(text, own))


@settings(max_examples=EXAMPLES[0], **_SETTINGS)  # type: ignore[arg-type]
@given(_runs("none"))
def test_hostile_runs_never_break_forge_or_write_outside(run: Run) -> None:
    _check(run)


@settings(max_examples=EXAMPLES[1], **_SETTINGS)  # type: ignore[arg-type]
@given(_runs("all"))
def test_hostile_runs_with_the_linters_never_break_forge_or_write_outside(run: Run) -> None:
    _check(run)
