"""A text file opened for fs_read's text modes (Line, Search, CSV, JSON): checked, decoded, and
read by lines, in two passes when a mode needs the line count first (notes/mnemoai.md §2.1: the
reference streams in two passes, so a large file is never loaded whole).

A file up to WHOLE_BYTES is read once and decoded in the encoding it is in (mm.textcodec);
a larger one is streamed, as UTF-8 (or the codec its BOM names) with undecodable bytes replaced.
Every pass over the file hashes it, so what was read is recorded exactly (mm.tools.reads).
"""

from __future__ import annotations

import codecs
import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from mm.tools.files.common import IS_BINARY, binary_message, error
from mm.tools.reads import Seen

WHOLE_BYTES = 8 << 20  # files up to this size are read at once
HEAD_BYTES = 64 << 10  # what is read first: the binary check, the line-ending guess
CANCEL_EVERY = 4096  # lines between two looks at the cancel flag
LINE_BREAK = re.compile(r"\r\n|\n|\r")


class NotText(Exception):
    """A file fs_read's text modes refuse: `payload` is the reference's error object."""

    def __init__(self, payload: dict[str, Any]):
        super().__init__(payload["message"])
        self.payload = payload


class Cancelled(Exception):
    """The turn was cancelled while the file was read."""


@dataclass
class TextSource:
    """An open regular file's text. `lines()` yields its lines (each with its line ending; a
    line longer than `keep` characters is cut to its start, ending lost); `seen` is set once a
    pass has read the whole file."""

    path: Path
    fd: int
    st: os.stat_result
    encoding: str
    cr_only: bool  # old Mac text: lines end with CR alone
    keep: int
    text: str | None = None  # the whole file's text, when small
    seen: Seen | None = None
    cancelled: Any = None
    _lines: list[str] | None = field(default=None, repr=False)

    def close(self) -> None:
        """Close the file."""
        os.close(self.fd)

    def lines(self) -> Iterator[str]:
        """One pass over the lines (the whole file's are split once and kept)."""
        if self.text is not None:
            if self._lines is None:
                self._lines = _split(self.text, self.cr_only)
            yield from self._checked(iter(self._lines))
            return
        os.lseek(self.fd, 0, os.SEEK_SET)
        yield from self._checked(self._streamed())

    def _checked(self, lines: Iterator[str]) -> Iterator[str]:
        for n, line in enumerate(lines):
            if self.cancelled is not None and n % CANCEL_EVERY == 0 and self.cancelled.is_set():
                raise Cancelled()
            yield line if len(line) <= self.keep else line[:self.keep]

    def _streamed(self) -> Iterator[str]:
        """The lines of a large file, decoded chunk by chunk; hashes it (seen) when read to the end."""
        from mm.fs import read_chunks

        digest = hashlib.sha256()
        decoder = codecs.getincrementaldecoder(self.encoding)(errors="replace")
        pending, skipping = "", False  # skipping: the rest of a line cut to `keep`
        for chunk in read_chunks(self.fd, max(self.st.st_size, 1), str(self.path)):
            digest.update(chunk)
            pending += decoder.decode(chunk)
            *done, pending = _split_keeping(pending, self.cr_only)
            for line in done:
                if not skipping:
                    yield line
                skipping = False
            if len(pending) > self.keep:  # a line of gigabytes is never held whole
                if not skipping:
                    yield pending[:self.keep]
                pending, skipping = "", True
        pending += decoder.decode(b"", final=True)
        if pending and not skipping:
            yield pending
        self.seen = Seen(self.st.st_size, self.st.st_mtime_ns, digest.digest())


def _split_keeping(text: str, cr_only: bool) -> list[str]:
    """`text` cut after each line break (CR alone too when `cr_only`); the last piece is the
    unfinished line (maybe empty). A CR at the very end waits: a LF may follow in the next chunk."""
    pieces, start = [], 0
    pattern = LINE_BREAK if cr_only else re.compile(r"\r?\n")
    for match in pattern.finditer(text):
        if match.group() == "\r" and match.end() == len(text):
            break
        pieces.append(text[start:match.end()])
        start = match.end()
    pieces.append(text[start:])
    return pieces


def _split(text: str, cr_only: bool) -> list[str]:
    """The lines of a whole text, each with its line ending."""
    pieces = _split_keeping(text, cr_only)
    last = pieces.pop()
    if last:
        pieces.append(last)
    return pieces


def strip_eol(line: str) -> str:
    """`line` without its line ending."""
    return line.rstrip("\r\n")


def open_source(path: Path, keep: int, cancelled: Any = None) -> TextSource:
    """Open `path` (absolute) for the text modes. Raises NotText (a binary or image file, or one
    whose BOM its codec cannot decode), mm.fs.FileRefused (not a regular file, a read that
    would wait) and OSError."""
    from mm.fs import FileRefused, open_regular, read_chunks
    from mm.textcodec import bom_codec, decode

    fd = open_regular(path, "r", str(path))
    try:
        st = os.fstat(fd)
        head = b"".join(read_chunks(fd, HEAD_BYTES, str(path)))
        refusal = binary_message(path, head)
        if refusal is not None:
            raise NotText(refusal)
        cr_only = b"\r" in head and b"\n" not in head
        source = TextSource(path, fd, st, bom_codec(head) or "utf-8", cr_only, keep, cancelled=cancelled)
        if st.st_size <= WHOLE_BYTES:
            data = head + b"".join(read_chunks(fd, WHOLE_BYTES + 1 - len(head), str(path)))
            decoded = decode(data)
            if decoded is None:  # a BOM its codec cannot decode: not text after all
                raise NotText(error(IS_BINARY.format(path=path), binary=True, is_image=False))
            source.text, source.encoding, source.seen = decoded.text, decoded.encoding, Seen.of(data, st)
            source.cr_only = "\r" in decoded.text and "\n" not in decoded.text
        return source
    except (NotText, FileRefused, OSError):
        os.close(fd)
        raise
