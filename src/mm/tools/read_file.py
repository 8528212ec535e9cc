"""The `read_file` tool: a text file or a range of its lines (mm-tools.md §read_file)."""

from __future__ import annotations

import asyncio
import itertools
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

from mm.tools.base import Param, ToolContext, ToolKind, ToolResult

PSEUDO_FILE_BYTES = 16 << 20  # bytes read of a file whose size says 0 (/proc) or that grows while read
CANCEL_EVERY = 4096  # lines between two looks at the cancel flag
DESCRIPTION = (
    "Read a text file, or a range of its lines. Use start and end to read part of a long file, "
    "and numbered to see line numbers."
)
PARAMS = [
    Param("path", "string", "File path, relative to the working directory."),
    Param("start", "integer", "First line (1-based); 0 = from the start.", required=False, default=0),
    Param("end", "integer", "Last line (1-based, inclusive); 0 = to the end.", required=False, default=0),
    Param("numbered", "boolean", "Prefix each line with its number.", required=False, default=False),
]
NOT_FOUND = "{path} does not exist. Create it with write_file"  # mm-tools.md §read_file
EMPTY_PATH = "[read_file: path is empty — give the path of the file to read]"
IS_DIRECTORY = "{path} is a directory, not a file. Its entries: {entries}"
NO_ENTRIES = "(none)"
MORE_ENTRIES = "… and {n} more"
BINARY = "{path} is a binary file ({size} bytes): read_file shows text only"
UNREADABLE = "{path} cannot be read: {reason}"
NOT_A_LINE = "{field} {value} is not a line number: give 0 or a line number from 1"
END_BEFORE_START = "end {end} is before start {start}: give an end at or after the start, or 0 for the end of the file"
PAST_END = "{path} has {total} lines: start {start} is past the end"
TRUNCATED = (
    "[... truncated to maxOutput ({limit} characters): lines {first}-{last} of {total} shown; "
    "call read_file with start={next} to read on ...]"
)
LONG_LINE_CUT = (
    "[... truncated to maxOutput ({limit} characters): line {n} of {total} is longer than that "
    "and only its start is shown ...]"
)
NUMBER_FORMAT = "{n:>6}\t"  # as `cat -n`
BINARY_SNIFF_BYTES = 8192  # a NUL byte in the first 8 KiB means binary, as git decides
DIRECTORY_ENTRIES_SHOWN = 100


@dataclass
class _Lines:
    """What was read: the shown pieces, the file's line count, and where a truncation stopped."""

    pieces: list[str]
    total: int
    cut_at: int | None = None  # first line not shown in full for lack of room
    long_line: bool = False  # cut_at is a single line longer than the room, shown in part
    binary_size: int | None = None
    seen: Any = None  # the file as read (mm.tools.reads.Seen), once read to its end


def _split_lines(chunks: Iterable[bytes], keep: int) -> Iterator[bytes]:
    """The lines of `chunks` (bytes, each with its newline), a line longer than `keep` bytes cut
    to its first `keep` (and its newline lost): a line of gigabytes is never held whole."""
    line = bytearray()
    for chunk in chunks:
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            stop = len(chunk) if end < 0 else end + 1
            room = keep - len(line)
            if room > 0:
                line += chunk[start:min(stop, start + room)]
            if end < 0:
                break
            yield bytes(line)
            line.clear()
            start = stop
    if line:
        yield bytes(line)


def _read_lines(path: Path, shown: str, first: int, last: int, numbered: bool, budget: int,
                cancelled: Any = None) -> _Lines:
    """Read lines `first`..`last` (1-based, inclusive; last 0 = to the end) of `path`, at most
    `budget` characters of them, and count every line of the file: at most the size it had when
    opened (PSEUDO_FILE_BYTES for a file that says 0, as in /proc). Opened without blocking
    (mm.fs.open_regular: raises FileRefused for anything but a regular file); stops when
    `cancelled` (an Event) is set."""
    import hashlib

    from mm.fs import open_regular, read_chunks
    from mm.tools.reads import Seen

    result = _Lines([], 0)
    used = 0
    fd = open_regular(path, "r", shown)
    try:
        st = os.fstat(fd)
        size, digest = st.st_size, hashlib.sha256()
        chunks = (digest.update(chunk) or chunk for chunk in read_chunks(fd, max(size, PSEUDO_FILE_BYTES), shown))
        head = next(chunks, b"")
        if b"\0" in head[:BINARY_SNIFF_BYTES]:
            result.binary_size = size
            return result
        for raw in _split_lines(itertools.chain((head,), chunks), 4 * budget + 8):
            if cancelled is not None and not result.total % CANCEL_EVERY and cancelled.is_set():
                return result
            result.total += 1
            n = result.total
            if n < first or (last and n > last) or result.cut_at is not None:
                continue
            line = raw.decode("utf-8", errors="replace")
            piece = (NUMBER_FORMAT.format(n=n) if numbered else "") + line
            if used + len(piece) > budget:
                result.cut_at = n
                if not result.pieces:  # a single line longer than the budget: show its start
                    result.pieces.append(piece[:budget])
                    result.long_line = True
                continue
            result.pieces.append(piece)
            used += len(piece)
        result.seen = Seen(st.st_size, st.st_mtime_ns, digest.digest())
    finally:
        os.close(fd)
    return result


def _directory_text(path_text: str, directory: Path) -> str:
    """Return IS_DIRECTORY for `directory`: its entries sorted, directories with a final `/`."""
    try:
        names = sorted(e.name + ("/" if e.is_dir() else "") for e in os.scandir(directory))
    except OSError as err:
        return UNREADABLE.format(path=path_text, reason=(err.strerror or str(err)).lower())
    shown = names[:DIRECTORY_ENTRIES_SHOWN]
    if len(names) > len(shown):
        shown.append(MORE_ENTRIES.format(n=len(names) - len(shown)))
    return IS_DIRECTORY.format(path=path_text, entries=", ".join(shown) or NO_ENTRIES)


def _check_range(start: int, end: int) -> str | None:
    """Return the refusal for a bad `start`/`end`, or None."""
    for name, value in (("start", start), ("end", end)):
        if value < 0:
            return NOT_A_LINE.format(field=name, value=value)
    if end and start and end < start:
        return END_BEFORE_START.format(start=start, end=end)
    return None


def _record(ctx: ToolContext, path: Path, lines: _Lines, first: int, end: int) -> None:
    """Record the read for read-before-write (mm.tools.reads): whole when every line was shown."""
    from mm.tools.reads import PART_LINES, PART_TRUNCATED

    if lines.seen is None:
        return
    last = lines.total if not end or end > lines.total else end
    if lines.cut_at is not None:
        ctx.reads.record(path, lines.seen, False, PART_TRUNCATED.format(last=lines.cut_at - 1, total=lines.total))
    elif first > 1 or last < lines.total:
        ctx.reads.record(path, lines.seen, False, PART_LINES.format(first=first, last=last, total=lines.total))
    else:
        ctx.reads.record(path, lines.seen)


@dataclass
class ReadFile:
    """The `read_file` tool: kind `read`, no permission, the absolute path as location."""

    name: str = "read_file"
    kind: ToolKind = "read"
    description: str = DESCRIPTION
    params: list[Param] = field(default_factory=lambda: list(PARAMS))
    needs_permission: bool = False

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Return lines `start`..`end` of `path` (1-based, inclusive, 0 = open end), numbered or
        not, cut to `ctx.settings.max_output` characters.

        The final newline is kept only when the end of the file is shown (mm-tools.md §read_file).
        Missing file, directory, binary file or bad range: a failed result, nothing raised.
        """
        path_text = str(args.get("path") or "")
        if not path_text.strip():
            return ToolResult(EMPTY_PATH, failed=True)
        path = Path(os.path.abspath(ctx.resolve(path_text)))
        locations = [path]
        start, end = int(args.get("start") or 0), int(args.get("end") or 0)
        numbered = bool(args.get("numbered") or False)

        def fail(text: str) -> ToolResult:
            return ToolResult(text, failed=True, locations=locations)

        if not path.exists():
            return fail(NOT_FOUND.format(path=path_text))
        if path.is_dir():
            return fail(_directory_text(path_text, path))
        refusal = _check_range(start, end)
        if refusal:
            return fail(refusal)
        limit = ctx.settings.max_output
        big = 10**12  # room for the longest marker
        marker_room = max(
            len(TRUNCATED.format(limit=limit, first=big, last=big, total=big, next=big)),
            len(LONG_LINE_CUT.format(limit=limit, n=big, total=big)),
        )
        from mm.fs import FileRefused  # on first use: start-up time

        read = (path, path_text, max(start, 1), end, numbered, max(limit - marker_room - 1, 1), ctx.cancelled)
        try:  # in a thread: a slow disk never stalls the event loop (Ctrl-C, the spinner)
            lines = await asyncio.to_thread(_read_lines, *read)
        except FileRefused as err:  # a named pipe, a device, a read that would wait
            return fail(str(err))
        except OSError as err:
            return fail(UNREADABLE.format(path=path_text, reason=(err.strerror or str(err)).lower()))
        if lines.binary_size is not None:
            return fail(BINARY.format(path=path_text, size=lines.binary_size))
        if start > lines.total and not (start <= 1 and lines.total == 0):
            return fail(PAST_END.format(path=path_text, total=lines.total, start=start))
        text = "".join(lines.pieces)
        first = max(start, 1)
        if not ctx.cancelled.is_set():
            _record(ctx, path, lines, first, end)
        if lines.cut_at is not None:
            text = text if text.endswith("\n") else text + "\n"
            if lines.long_line:
                marker = LONG_LINE_CUT.format(limit=limit, n=lines.cut_at, total=lines.total)
            else:
                shown_last = lines.cut_at - 1
                marker = TRUNCATED.format(
                    limit=limit, first=first, last=shown_last, total=lines.total, next=lines.cut_at
                )
            return ToolResult(text + marker, locations=locations)
        if end and end < lines.total:  # the end of the file is not shown
            text = text.removesuffix("\n")
        return ToolResult(text, locations=locations)
