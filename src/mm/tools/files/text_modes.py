"""fs_read's "Line" and "Search" modes (mnemo-tools.md, fs_read modes; notes/mnemoai.md §2.1).

Line: a line range with a `cat -n` gutter (the number right-aligned to 6, a TAB), negative
numbers counting from the end, capped at docMaxTokens. Search: a literal, case-insensitive
substring with context lines around each hit — capped too, unlike the reference's.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass
from typing import Any

from mm.tools.files.common import TRUNCATED_MARK, TokenBudget, error
from mm.tools.files.source import TextSource, strip_eol
from mm.tools.reads import PART_LINES, PART_SEARCH, PART_TRUNCATED, Seen

GUTTER = "{n:>6}\t"  # as `cat -n`
PARTIAL_LINE_ROOM = 50  # tokens left for a part of the last line to be shown (the reference's)
INVALID_RANGE = "Invalid line range: {start}-{end}. File has {total} lines."
EMPTY_FILE = "File is empty (0 lines)"
LINES_READ = "Read {done}/{asked} lines ({tokens} tokens)"
LINES_CUT = " - truncated due to token limit; call fs_read with start_line={next} to read on"
EMPTY_PATTERN = "Search pattern cannot be empty"
SEARCH_CUT = ("Showing {shown} of {total} matches ({tokens} tokens) - truncated due to token limit; narrow the "
              "pattern or lower context_lines")
LINE_CHARS = 500  # a longer line in Search results is cut (as grep_search's)
LONG_LINE = "… [+{n} chars]"


@dataclass
class Outcome:
    """A mode's answer: the payload, and for a successful read what the read-before-write record
    needs (`seen`, `whole`, `part`); `preview` is what a terminal shows."""

    payload: dict[str, Any]
    seen: Seen | None = None
    whole: bool = True
    part: str = ""
    preview: str | None = None


def line_range(start: int, end: int, total: int) -> tuple[int, int]:
    """The 1-based inclusive range `start`..`end` means in a file of `total` lines: negative
    numbers count from the end (-1 is the last line), a start below 1 is 1, an end of 0 or less
    (after that) is the end, an end past the file is its last line (the reference's rules)."""
    start = total + start + 1 if start < 0 else start
    end = total + end + 1 if end < 0 else end
    return max(1, start), (min(total, end) if end > 0 else total)


def count_lines(source: TextSource) -> int:
    """The number of lines of `source` (one pass; a large file is hashed on the way)."""
    return sum(1 for _ in source.lines())


def read_lines(source: TextSource, start_line: int, end_line: int, budget: int) -> Outcome:
    """The Line mode: lines `start_line`..`end_line` of `source`, numbered, at most `budget`
    tokens; the last line that does not fit is shown in part when at least PARTIAL_LINE_ROOM
    tokens are left, then TRUNCATED_MARK."""
    from mm.llm.tokens import count_text, head_within

    path = str(source.path)
    total = count_lines(source)
    if total == 0:
        payload = {"path": path, "content": "", "start_line": 0, "end_line": 0, "total_lines": 0,
                   "lines_processed": 0, "lines_requested": 0, "tokens": 0, "max_tokens": budget,
                   "truncated": False, "message": EMPTY_FILE}
        return Outcome(payload, source.seen, preview="")
    start, end = line_range(start_line, end_line, total)
    if start > end:
        return Outcome(error(INVALID_RANGE.format(start=start, end=end, total=total)))
    pieces: list[str] = []
    used, cut_at = 0, None
    for n, line in enumerate(source.lines(), 1):
        if n < start:
            continue
        if n > end:
            break
        gutter, text = GUTTER.format(n=n), strip_eol(line)
        tokens = count_text(gutter + text + "\n")
        if used + tokens > budget:
            cut_at, room = n, budget - used - count_text(gutter)
            if room > PARTIAL_LINE_ROOM:
                pieces.append(gutter + head_within(text, room) + "\n")
            break
        pieces.append(gutter + text + "\n")
        used += tokens
    done = (cut_at or end + 1) - start
    content = "".join(pieces).rstrip("\n") + (("\n" if pieces else "") + TRUNCATED_MARK if cut_at else "")
    tokens = count_text(content)
    message = LINES_READ.format(done=done, asked=end - start + 1, tokens=tokens)
    if cut_at:
        message += LINES_CUT.format(next=cut_at)
    payload = {"path": path, "content": content, "start_line": start, "end_line": end, "total_lines": total,
               "lines_processed": done, "lines_requested": end - start + 1, "tokens": tokens,
               "max_tokens": budget, "truncated": cut_at is not None, "message": message}
    if source.encoding != "utf-8":
        payload["encoding"] = source.encoding
    whole = start == 1 and end == total and cut_at is None
    part = PART_TRUNCATED.format(last=cut_at - 1, total=total) if cut_at else \
        PART_LINES.format(first=start, last=end, total=total)
    return Outcome(payload, source.seen, whole, "" if whole else part, preview=content)


def _cut_line(text: str) -> str:
    """`text` within LINE_CHARS characters, LONG_LINE saying how many more there were."""
    return text if len(text) <= LINE_CHARS else text[:LINE_CHARS] + LONG_LINE.format(n=len(text) - LINE_CHARS)


def search(source: TextSource, pattern: str, context_lines: int, budget: int) -> Outcome:
    """The Search mode: every line holding `pattern` (literal, any case), each with
    `context_lines` lines either side (rows `number`, `content`, `is_match`), matches kept while
    they fit in `budget` tokens; all are counted."""
    if not pattern:
        return Outcome(error(EMPTY_PATTERN))
    context_lines = max(0, context_lines)
    found = re.compile(re.escape(pattern), re.IGNORECASE)
    before: deque[dict[str, Any]] = deque(maxlen=context_lines)
    waiting: list[list[Any]] = []  # [match, context rows still to come]
    matches: list[dict[str, Any]] = []
    total, room = 0, TokenBudget(budget)

    def settle(match: dict[str, Any]) -> None:
        if room.take(match):
            matches.append(match)

    for n, line in enumerate(source.lines(), 1):
        text = strip_eol(line)
        row = {"number": n, "content": _cut_line(text), "is_match": False}
        for entry in waiting:
            entry[0]["context"].append(row)
            entry[1] -= 1
        while waiting and waiting[0][1] == 0:
            settle(waiting.pop(0)[0])
        if found.search(text):
            total += 1
            match = {"line_number": n, "line_content": row["content"],
                     "context": [*before, dict(row, is_match=True)]}
            if context_lines:
                waiting.append([match, context_lines])
            else:
                settle(match)
        if context_lines:
            before.append(row)
    for entry in waiting:
        settle(entry[0])
    payload: dict[str, Any] = {"path": str(source.path), "pattern": pattern, "matches": matches,
                               "total_matches": total, "context_lines": context_lines, "truncated": room.cut}
    if room.cut:
        payload["message"] = SEARCH_CUT.format(shown=len(matches), total=total, tokens=room.used)
    preview = "\n".join(f"{m['line_number']:>6}\t{m['line_content']}" for m in matches)
    return Outcome(payload, source.seen, whole=False, part=PART_SEARCH, preview=preview)
