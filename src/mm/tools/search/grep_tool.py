"""The `grep_search` tool: file contents by regular expression, on ripgrep — or, without it, mm's
pure-Python search, which gives the same results (mnemo-tools.md §Search; notes/mnemoai.md §2.5;
docs/tools-search.md §grep_search)."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path
from typing import Any, Mapping

from mm.tools.base import Param, ToolContext, ToolKind, ToolResult
from mm.tools.search.paths import NOT_SEARCHABLE, place, refuse_nul, search_root
from mm.tools.search.query import NEWLINE_IN_PATTERN, Query, SearchFailed, Unavailable

NAME = "grep_search"
MODES = ("files_with_matches", "content", "count")
MAX_CONTEXT = 1_000_000  # context lines asked for are cut to this (more than any file shown holds; a bigger
# number would overflow ripgrep's and Python's counters)
DESCRIPTION = (
    "Search file contents with a regular expression (ripgrep syntax). Skips hidden files, binary files and what "
    ".gitignore ignores. Results are sorted by path; page with offset."
)
PARAMS = [
    Param("pattern", "string", "The regular expression, e.g. def main|TODO."),
    Param("path", "string", "File or folder to search. Default: the working directory.", required=False),
    Param("file_pattern", "string", "Glob the files must match, e.g. *.py, *.{ts,tsx}; !glob: all but those.",
          required=False),
    Param("case_insensitive", "boolean", "Ignore case.", required=False, default=False),
    Param("output_mode", "string", "files_with_matches (the paths; default), content (path:line:text) or count "
          "(matching lines per file).", required=False, default="files_with_matches"),
    Param("context_lines", "integer", "content mode: lines before and after each match.", required=False, default=0),
    Param("context_before", "integer", "content mode: lines before each match; overrides context_lines.",
          required=False, default=0),
    Param("context_after", "integer", "content mode: lines after each match; overrides context_lines.",
          required=False, default=0),
    Param("max_results", "integer", "At most this many files (content mode: matching lines); 0: no limit.",
          required=False, default=100),
    Param("offset", "integer", "Results to skip first, for the next page.", required=False, default=0),
]
# The reference's texts (notes/mnemoai.md §2.5)
INVALID_MODE = "Invalid output_mode '{mode}'. Use 'files_with_matches', 'content', or 'count'."
SEARCH_FAILED = "Search failed: {reason}"
TIMED_OUT = "Search timed out after {seconds} seconds. Try narrowing your search with file_pattern."
# mm's own
CANNOT_RUN = "[grep_search: the search could not be started: {reason}]"


class GrepSearch:
    """The grep_search tool: kind `search`, no permission (it only reads). `env` holds MM_RG and
    PATH (which ripgrep: mm.tools.search.ripgrep.find_ripgrep); `timeout`: seconds a search may
    take (SearchConfig.timeout; the reference's 30 s)."""

    name = NAME
    kind: ToolKind = "search"
    description = DESCRIPTION
    params = PARAMS
    needs_permission = False

    def __init__(self, env: Mapping[str, str], timeout: float = 30.0):
        self.env, self.timeout = env, timeout
        self._program: str | None | bool = False  # not looked for yet

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """The page of results as text (docs/tools-search.md §Output); a failure is one line.
        Everything is checked before anything runs."""
        from mm.tools.process import CANCELLED_LINE
        from mm.tools.waiting import Cancelled, unless_cancelled

        mode = str(args.get("output_mode") or "files_with_matches").strip()
        if mode not in MODES:
            return ToolResult(INVALID_MODE.format(mode=mode), failed=True)
        pattern = str(args.get("pattern") or "")
        refuse_nul(pattern, args.get("file_pattern"))
        if "\n" in pattern:
            return ToolResult(SEARCH_FAILED.format(reason=NEWLINE_IN_PATTERN), failed=True)
        root = search_root(ctx, args.get("path"))
        if isinstance(root, str):
            return ToolResult(root, failed=True)
        refusal = _unsearchable(root, args.get("path"))
        if refusal:
            return ToolResult(refusal, failed=True)
        query = _query(args, pattern, root, ctx.cwd, mode)
        limit = int(args.get("max_results", 100))
        offset = max(int(args.get("offset", 0)), 0)
        work = self._search(query, mode, offset, limit if limit > 0 else None, ctx)
        try:
            text = await unless_cancelled(asyncio.wait_for(work, self.timeout), ctx.cancelled)
        except Cancelled:
            return ToolResult(CANCELLED_LINE, failed=True)
        except asyncio.TimeoutError:
            return ToolResult(TIMED_OUT.format(seconds=f"{self.timeout:g}"), failed=True)
        except SearchFailed as err:
            return ToolResult(SEARCH_FAILED.format(reason=str(err).strip()), failed=True)
        except OSError as err:
            return ToolResult(CANNOT_RUN.format(reason=err.strerror or err), failed=True)
        return ToolResult(text)

    async def _search(self, query: Query, mode: str, offset: int, limit: int | None, ctx: ToolContext) -> str:
        from mm.tools.search.page import ContentPage, NO_MATCHES, PAST_THE_END, listed, sorted_files, warning_lines
        from mm.tools.search.ripgrep import python_search

        searcher = await self._searcher(ctx.cwd)
        try:
            counted = await searcher.count(query)
        except Unavailable:
            searcher = python_search()
            counted = await searcher.count(query)
        files = sorted_files(counted.files)
        warnings = counted.warnings
        what = "matching files" if mode != "content" else "matches"
        total = len(files) if mode != "content" else sum(n for _, n in files)
        if not files:
            lines, message = [NO_MATCHES.format(pattern=query.pattern, where=place(Path(query.root), ctx.cwd))], ""
        elif offset >= total:
            lines, message = [PAST_THE_END.format(offset=offset, total=total, what=what)], ""
        elif mode != "content":
            lines, message = listed(mode, files, offset, limit, ctx.cwd, ctx.settings.max_output)
        else:
            page = ContentPage(files, offset, limit, ctx.cwd, ctx.settings.max_output, bool(query.before or query.after))
            warnings = warnings + await searcher.rows(query, page.files, page.feed)
            lines, message = page.result()
        parts = ["\n".join(lines), message, "\n".join(warning_lines(warnings))]
        return "\n\n".join(part for part in parts if part)

    async def _searcher(self, cwd: Path):
        """ripgrep when there is one that answers as ripgrep, else the pure-Python search."""
        from mm.tools.search.ripgrep import find_ripgrep, python_search, ripgrep

        if self._program is False:
            self._program = find_ripgrep(self.env)
        if isinstance(self._program, str):
            candidate = ripgrep(self._program)
            if await candidate.usable(cwd):
                return candidate
        return python_search()


def _query(args: dict[str, Any], pattern: str, root: Path, cwd: Path, mode: str) -> Query:
    """The Query of a call: context only in content mode, context_before/after overriding context_lines."""
    def lines(key: str) -> int:
        return min(max(int(args.get(key) or 0), 0), MAX_CONTEXT)

    around = lines("context_lines")
    before = lines("context_before") or around
    after = lines("context_after") or around
    if mode != "content":
        before = after = 0
    file_pattern = str(args.get("file_pattern") or "").strip() or None
    return Query(pattern, str(root), str(cwd), file_pattern, bool(args.get("case_insensitive", False)), before, after)


def _unsearchable(root: Path, given: Any) -> str | None:
    """NOT_SEARCHABLE when `root` is neither a folder nor a regular file (a pipe would make the
    search wait, a device read forever)."""
    from mm.fs import kind_of

    try:
        mode = os.stat(root).st_mode
    except OSError:  # a broken symlink: the search says so
        return None
    if stat.S_ISDIR(mode):
        return None
    kind = kind_of(mode)
    return NOT_SEARCHABLE.format(kind=kind, path=given) if kind else None
