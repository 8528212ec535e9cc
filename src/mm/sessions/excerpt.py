"""The text of a memory search: hit lines and excerpts (mm-tools.md §search_memory, Result)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from mm.sessions.load import SessionError, read_record
from mm.sessions.units import Unit, normalize, units_of

if TYPE_CHECKING:
    from mm.sessions.hits import Hit

HEADER = '🔎 {n} hit(s) for "{query}" in {dir}'
HIT_LINE = "{id} · {date} · turn {turn} · {kind}"
ANSWER_LINE = "→ {text}"
NO_HIT = ('🔎 no hit for "{query}" in {dir}\n'
          "The search matches words, not meanings: try again with other words — synonyms, or the "
          "words in the language the earlier conversation was likely held in (often English).")
EMPTY_QUERY = "⚠️ nothing to search: give one or more words"
CUT_NOTE = "[… {n} more hit(s) not shown: the output is limited to maxOutput ({limit} characters)]"
BEFORE, AFTER, AT_MOST = 80, 160, 600  # characters around the words (Result)
ELLIPSIS = "…"


def format_result(directory: str, query: str, words: list[str], hits: list[Hit] | None,
                  max_output: int) -> str:
    """The whole result: EMPTY_QUERY when `hits` is None, NO_HIT when empty, else HEADER and the
    hits, as many whole ones as fit in `max_output` characters (then CUT_NOTE)."""
    if hits is None:
        return EMPTY_QUERY
    if not hits:
        return NO_HIT.format(query=query, dir=directory)
    read: dict = {}  # path -> units: a file with several hits is read once
    blocks = [b for b in (_block(h, words, read) for h in hits) if b is not None]
    if not blocks:
        return NO_HIT.format(query=query, dir=directory)
    return _fit(HEADER.format(n=len(blocks), query=query, dir=directory), blocks, max_output)


def _fit(header: str, blocks: list[str], limit: int) -> str:
    text = "\n\n".join([header] + blocks)
    if len(text) <= limit:
        return text
    for shown in range(len(blocks) - 1, -1, -1):
        note = CUT_NOTE.format(n=len(blocks) - shown, limit=limit)
        text = "\n\n".join([header] + blocks[:shown] + [note])
        if len(text) <= limit or shown == 0:
            return text[:limit]
    return text[:limit]



def _block(hit: Hit, words: list[str], read: dict) -> str | None:
    """The lines of one hit, read from its file (None when the file changed or vanished)."""
    if hit.session.path not in read:
        read[hit.session.path] = _units(hit)
    units = read[hit.session.path]
    unit = next((u for u in units if u.pos == hit.unit.pos and u.kind == hit.unit.kind), None)
    if unit is None:
        return None
    head = HIT_LINE.format(id=hit.session.id, date=_date(hit.session.updated, hit.session.updated_at),
                           turn=unit.turn, kind=unit.kind)
    lines = [head, excerpt(unit.text, words)]
    if unit.kind == "question":
        answer = next((u for u in units if u.turn == unit.turn and u.kind == "answer" and u.final), None)
        if answer is not None:
            lines.append(ANSWER_LINE.format(text=excerpt(answer.text, words)))
    return "\n".join(lines)


def _units(hit: Hit) -> list[Unit]:
    try:
        record = read_record(hit.session.path)
    except SessionError:
        return []
    messages = record.get("messages")
    return units_of(messages if isinstance(messages, list) else [])


def _date(updated: str, updated_at: float) -> str:
    """`2026-09-01 09:05`: the session's last update as written (its own offset)."""
    if len(updated) >= 16 and updated[4] == "-" and updated[10] in "T ":
        return f"{updated[:10]} {updated[11:16]}"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(updated_at))


def excerpt(text: str, words: list[str]) -> str:
    """`text` (one line) from the first word found to the last: 80 characters before, at least
    160 after the first, 600 at most, `…` where cut; its beginning when no word is found."""
    norm, origin = _mapped(text)
    spans = [(i, i + len(w)) for w in words for i in (norm.find(w), norm.rfind(w)) if i >= 0]
    if spans:
        first = origin[min(s for s, _ in spans)]
        last = origin[max(e for _, e in spans) - 1] + 1
    else:
        first = last = 0
    start = max(0, first - BEFORE)
    end = min(max(last, first + AFTER), start + AT_MOST, len(text))
    return (ELLIPSIS if start > 0 else "") + text[start:end] + (ELLIPSIS if end < len(text) else "")


def _mapped(text: str) -> tuple[str, list[int]]:
    """The normalized text and, for each of its characters, the index of the original one."""
    if text.isascii():
        return text.lower(), list(range(len(text)))
    parts, origin = [], []
    for i, ch in enumerate(text):
        n = normalize(ch)
        parts.append(n)
        origin += [i] * len(n)
    return "".join(parts), origin
