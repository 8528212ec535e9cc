"""list_documents, search_in_documents and clear_documents (mnemo-tools.md, Conditional tools;
notes/mnemoai.md §2.11; the texts are those of the reference's server/tools/rag_tool.py): plain
text over the project's documents index (docs/documents.md)."""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from mm.tools.base import Param, ToolContext, ToolKind, ToolResult
from mm.tools.documents.index import DocumentIndex

LISTED = "Indexed documents ({n} total):\n\n{rows}"
LISTED_ROW = "• {doc_id} ({count} chunks)"
NOTHING_INDEXED = "No documents have been indexed yet."
LIST_ERROR = "Error listing documents: {error}"
QUERY_REQUIRED = "Error: query parameter is required."
NO_HITS = "No relevant information found in indexed documents."
FOUND = "Found {n} relevant chunks:\n\n{hits}"
HIT = "[{i}] Score: {score:.3f} | Doc: {doc_id} | Chunk: {n}\n{text}"
SEARCH_ERROR = "Error searching documents: {error}"
CLEARED = "All documents have been cleared from the RAG system."
NOTHING_TO_CLEAR = "No documents to clear."
CLEAR_ERROR = "Error clearing documents: {error}"
LIST_DESCRIPTION = "List the indexed documents (added with /docs add, or large PDFs, DOCX and web pages) and their chunks."
CLEAR_DESCRIPTION = "Drop every indexed document (its chunks, vectors and keyword index) from this project's index."
TOP_K = 8  # search_in_documents' default top_k
TOP_K_MAX = 100  # the most chunks one search returns (the reference does not clamp top_k: a hole)
CANCELLED = "[error: cancelled]"  # as every tool (mm-tools.md §bash, Cancellation)


def listing(index: DocumentIndex) -> str:
    """list_documents' text (also `/docs`). Raises sqlite3.Error and OSError."""
    documents = index.store.documents()
    if not documents:
        return NOTHING_INDEXED
    rows = "\n".join(LISTED_ROW.format(doc_id=d, count=c) for d, c in documents)
    return LISTED.format(n=len(documents), rows=rows)


def clearing(index: DocumentIndex) -> str:
    """clear_documents' text (also `/docs clear`). Raises sqlite3.Error and OSError."""
    return CLEARED if index.store.clear() else NOTHING_TO_CLEAR


def _top_k(value: Any) -> int:
    try:
        return min(TOP_K_MAX, max(1, int(value)))
    except (TypeError, ValueError):
        return TOP_K


@dataclass
class WholeIndexTool:
    """A tool without parameters answering `work(index)`'s text (run in a thread), or `failure`
    with the error when the index cannot be used: list_documents and clear_documents."""

    index: DocumentIndex
    name: str
    kind: ToolKind
    description: str
    needs_permission: bool
    work: Any
    failure: str
    params: list[Param] = field(default_factory=list)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            return ToolResult(await asyncio.to_thread(self.work, self.index))
        except (sqlite3.Error, OSError) as err:
            return ToolResult(self.failure.format(error=err), failed=True)


def list_documents(index: DocumentIndex) -> WholeIndexTool:
    """list_documents(): the indexed documents and their chunk counts (kind search, never asked)."""
    return WholeIndexTool(index, "list_documents", "search", LIST_DESCRIPTION, False, listing, LIST_ERROR)


def clear_documents(index: DocumentIndex) -> WholeIndexTool:
    """clear_documents(): every document dropped, its chunks, vectors and keyword index; asks
    first with `yolo: false` (it deletes what the user indexed)."""
    return WholeIndexTool(index, "clear_documents", "other", CLEAR_DESCRIPTION, True, clearing, CLEAR_ERROR)


@dataclass
class SearchInDocuments:
    """search_in_documents(query, top_k=8): the best chunks, by keywords and by meaning."""

    index: DocumentIndex
    name: str = "search_in_documents"
    kind: ToolKind = "search"
    description: str = ("Search the indexed documents by keywords and meaning. Use a short query of key terms "
                        "(3-6 words); answer only from the chunks found.")
    params: list[Param] = field(default_factory=lambda: [
        Param("query", "string", "Key terms to search for."),
        Param("top_k", "integer", "How many chunks to return (default 8).", required=False, default=TOP_K)])
    needs_permission: bool = False

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        query = str(args.get("query") or "").strip()
        if not query:
            return ToolResult(QUERY_REQUIRED, failed=True)
        from mm.tools.waiting import Cancelled, unless_cancelled

        try:
            if not await asyncio.to_thread(self.index.store.documents):
                return ToolResult(NOTHING_INDEXED)
            hits = await unless_cancelled(self.index.search(query, _top_k(args.get("top_k", TOP_K)), ctx.model_client),
                                          ctx.cancelled)
        except Cancelled:
            return ToolResult(CANCELLED, failed=True)
        except (sqlite3.Error, OSError) as err:
            return ToolResult(SEARCH_ERROR.format(error=err), failed=True)
        if not hits:
            return ToolResult(NO_HITS)
        text = "\n\n".join(HIT.format(i=i, score=score, doc_id=chunk.doc_id, n=chunk.n, text=chunk.text)
                           for i, (score, chunk) in enumerate(hits, 1))
        return ToolResult(FOUND.format(n=len(hits), hits=text))
