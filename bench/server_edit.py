"""How long `ci-checks server` takes to re-check an edit, beside a one-file command-line run of the same file.

    python bench/server_edit.py [--repeat 30] [--warmup 3] [--repository FOLDER --file PATH]

By default the file is `bench/speed-workflow.yml` alone in a fresh repository,
as `bench/speed.py` checks it (P3); `--repository` and `--file` take a file of
a real repository instead (copied first; the server checks it with the rest of
its repository kept loaded).

- edit: the language server, started as an editor starts it (its console
  script, over stdio, driven by pygls's client), with the file open; each edit
  is one incremental change (a character typed into, then taken out of, the
  file's first line), timed from the `didChange` notification sent to the
  diagnostics of that version received;
- CLI: `ci-checks check --skip-unread-files --backends none --no-cache FILE`,
  one process per run, as P3 of `bench/speed.py` runs it (start-up included).

Both run from compiled bytecode kept in a folder of the benchmark's own, with
no `CI_CHECKS_*` setting of the caller's. The table gives medians and ranges,
and the ratio of the edit's median to the CLI run's, held to at most 0.2.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path
from speed import BYTECODE, CI_CHECKS_OK, ONE_FILE, ONE_FILE_PATH, Command, console_script, run_once

GOAL = 0.2
WAIT_S = 120.0


async def _edits(server: list[str], env: dict[str, str], path: Path, warmup: int, repeat: int) -> list[float]:
    """Seconds from each timed edit sent to its diagnostics received."""
    client = LanguageClient("bench", "1")
    versions: dict[int, float] = {}
    arrived = asyncio.Event()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def published(params: types.PublishDiagnosticsParams) -> None:
        if params.version is not None and params.version not in versions:
            versions[params.version] = time.perf_counter()
            arrived.set()

    await client.start_io(server[0], *server[1:], env=env)
    await client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities()))
    client.initialized(types.InitializedParams())
    uri = from_fs_path(str(path))
    assert uri is not None
    item = types.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=path.read_text(encoding="utf-8"))
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
    await _arrival(versions, arrived, 1)
    timed = []
    for version in range(2, 2 + warmup + repeat):
        typed = version % 2 == 0  # a character typed, then taken out again
        where = types.Range(start=types.Position(line=0, character=1), end=types.Position(line=0, character=1))
        if not typed:
            where = types.Range(start=types.Position(line=0, character=1), end=types.Position(line=0, character=2))
        change = types.TextDocumentContentChangePartial(range=where, text="x" if typed else "")
        identifier = types.VersionedTextDocumentIdentifier(uri=uri, version=version)
        sent = time.perf_counter()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(text_document=identifier, content_changes=[change])
        )
        received = await _arrival(versions, arrived, version)
        if version >= 2 + warmup:
            timed.append(received - sent)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return timed


async def _arrival(versions: dict[int, float], arrived: asyncio.Event, version: int) -> float:
    async def waiting() -> float:
        while version not in versions:
            arrived.clear()
            await arrived.wait()
        return versions[version]

    return await asyncio.wait_for(waiting(), WAIT_S)


def _milliseconds(values: Sequence[float]) -> str:
    return f"{statistics.median(values) * 1000:.1f} ms ({min(values) * 1000:.1f} - {max(values) * 1000:.1f})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=30, help="timed edits and CLI runs (default 30)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed ones before them (default 3)")
    parser.add_argument("--repository", type=Path, help="a repository to take the file from (copied)")
    parser.add_argument("--file", help="with --repository: the file, relative to it")
    args = parser.parse_args(argv)
    if (args.repository is None) != (args.file is None):
        parser.error("--repository and --file go together")
    ci_checks = console_script("ci-checks")
    with tempfile.TemporaryDirectory(prefix="ci-checks-server-edit-") as temporary:
        scratch = Path(temporary)
        root = scratch / "repository"
        if args.repository is None:
            relative = ONE_FILE_PATH
            (root / relative).parent.mkdir(parents=True)
            shutil.copyfile(ONE_FILE, root / relative)
        else:
            relative = args.file
            shutil.copytree(args.repository, root, symlinks=True)
        (root / ".git").mkdir(exist_ok=True)
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith("CI_CHECKS_") and key not in {"GITHUB_STEP_SUMMARY", *BYTECODE}
        }
        env |= {"PYTHONPYCACHEPREFIX": str(scratch / "bytecode"), "XDG_CACHE_HOME": str(scratch / "xdg-cache")}
        argv_cli = [ci_checks, "check", "--skip-unread-files", "--backends", "none", "--no-cache", relative]
        shown = "ci-checks check --skip-unread-files --backends none --no-cache FILE"
        cli = Command("CLI", argv_cli, root, CI_CHECKS_OK, shown)
        for _ in range(args.warmup):
            run_once(cli, env, scratch)
        cli.walls = [run_once(cli, env, scratch)[0] for _ in range(args.repeat)]
        edits = asyncio.run(_edits([ci_checks, "server"], env, root / relative, args.warmup, args.repeat))
    ratio = statistics.median(edits) / cli.wall
    size = (args.repository / args.file if args.repository else ONE_FILE).stat().st_size
    print(f"file: {relative} ({size / 1000:.1f} kB); load average {os.getloadavg()[0]:.2f}; {args.repeat} timed each")
    print(f"edit re-check (server, didChange to its diagnostics): {_milliseconds(edits)}")
    print(f"one-file CLI run ({shown}): {_milliseconds(cli.walls)}")
    print(f"ratio: {ratio:.3f}x the CLI run; goal <= {GOAL}x: {'met' if ratio <= GOAL else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
