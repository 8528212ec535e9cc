"""What goes into the documents index: files named by `/docs add`, and the PDF, DOCX and web
pages fs_read and web_crawler find above documents.maxTokens (RAG.MAX_TOKENS, 8192), each
answered as the reference answers it (notes/mnemoai.md §2.1 PDF and DOCX, §2.11 web_crawler;
docs/documents.md). A document's id is its absolute path, or the page's URL: adding it again
replaces it."""

from __future__ import annotations

import asyncio
import glob
import os
import shlex
import sqlite3
from pathlib import Path
from typing import Any

from mm.tools.documents.index import DocumentIndex

INGESTED = "Document ingested into RAG store"  # fs_read's PDF and DOCX offload (the reference's message)
LARGE_PAGE = ("The page was large ({tokens} tokens), so it was indexed into the document store ({chunks} chunks) "
              "instead of returned inline. Retrieve the parts you need with search_in_documents(query=...) — do NOT "
              "answer from memory; the page content is only available via that search.")
NEXT_STEP = "search_in_documents"
ADDED = "added {doc_id}: {chunks} chunks"
NOT_ADDED = "not added {path}: {why}"
NOTHING_MATCHES = "no file matches"
NO_PATHS = "/docs add takes the files to index: /docs add PATH… (PDF, DOCX, Markdown or text; globs such as docs/*.md)"
BAD_QUOTES = "/docs add: {error}"
GLOB_MARKS = ("*", "?", "[")


def doc_id_of(where: Path) -> str:
    """The id of the file `where` in the index: its absolute path."""
    return os.path.abspath(where)


async def add_file(index: DocumentIndex, where: Path, client: Any = None) -> tuple[str, int, int | None]:
    """Index the file `where`: (its id, chunks, pages for a PDF). Raises DocumentError, OSError
    and sqlite3.Error."""
    from mm.tools.documents.extract import document_text

    extracted = await asyncio.to_thread(document_text, where)
    doc_id = doc_id_of(where)
    chunks = await index.add(doc_id, doc_id, extracted.text, client)
    return doc_id, chunks, extracted.pages


def expand(words: str, cwd: Path) -> list[Path] | str:
    """The files `/docs add` names in `words` (shell quoting; `~`; globs, `**` too), relative to
    `cwd`; or its error line (NO_PATHS, BAD_QUOTES)."""
    try:
        names = shlex.split(words)
    except ValueError as err:
        return BAD_QUOTES.format(error=err)
    if not names:
        return NO_PATHS
    paths: list[Path] = []
    for name in names:
        path = Path(os.path.expanduser(name))
        path = path if path.is_absolute() else cwd / path
        if any(mark in name for mark in GLOB_MARKS):
            found = sorted(glob.glob(str(path), recursive=True))
            paths += [Path(p) for p in found if os.path.isfile(p)] or [path]
        else:
            paths.append(path)
    return list(dict.fromkeys(paths))


async def add_paths(index: DocumentIndex, words: str, cwd: Path, client: Any = None) -> str:
    """`/docs add PATH…`: each file indexed, one ADDED or NOT_ADDED line per path, in order."""
    from mm.tools.documents.extract import DocumentError

    paths = expand(words, cwd)
    if isinstance(paths, str):
        return paths
    lines = []
    for path in paths:
        try:
            if any(mark in str(path) for mark in GLOB_MARKS) and not path.exists():
                raise DocumentError(NOTHING_MATCHES)
            doc_id, chunks, _ = await add_file(index, path, client)
            lines.append(ADDED.format(doc_id=doc_id, chunks=chunks))
        except (DocumentError, sqlite3.Error) as err:
            lines.append(NOT_ADDED.format(path=path, why=err))
        except OSError as err:
            lines.append(NOT_ADDED.format(path=path, why=err.strerror or err))
    return "\n".join(lines)


async def offload_document(index: DocumentIndex, where: Path, client: Any = None) -> dict | None:
    """fs_read's PDF or DOCX mode with the documents group declared: a document above
    maxTokens tokens is indexed, and the reference's answer returned (`content` empty,
    INGESTED, `chunks_indexed`); None when it fits, or cannot be read or indexed (then fs_read
    reads it as without the group, and says why it cannot)."""
    from mm.llm.tokens import count_text
    from mm.tools.documents.extract import DocumentError, document_text

    try:
        extracted = await asyncio.to_thread(document_text, where)
        if await asyncio.to_thread(count_text, extracted.text) <= index.settings.maxTokens:
            return None
        doc_id = doc_id_of(where)
        chunks = await index.add(doc_id, doc_id, extracted.text, client)
    except (DocumentError, OSError, sqlite3.Error):
        return None
    payload: dict[str, Any] = {"content": "", "message": INGESTED, "file_path": str(where)}
    if extracted.pages is not None:
        payload["total_pages"] = extracted.pages
    return payload | {"chunks_indexed": chunks, "next_step": NEXT_STEP}


async def offload_page(index: DocumentIndex, url: str, markdown: str, client: Any = None) -> dict | None:
    """web_crawler with the documents group declared: a page above maxTokens tokens is indexed
    under its URL, and the reference's answer returned (no `content`, LARGE_PAGE,
    `chunks_indexed`, `next_step`); None when it fits or cannot be indexed."""
    from mm.llm.tokens import count_text

    tokens = await asyncio.to_thread(count_text, markdown)
    if tokens <= index.settings.maxTokens:
        return None
    try:
        chunks = await index.add(url, url, markdown, client)
    except (OSError, sqlite3.Error):
        return None
    return {"success": True, "url": url, "message": LARGE_PAGE.format(tokens=tokens, chunks=chunks),
            "chunks_indexed": chunks, "next_step": NEXT_STEP, "metadata": {}}
