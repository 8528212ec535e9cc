"""`/usage`: the session's token totals and the context window's fill (docs/engine.md §Context)."""

from __future__ import annotations

from typing import Any

USAGE_TOTALS = "📊 session: {input} input · {output} output · {thought} thought · {cached} cached tokens"
USAGE_CONTEXT = "📊 context: {used} / {size} tokens ({percent}%)"
USAGE_CONTEXT_UNKNOWN = "📊 context: {used} tokens (window size unknown)"


def usage_text(conv: Any) -> str:
    """The two lines of `/usage` for `conv` (a Conversation): its token totals, then how much of
    the context window it uses (in tokens and percent, or the tokens alone when the window is
    unknown)."""
    t = conv.totals
    totals = USAGE_TOTALS.format(input=t.input_tokens, output=t.output_tokens, thought=t.thought_tokens,
                                 cached=t.cached_tokens)
    used = conv.used_tokens()
    if not conv.context_window:
        return totals + "\n" + USAGE_CONTEXT_UNKNOWN.format(used=used)
    percent = round(100 * used / conv.context_window)
    return totals + "\n" + USAGE_CONTEXT.format(used=used, size=conv.context_window, percent=percent)
