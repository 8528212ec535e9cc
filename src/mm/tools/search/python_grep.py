"""grep_search without ripgrep: the same files, matches, order and output as ripgrep, in Python
(docs/tools-search.md §Without ripgrep). Run by mm as a program in ripgrep's place —
`python -P -m mm.tools.search.python_grep <ripgrep's arguments>` — so that a search is a process
that timeouts and cancellation kill (Python's `re` cannot be interrupted) and that never outlives mm.

It takes the arguments mm gives ripgrep (mm.tools.search.ripgrep: `--count --null` or `--json`,
`-i`, `--glob`, `-A`, `-B`, `-e PATTERN`, paths) and writes what ripgrep writes for them.

What ripgrep does by default, done here too: hidden files and folders (a name starting with a dot)
are skipped, and so are symlinks, files that are not regular (pipes, devices) and what the
ignore files leave out (mm.tools.search.ignore); a file holding a NUL byte is binary and skipped —
unless it is named. A UTF-8 byte-order mark is dropped, a UTF-16 one decodes the file as UTF-16;
other bytes that are not UTF-8 read as U+FFFD. Lines end at `\\n` only. The regular expression is
Python's `re` (ripgrep's is Rust's: the common syntax is the same). Exit status as ripgrep's:
0 found, 1 nothing found, 2 an error (said on stderr).
"""

from __future__ import annotations

import base64
import codecs
import json
import os
import re
import stat
import sys
from dataclasses import replace
from typing import BinaryIO, Callable, Iterator

from mm.tools.search.ignore import FilePattern, IgnoreRules, Level, ignored
from mm.tools.search.query import NEWLINE_IN_PATTERN, Query, Row

READ_LIMIT = 1 << 62  # no limit on a file's size: it is read block by block
UNREADABLE = "{path}: {reason}"
BAD_PATTERN = "regex parse error: {error}"


class BadPattern(Exception):
    """The pattern cannot be read: str(err) says why."""


def files(query: Query, warn: Callable[[str], None], note: Callable[[str], None]) -> Iterator[tuple[str, bool]]:
    """The files to search, in path order, each with whether it is named (`query.root` a file).
    `warn(text)` is told of what cannot be read, `note(text)` of ignore rules that cannot be used
    (ripgrep says those without failing)."""
    try:
        mode = os.stat(query.root).st_mode
    except OSError as err:
        warn(UNREADABLE.format(path=query.root, reason=_why(err)))
        return
    if not stat.S_ISDIR(mode):
        yield query.root, True
        return
    rules = IgnoreRules(os.environ, note)
    pattern = FilePattern(query.file_pattern, query.cwd) if query.file_pattern else None
    yield from ((path, False) for path in _walk(query.root, rules.top(query.root), rules, pattern, warn))


def _walk(folder: str, chain: list[Level], rules: IgnoreRules, pattern: FilePattern | None,
          warn: Callable[[str], None]) -> Iterator[str]:
    """The files under `folder` ripgrep would search, in path order (names sorted bytewise)."""
    try:
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=lambda e: os.fsencode(e.name))
    except OSError as err:
        warn(UNREADABLE.format(path=folder, reason=_why(err)))
        return
    for entry in entries:
        try:
            is_dir, is_file = entry.is_dir(follow_symlinks=False), entry.is_file(follow_symlinks=False)
        except OSError:
            continue
        said = pattern.says(entry.path, is_dir) if pattern is not None else None
        if said is False or (said is None and (entry.name.startswith(".") or ignored(entry.path, is_dir, chain))):
            continue
        if is_dir:
            below = rules.level(entry.path, chain[-1].in_repo)
            yield from _walk(entry.path, [*chain, below], rules, pattern, warn)
        elif is_file:
            yield entry.path


def _why(err: OSError) -> str:
    """What went wrong, without the path (UNREADABLE names it)."""
    return getattr(err, "reason", None) or err.strerror or str(err)


class Matcher:
    """The pattern, compiled: `line(text)` for one line; `maybe(block)`, a quick look at a block
    of whole lines that is never wrong when it says no. Raises BadPattern."""

    def __init__(self, pattern: str, case_insensitive: bool):
        if "\n" in pattern:
            raise BadPattern(NEWLINE_IN_PATTERN)
        flags = re.IGNORECASE if case_insensitive else 0
        try:
            self.line = re.compile(pattern, flags).search
            whole = not re.search(r"\\[AZz]|\(\?<", pattern)  # anchors and look-behinds see the block
            self.maybe = re.compile(pattern, flags | re.MULTILINE).search if whole else (lambda block: True)
        except (re.error, RecursionError, OverflowError) as err:
            raise BadPattern(BAD_PATTERN.format(error=err)) from None


def count(path: str, named: bool, matcher: Matcher) -> int:
    """Matching lines of `path`; 0 for a binary file that is not `named`. Raises OSError."""
    n = 0
    for block in blocks(path):
        if not named and "\0" in block:
            return 0
        if matcher.maybe(block):
            n += sum(1 for line in _lines(block) if matcher.line(line))
    return n


def rows(path: str, matcher: Matcher, before: int, after: int) -> Iterator[Row]:
    """The matching lines of `path` and `before`/`after` lines of context around each, in order
    (a line is given once, however many matches it is near). Raises OSError."""
    from collections import deque

    waiting: deque[tuple[int, str]] = deque(maxlen=before)
    left, number = 0, 0
    for block in blocks(path):
        for line in _lines(block):
            number += 1
            if matcher.line(line):
                yield from (Row(path, k, text, False) for k, text in waiting)
                waiting.clear()
                yield Row(path, number, line, True)
                left = after
            elif left > 0:
                left -= 1
                yield Row(path, number, line, False)
            elif before:
                waiting.append((number, line))


def _lines(block: str) -> list[str]:
    """The lines of a block (each ends with `\\n`, except perhaps the file's last one)."""
    lines = block.split("\n")
    return lines[:-1] if block.endswith("\n") else lines


def blocks(path: str) -> Iterator[str]:
    """The text of `path` in blocks of whole lines (the last may lack its `\\n`), decoded as
    ripgrep reads it. Raises OSError when it cannot be read (mm.fs.FileRefused when it is
    no regular file: a pipe is never waited on)."""
    from mm.fs import open_regular, read_chunks

    fd = open_regular(path, "r")
    try:
        decoder, rest = None, ""
        for data in read_chunks(fd, READ_LIMIT, path):
            if decoder is None:
                decoder = _decoder(data)
                data = data[3:] if data.startswith(codecs.BOM_UTF8) else data
            text = rest + decoder.decode(data)
            cut = text.rfind("\n") + 1
            rest = text[cut:]
            if cut:
                yield text[:cut]
        tail = rest + (decoder.decode(b"", final=True) if decoder else "")
        if tail:
            yield tail
    finally:
        os.close(fd)


def _decoder(head: bytes) -> codecs.IncrementalDecoder:
    """An incremental decoder for a file starting with `head`: UTF-16 after its byte-order mark, else UTF-8."""
    encoding = "utf-16" if head[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE) else "utf-8"
    return codecs.getincrementaldecoder(encoding)("replace")


# -- the program
def _json_text(text: str) -> dict:
    """ripgrep's form of a text: {"text"} when it is UTF-8, else {"bytes"} in base64."""
    try:
        text.encode("utf-8")
        return {"text": text}
    except UnicodeEncodeError:
        return {"bytes": base64.b64encode(os.fsencode(text)).decode()}


def _parse(argv: list[str]) -> tuple[Query, str, list[str]]:
    """(the query, "count" or "json", the paths) from the arguments mm.tools.search.ripgrep builds."""
    mode, pattern, glob, insensitive, before, after = "count", "", None, False, 0, 0
    args = iter(argv)
    paths: list[str] = []
    for arg in args:
        if arg == "--":
            paths += list(args)
        elif arg == "--json":
            mode = "json"
        elif arg == "-i":
            insensitive = True
        elif arg == "-e":
            pattern = next(args)
        elif arg == "--glob":
            glob = next(args)
        elif arg in ("-A", "-B"):
            value = int(next(args))
            before, after = (value, after) if arg == "-B" else (before, value)
    query = Query(pattern, paths[0] if paths else os.getcwd(), os.getcwd(), glob, insensitive, before, after)
    return query, mode, paths


def main(argv: list[str], out: BinaryIO, err: BinaryIO) -> int:
    """Search as ripgrep would for `argv`; write the results to `out`, problems to `err`."""
    query, mode, paths = _parse(argv)
    trouble: list[str] = []

    def note(text: str) -> None:
        err.write(f"{text}\n".encode("utf-8", "surrogateescape"))

    def warn(text: str) -> None:
        trouble.append(text)
        note(text)

    try:
        matcher = Matcher(query.pattern, query.case_insensitive)
    except BadPattern as bad:
        err.write(f"{bad}\n".encode())
        return 2
    found = False
    for root in paths:
        targets = files(replace(query, root=root), warn, note) if mode == "count" else [(root, True)]
        for path, named in targets:
            n = 0
            try:
                if mode == "count":
                    n = count(path, named, matcher)
                    if n:
                        out.write(os.fsencode(path) + b"\0" + str(n).encode() + b"\n")
                else:
                    for row in rows(path, matcher, query.before, query.after):
                        kind = "match" if row.is_match else "context"
                        data = {"path": _json_text(path), "lines": _json_text(row.text + "\n"),
                                "line_number": row.line}
                        out.write(json.dumps({"type": kind, "data": data}).encode() + b"\n")
                        n += row.is_match
            except OSError as error:
                warn(UNREADABLE.format(path=path, reason=_why(error)))
                continue
            found = found or bool(n)
    out.flush()
    return 2 if trouble else 0 if found else 1


if __name__ == "__main__":
    try:
        raise SystemExit(main(sys.argv[1:], sys.stdout.buffer, sys.stderr.buffer))
    except (BrokenPipeError, KeyboardInterrupt):  # mm read enough and went on
        raise SystemExit(1)
