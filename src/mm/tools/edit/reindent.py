"""Indentation arithmetic for edit_file (mm-tools.md §edit_file, How `old` is matched: "The file's
indentation" is not relaxed).

Only ASCII space and tab are indentation (issue 9, point 3): a non-breaking space or any other
Unicode space is a character of the line. An indent unit is "\\t" or a run of spaces ("  ",
"    "); a depth is a number of whole units plus leftover alignment spaces.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

TAB = "\t"
WS = " \t"
TAB_COLUMNS = 4  # a tab's width when a model's indentation is measured in columns
MAX_STEP = 8
OPENERS = (":", "{", "(", "[")  # a line ending with one opens a block
CLOSERS = ("}", ")", "]")  # a line starting with one closes a block


def leading_ws(line: str) -> str:
    """Return the spaces and tabs that start `line` (str)."""
    return line[: len(line) - len(line.lstrip(WS))]


def blank(line: str) -> bool:
    """True when `line` (str) holds nothing but spaces, tabs and a carriage return."""
    return not line.strip(" \t\r")


def stripped(line: str) -> str:
    """`line` (str) without the spaces and tabs around it, nor a final carriage return."""
    return line.rstrip("\r").strip(WS)


def detect_unit(lines: Iterable[str]) -> str | None:
    """Return the indent unit of `lines` (iterable of str without newlines): "\\t" when tabs
    lead at least as many lines as spaces, else the most common step in columns between
    consecutive space-indented lines (ties: the smaller; steps of 1 ignored as alignment).
    None when nothing is indented."""
    text = [line for line in lines if not blank(line)]
    tabs = sum(1 for line in text if line[0] == TAB)
    widths = [len(line) - len(line.lstrip(" ")) for line in text if line[0] != TAB]
    spaces = len(widths) - widths.count(0)
    if tabs and tabs >= spaces:
        return TAB
    steps = Counter(abs(a - b) for a, b in zip(widths, widths[1:]) if 1 < abs(a - b) <= MAX_STEP)
    if steps:
        best = max(steps.values())
        return " " * min(s for s, c in steps.items() if c == best)
    return None


def columns(ws: str, tab: int = TAB_COLUMNS) -> int:
    """Return the width of the indentation `ws` (str) in columns, a tab counting `tab` (int)."""
    return sum(tab if c == TAB else 1 for c in ws)


def depth(ws: str, unit: str) -> tuple[int, int]:
    """Return (whole units, leftover columns) of the indentation `ws` (str) in `unit` (str):
    leading tabs for a tab unit, columns divided by the unit's width for a space unit."""
    if unit == TAB:
        levels = len(ws) - len(ws.lstrip(TAB))
        return levels, columns(ws[levels:])
    return divmod(columns(ws, len(unit)), len(unit))


def indentation(levels: int, rest: int, unit: str) -> str:
    """Return the indentation of `levels` (int) whole `unit`s (str) then `rest` (int) spaces."""
    return unit * max(0, levels) + " " * max(0, rest)


def first_filled(lines: list[str]) -> int | None:
    """The index of the first line of `lines` (list of str) that is not blank; None when all are."""
    return next((i for i, line in enumerate(lines) if not blank(line)), None)


def nesting_step(lines: list[str]) -> int | None:
    """The step, in columns, by which `lines` indent what a block opener (a line ending with `:`,
    `{`, `(` or `[`) opens — the unit they were typed with, whatever their alignment spaces —
    the most common one; None when no opener is followed by a deeper line."""
    text = [line for line in lines if not blank(line)]
    steps = Counter()
    for line, after in zip(text, text[1:]):
        if line.rstrip().endswith(OPENERS) and not after.lstrip(" \t").startswith(CLOSERS):
            step = columns(leading_ws(after)) - columns(leading_ws(line))
            if step > 1:  # a step of one column is alignment (a wrapped condition's `):`), not a unit
                steps[step] += 1
    ranked = steps.most_common(2)
    if not ranked or len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return None  # two steps as common: neither is the unit new was typed with
    return ranked[0][0]
