"""The `search_memory` tool: words looked up in past sessions (mm-tools.md §search_memory).

Declared when `sessions.enabled` and `sessions.autoSearchMemory` are both true; kind `search`,
never asks permission. The search itself is mm.sessions.search.search_memory, which the line
mode's `/memory <words>` calls too.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from mm.tools.base import Param, ToolContext, ToolKind, ToolResult

NAME = "search_memory"
DESCRIPTION = ("Search the earlier conversations (past sessions) for words: questions, answers and "
               "summaries that hold them, newest first among equals. Matches words, not meanings.")
PARAMS = [
    Param("query", "string", "The words to look for."),
    Param("limit", "integer", "How many hits at most (default 10, at most 50).", required=False, default=0),
]


class SearchMemory:
    """The tool. `directory` is `sessions.dir` (resolved against `ctx.cwd` when relative);
    `current` returns the messages of the conversation in progress, which are left out."""

    name = NAME
    kind: ToolKind = "search"
    description = DESCRIPTION
    params = PARAMS
    needs_permission = False

    def __init__(self, directory: str, current: Callable[[], list] | None = None):
        self.directory = directory
        self.current = current

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Search in a thread (the files and the index are read from disk); returns the text."""
        from mm.sessions.search import search_memory

        query = str(args.get("query") or "")
        try:
            limit = int(args.get("limit") or 0)
        except (TypeError, ValueError):
            limit = 0
        current = list(self.current()) if self.current is not None else []
        text = await asyncio.to_thread(search_memory, ctx.resolve(self.directory), query, limit, current,
                                       ctx.settings.max_output)
        return ToolResult(text)
