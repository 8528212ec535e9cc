"""The `glob_search` tool: files by name, newest first by default (mnemo-tools.md §Search;
notes/mnemoai.md §2.4; docs/tools-search.md §glob_search). The walk is mm.tools.search.globwalk."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from typing import Any

from mm.tools.base import Param, ToolContext, ToolKind, ToolResult
from mm.tools.search.globwalk import Walk
from mm.tools.search.page import room
from mm.tools.search.paths import NOT_A_FOLDER, order_key, place, refuse_nul, search_root, shown

NAME = "glob_search"
SCAN_CEILING = 100_000  # matches collected before sorting by time, at most (mnemo-tools.md §Search)
DESCRIPTION = (
    "Find files by name with a glob (e.g. **/*.py, src/**/*.ts, *.{yml,yaml}), newest first. Skips hidden files "
    "unless the pattern names them (.github/**), and build, dist, node_modules, __pycache__, .venv and other noise "
    "folders unless include_ignored. To search file contents, use grep_search."
)
PARAMS = [
    Param("pattern", "string", "The glob: * and ? within a name, ** across folders."),
    Param("path", "string", "Folder to search. Default: the working directory.", required=False),
    Param("max_results", "integer", "At most this many files; 0: no limit.", required=False, default=1000),
    Param("sort_by_mtime", "boolean", "Newest first (default); false: path order, faster.", required=False,
          default=True),
    Param("include_ignored", "boolean", "Also search the noise folders.", required=False, default=False),
]
# The reference's texts (notes/mnemoai.md §2.4), then mm's own.
CEILING_HIT = ("Showing {max_results} matches from the first {ceiling} scanned (not globally newest — the tree "
               "exceeds the scan ceiling). Use a more specific pattern/path to narrow the search.")
NEWEST_CUT = ("Showing {max_results} of {total} matches (newest first). Increase max_results or use max_results=0 "
              "for unlimited.")
UNSORTED_CUT = ("Results limited to {max_results} (unsorted). Use sort_by_mtime=True for newest-first or "
                "max_results=0 for unlimited.")
TIMED_OUT = ("Scan stopped after {seconds}s with {count} match(es) — the tree is too large to walk fully. Narrow "
             "the pattern or point path at a subdirectory, or use execute_bash with 'find' for a system-wide search.")
OUTPUT_FULL = ("Showing {shown} of {count} files: the list stopped at maxOutput ({limit} characters). Lower "
               "max_results, or narrow the pattern or path.")
MORE_THAN = "more than {limit}"  # path order stops after max_results + 1: how many more is not known
NO_FILES = "No files match {pattern!r} in {where}."
EMPTY_PATTERN = "[glob_search: the pattern is empty — give a glob such as **/*.py]"


class GlobSearch:
    """The glob_search tool: kind `search`, no permission (it only reads names). `timeout`: seconds
    a walk may take (SearchConfig.timeout; the reference's 30 s)."""

    name = NAME
    kind: ToolKind = "search"
    description = DESCRIPTION
    params = PARAMS
    needs_permission = False

    def __init__(self, timeout: float = 30.0):
        self.timeout = timeout

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """The matching files, one per line (relative to the working directory when inside it),
        then the reference's message when the list was cut; a failure is one line."""
        from mm.tools.process import CANCELLED_LINE
        from mm.tools.waiting import Cancelled, unless_cancelled

        pattern = str(args.get("pattern") or "").strip()
        if not pattern:
            return ToolResult(EMPTY_PATTERN, failed=True)
        refuse_nul(pattern)
        root = search_root(ctx, args.get("path"))
        if isinstance(root, str):
            return ToolResult(root, failed=True)
        if not os.path.isdir(root):
            return ToolResult(NOT_A_FOLDER.format(path=args.get("path")), failed=True)
        limit = max(int(args.get("max_results", 1000)), 0) or None
        by_time = bool(args.get("sort_by_mtime", True))
        stop = threading.Event()
        walk = Walk(str(root), pattern, bool(args.get("include_ignored", False)), time.monotonic() + self.timeout, stop)
        try:
            found, ceiling_hit = await unless_cancelled(asyncio.to_thread(_collect, walk, limit, by_time), ctx.cancelled)
        except Cancelled:
            return ToolResult(CANCELLED_LINE, failed=True)
        finally:
            stop.set()
        return ToolResult(self._text(found, ceiling_hit, walk.timed_out, limit, by_time, pattern,
                                     place(root, ctx.cwd), ctx))

    def _text(self, found: list[str], ceiling_hit: bool, timed_out: bool, limit: int | None, by_time: bool,
              pattern: str, where: str, ctx: ToolContext) -> str:
        if not found and not timed_out:
            return NO_FILES.format(pattern=pattern, where=where)
        total = len(found)
        chosen = found if limit is None else found[:limit]
        lines, used, budget = [], 0, room(ctx.settings.max_output)
        for path in chosen:
            line = shown(path, ctx.cwd)
            if used + len(line) + 1 > budget:
                break
            lines.append(line)
            used += len(line) + 1
        message = None
        if timed_out:
            message = TIMED_OUT.format(seconds=f"{self.timeout:g}", count=total)
        elif len(lines) < len(chosen):
            count = MORE_THAN.format(limit=limit) if not by_time and limit is not None and total > limit else total
            message = OUTPUT_FULL.format(shown=len(lines), count=count, limit=ctx.settings.max_output)
        elif by_time and ceiling_hit:
            message = CEILING_HIT.format(max_results=len(chosen), ceiling=SCAN_CEILING)
        elif len(chosen) < total:
            template = NEWEST_CUT if by_time else UNSORTED_CUT
            message = template.format(max_results=limit, total=total)
        return "\n\n".join(part for part in ("\n".join(lines), message) if part)


def _collect(walk: Walk, limit: int | None, by_time: bool) -> tuple[list[str], bool]:
    """The files of `walk`: newest first (up to SCAN_CEILING collected, then sorted), or in path
    order stopping after `limit` + 1 (to know that there are more); and whether the ceiling was hit."""
    found: list[str] = []
    cap = SCAN_CEILING if by_time else (None if limit is None else limit + 1)
    for path in walk.files():
        found.append(path)
        if cap is not None and len(found) >= cap:
            break
    if not by_time:
        return found, False
    return sorted(found, key=lambda p: (-_mtime(p), order_key(p))), len(found) >= SCAN_CEILING


def _mtime(path: str) -> float:
    """When `path` last changed; a file gone since the walk counts as the oldest."""
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0
