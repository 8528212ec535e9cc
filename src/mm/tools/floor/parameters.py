"""The operators of a parameter expansion the safety floor works out (docs/safety.md §How commands
are read): `${x:offset:length}`, `${x^^}`/`${x,,}`, `${x%pat}`, `${x#pat}`, `${x/pat/new}`, and the
plain word of `${x:-word}`. Pure functions over the variable's value.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mm.tools.floor.state import State

NAME = r"(?P<name>[A-Za-z_][A-Za-z0-9_]*(?:\[[^]]*\])?|[0-9]+|[@*#?$!-])"
_SUBSTRING = re.compile(r"\$\{" + NAME + r":(?P<offset>\s*-?\s*[0-9]+\s*|\s*\(\s*-?[0-9]+\s*\)\s*|\s*)"
                        r"(?::(?P<length>\s*-?\s*[0-9]+\s*))?\}")
_CASE = re.compile(r"\$\{" + NAME + r"(?P<op>\^\^|\^|,,|,|~~|~)\}")


def substring(text: str, st: "State") -> tuple[str | None] | None:
    """`${x:offset}`, `${x:offset:length}` with numbers (negative ones count from the end), as
    bash; None when `text` is not one."""
    match = _SUBSTRING.fullmatch(text)
    if match is None:
        return None
    value = st.lookup(match["name"])
    if value is None:
        return (None,)
    offset = int(re.sub(r"[\s()]", "", match["offset"]) or 0)
    start = max(len(value) + offset, 0) if offset < 0 else offset
    if offset < 0 and len(value) + offset < 0:
        return ("",)
    if match["length"] is None:
        return (value[start:],)
    length = int(re.sub(r"\s", "", match["length"]))
    end = start + length if length >= 0 else len(value) + length
    return (value[start:end] if end >= start else None,)  # a negative length before the offset: an error


def letter_case(text: str, st: "State") -> tuple[str | None] | None:
    """`${x^^}`, `${x,,}`, `${x^}`, `${x,}`, `${x~~}`, `${x~}`; None when `text` is not one."""
    match = _CASE.fullmatch(text)
    if match is None:
        return None
    value = st.lookup(match["name"])
    if value is None or not value:
        return (value,)
    op = match["op"]
    if op in ("^^", ",,", "~~"):
        return ({"^^": value.upper(), ",,": value.lower(), "~~": value.swapcase()}[op],)
    first = {"^": value[0].upper(), ",": value[0].lower(), "~": value[0].swapcase()}[op]
    return (first + value[1:],)


def trimmed(value: str, op: str, word: str) -> str | None:
    """`${x%pat}`, `${x%%pat}`, `${x#pat}`, `${x##pat}`, `${x/pat/new}`, `${x//pat/new}` of a
    plain pattern (None: one with quotes or expansions, not worked out)."""
    from fnmatch import fnmatchcase

    pattern, _, new = word.partition("/") if op in ("/", "//") else (word, "", "")
    pattern, new = plain_word(pattern), plain_word(new)
    if pattern is None or new is None:
        return None
    n = len(value)
    if op in ("#", "##"):
        ends = range(n + 1) if op == "#" else range(n, -1, -1)
        return next((value[i:] for i in ends if fnmatchcase(value[:i], pattern)), value)
    if op in ("%", "%%"):
        starts = range(n, -1, -1) if op == "%" else range(n + 1)
        return next((value[:i] for i in starts if fnmatchcase(value[i:], pattern)), value)
    out, i, replaced = [], 0, False
    while i <= n:
        end = next((j for j in range(n, i, -1) if fnmatchcase(value[i:j], pattern)), None) \
            if pattern and (op == "//" or not replaced) else None
        if end is not None:
            out.append(new)
            i, replaced = end, True
            continue
        if i < n:
            out.append(value[i])
        i += 1
    return "".join(out)


def plain_word(word: str) -> str | None:
    """The default of `${x:-word}` when it holds nothing to expand; None otherwise."""
    if any(c in word for c in "$`\\"):
        return None
    if len(word) >= 2 and word[0] == word[-1] and word[0] in "'\"":
        return word[1:-1]
    return word
