"""An editor for the language server's tests: pygls's own LSP client driving `ci-checks server` over stdio.

Each `Editor` starts one server process and talks to it as an editor does: it
opens, changes, saves and closes documents, waits for the diagnostics the
server publishes for a document version, asks for code actions and hovers,
and applies the edits of an action to its copy of the text.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

from ci_checks.server.documents import Document

T = TypeVar("T")
WAIT_S = 60.0
"""How long an answer may take on a busy machine before the test fails."""


class Editor:
    def __init__(
        self,
        settings: dict[str, Any] | None = None,
        encodings: list[str] | None = None,
        environment: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.runner = asyncio.Runner()
        self.client = LanguageClient("ci-checks-tests", "1")
        self.published: dict[str, list[types.PublishDiagnosticsParams]] = {}
        self.messages: list[str] = []
        self.documents: dict[str, Document] = {}
        self.versions: dict[str, int] = {}
        self._arrived = asyncio.Event()

        # pygls's client, unlike its server, leaves its decorator and `stop` without types.
        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)  # type: ignore[untyped-decorator]
        def diagnostics(params: types.PublishDiagnosticsParams) -> None:
            self.published.setdefault(params.uri, []).append(params)
            self._arrived.set()

        @self.client.feature(types.WINDOW_SHOW_MESSAGE)  # type: ignore[untyped-decorator]
        def show(params: types.ShowMessageParams) -> None:
            self.messages.append(params.message)

        @self.client.feature(types.WINDOW_LOG_MESSAGE)  # type: ignore[untyped-decorator]
        def log(params: types.LogMessageParams) -> None:
            self.messages.append(params.message)

        env = {**os.environ, **(environment or {})}
        self.run(self.client.start_io(sys.executable, "-m", "ci_checks.cli", "server", env=env, cwd=cwd))
        capabilities = types.ClientCapabilities(
            general=types.GeneralClientCapabilities(position_encodings=encodings) if encodings else None
        )
        params = types.InitializeParams(capabilities=capabilities, initialization_options=settings)
        self.initialized = self.run(self.client.initialize_async(params))
        self.encoding = str(self.initialized.capabilities.position_encoding or "utf-16")
        self.client.initialized(types.InitializedParams())

    def run(self, awaitable: Awaitable[T]) -> T:
        async def bounded() -> T:
            return await asyncio.wait_for(awaitable, WAIT_S)

        return self.runner.run(bounded())

    def uri(self, path: Path) -> str:
        uri: str | None = from_fs_path(str(path))
        assert uri is not None
        return uri

    # What an editor does ------------------------------------------------------------------------------------

    def open(self, path: Path, text: str | None = None) -> list[types.Diagnostic]:
        uri = self.uri(path)
        text = path.read_text(encoding="utf-8") if text is None else text
        self.documents[uri] = Document(uri, text, 1, self.encoding)
        self.versions[uri] = 1
        item = types.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=text)
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
        return self.diagnostics(path)

    def change(
        self, path: Path, text: str, start: tuple[int, int] | None = None, end: tuple[int, int] | None = None
    ) -> list[types.Diagnostic]:
        """Replace the text between two LSP positions (the whole text without them), as the editor's own copy."""
        uri = self.uri(path)
        self.versions[uri] += 1
        self.documents[uri].apply(text, start, end)
        change: types.TextDocumentContentChangeEvent
        if start is None or end is None:
            change = types.TextDocumentContentChangeWholeDocument(text=text)
        else:
            where = types.Range(start=types.Position(*start), end=types.Position(*end))
            change = types.TextDocumentContentChangePartial(range=where, text=text)
        identifier = types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri])
        params = types.DidChangeTextDocumentParams(text_document=identifier, content_changes=[change])
        self.client.text_document_did_change(params)
        return self.diagnostics(path)

    def save(self, path: Path) -> None:
        uri = self.uri(path)
        path.write_text(self.documents[uri].text, encoding="utf-8", newline="")
        params = types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        self.client.text_document_did_save(params)

    def close(self, path: Path) -> list[types.Diagnostic]:
        uri = self.uri(path)
        count = len(self.published.get(uri, []))
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        self.documents.pop(uri)
        return list(self.wait(lambda: self._after(uri, count)).diagnostics)

    def configure(self, settings: dict[str, Any]) -> None:
        self.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=settings))

    def text(self, path: Path) -> str:
        return self.documents[self.uri(path)].text

    def actions(self, path: Path, start: tuple[int, int], end: tuple[int, int]) -> list[types.CodeAction]:
        params = types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=self.uri(path)),
            range=types.Range(start=types.Position(*start), end=types.Position(*end)),
            context=types.CodeActionContext(diagnostics=[]),
        )
        found = self.run(self.client.text_document_code_action_async(params)) or []
        return [action for action in found if isinstance(action, types.CodeAction)]

    def apply(self, action: types.CodeAction) -> dict[str, list[types.Diagnostic]]:
        """Apply an action's edits as an editor does (each document's, last first), and the diagnostics then."""
        assert action.edit is not None and action.edit.changes is not None
        found = {}
        for uri, edits in action.edit.changes.items():
            document = self.documents[uri]
            ordered = sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True)
            text = document.text
            for edit in ordered:
                copy = Document(uri, text, None, self.encoding)
                start = copy.offset(edit.range.start.line, edit.range.start.character)
                end = copy.offset(edit.range.end.line, edit.range.end.character)
                text = text[:start] + edit.new_text + text[end:]
            path = Path(str(document.uri).removeprefix("file://"))
            found[uri] = self.change(path, text)
        return found

    def hover(self, path: Path, position: tuple[int, int]) -> types.Hover | None:
        params = types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=self.uri(path)), position=types.Position(*position)
        )
        return self.run(self.client.text_document_hover_async(params))

    # Waiting ------------------------------------------------------------------------------------------------

    def diagnostics(
        self, path: Path, until: Callable[[list[types.Diagnostic]], bool] | None = None
    ) -> list[types.Diagnostic]:
        """What the server publishes for the document's current version (and, with `until`, the first such that
        satisfies it: the linters' findings come in a later publication)."""
        uri = self.uri(path)
        version = self.versions.get(uri)

        def current() -> types.PublishDiagnosticsParams | None:
            for params in reversed(self.published.get(uri, [])):
                if params.version == version and (until is None or until(list(params.diagnostics))):
                    return params
            return None

        return list(self.wait(current).diagnostics)

    def wait(self, found: Callable[[], T | None]) -> T:
        async def waiting() -> T:
            while True:
                result = found()
                if result is not None:
                    return result
                self._arrived.clear()
                await self._arrived.wait()

        return self.run(waiting())

    def _after(self, uri: str, count: int) -> types.PublishDiagnosticsParams | None:
        published = self.published.get(uri, [])
        return published[-1] if len(published) > count else None

    def shut_down(self) -> int | None:
        """Shut the server down as an editor does; its exit code."""
        self.run(self.client.shutdown_async(None))
        self.client.exit(None)
        server = self.client._server
        code = self.run(server.wait()) if server is not None else None
        self.run(self.client.stop())  # type: ignore[no-untyped-call]
        self.runner.close()
        return code
