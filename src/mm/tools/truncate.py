"""Cutting a tool's text to `maxOutput` at a line boundary, with a marker saying so."""

from __future__ import annotations

from typing import Callable


def cut_to(text: str, limit: int, marker: Callable[[int], str]) -> str:
    """`text` within `limit` characters: whole when it fits, else its start — cut back to a whole
    line when that keeps at least half — and `marker(shown)` on its own line, `shown` being the
    characters kept. The room for the marker is measured with `shown = len(text)` (its widest)."""
    if len(text) <= limit:
        return text
    room = max(limit - len(marker(len(text))) - 1, 0)
    head = text[:room]
    line_end = head.rfind("\n")
    if line_end >= room // 2:
        head = head[:line_end + 1]
    shown = len(head)
    if head and not head.endswith("\n"):
        head += "\n"
    return head + marker(shown)
