"""The language server: a thin front-end over the engine (`ci_checks.engine.live.Workbench`), on pygls.

Each open document belongs to the repository that holds it (found as the
command line finds it); each repository is a `Workbench`, kept loaded while
the server runs. Every notification that changes a document re-checks the
open documents of its repository with ci-checks' own rules and the policy, and
publishes their findings; a save also runs the external linters over the
saved document, once the saves have paused (`LINT_DELAY_S`), in a worker
thread, and publishes again when they are done. The server sends no request
to the client: settings come with `initialize` (`initializationOptions`) and
`workspace/didChangeConfiguration`, and nothing waits for an answer.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from ci_checks import __version__
from ci_checks.backends import tools
from ci_checks.config import registry
from ci_checks.core import config_files
from ci_checks.core.diagnostics import Diagnostic, Related, Severity, Span
from ci_checks.core.linters import PROFILES
from ci_checks.core.repository import WORKFLOW_DIR, FileKind, find_root, kind_of, walked
from ci_checks.engine.live import Linted, Workbench
from ci_checks.engine.options import Options, parse_backends
from ci_checks.reporters import docs
from ci_checks.rules import NAMES_BY_CODE
from ci_checks.server import actions
from ci_checks.server.documents import ENCODINGS, Document

LINT_DELAY_S = 0.5
"""How long the saves of a document must pause before the linters run over it."""
SOURCE = "ci-checks"
_SEVERITIES = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}
logger = logging.getLogger(__name__)


@dataclass
class Opened:
    """An open document: its text, and the repository and path it has there."""

    document: Document
    bench: Workbench
    relative: str
    shown: list[Diagnostic] = field(default_factory=list)
    """What was last published for it, as ci-checks found it."""
    published: list[types.Diagnostic] | None = None


class Server(LanguageServer):
    def __init__(self) -> None:
        super().__init__("ci-checks", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.options = Options()
        self.opened: dict[str, Opened] = {}
        self.benches: dict[Path, Workbench] = {}
        self.encoding = "utf-16"
        self.linting: dict[str, asyncio.Task[None]] = {}
        self.said: set[str] = set()
        self.shut_down = False
        """Whether the client asked for a shutdown (before it says exit)."""

    # Settings --------------------------------------------------------------------------------------------------

    def configure(self, settings: object) -> None:
        """Editor settings (`{"ci-checks": {...}}` or the inner mapping): `config`, `configRef`, `profile`,
        `select`, `ignore`, `backends`. A value that cannot be used is said and passed over."""
        if isinstance(settings, dict) and isinstance(settings.get("ci-checks"), dict):
            settings = settings["ci-checks"]
        options = Options()
        if isinstance(settings, dict):
            options = _options(settings, self.say)
        if options != self.options or not self.benches:
            self.options = options
            self.benches.clear()
            for opened in self.opened.values():
                opened.bench = self.bench(Path(find_root(self.path_of(opened.document.uri) or Path.cwd())))
                opened.bench.update(opened.relative, opened.document.content)

    def say(self, message: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        if message not in self.said:
            self.said.add(message)
            self.window_show_message(types.ShowMessageParams(kind, f"ci-checks: {message}"))

    def bench(self, root: Path) -> Workbench:
        bench = self.benches.get(root)
        if bench is None:
            bench = self.benches[root] = Workbench(root, self.options)
        return bench

    # Documents -------------------------------------------------------------------------------------------------

    @staticmethod
    def path_of(uri: str) -> Path | None:
        if not uri.startswith("file:"):
            return None
        path = to_fs_path(uri)
        return Path(path) if path else None

    def open(self, uri: str, text: str, version: int | None) -> Opened | None:
        path = self.path_of(uri)
        if path is None:
            return None
        bench = self.bench(find_root(path))
        relative = bench.repository.relative(path)
        if not _checked(relative, bench):
            return None
        opened = Opened(Document(uri, text, version, self.encoding), bench, relative)
        self.opened[uri] = opened
        bench.update(relative, opened.document.content)
        return opened

    def close(self, uri: str) -> Opened | None:
        opened = self.opened.pop(uri, None)
        task = self.linting.pop(uri, None)
        if task is not None:
            task.cancel()
        if opened is not None:
            opened.bench.update(opened.relative, None)
            opened.bench.linted.pop(opened.relative, None)
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))
            if not any(item.bench is opened.bench for item in self.opened.values()):
                # The repository's last open document: what it kept loaded is let go.
                self.benches.pop(opened.bench.repository.root, None)
        return opened

    # Checking --------------------------------------------------------------------------------------------------

    def publish(self, bench: Workbench, changed: str | None = None) -> None:
        """Check the open documents of a repository and publish what each holds (again, where it changed)."""
        opened = [item for item in self.opened.values() if item.bench is bench]
        if not opened:
            return
        try:
            outcome = bench.check([item.relative for item in opened])
        except Exception as error:  # a bug must not end the server; the editor's log says what happened
            logger.exception("checking %s failed", bench.repository.root)
            self.window_log_message(types.LogMessageParams(types.MessageType.Error, f"ci-checks: {error!r}"))
            return
        for message in outcome.internal_errors:
            self.window_log_message(types.LogMessageParams(types.MessageType.Error, f"ci-checks: {message}"))
        for note in bench.notes:
            self.say(note, types.MessageType.Info)
        if bench.problem is not None:
            self.say(bench.problem)
        by_path: dict[str, list[Diagnostic]] = {}
        for diagnostic in outcome.diagnostics:
            by_path.setdefault(diagnostic.span.path, []).append(diagnostic)
        for item in opened:
            item.shown = by_path.get(item.relative, [])
            found = [self.lsp_diagnostic(item, diagnostic) for diagnostic in item.shown]
            broken = bench.config_error
            if broken is not None and broken.span.path == item.relative:
                found.insert(0, self.config_diagnostic(bench, broken))
            if found != item.published or item.document.uri == changed:
                item.published = found
                params = types.PublishDiagnosticsParams(item.document.uri, found, item.document.version)
                self.text_document_publish_diagnostics(params)
        self.publish_config_error(bench)

    def publish_config_error(self, bench: Workbench) -> None:
        """A configuration that cannot be used is shown in its file, open or not."""
        error = bench.config_error
        shown = {item.relative for item in self.opened.values() if item.bench is bench}
        if error is None or error.span.path in shown:
            return
        uri = from_fs_path(str(bench.repository.root / error.span.path))
        if uri is not None:
            diagnostic = self.config_diagnostic(bench, error)
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, [diagnostic]))

    def lint_later(self, opened: Opened) -> None:
        """Run the linters over a saved document once its saves pause, away from the editor's requests."""
        uri = opened.document.uri
        earlier = self.linting.pop(uri, None)
        if earlier is not None:
            earlier.cancel()
        self.linting[uri] = asyncio.get_running_loop().create_task(self._lint(opened))

    async def _lint(self, opened: Opened) -> None:
        await asyncio.sleep(LINT_DELAY_S)
        job = opened.bench.linter_job(opened.relative)
        if job is None:
            return
        linted: Linted = await asyncio.get_running_loop().run_in_executor(None, job)
        if self.opened.get(opened.document.uri) is not opened:
            return
        opened.bench.linted[opened.relative] = linted
        self.publish(opened.bench)

    # Conversions -----------------------------------------------------------------------------------------------

    def text_of(self, bench: Workbench, relative: str) -> Document | None:
        """The text a finding's place counts in: the open document, else the file as the check read it."""
        for item in self.opened.values():
            if item.bench is bench and item.relative == relative:
                return item.document
        read = bench.read(relative)
        return Document("", read, None, self.encoding) if read is not None else None

    def lsp_range(self, document: Document | None, span: Span) -> types.Range:
        if document is None:
            return types.Range(types.Position(max(span.line - 1, 0), 0), types.Position(max(span.end_line - 1, 0), 0))
        start = types.Position(*document.from_span(span.line, span.column))
        return types.Range(start, types.Position(*document.from_span(span.end_line, span.end_column)))

    def related(self, bench: Workbench, notes: Iterable[Related]) -> list[types.DiagnosticRelatedInformation] | None:
        found = [
            types.DiagnosticRelatedInformation(
                types.Location(
                    from_fs_path(str(bench.repository.root / note.span.path)) or "",
                    self.lsp_range(self.text_of(bench, note.span.path), note.span),
                ),
                note.message,
            )
            for note in notes
        ]
        return found or None

    def lsp_diagnostic(self, opened: Opened, diagnostic: Diagnostic) -> types.Diagnostic:
        link = docs.url(diagnostic.code, diagnostic.url)
        shown_rule = diagnostic.policy_id is not None or diagnostic.code not in NAMES_BY_CODE
        return types.Diagnostic(
            range=self.lsp_range(opened.document, diagnostic.span),
            message=diagnostic.message + (f" [{diagnostic.rule}]" if shown_rule else ""),
            severity=_SEVERITIES[diagnostic.severity],
            code=diagnostic.code,
            code_description=types.CodeDescription(link) if link else None,
            source=SOURCE,
            related_information=self.related(opened.bench, diagnostic.related),
        )

    def config_diagnostic(self, bench: Workbench, error: config_files.ConfigError) -> types.Diagnostic:
        return types.Diagnostic(
            range=self.lsp_range(self.text_of(bench, error.span.path), error.span),
            message=f"{error.message} (the configuration cannot be used; the last one that could is)",
            severity=types.DiagnosticSeverity.Error,
            source=SOURCE,
            related_information=self.related(bench, error.related),
        )

    def at(self, opened: Opened, start: types.Position, end: types.Position) -> list[Diagnostic]:
        """The findings shown in a document whose range meets `start`-`end` (LSP positions)."""
        first = opened.document.to_span(start.line, start.character)
        last = opened.document.to_span(end.line, end.character)
        return [
            diagnostic
            for diagnostic in opened.shown
            if (diagnostic.span.line, diagnostic.span.column) <= last
            and first <= (diagnostic.span.end_line, diagnostic.span.end_column)
        ]

    def code_actions(self, opened: Opened, found: Iterable[Diagnostic]) -> list[types.CodeAction]:
        documents = {item.relative: item.document for item in self.opened.values() if item.bench is opened.bench}
        file = opened.bench.loaded(opened.relative)
        result = []
        for diagnostic in found:
            made = [actions.fix_action(diagnostic, documents)]
            made += actions.ignore_actions(diagnostic, opened.document, file, opened.bench.repository.root)
            for action in made:
                if action is None:
                    continue
                changes = {
                    documents[path].uri: [
                        types.TextEdit(
                            types.Range(
                                types.Position(*documents[path].position(edit.start)),
                                types.Position(*documents[path].position(edit.end)),
                            ),
                            edit.text,
                        )
                        for edit in edits
                    ]
                    for path, edits in action.edits.items()
                }
                result.append(
                    types.CodeAction(
                        title=action.title,
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[self.lsp_diagnostic(opened, diagnostic)],
                        edit=types.WorkspaceEdit(changes=changes),
                        is_preferred=action.preferred or None,
                    )
                )
        return result

    def hover(self, opened: Opened, position: types.Position) -> types.Hover | None:
        found = self.at(opened, position, position)
        if not found:
            return None
        pages = dict.fromkeys(_documentation(diagnostic) for diagnostic in found)
        return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, "\n\n---\n\n".join(pages)))


def _documentation(diagnostic: Diagnostic) -> str:
    """A finding's check as Markdown: a built-in rule's page (with the policy rule that found it), or what a
    linter's code is and where the linter documents it."""
    rule = registry.BY_CODE.get(diagnostic.code)
    if rule is not None:
        page = docs.rule_page(rule)
        if diagnostic.policy_id is not None:
            page = f"Found by the policy rule `{diagnostic.rule}` of the configuration.\n\n{page}"
        return page
    check = docs.linter_check(diagnostic.code)
    if check is not None:
        return f"# {check.code} ({check.linter})\n\n{check.description}\n\n{check.url}\n"
    return f"# {diagnostic.code}\n"


def _checked(relative: str, bench: Workbench) -> bool:
    """Whether a document is one the server checks: a workflow, a composite action, a Dockerfile, the
    configuration, or a shell or Python file (which policy rules read)."""
    if relative.startswith("../") or not walked(relative):
        return False
    if relative in config_files.CONFIG_FILES or relative == bench.config_path:
        return True
    kind = kind_of(relative)
    if kind is FileKind.WORKFLOW:
        return relative.rpartition("/")[0] == WORKFLOW_DIR
    return kind in (FileKind.ACTION, FileKind.DOCKERFILE, FileKind.SHELL, FileKind.PYTHON)


def _options(settings: dict[str, Any], say: Any) -> Options:
    options = Options()
    config = settings.get("config")
    if isinstance(config, str) and config:
        options.config = Path(config).expanduser()
    config_ref = settings.get("configRef")
    if isinstance(config_ref, str) and config_ref:
        options.config_ref = config_ref
    profile = settings.get("profile")
    if profile is not None:
        if profile in PROFILES:
            options.profile = profile
        else:
            say(f"profile {profile!r} is not one of {', '.join(PROFILES)}; the configuration's is used")
    for key in ("select", "ignore"):
        value = settings.get(key)
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            if key == "select":
                options.select = value or None
            else:
                options.ignore = value
    backends = settings.get("backends")
    if backends is not None:
        try:
            joined = backends if isinstance(backends, str) else ",".join(str(item) for item in backends)
            options.backends = parse_backends(joined or "none")
        except (ValueError, TypeError) as error:
            say(f"backends: {error}")
    return replace(options)


SERVER = Server()


@SERVER.feature(types.INITIALIZE)
def initialize(server: Server, params: types.InitializeParams) -> None:
    encoding = str(server.workspace.position_encoding or "utf-16")
    server.encoding = encoding if encoding in ENCODINGS else "utf-16"
    server.configure(params.initialization_options)


@SERVER.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
def did_change_configuration(server: Server, params: types.DidChangeConfigurationParams) -> None:
    server.configure(params.settings)
    for bench in list(server.benches.values()):
        server.publish(bench)


@SERVER.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(server: Server, params: types.DidOpenTextDocumentParams) -> None:
    item = params.text_document
    opened = server.open(item.uri, item.text, item.version)
    if opened is not None:
        server.publish(opened.bench, item.uri)


@SERVER.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(server: Server, params: types.DidChangeTextDocumentParams) -> None:
    opened = server.opened.get(params.text_document.uri)
    if opened is None:
        return
    for change in params.content_changes:
        if isinstance(change, types.TextDocumentContentChangePartial):
            start, end = change.range.start, change.range.end
            opened.document.apply(change.text, (start.line, start.character), (end.line, end.character))
        else:
            opened.document.apply(change.text)
    opened.document.version = params.text_document.version
    opened.bench.update(opened.relative, opened.document.content)
    server.publish(opened.bench, opened.document.uri)


@SERVER.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
def did_save(server: Server, params: types.DidSaveTextDocumentParams) -> None:
    opened = server.opened.get(params.text_document.uri)
    if opened is None:
        return
    opened.bench.refresh()
    server.publish(opened.bench)
    server.lint_later(opened)


@SERVER.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(server: Server, params: types.DidCloseTextDocumentParams) -> None:
    opened = server.close(params.text_document.uri)
    if opened is not None:
        server.publish(opened.bench)


@SERVER.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched_files(server: Server, params: types.DidChangeWatchedFilesParams) -> None:
    for bench in list(server.benches.values()):
        bench.refresh()
        server.publish(bench)


@SERVER.feature(
    types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix])
)
def code_action(server: Server, params: types.CodeActionParams) -> list[types.CodeAction] | None:
    opened = server.opened.get(params.text_document.uri)
    if opened is None:
        return None
    return server.code_actions(opened, server.at(opened, params.range.start, params.range.end)) or None


@SERVER.feature(types.TEXT_DOCUMENT_HOVER)
def hover(server: Server, params: types.HoverParams) -> types.Hover | None:
    opened = server.opened.get(params.text_document.uri)
    return server.hover(opened, params.position) if opened is not None else None


@SERVER.feature(types.SHUTDOWN)
def shutdown(server: Server, params: None) -> None:
    server.shut_down = True
    for task in server.linting.values():
        task.cancel()
    tools.stop_all()
