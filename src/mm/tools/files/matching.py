"""Exact matching for file_edit and fs_write's str_replace (mnemo-tools.md, file_edit matching;
notes/mnemoai.md §2.2–2.3): occurrences, the `cat -n` gutter retry, sample locations, and the
replacement itself, which keeps each line's own ending in a file of mixed line endings.
"""

from __future__ import annotations

import re

from mm.fs import BOM, TextFile

GUTTER = re.compile(r"^\s*\d+\t")  # a `cat -n` line-number gutter, as fs_read and read_file print it
SAMPLES = 3  # sample locations given for an ambiguous match
PREVIEW_CHARS = 80


def strip_gutters(text: str) -> str:
    """`text` with a leading gutter removed from each of its lines."""
    return "\n".join(GUTTER.sub("", line, count=1) for line in text.split("\n"))


def has_gutters(text: str) -> bool:
    """Whether every non-empty line of `text` starts with a gutter (a block copied with its line
    numbers)."""
    lines = [line for line in text.split("\n") if line.strip()]
    return bool(lines) and all(GUTTER.match(line) for line in lines)


def as_file_text(file: TextFile, text: str) -> str:
    """A model's `text` in the terms of `file.logical()`: a BOM left out (it is never matched, and
    the file's own is kept), CRLF as LF unless the file mixes line endings (a CRLF file's are
    LF in its logical text; an LF file keeps LF)."""
    text = text.replace(BOM, "")
    uniform = file.eol in ("\r\n", "\r") or (file.eol == "\n" and "\n" in file.text)
    return text.replace("\r\n", "\n") if uniform else text


def occurrences(text: str, old: str) -> list[int]:
    """Where `old` (non-empty) occurs in `text`, left to right, not overlapping (as str.replace)."""
    found, at = [], text.find(old)
    while at >= 0:
        found.append(at)
        at = text.find(old, at + len(old))
    return found


def line_of(text: str, pos: int) -> int:
    """The 1-based number of the line of `text` holding offset `pos`."""
    return text.count("\n", 0, pos) + 1


def samples(text: str, starts: list[int]) -> list[dict[str, object]]:
    """Up to SAMPLES locations `{line, preview}` of the occurrences starting at `starts` — for a
    `old` of several lines too (the reference gave none then): the line where each starts."""
    out = []
    for pos in starts[:SAMPLES]:
        begin = text.rfind("\n", 0, pos) + 1
        end = text.find("\n", pos)
        line = text[begin:end if end >= 0 else len(text)]
        out.append({"line": line_of(text, pos), "preview": line.strip()[:PREVIEW_CHARS]})
    return out


def _ending_at(text: str, pos: int) -> str:
    """The line ending of the line of `text` holding `pos`: CRLF or LF."""
    end = text.find("\n", pos)
    return "\r\n" if end > 0 and text[end - 1] == "\r" else "\n"


def replace(text: str, starts: list[int], old: str, new: str, mixed: bool) -> str:
    """`text` with the `old` at each of `starts` replaced by `new`; in a file of `mixed` line
    endings, `new`'s line breaks take the ending of the line each replacement starts on."""
    out, at = [], 0
    for pos in starts:
        piece = new
        if mixed and "\n" in new:
            piece = new.replace("\r\n", "\n").replace("\n", _ending_at(text, pos))
        out += [text[at:pos], piece]
        at = pos + len(old)
    out.append(text[at:])
    return "".join(out)
