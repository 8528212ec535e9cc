"""The text of the file an edit_file call changes, indexed once for all its edits: lines, their
offsets, their stripped forms and indentation (mm-tools.md §edit_file, How `old` is matched).

Every lookup is O(log n) or better however long a line is, so an `old` found 100,000 times
costs linear time (issue 10, point 9).
"""

from __future__ import annotations

from bisect import bisect_right
from functools import cached_property
from itertools import accumulate

from mm.tools.edit.reindent import TAB, detect_unit, stripped

UNIT_WINDOW = 1000


class FileIndex:
    """The file's text (LF line endings) and what the relaxed passes need, computed lazily
    and shared by all edits of one call."""

    def __init__(self, text: str):
        self.text = text

    @cached_property
    def lines(self) -> list[str]:
        """Lines without newlines; a final newline does not start an extra line."""
        lines = self.text.split("\n")
        return lines[:-1] if lines[-1] == "" else lines

    @cached_property
    def starts(self) -> list[int]:
        """Offset in the text where each line starts."""
        return [0, *accumulate(len(line) + 1 for line in self.lines)][: len(self.lines)]

    @cached_property
    def stripped(self) -> list[str]:
        """Each line without its leading and trailing spaces and tabs."""
        return [stripped(line) for line in self.lines]

    @cached_property
    def by_stripped(self) -> dict[str, list[int]]:
        """Stripped line → indexes of the lines that have it."""
        index: dict[str, list[int]] = {}
        for i, s in enumerate(self.stripped):
            index.setdefault(s, []).append(i)
        return index

    def unit_near(self, line: int) -> str | None:
        """The file's indent unit ("\\t", "  ", "    "…) around 0-based `line` (int), read from
        up to UNIT_WINDOW lines on each side; None when nothing there is indented."""
        return detect_unit(self.lines[max(0, line - UNIT_WINDOW): line + UNIT_WINDOW])

    def unit_at(self, first: int, count: int) -> str | None:
        """The indent unit of the `count` lines from 0-based `first` (int) — the region an edit
        replaces: the unit around them (unit_near), unless the region's own lines are indented
        with the other character (tab-led recipe lines among space-indented ones in a Makefile,
        a tab-indented function in a space-indented module): then the region's own. A region
        keeps the indentation it has (docs/tools-edit.md §Frames)."""
        near = self.unit_near(first)
        own = detect_unit(self.file_lines(first, count))
        return own if own is not None and (own == TAB) != (near == TAB) else near

    def line_of(self, pos: int) -> int:
        """0-based line index of offset `pos` (int), in O(log n)."""
        return max(0, bisect_right(self.starts, pos) - 1)

    def line_no(self, pos: int) -> int:
        """1-based line number of offset `pos` (int)."""
        return self.line_of(pos) + 1

    def line_start(self, pos: int) -> int:
        """Offset where the line holding `pos` starts (O(log n), however long the line)."""
        if pos >= len(self.text) or not self.starts:
            return self.text.rfind("\n", 0, pos) + 1
        return self.starts[self.line_of(pos)]

    def line_end(self, pos: int) -> int:
        """Offset of the newline ending the line holding `pos`, or the text's length."""
        if pos >= len(self.text) or not self.starts:
            return len(self.text)
        i = self.line_of(pos)
        if i + 1 < len(self.starts):
            return self.starts[i + 1] - 1
        return len(self.text) - self.text.endswith("\n")

    def content_start(self, pos: int) -> int:
        """Offset of the first character after the indentation of the line holding `pos`."""
        if not self.starts:
            return 0
        i = self.line_of(pos)
        line, k = self.lines[i], 0
        while k < len(line) and line[k] in " \t":  # no lstrip: it would copy a long line
            k += 1
        return self.starts[i] + k

    def content_end(self, pos: int) -> int:
        """Offset just after the last character before the trailing whitespace of the line
        holding `pos` (`pos` itself at the end of a line counts on that line)."""
        if not self.starts:
            return 0
        i = self.line_of(pos - 1 if pos and (pos == len(self.text) or self.text[pos] == "\n") else pos)
        line = self.lines[i]
        k = len(line)
        while k and line[k - 1] in " \t\r":  # no rstrip: it would copy a long line
            k -= 1
        return self.starts[i] + k

    def file_lines(self, first: int, count: int) -> list[str]:
        """`count` lines from 0-based `first`, without carriage returns."""
        return [line.rstrip("\r") for line in self.lines[first: first + count]]


def find_all(text: str, needle: str) -> list[int]:
    """Return every offset where `needle` (non-empty str) occurs in `text`, overlaps included."""
    found, pos = [], text.find(needle)
    while pos != -1:
        found.append(pos)
        pos = text.find(needle, pos + 1)
    return found
