"""The model's frame of an edit (docs/tools-edit.md §Frames, point 2): each indentation of `new`
mapped the way `old`'s lines map onto the file lines they matched — line by line where `new`
keeps or rewrites one of them, else by the indentation itself, else by whole units from the
nearest known depth.
"""

from __future__ import annotations

from collections import Counter
from typing import Protocol

from mm.tools.edit.reindent import OPENERS, TAB, blank, columns, depth, indentation, leading_ws, nesting_step
from mm.tools.edit.reindent import first_filled as _first


class Matched(Protocol):
    """`old`'s lines as the model wrote them and the file lines they matched, one for one."""

    model: list[str]
    file: list[str]


class Mapper:
    """The model's indentation → the file's, learned from pairs (model indent, file indent)."""

    def __init__(self, pairs: list[tuple[str, str]], unit: str, new: list[str]):
        self.known: dict[str, Counter] = {}
        for m, f in pairs:
            self.known.setdefault(m, Counter())[f] += 1
        self.unit = unit
        self.step = self._step(new)
        self.disagree = False  # a line of new was given one of several depths old's lines had at its indentation

    def _step(self, new: list[str]) -> int:
        """Columns of the model's indentation per unit of the file's: from pairs at two depths
        or more; else the step by which new indents what it opens (nesting_step); else the ratio
        of a pair's columns to its depth in a tab-indented file; else the file's unit."""
        points = sorted({(depth(f, self.unit)[0], columns(m)) for m, fs in self.known.items() for f in fs
                         if depth(f, self.unit)[1] == 0})
        slopes = Counter()
        for (l1, c1), (l2, c2) in zip(points, points[1:]):
            if l2 > l1 and c2 > c1 and (c2 - c1) % (l2 - l1) == 0:
                slopes[(c2 - c1) // (l2 - l1)] += 1
        if slopes:
            return slopes.most_common(1)[0][0]
        tabs = any(TAB in m for m in self.known)
        opened = nesting_step(new)
        if opened is not None:
            return opened
        if tabs:
            return columns(TAB)
        if self.unit == TAB:
            ratios = Counter(c // lv for lv, c in points if lv and c and c % lv == 0)
            return ratios.most_common(1)[0][0] if ratios else columns(TAB)
        return len(self.unit)

    def indents(self, new: list[str], align: list[tuple[int, bool] | None], region: Matched | None) -> list[str | None]:
        """The file indentation of every line of `new`, read in the model's frame (None for a
        line this reading would put left of column 0). `region`: the match whose lines `align`
        points into (None when `align` pairs nothing)."""
        out: list[str | None] = []
        k = _first(new)
        model0 = leading_ws(region.model[0]) if region is not None else ""
        for i, line in enumerate(new):
            s = leading_ws(line)
            at = align[i]
            if blank(line):
                out.append("")
            elif region is not None and at is not None and leading_ws(region.model[at[0]]) == s:
                out.append(leading_ws(region.file[at[0]]))
            elif region is not None and i == k and not s and model0:  # a first line without indent stays at the file's
                out.append(leading_ws(region.file[0]))
            elif s in self.known and self._opened(new, out, i) is not None:
                out.append(self._opened(new, out, i))
            elif s in self.known:
                self.disagree |= len(self.known[s]) > 1  # old's lines at s stand for several depths
                out.append(self.known[s].most_common(1)[0][0])
            else:
                out.append(self._computed(s))
        return out

    def _opened(self, new: list[str], out: list[str | None], i: int) -> str | None:
        """One unit deeper than the line before it, for line `i` of `new` that a block opener
        opens one step deeper while old's lines at its indentation were aligned continuation
        lines (`\t    b);`): a nesting depth is not an alignment (the outside tester's W6). None
        when that is not the case."""
        prev = next((j for j in range(i - 1, -1, -1) if not blank(new[j])), None)
        s = leading_ws(new[i])
        if prev is None or out[prev] is None or not new[prev].rstrip().endswith(OPENERS):
            return None
        if columns(s) - columns(leading_ws(new[prev])) != self.step:
            return None
        if depth(self.known[s].most_common(1)[0][0], self.unit)[1] == 0:
            return None  # old's lines there were at a whole depth: the map holds
        levels, rest = depth(out[prev], self.unit)
        return indentation(levels + 1, rest, self.unit)

    def _computed(self, s: str) -> str | None:
        """The file indentation for a depth `s` old never used: whole units from the nearest
        known depth, leftover columns kept as alignment spaces; None left of column 0."""
        want = columns(s)
        refs = [(columns(m), fs.most_common(1)[0][0]) for m, fs in self.known.items()]
        if not refs:
            levels, rest = divmod(want, self.step)
            return indentation(levels, rest, self.unit)
        pure = [r for r in refs if r[0] <= want and (want - r[0]) % self.step == 0 and depth(r[1], self.unit)[1] == 0]
        below = [r for r in refs if r[0] <= want]
        ref = max(pure or below) if (pure or below) else min(refs)
        levels, rest = divmod(want - ref[0], self.step)
        base_levels, base_rest = depth(ref[1], self.unit)
        if base_levels + levels < 0:
            return None
        return indentation(base_levels + levels, base_rest + rest, self.unit)
