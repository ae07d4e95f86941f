"""The ``sncc lsp`` language server (pygls 2, stdio).

* diagnostics are published on ``didOpen`` and ``didSave`` at once and on
  ``didChange`` (full-text sync) after :data:`DEBOUNCE_S` of quiet, so a burst
  of keystrokes costs one check; a closed file gets an empty list;
* ``textDocument/hover``, ``completion``, ``codeAction`` and ``definition``
  are served by :mod:`sncc.lsp.features`.

Positions are always UTF-16 (the protocol's default, which every client
supports): the server answers ``initialize`` with ``positionEncoding:
utf-16`` whatever the client offers, because
:meth:`sncc.source.SourceFile.lsp_position` is the one conversion point.

Every handler catches its own exceptions: bad input gives an SN9001
diagnostic or an empty answer, never a dead server.  A request whose params do
not match the protocol's types gets a JSON-RPC error -32602 (pygls logs it and
answers nothing); a wrong ``Content-Length`` costs one message, not the
session (:mod:`sncc.lsp.framing`); imported buffers and files are read with the
same 64 MiB bound as the CLI (:func:`sncc.syntax.imports.read_bounded`).
"""

from __future__ import annotations

import asyncio
import logging
import os

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method
from pygls.uris import to_fs_path

from sncc import __version__
from sncc.lsp import features
from sncc.lsp.convert import Checked, check_document
from sncc.source import SourceFile

log = logging.getLogger("sncc.lsp")

#: quiet time after a change before the buffer is re-checked (diagnostics-ux.md §4.2: 200–300 ms)
DEBOUNCE_S = 0.2


#: what :meth:`SnccProtocol.structure_message` returns for a request it answered with an error
_ANSWERED = object()


class SnccProtocol(LanguageServerProtocol):
    """pygls' protocol with the position encoding pinned to UTF-16, and an error response
    (-32602 invalid params, -32603 otherwise) for a request whose message does not
    structure, where pygls logs the failure and leaves the client waiting."""

    def structure_message(self, data):
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if isinstance(data, dict) and "method" in data and isinstance(data.get("id"), (int, str)) \
                    and not isinstance(data.get("id"), bool):
                detail = f"{exc.message}: the params of `{data['method']}` do not match the protocol"
                self._send_response(data["id"], error=types.ResponseError(code=exc.code, message=detail))
                return _ANSWERED
            raise

    def handle_message(self, message):
        if message is _ANSWERED:
            return None
        return super().handle_message(message)

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams):
        general = params.capabilities.general
        if general is not None:
            general.position_encodings = [types.PositionEncodingKind.Utf16]
        return (yield from super().lsp_initialize(params))


class SnccServer(LanguageServer):
    """The server plus the last check of each open document (for code actions)."""

    def __init__(self) -> None:
        super().__init__("sncc", __version__, protocol_cls=SnccProtocol,
                         text_document_sync_kind=types.TextDocumentSyncKind.Full)
        self.checked: dict[str, Checked] = {}

    def doc_path(self, uri: str) -> str:
        """File-system path of ``uri`` (the URI itself for non-file documents)."""
        try:
            path = to_fs_path(uri)
        except Exception:  # noqa: BLE001
            path = None
        return path or uri

    def read_import(self, path: str) -> str:
        """Text of an imported file: the open editor buffer when there is one, else the file
        (:func:`~sncc.syntax.imports.read_bounded`: regular files only, at most
        :data:`~sncc.source.MAX_FILE_BYTES`).  Raises :class:`~sncc.syntax.imports.UnreadableFile`
        for a buffer or file over that size, as the CLI does."""
        from sncc.source import MAX_FILE_BYTES
        from sncc.syntax.imports import read_bounded

        want = os.path.abspath(path)
        for uri, doc in list(self.workspace.text_documents.items()):
            if os.path.abspath(self.doc_path(uri)) == want:
                text = doc.source
                oversized(path, text)
                return text
        return read_bounded(path, MAX_FILE_BYTES)

    def start_io(self, stdin=None, stdout=None) -> None:
        """Serve over stdio with pygls' message loop and a reader that resynchronises after a
        wrong ``Content-Length`` (:class:`sncc.lsp.framing.ResyncReader`)."""
        import sys
        import threading

        from pygls.io_ import StdoutWriter, run_async

        from sncc.lsp.framing import ResyncReader

        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        reader = ResyncReader(stdin or sys.stdin.buffer, self.thread_pool)
        try:
            asyncio.run(run_async(stop_event=self._stop_event, reader=reader, protocol=self.protocol,
                                  logger=log, error_handler=self.report_server_error))
        except BrokenPipeError:
            log.error("the connection to the client is lost; shutting down")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    def check(self, uri: str) -> Checked | None:
        """Check the open document ``uri`` and publish its diagnostics."""
        try:
            doc = self.workspace.get_text_document(uri)
            text, version = doc.source, doc.version
        except Exception:  # noqa: BLE001
            log.exception("cannot read %s", uri)
            return None
        result = check_document(uri, self.doc_path(uri), text, reader=self.read_import) \
            if not _too_large(text) else too_large_document(uri, self.doc_path(uri), text)
        self.checked[uri] = result
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=result.diagnostics))
        return result

    def source_of(self, uri: str) -> SourceFile | None:
        """The current text of ``uri`` as a :class:`SourceFile`; None for a document that is
        not open and cannot be read from disk (a request about a file that does not exist is
        answered with nothing, not with a traceback in the log)."""
        doc = self.workspace.get_text_document(uri)
        try:
            text = doc.source     # pygls reads a document that was never opened from disk
        except (OSError, UnicodeDecodeError) as e:
            log.debug("no document %s: %s", uri, e)
            return None
        return SourceFile(self.doc_path(uri), text)


def _too_large(text: str) -> bool:
    from sncc.source import MAX_FILE_BYTES

    return len(text) > MAX_FILE_BYTES // 4 and len(text.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES


def oversized(path: str, text: str) -> None:
    """Raise :class:`~sncc.syntax.imports.UnreadableFile` when the buffer ``text`` of ``path``
    holds more than :data:`~sncc.source.MAX_FILE_BYTES` bytes of UTF-8."""
    if _too_large(text):
        from sncc.source import MAX_FILE_BYTES
        from sncc.syntax.imports import UnreadableFile

        raise UnreadableFile(path, f"larger than {MAX_FILE_BYTES / 2**20:g} MiB, the most sncc reads")


def too_large_document(uri: str, path: str, text: str) -> Checked:
    """The check of an open buffer over the size limit: SN1060 at its start, nothing compiled."""
    from sncc.diagnostics import codes
    from sncc.diagnostics.model import diag
    from sncc.lsp.convert import to_lsp
    from sncc.source import MAX_FILE_BYTES

    src = SourceFile(path, "")
    d = diag(codes.UNREADABLE_FILE, f"cannot check `{os.path.basename(path)}`: larger than "
             f"{MAX_FILE_BYTES / 2**20:g} MiB, the most sncc reads", src.span(0, 0),
             help="plans need a few kilobytes: split generated content out of the file")
    return Checked(uri, src, None, [to_lsp(d, src, uri, {path: src})])


def create_server() -> SnccServer:
    """Build the server with every feature registered."""
    server = SnccServer()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: SnccServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.check(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: SnccServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.check(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: SnccServer, params: types.DidChangeTextDocumentParams) -> None:
        uri, version = params.text_document.uri, params.text_document.version
        await asyncio.sleep(DEBOUNCE_S)
        try:
            current = ls.workspace.get_text_document(uri).version
        except Exception:  # noqa: BLE001
            return
        if current == version:  # no newer change arrived meanwhile
            ls.check(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: SnccServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.checked.pop(uri, None)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: SnccServer, params: types.HoverParams) -> types.Hover | None:
        try:
            src = ls.source_of(params.text_document.uri)
            if src is None:
                return None
            offset = src.offset_of_lsp(params.position.line, params.position.character)
            found = features.hover(src, offset)
            if found is None:
                return None
            doc, (start, end) = found
            from sncc.lsp.convert import lsp_range

            return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, doc), lsp_range(src, src.span(start, end)))
        except Exception:  # noqa: BLE001
            log.exception("hover failed")
            return None

    @server.feature(types.TEXT_DOCUMENT_COMPLETION,
                    types.CompletionOptions(trigger_characters=['"', "="]))
    def completion(ls: SnccServer, params: types.CompletionParams) -> types.CompletionList:
        try:
            src = ls.source_of(params.text_document.uri)
            offset = None if src is None else src.offset_of_lsp(params.position.line, params.position.character)
            items = [] if src is None else features.complete(src, offset)
        except Exception:  # noqa: BLE001
            log.exception("completion failed")
            items = []
        return types.CompletionList(is_incomplete=False, items=items)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
    def code_action(ls: SnccServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        try:
            uri = params.text_document.uri
            diags = [d for d in params.context.diagnostics if d.source == "sncc"]
            if diags and not any(isinstance(d.data, dict) and d.data.get("fixes") for d in diags):
                # a client that drops `data`: use the server's own last check of the file
                last = ls.checked.get(uri)
                if last is not None:
                    keys = {(d.code, d.range.start.line, d.range.start.character) for d in diags}
                    diags = [d for d in last.diagnostics if (d.code, d.range.start.line, d.range.start.character) in keys]
            return features.code_actions(uri, diags, params.range)
        except Exception:  # noqa: BLE001
            log.exception("code action failed")
            return []

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    def definition(ls: SnccServer, params: types.DefinitionParams) -> list[types.Location]:
        try:
            uri = params.text_document.uri
            last = ls.checked.get(uri)
            src = ls.source_of(uri)
            if src is None:
                return []
            if last is None or last.source.text != src.text:
                last = check_document(uri, src.name, src.text, reader=ls.read_import)
            offset = src.offset_of_lsp(params.position.line, params.position.character)
            return features.definition(last.comp, offset)
        except Exception:  # noqa: BLE001
            log.exception("definition failed")
            return []

    return server


def main() -> None:
    """Serve LSP over stdin/stdout until the client sends ``exit``."""
    logging.basicConfig(level=os.environ.get("SNCC_LSP_LOG", "WARNING"), format="sncc-lsp %(levelname)s %(message)s")
    create_server().start_io()
