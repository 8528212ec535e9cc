"""Markdown escaping of page text (mm-tools.md §fetch_content, row "Escaping").

Backslash, `*`, backtick, `[`, `]`, `<`, and a `_` not inside a word get a backslash; so does a
line starting with `#`, `>`, `-`, `+`, `=`, `|` or `N.` (before the dot). Text inside code is
not escaped (cases/html/html-03, beyond the reference).

The backslashes are written as the placeholder `BACKSLASH` and restored after html-to-markdown
has run: the converter escapes a real backslash that precedes punctuation, which would double
ours.
"""

from __future__ import annotations

import re

BACKSLASH = "\ue000"  # private-use placeholder for an escaping backslash
CELL_BREAK = "\ue001"  # placeholder for a <br> inside a table cell
BLOCK_OPEN, BLOCK_CLOSE = "\ue002", "\ue003"  # around the number of a raw HTML block
PLACEHOLDERS = BACKSLASH + CELL_BREAK + BLOCK_OPEN + BLOCK_CLOSE
_STRIP_PLACEHOLDERS = {ord(c): None for c in PLACEHOLDERS}

_INLINE = re.compile(r"[\\*`\[\]<]|(?<!\w)_|_(?!\w)")
_LINE_START = re.compile(r"(^|\n)([ \t]*)(?:([#>\-+=|])|(\d{1,9})(\.))")


def _inline(match: re.Match) -> str:
    """A backslash (placeholder) before the matched character; a backslash is doubled."""
    char = match.group()
    return BACKSLASH + (BACKSLASH if char == "\\" else char)


def _line_start(match: re.Match) -> str:
    """The line start with a backslash before its marker (before the dot of `N.`)."""
    head, indent, mark, digits, dot = match.groups()
    if mark:
        return f"{head}{indent}{BACKSLASH}{mark}"
    return f"{head}{indent}{digits}{BACKSLASH}{dot}"


def escape_text(text: str, at_line_start: bool) -> str:
    """`text` with its Markdown-significant characters escaped (with `BACKSLASH` placeholders).

    Args: text (str): decoded text of one text node; at_line_start (bool): whether the text
    starts a line of the Markdown (first text of a block, or after a line break).
    Returns: the escaped text; lines that start after a newline inside it are escaped too.
    Source: mm-tools.md §fetch_content, row "Escaping".
    """
    text = text.translate(_STRIP_PLACEHOLDERS)
    text = _INLINE.sub(_inline, text)
    if at_line_start:
        return _LINE_START.sub(_line_start, text)
    if "\n" in text:
        first, rest = text.split("\n", 1)
        return first + _LINE_START.sub(_line_start, "\n" + rest)
    return text


def ends_line(text: str, at_line_start: bool) -> bool:
    """Whether the text after `text` (str) starts a line: `text` is blank and we were at a line
    start (bool), or it ends with a newline followed only by blanks."""
    stripped = text.rstrip(" \t")
    if not stripped.strip():
        return at_line_start or "\n" in text
    return stripped.endswith("\n")


def plain(text: str) -> str:
    """`text` (str) without any placeholder character, for code and raw HTML."""
    return text.translate(_STRIP_PLACEHOLDERS)


def restore(markdown: str) -> str:
    """The converter's output with escaping backslashes and cell breaks put back (str → str)."""
    return markdown.replace(BACKSLASH, "\\").replace(CELL_BREAK, "<br>")
