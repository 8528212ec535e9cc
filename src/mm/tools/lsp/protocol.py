"""The pygls client mm talks to a language server with, and what mm says of itself at
`initialize` (docs/lsp.md §Client).

pygls's `LanguageClient` does the JSON-RPC framing and turns every message into lsprotocol
types. Two things are mm's: an answer that cannot be read as its type (a server that departs
from the protocol) becomes an error answer for its request — otherwise that request would wait
for ever — and the server's own requests get the answers a plain editor gives.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Callable

UNREADABLE = "its answer could not be read ({error})"
APPLY_EDIT_REFUSED = "mm applies the edits of a rename's answer only"
QUIET_NOTIFICATIONS = ("window/logMessage", "window/showMessage", "$/progress", "telemetry/event", "$/logTrace")
NULL_REQUESTS = ("client/registerCapability", "client/unregisterCapability", "window/workDoneProgress/create",
                 "window/showMessageRequest", "workspace/semanticTokens/refresh", "workspace/inlayHint/refresh",
                 "workspace/codeLens/refresh", "workspace/inlineValue/refresh", "workspace/diagnostic/refresh")
REASON_LIMIT = 300  # characters of a server's text quoted in a reason


def load() -> None:
    """Import pygls and lsprotocol (~0.5 s: called in a thread), and keep pygls's log off stderr."""
    import lsprotocol.types  # noqa: F401
    import pygls.lsp.client  # noqa: F401

    log = logging.getLogger("pygls")
    if not log.handlers:
        log.addHandler(logging.NullHandler())
    log.propagate = False


def make_client(root: Path, published: Callable[[Any], None]) -> Any:
    """A pygls LanguageClient for a server of the project `root`; `published(params)` receives
    each `textDocument/publishDiagnostics`."""
    from lsprotocol import types
    from pygls.lsp.client import LanguageClient
    from pygls.protocol import LanguageServerProtocol

    from mm import __version__

    class Protocol(LanguageServerProtocol):
        def structure_message(self, data: dict[str, Any]) -> Any:
            try:
                return super().structure_message(data)
            except Exception as err:
                if "jsonrpc" in data and "id" in data and "method" not in data:  # the answer to a request
                    cause = err.__cause__ or err
                    error = UNREADABLE.format(error=one_line(f"{type(cause).__name__}: {cause}"))
                    return types.ResponseErrorMessage(id=data["id"], error=types.ResponseError(
                        code=types.ErrorCodes.ParseError, message=error))
                raise

    client = LanguageClient("mm", __version__, protocol_cls=Protocol)
    client.feature("textDocument/publishDiagnostics")(lambda params: published(params))
    client.feature("workspace/configuration")(lambda params: [None] * len(params.items))
    client.feature("workspace/workspaceFolders")(lambda params: [_folder(types, root)])
    client.feature("workspace/applyEdit")(
        lambda params: types.ApplyWorkspaceEditResult(applied=False, failure_reason=APPLY_EDIT_REFUSED))
    for method in NULL_REQUESTS + QUIET_NOTIFICATIONS:
        client.feature(method)(_nothing())
    return client


def initialize_params(root: Path) -> Any:
    """What mm says of itself: UTF-16 positions, whole-document sync, Markdown hover, hierarchical
    symbols, versioned workspace edits without resource operations."""
    import os

    from lsprotocol import types

    from mm import __version__

    text = types.TextDocumentClientCapabilities(
        synchronization=types.TextDocumentSyncClientCapabilities(did_save=True),
        hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown, types.MarkupKind.PlainText]),
        definition=types.DefinitionClientCapabilities(link_support=True),
        references=types.ReferenceClientCapabilities(),
        document_symbol=types.DocumentSymbolClientCapabilities(hierarchical_document_symbol_support=True),
        rename=types.RenameClientCapabilities(prepare_support=False),
        publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True))
    workspace = types.WorkspaceClientCapabilities(
        apply_edit=False, configuration=True, workspace_folders=True,
        workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True))
    return types.InitializeParams(
        process_id=os.getpid(), root_uri=root.as_uri(), root_path=str(root),
        workspace_folders=[_folder(types, root)], client_info=types.ClientInfo(name="mm", version=__version__),
        capabilities=types.ClientCapabilities(
            workspace=workspace, text_document=text,
            general=types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf16])))


def one_line(text: str) -> str:
    """`text` on one line, cut at REASON_LIMIT characters."""
    line = " ".join(str(text).split())
    return line if len(line) <= REASON_LIMIT else line[:REASON_LIMIT - 1] + "…"


def _nothing() -> Any:
    """A handler of its own (pygls marks each with its method) that answers null."""
    return lambda params: None


def _folder(types: Any, root: Path) -> Any:
    return types.WorkspaceFolder(uri=root.as_uri(), name=root.name or str(root))
