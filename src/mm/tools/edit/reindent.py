"""Re-indenting `new` to the file's own base indent and unit (mm-tools.md §edit_file, How `old`
is matched: "The file's indentation" is not relaxed).

An indent unit is "\\t" or a run of spaces ("  ", "    "). A line's depth is measured in
columns relative to a base indent, turned into whole units plus leftover alignment spaces,
and rebuilt from the file's base and unit. A blank line stays empty.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

TAB = "\t"
DEFAULT_SPACES = "    "
TAB_COLUMNS = 4
MAX_STEP = 8


def leading_ws(line: str) -> str:
    """Return the spaces and tabs that start `line` (str)."""
    return line[: len(line) - len(line.lstrip(" \t"))]


def detect_unit(lines: Iterable[str]) -> str | None:
    """Return the indent unit of `lines` (iterable of str without newlines): "\t" when tabs
    lead at least as many lines as spaces, else the most common step in columns between
    consecutive space-indented lines (ties: the smaller; steps of 1 ignored as alignment).
    None when nothing is indented."""
    text = [line for line in lines if line.strip()]
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


def unit_columns(unit: str) -> int:
    """Return the width in columns of one indent `unit` (str)."""
    return TAB_COLUMNS if unit == TAB else len(unit)


def columns(ws: str, unit: str) -> int:
    """Return the width of the indent `ws` (str) in columns, a tab counting as one `unit`."""
    tab = unit_columns(unit)
    return sum(tab if c == TAB else 1 for c in ws)


def file_unit(unit: str | None, base: str, model: str) -> str:
    """Return the unit to write with: the file's detected `unit` (str or None), unless the
    base indent `base` (str) of the matched lines says otherwise (tabs vs spaces); the model's
    unit `model` (str) when the file shows none."""
    if TAB in base:
        return TAB
    if base and unit == TAB:
        return model if model != TAB else DEFAULT_SPACES
    return unit or model


def model_unit(unit: str | None, base: str) -> str:
    """Return the unit the model wrote in: the detected `unit` (str or None), else guessed
    from its base indent `base` (str)."""
    return unit or (TAB if TAB in base else DEFAULT_SPACES)


def reindent(lines: list[str], src_base: str, src_unit: str, dst_base: str, dst_unit: str) -> list[str]:
    """Re-indent `lines` (list of str, no newlines) from the model's indentation to the file's.

    A line at `src_base` + k units + r spaces becomes `dst_base` + k `dst_unit` + r spaces;
    a line shallower than `src_base` is rebuilt from whole `dst_unit`s. Blank lines become "".
    Returns a new list.
    """
    step = unit_columns(src_unit)
    base_cols = columns(src_base, src_unit)
    dst_levels = columns(dst_base, dst_unit) // unit_columns(dst_unit)
    out = []
    for line in lines:
        body = line.lstrip(" \t")
        if not body.strip():
            out.append("")
            continue
        depth = columns(line[: len(line) - len(body)], src_unit) - base_cols
        levels, rest = divmod(depth, step)
        if depth >= 0:
            indent = dst_base + dst_unit * levels + " " * rest
        else:
            indent = dst_unit * max(0, dst_levels + levels) + " " * rest
        out.append(indent + body)
    return out
