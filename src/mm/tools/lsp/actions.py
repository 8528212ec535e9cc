"""The six actions of the lsp tool against a running server (mm-tools.md §lsp). Each syncs the
file first (`didOpen`, or a whole-document `didChange` when it moved), then asks."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mm.tools.base import ToolResult
from mm.tools.lsp import answers
from mm.tools.lsp.client import LanguageServer, ServerFailure
from mm.tools.lsp.symbols import to_utf16

DIAGNOSTICS_WAIT = 3.0  # seconds a diagnostics call waits for the server's publication (mm-tools.md §lsp)
NOTHING_FOUND = "[lsp: no {what} found for the symbol at {where}]"  # mm-tools.md §lsp, Failures
NOTHING_AT_ANY = '[lsp: no {what} found for "{symbol}" at any of its {n} occurrence(s) in {path}]'  # docs/lsp.md
WHAT = {"definition": "definition", "references": "references", "hover": "hover text", "rename": "edits to rename"}
NO_DIAGNOSTICS = "no diagnostics received for {path} within 3s ({why})"  # mm-tools.md §lsp
NONE_YET = "the server has published none for it yet: it may still be working — call diagnostics again in a moment"
STALE = ("the last ones it published are from before the file changed: it may still be working — call "
         "diagnostics again in a moment")
METHODS = {"definition": "textDocument/definition", "references": "textDocument/references",
           "hover": "textDocument/hover", "rename": "textDocument/rename"}


@dataclass
class Call:
    """One lsp call: the server, the file (absolute `path`, `shown` as answers say it, the `text`
    read from disk and its `lines`), the turn's cancel event, and the project root."""

    server: LanguageServer
    path: Path
    shown: str
    text: str
    lines: list[str]
    cancelled: asyncio.Event
    root: Path

    def paths(self) -> answers.Paths:
        return answers.Paths(self.root, {str(self.path): self.text})

    def where(self, target: Any) -> str:
        return f"{self.shown}:{target.line + 1}:{target.column + 1}"


async def run(call: Call, action: str, targets: list[Any], symbol: str, new: str) -> ToolResult:
    """The answer to `action` on `call`'s file; ServerFailure and Cancelled pass through."""
    sent = call.server.sync(call.path, call.text)
    if action == "symbols":
        return await _symbols(call)
    if action == "diagnostics":
        return await _diagnostics(call, sent)
    return await _at_symbol(call, action, targets, symbol, new)


async def _symbols(call: Call) -> ToolResult:
    types = _types()
    result = await call.server.request("textDocument/documentSymbol", types.DocumentSymbolParams(
        text_document=types.TextDocumentIdentifier(uri=call.path.as_uri())), call.cancelled)
    rows = answers.symbols_text(result)
    return ToolResult("\n".join(rows) if rows else answers.NO_SYMBOLS.format(path=call.shown))


async def _diagnostics(call: Call, sent: bool) -> ToolResult:
    """The diagnostics published for the file's content: at once `(as last published)` when the
    file was not `sent` again (it did not change) and the server spoke since it last was, else
    those the server publishes within DIAGNOSTICS_WAIT."""
    server, key = call.server, str(call.path)
    found = server.published.get(key)
    if not sent and found is not None and found.serial > server.synced_at.get(key, -1):
        return ToolResult(answers.diagnostics_text(found.diagnostics, call.shown, call.lines, last=True))
    found = await server.publication(call.path, DIAGNOSTICS_WAIT, call.cancelled)
    if found is None:
        why = STALE if key in server.published else NONE_YET
        return ToolResult(NO_DIAGNOSTICS.format(path=call.shown, why=why))
    return ToolResult(answers.diagnostics_text(found.diagnostics, call.shown, call.lines, last=False))


async def _at_symbol(call: Call, action: str, targets: list[Any], symbol: str, new: str) -> ToolResult:
    """Try each target in order until the server answers something (mm-tools.md §lsp, `symbol`);
    an error answer moves on too, and is said when no target got an answer."""
    error = None
    for target in targets:
        try:
            result = await call.server.request(METHODS[action], _params(call, action, target, new), call.cancelled)
        except ServerFailure as err:
            if not _an_answer(err):
                raise
            error = error or err
            continue
        answer = await _answer(call, action, result, symbol, new)
        if answer is not None:
            return answer
    if error is not None:
        raise error
    if len(targets) > 1:
        text = NOTHING_AT_ANY.format(what=WHAT[action], symbol=symbol, n=len(targets), path=call.shown)
        return ToolResult(text, failed=True)
    return ToolResult(NOTHING_FOUND.format(what=WHAT[action], where=call.where(targets[0])), failed=True)


def _an_answer(err: ServerFailure) -> bool:
    """Whether the failure is the server's error answer (not a stop, a timeout)."""
    from mm.tools.lsp.client import NoAnswer

    return err.__cause__ is not None and not isinstance(err, NoAnswer)


def _params(call: Call, action: str, target: Any, new: str) -> Any:
    types = _types()
    document = types.TextDocumentIdentifier(uri=call.path.as_uri())
    position = types.Position(line=target.line, character=to_utf16(call.lines[target.line], target.column))
    if action == "definition":
        return types.DefinitionParams(text_document=document, position=position)
    if action == "references":
        return types.ReferenceParams(text_document=document, position=position,
                                     context=types.ReferenceContext(include_declaration=True))
    if action == "hover":
        return types.HoverParams(text_document=document, position=position)
    return types.RenameParams(text_document=document, position=position, new_name=new)


async def _answer(call: Call, action: str, result: Any, symbol: str, new: str) -> ToolResult | None:
    """The tool's answer to the server's `result`, or None when it holds nothing."""
    from mm.tools.lsp.edits import path_of

    if action == "hover":
        text = answers.hover_text(result)
        return ToolResult(text) if text else None
    if action == "rename":
        return await _renamed(call, result, symbol, new) if result is not None else None
    found = answers.locations(result)
    if not found:
        return None
    paths = call.paths()
    rows = await asyncio.to_thread(answers.locations_text, found, paths, path_of)
    files = list(dict.fromkeys(p for p in (path_of(uri) for uri, _ in found) if p is not None))
    if action == "references":
        rows.insert(0, answers.REFERENCES_HEAD.format(n=len(rows)))
    return ToolResult("\n".join(rows), locations=files)


async def _renamed(call: Call, result: Any, symbol: str, new: str) -> ToolResult | None:
    """Apply the server's WorkspaceEdit on disk (mm.tools.lsp.edits), then tell the server each
    file's new content (`didChange` or `didOpen`, then `didSave`)."""
    from mm.tools.lsp import edits

    server = call.server
    synced = {key: doc.text for key, doc in server.documents.items()}
    paths = call.paths()
    try:
        planned = await asyncio.to_thread(edits.plan, result, call.root, paths.shown, synced, symbol)
        if not planned:
            return None
        await asyncio.to_thread(edits.write_all, planned)
    except edits.EditRefused as err:
        raise ServerFailure(str(err)) from None
    for file in planned:
        server.sync(file.path, file.new)
        server.saved(file.path, file.new)
    return ToolResult(answers.renamed_text(new, planned), locations=[f.path for f in planned])


def _types() -> Any:
    from lsprotocol import types

    return types
