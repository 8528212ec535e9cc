"""Shortening text for one line: the one helper every layer uses for messages, titles and
excerpts (DESIGN.md §Conventions: one helper per job). It imports nothing of mm."""

from __future__ import annotations

from typing import Callable

ELLIPSIS = "…"
CONTEXT_MARKER = "[context added by a hook]"  # mm-tools.md §ask_agent, Hooks: what precedes a hook's context


def cut(text: str, limit: int) -> str:
    """`text` (str) when it holds at most `limit` characters (int ≥ 1), else its first
    `limit - 1` characters and `…`."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + ELLIPSIS


def one_line(text: object, limit: int | None = None) -> str:
    """`text` (any value, as str) on one line — every run of white space, line breaks included,
    made one space, the ends trimmed — and cut to `limit` characters (None: not cut)."""
    line = " ".join(str(text).split())
    return line if limit is None else cut(line, limit)


def add_context(text: str, contexts: list[str], limit: int | None = None,
                 cut_to: Callable[[str, int], str] | None = None) -> str:
    """`text`, then a blank line, CONTEXT_MARKER and the `contexts` (mm-tools.md §ask_agent,
    Hooks); within `limit` characters when given (maxOutput): the context takes at most half of
    them, and `text` is cut by `cut_to(text, room)` (default: its start) to fit. `text` alone
    without contexts."""
    if not contexts:
        return text
    block = f"\n\n{CONTEXT_MARKER}\n" + "\n".join(c.strip("\n") for c in contexts)
    body = text.rstrip("\n")
    if limit is not None:
        if len(block) > limit // 2:
            block = block[:max(limit // 2 - 1, 0)] + "…"
        room = max(limit - len(block), 0)
        if len(body) > room:
            body = cut_to(body, room).rstrip("\n") if cut_to is not None else body[:room]
    return body + block if body else block.lstrip("\n")
