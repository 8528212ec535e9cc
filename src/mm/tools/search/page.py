"""grep_search's answer: the page `offset`/`max_results` choose in a result sorted by path, written
as text within maxOutput (mnemo-tools.md §Search; docs/tools-search.md §Output).

`max_results` counts files in files_with_matches and count modes, matching lines in content mode
(context lines ride along). Each context line belongs to the nearest match (the earlier one on a
tie), so no line shows on two pages and no match's context comes without it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mm.tools.search.paths import order_key, shown
from mm.tools.search.query import Row

MAX_LINE_CHARS = 500  # mnemo-tools.md §Search, Limits
LINE_CUT = "… [+{n} chars]"
FILES_TRUNCATED = ("Showing {shown} of {total} matching files (offset {offset}). Increase max_results/offset "
                   "or narrow the search.")  # the reference's texts (notes/mnemoai.md §2.5)
COUNT_TRUNCATED = ("Showing counts for {shown} of {total} matching files. Increase max_results/offset or narrow "
                   "the search.")
CONTENT_TRUNCATED = "Showing {shown} of {total} matches. Increase max_results/offset or narrow the search."
NEXT_PAGE = " Next page: offset={next}."
OUTPUT_FULL = " (The page stopped at maxOutput, {limit} characters.)"
COUNT_TOTAL = "total_matches: {matches}, files_with_matches: {files}"
NO_MATCHES = "No matches for {pattern!r} in {where}."
PAST_THE_END = "Nothing at offset {offset}: the search found {total} {what}."
WARNING = "Warning: {text}"
MAX_WARNINGS = 5  # warning lines shown, at most (then how many more)
MORE_WARNINGS = "Warning: … and {n} more"
FOOTER_ROOM = 400  # characters kept for the closing message


def room(max_output: int) -> int:
    """Characters a page's results may take: maxOutput less FOOTER_ROOM, a third of it at least."""
    return max(max_output - FOOTER_ROOM, max_output // 3)


def cut_line(text: str) -> str:
    """`text` whole up to MAX_LINE_CHARS characters, else its start and LINE_CUT."""
    if len(text) <= MAX_LINE_CHARS:
        return text
    return text[:MAX_LINE_CHARS] + LINE_CUT.format(n=len(text) - MAX_LINE_CHARS)


def sorted_files(files: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """`files` in path order (paths.order_key), each once."""
    return sorted(dict(files).items(), key=lambda item: order_key(item[0]))


def warning_lines(warnings: list[str]) -> list[str]:
    """What the searcher warned about, MAX_WARNINGS lines at most, each cut to a line's length."""
    lines = [WARNING.format(text=cut_line(w)) for w in dict.fromkeys(warnings)]
    if len(lines) > MAX_WARNINGS:
        lines = lines[:MAX_WARNINGS] + [MORE_WARNINGS.format(n=len(lines) - MAX_WARNINGS)]
    return lines


@dataclass
class Page:
    """Rows of text kept while they fit in `budget` characters."""

    budget: int
    lines: list[str] = field(default_factory=list)
    used: int = 0
    full: bool = False

    def add(self, lines: list[str]) -> bool:
        """Keep `lines` (one result) when they all fit; False, and full, when they do not."""
        size = sum(len(line) + 1 for line in lines)
        if self.full or self.used + size > self.budget:
            self.full = True
            return False
        self.lines += lines
        self.used += size
        return True


def closing(truncated: str | None, offset: int, shown_count: int, total: int, full: bool, limit: int) -> str:
    """The message after a cut page: the reference's text, where the next page starts, and
    whether maxOutput (`limit`) cut it; "" when nothing is left out."""
    if truncated is None:
        return ""
    text = truncated
    if offset + shown_count < total:
        text += NEXT_PAGE.format(next=offset + shown_count)
    if full:
        text += OUTPUT_FULL.format(limit=limit)
    return text


def listed(mode: str, files: list[tuple[str, int]], offset: int, limit: int | None, cwd: Path,
           max_output: int) -> tuple[list[str], str]:
    """The lines of files_with_matches (`path`) or count (`path:N`) mode for the sorted `files`
    and the closing message; `limit` None: no max_results."""
    total = len(files)
    chosen = files[offset:] if limit is None else files[offset:offset + limit]
    page = Page(room(max_output))
    kept: list[tuple[str, int]] = []
    for path, count in chosen:
        line = shown(path, cwd) if mode == "files_with_matches" else f"{shown(path, cwd)}:{count}"
        if not page.add([line]):
            break
        kept.append((path, count))
    lines = page.lines
    if mode == "count" and kept:
        lines = lines + [COUNT_TOTAL.format(matches=sum(n for _, n in kept), files=len(kept))]
    cut = offset + len(kept) < total
    template = FILES_TRUNCATED if mode == "files_with_matches" else COUNT_TRUNCATED
    message = template.format(shown=len(kept), total=total, offset=offset) if cut else None
    return lines, closing(message, offset, len(kept), total, page.full, max_output)


class ContentPage:
    """Content mode: the matches `offset`…`offset+limit` of the sorted `files` (path, matching
    lines) and their context lines, fed row by row in file and line order (`feed`)."""

    def __init__(self, files: list[tuple[str, int]], offset: int, limit: int | None, cwd: Path,
                 max_output: int, with_context: bool):
        self.total = sum(n for _, n in files)
        self.low = offset
        self.high = self.total if limit is None else min(self.total, offset + limit)
        self.cwd, self.max_output, self.with_context = cwd, max_output, with_context
        self.page = Page(room(max_output))
        self.starts: dict[str, int] = {}  # a file of the window → the number of its first match
        first = 0
        for path, n in files:
            if first < self.high and first + n > self.low:
                self.starts[path] = first
            first += n
        self.shown = 0
        self._file: str | None = None
        self._number = -1  # the current match's number, over all files
        self._group: list[Row] = []  # the current match, its context before and after
        self._pending: list[Row] = []  # context lines since the current match
        self._last: Row | None = None  # the last row written (for the `--` separators)
        self.done = not self.starts

    @property
    def files(self) -> list[str]:
        """The files the window's matches lie in, in order."""
        return list(self.starts)

    def feed(self, row: Row) -> bool:
        """Take the next row; False once the page is complete (read no further)."""
        if self.done:
            return False
        if row.path != self._file:
            self.end_file()
            if row.path not in self.starts:
                return not self.done
            self._file, self._number = row.path, self.starts[row.path] - 1
        if not row.is_match:
            self._pending.append(row)
            return True
        previous = self._group[-1] if self._group else None
        mine = [r for r in self._pending if previous is None or r.line - previous.line > row.line - r.line]
        self._group += self._pending[:len(self._pending) - len(mine)]
        self._emit()
        self._number += 1
        self._group, self._pending = [*mine, row], []
        if self._number >= self.high:
            self.done = True
        return not self.done

    def end_file(self) -> None:
        """The current file has no more rows: its last match takes the context lines left."""
        if self._file is None:
            return
        self._group += self._pending
        self._emit()
        self._pending, self._file = [], None

    def _emit(self) -> None:
        """Write the current match and its context when it is on the page and fits."""
        group, self._group = self._group, []
        if not any(r.is_match for r in group) or not (self.low <= self._number < self.high) or self.done:
            return
        if self.page.add(self._lines(group)):
            self.shown += 1
            self._last = group[-1]
        else:
            self.done = True

    def _lines(self, group: list[Row]) -> list[str]:
        lines = []
        last = self._last
        if self.with_context and last is not None and (last.path != group[0].path or last.line + 1 != group[0].line):
            lines.append("--")
        for row in group:
            mark = ":" if row.is_match else "-"
            lines.append(f"{shown(row.path, self.cwd)}{mark}{row.line}{mark}{cut_line(row.text)}")
        return lines

    def result(self) -> tuple[list[str], str]:
        """The page's lines and its closing message."""
        self.end_file()
        cut = self.low + self.shown < self.total
        message = CONTENT_TRUNCATED.format(shown=self.shown, total=self.total) if cut else None
        return self.page.lines, closing(message, self.low, self.shown, self.total, self.page.full, self.max_output)
