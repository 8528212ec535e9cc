"""`/docs`: the project's documents index from the prompt, in line mode and over ACP
(docs/documents.md §The /docs command): `/docs` lists it (as list_documents), `/docs add PATH…`
indexes files, `/docs clear` empties it (as clear_documents)."""

from __future__ import annotations

import asyncio
import sqlite3
from typing import Any

DOCS_OFF = ("/docs needs the documents tool group: add `documents` to `toolsets:` in the agent file "
            "(docs/documents.md)")
DOCS_USAGE = "/docs takes nothing (list), add PATH… or clear"
DOCS_ERROR = "/docs: the index at {path} cannot be used: {error}"


async def docs_command(conv: Any, words: str) -> str:
    """Run `/docs WORDS` in the conversation `conv` (its registry, cwd and model client: the
    embeddings of what is added); returns the text to show. Raises nothing of its own."""
    from mm.tools.documents.adding import add_paths
    from mm.tools.documents.doc_tools import clearing, listing

    tool = conv.registry.get("list_documents")
    index = getattr(tool, "index", None)
    if index is None:
        return DOCS_OFF
    verb, _, rest = words.strip().partition(" ")
    try:
        if not verb:
            return await asyncio.to_thread(listing, index)
        if verb == "add":
            return await add_paths(index, rest, conv.cwd, conv.client)
        if verb == "clear" and not rest.strip():
            return await asyncio.to_thread(clearing, index)
    except (sqlite3.Error, OSError) as err:
        return DOCS_ERROR.format(path=index.store.path, error=err)
    return DOCS_USAGE
