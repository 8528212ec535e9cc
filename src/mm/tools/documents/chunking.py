"""A document's text cut into chunks of at most `chunkTokens` tokens, counted with mm's token
counter (mm.llm.tokens), as the reference cuts it (notes/mnemoai.md §5, Chunking): a recursive
split on paragraphs, lines, sentences, then words, then a hard cut; each chunk after the first
starts with the trailing sentences of the one before, up to 10% of the chunk size.
"""

from __future__ import annotations

import re

SEPARATORS = ("\n\n", "\n", ". ", "! ", "? ", " ")  # the reference's order
OVERLAP = 0.10  # the share of a chunk repeated from the one before
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def split_into_chunks(text: str, chunk_tokens: int) -> list[str]:
    """`text` (str) as chunks (list of non-empty str) of at most `chunk_tokens` tokens (int ≥ 16),
    each but the first opening with up to OVERLAP × `chunk_tokens` tokens of the previous one."""
    from mm.llm.tokens import count_text

    overlap = int(chunk_tokens * OVERLAP)
    pieces = _pieces(text.strip(), chunk_tokens - overlap, 0)
    chunks: list[str] = []
    current, used = "", 0
    for piece in pieces:
        tokens = count_text(piece)
        if current and used + tokens > chunk_tokens - overlap:
            chunks.append(current)
            current, used = "", 0
        current += piece
        used += tokens
    if current.strip():
        chunks.append(current)
    chunks = [c.strip() for c in chunks if c.strip()]
    return [c if i == 0 else _joined(_tail(chunks[i - 1], overlap), c) for i, c in enumerate(chunks)]


def _pieces(text: str, limit: int, level: int) -> list[str]:
    """`text` split at SEPARATORS[level] and finer, into pieces of at most `limit` tokens each
    (the separator kept at the end of its piece, so that joining them gives `text` back)."""
    from mm.llm.tokens import count_text

    if count_text(text) <= limit:
        return [text] if text else []
    if level == len(SEPARATORS):
        return _hard_cut(text, limit)
    separator = SEPARATORS[level]
    parts = text.split(separator)
    out: list[str] = []
    for i, part in enumerate(parts):
        part = part + (separator if i < len(parts) - 1 else "")
        out += _pieces(part, limit, level + 1) if count_text(part) > limit else ([part] if part else [])
    return out


def _hard_cut(text: str, limit: int) -> list[str]:
    """A run without any separator, cut into heads of at most `limit` tokens."""
    from mm.llm.tokens import head_within

    out = []
    while text:
        head = head_within(text, limit) or text[:1]
        out.append(head)
        text = text[len(head):]
    return out


def _tail(chunk: str, budget: int) -> str:
    """The trailing whole sentences of `chunk` within `budget` tokens ("" when even the last is
    longer)."""
    from mm.llm.tokens import count_text

    kept: list[str] = []
    used = 0
    for sentence in reversed(SENTENCE_END.split(chunk)):
        tokens = count_text(sentence) + 1
        if used + tokens > budget:
            break
        kept.insert(0, sentence)
        used += tokens
    return " ".join(kept) if len(kept) < len(SENTENCE_END.split(chunk)) else ""


def _joined(overlap: str, chunk: str) -> str:
    return overlap + "\n" + chunk if overlap else chunk
