"""Shortening text for one line: the one helper every layer uses for messages, titles and
excerpts (DESIGN.md §Conventions: one helper per job). It imports nothing of mm."""

from __future__ import annotations

ELLIPSIS = "…"


def cut(text: str, limit: int) -> str:
    """`text` (str) when it holds at most `limit` characters (int ≥ 1), else its first
    `limit - 1` characters and `…`."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + ELLIPSIS


def one_line(text: object, limit: int | None = None) -> str:
    """`text` (any value, as str) on one line — every run of white space, line breaks included,
    made one space, the ends trimmed — and cut to `limit` characters (None: not cut)."""
    line = " ".join(str(text).split())
    return line if limit is None else cut(line, limit)
