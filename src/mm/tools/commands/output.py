"""execute_bash's result: the reference's JSON, each stream middle-cut to 30,000 characters, the
whole within maxOutput (mnemo-tools.md §Run commands; notes/mnemoai.md §2.6; docs/tools-bash.md)."""

from __future__ import annotations

import json
from typing import Any

STREAM_LIMIT = 30_000  # characters of stdout, and of stderr (mnemo-tools.md: "capped at 30,000 characters")
CUT_MARKER = "\n\n... [output truncated: ~{dropped} of {total} chars omitted from the middle; ~{lines} total lines] ...\n\n"


def cut_middle(text: str, limit: int, total: int | None = None, lines: int | None = None) -> str:
    """`text` within `limit` characters, marker included: its start and end around CUT_MARKER.

    `total` and `lines` count the whole output when `text` holds only its two ends (a huge one,
    mm.tools.process.TOO_LARGE_MARKER): the marker quotes them."""
    total = len(text) if total is None else max(total, len(text))
    if len(text) <= limit:
        return text
    lines = text.count("\n") + (not text.endswith("\n")) if lines is None else lines
    marker = CUT_MARKER.format(dropped=total, total=total, lines=lines)  # its widest
    keep = max(0, (limit - len(marker)) // 2)
    marker = CUT_MARKER.format(dropped=total - 2 * keep, total=total, lines=lines)
    return text[:keep] + marker + text[len(text) - keep:] if keep else marker.strip("\n")[:limit]


def result_json(fields: dict[str, Any], streams: dict[str, tuple[str, int]], max_output: int) -> str:
    """The JSON text of `fields` plus each stream (`name` → (text, bytes written)), each cut to
    STREAM_LIMIT — and to a lower limit, the same for all, the highest with which the whole
    holds in `max_output` characters (found by bisection; JSON escapes count)."""

    def dumped(limit: int) -> str:
        body = {name: cut_middle(text, limit, size) for name, (text, size) in streams.items()}
        return json.dumps(_ordered(body, fields), ensure_ascii=False)

    text = dumped(STREAM_LIMIT)
    if len(text) <= max_output:
        return text
    low, high = 0, STREAM_LIMIT
    while low < high:
        middle = (low + high + 1) // 2
        if len(dumped(middle)) <= max_output:
            low = middle
        else:
            high = middle - 1
    return dumped(low)


def _ordered(streams: dict[str, str], fields: dict[str, Any]) -> dict[str, Any]:
    """The reference's key order: error and message first, then stdout, stderr, the rest."""
    head = {k: fields[k] for k in ("error", "message") if k in fields}
    tail = {k: v for k, v in fields.items() if k not in head}
    return {**head, **streams, **tail}
