"""The refusal for an `old` found nowhere: `old` quoted, then the region of the file that comes
closest to it, with real line numbers (mm-tools.md §edit_file, How `old` is matched)."""

from __future__ import annotations

import unicodedata
from collections import Counter
from mm.tools.edit.index import FileIndex
from mm.tools.edit.reindent import blank

NOT_FOUND = (
    "{path}: edit #{n}: old text not found — it must match the file exactly, including indentation "
    "and line breaks:"
)
QUOTE = "  │ {line}"
QUOTE_MORE = "  │ … ({count} more lines)"
CLOSEST = "the closest the file comes to it — copy these lines:"
EXCERPT = "  │ {num:>{width}} │ {line}"
NO_CLOSE = "no part of the file comes close — read the file again (read_file) and copy old from it."
# Said after either: the one thing to change when old holds typographic characters the file lacks.
TYPOGRAPHIC = "old has {found} where the file has none — type {plain} as the file does"
PLAIN_NAMES = {" ": "a plain space", "": "nothing"}
MAX_QUOTED = 30
COMMON_LINE = 1000  # a line this frequent in the file locates nothing: it is left out of the scores
# What a model types for ASCII (curly quotes, dashes, Unicode spaces): the same for pointing at the
# closest region, never for matching.
LOOKALIKES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-",
                            "\u2014": "-", "\u2212": "-", "\u00a0": " ", "\u2007": " ", "\u202f": " ",
                            "\u3000": " ", "\u200b": ""})


def _key(line: str) -> str:
    """A line as compared to find the closest region: lookalikes read as ASCII, Unicode
    normalised (NFKC: a composed é and e + a combining accent are one), no indentation."""
    return " ".join(unicodedata.normalize("NFKC", line.translate(LOOKALIKES)).split())


def _by_key(index: FileIndex) -> dict[str, list[int]]:
    """Each line's key → the 0-based indexes of the file lines that have it."""
    found: dict[str, list[int]] = {}
    for i, line in enumerate(index.lines):
        found.setdefault(_key(line), []).append(i)
    return found


def closest_region(index: FileIndex, old: str) -> tuple[int, int] | None:
    """Return the 0-based file lines [a, b) that come closest to `old` (str), or None.

    Each window of the file as tall as `old` scores the lines equal to `old`'s at the same
    position, compared without their whitespace and with Unicode lookalikes read as ASCII; the best (earliest on ties) is offered only when at least half of
    `old`'s non-blank lines line up (mm-tools.md §edit_file). Cost: one pass over the file
    to index its lines, then one step per occurrence of each of `old`'s lines (lines found
    more than COMMON_LINE times are skipped: they would cost much and tell nothing).
    """
    lines = old.split("\n")
    while lines and blank(lines[0]):
        lines.pop(0)
    while lines and blank(lines[-1]):
        lines.pop()
    wanted = [(j, _key(line)) for j, line in enumerate(lines) if _key(line)]
    if len(wanted) < 2:
        return None
    by_key = _by_key(index)
    scores: Counter[int] = Counter()
    for j, s in wanted:
        hits = by_key.get(s, ())
        if len(hits) <= COMMON_LINE:
            for i in hits:
                scores[i - j] += 1
    if not scores:
        return None
    best = max(scores.values())
    if best * 2 < len(wanted):
        return None
    start = min(s for s, c in scores.items() if c == best)
    return max(0, start), min(len(index.lines), start + len(lines))


def not_found(index: FileIndex, path: str, n: int, old: str) -> str:
    """The refusal for edit `n` whose `old` matched nowhere: `old` quoted, then the closest
    region of the file with real line numbers when one lines up (mm-tools.md §edit_file)."""
    quoted = old[:-1].split("\n") if old.endswith("\n") else old.split("\n")
    rows = [NOT_FOUND.format(path=path, n=n)]
    rows += [QUOTE.format(line=line) for line in quoted[:MAX_QUOTED]]
    if len(quoted) > MAX_QUOTED:
        rows.append(QUOTE_MORE.format(count=len(quoted) - MAX_QUOTED))
    region = closest_region(index, old)
    if region is None:
        rows.append(NO_CLOSE)
    else:
        a, b = region
        width = len(str(b))
        rows.append(CLOSEST)
        rows += [EXCERPT.format(num=i + 1, width=width, line=index.lines[i]) for i in range(a, b)]
    note = typographic_note(index.text, old)
    return "\n".join(rows + [note] if note else rows)


def typographic_note(text: str, old: str) -> str | None:
    """TYPOGRAPHIC for the lookalikes (curly quotes, dashes, Unicode spaces: LOOKALIKES) `old`
    (str) holds and the file's `text` (str) never does, each named with its code point; None
    when there are none. What a small model needs to fix such an edit is the character's name:
    the excerpt above looks the same to it."""
    foreign = sorted({c for c in old if ord(c) in LOOKALIKES and c not in text})
    if not foreign:
        return None
    found = ", ".join(f"{c!r} (U+{ord(c):04X})" for c in foreign)
    plain = ", ".join(dict.fromkeys(PLAIN_NAMES.get(LOOKALIKES[ord(c)], repr(LOOKALIKES[ord(c)])) for c in foreign))
    return TYPOGRAPHIC.format(found=found, plain=plain)
