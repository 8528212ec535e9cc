"""The ways small models retype a block of code wrongly (issue 9, point 1), as functions of
lines (no newlines). Each returns the retyped lines, or None when the mistake does not apply to
these lines (a shift that would cross column 0, tabs in a block without any…).

Blank lines come out empty: a model retyping a block does not reproduce whitespace-only lines.
"""

from __future__ import annotations

import random
from typing import Callable

from changes import blank, leading  # bench/fit is on sys.path (edit_cases.py puts it there)

Retype = Callable[[list[str]], "list[str] | None"]


def tabs_to(width: int) -> Retype:
    """Every leading tab retyped as `width` spaces."""
    def retype(lines: list[str]) -> list[str] | None:
        if not any("\t" in leading(line) for line in lines):
            return None
        return ["" if blank(line) else leading(line).replace("\t", " " * width) + line.lstrip(" \t")
                for line in lines]
    return retype


def shift(cols: int) -> Retype:
    """Every line moved `cols` columns right (negative: left), spaces only."""
    def retype(lines: list[str]) -> list[str] | None:
        out = []
        for line in lines:
            if blank(line):
                out.append("")
                continue
            ind = leading(line)
            if "\t" in ind:
                return None
            if cols < 0 and len(ind) < -cols:
                return None
            out.append(" " * (len(ind) + cols) + line.lstrip(" \t"))
        return out
    return retype


def dedent_to(base: str) -> Retype:
    """Every line without the indentation `base` the block starts from (column 0)."""
    def retype(lines: list[str]) -> list[str] | None:
        if not base:
            return None
        out = []
        for line in lines:
            if blank(line):
                out.append("")
            elif not line.startswith(base):
                return None
            else:
                out.append(line[len(base):])
        return out
    return retype


def common_base(lines: list[str]) -> str:
    """The indentation every non-blank line of `lines` starts with."""
    texts = [leading(line) for line in lines if not blank(line)]
    base = texts[0] if texts else ""
    for t in texts[1:]:
        k = 0
        while k < min(len(base), len(t)) and base[k] == t[k]:
            k += 1
        base = base[:k]
    return base


def indentation_mistakes(lines: list[str], unit: str) -> dict[str, Retype]:
    """The indentation mistakes that apply to a block in a file indented with `unit`."""
    if unit == "\t":
        found = {f"tabs→{w} spaces": tabs_to(w) for w in (2, 4, 8)}
    else:
        found = {f"shift {c:+d}": shift(c) for c in (2, 4, -2, -4)}
    found["dedent to column 0"] = dedent_to(common_base(lines))
    return found


def add_trailing(rng: random.Random, lines: list[str], which: set[int]) -> list[str]:
    """`lines` with trailing spaces or a tab added to the lines numbered in `which`."""
    return [line + rng.choice([" ", "  ", "\t", "   "]) if i in which and not blank(line) else line
            for i, line in enumerate(lines)]


def lookalike(rng: random.Random, text: str, what: str) -> str | None:
    """`text` with one ASCII character replaced by the Unicode lookalike a model may type:
    curly quotes, a non-breaking space, or an en/em dash; None when `text` has no such character."""
    if what == "curly quotes":
        spots = [i for i, c in enumerate(text) if c in "\"'"]
        if not spots:
            return None
        i = rng.choice(spots)
        return text[:i] + ("\u201c" if text[i] == '"' else "\u2019") + text[i + 1:]
    if what == "non-breaking spaces":
        spots = [i for i, c in enumerate(text) if c == " "]
        if not spots:
            return None
        i = rng.choice(spots)
        j = i
        while j < len(text) and text[j] == " ":  # a whole run: an indentation, or one gap
            j += 1
        return text[:i] + "\u00a0" * (j - i) + text[j:]
    spots = [i for i, c in enumerate(text) if c == "-"]
    if not spots:
        return None
    i = rng.choice(spots)
    return text[:i] + rng.choice(["\u2013", "\u2014"]) + text[i + 1:]
