"""Putting `new` in the file's own indentation after a match that forgave whitespace
(mm-tools.md §edit_file, How `old` is matched; issue 9, point 2; docs/tools-edit.md §Frames).

A model that mistyped `old`'s indentation may write `new` with the same mistake (the model's
frame) or already as the file has it (the file's frame). Both readings are tried:

- the model's frame: each indentation of `new` is mapped the way `old`'s lines map onto the
  matched file lines (line by line where `new` keeps or rewrites one of them, else by the
  indentation itself, else by whole units from the nearest known depth);
- the file's frame: `new` is kept as it is.

The reading under which `new` sits where the replaced lines sat wins: its first line at the
depth of the line it replaces, no line shallower than the region, and the lines `new` keeps
from `old` at their own depth. When both readings fit equally and differ, nothing is guessed:
the edit is refused. When the model's indentation equals the file's, nothing moves.

Only indentation moves: the rest of each line, trailing whitespace included, is written as sent
(tests/cases/edits/edit-11), and a blank line is written empty.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher

from mm.tools.edit.reindent import TAB, blank, columns, depth, detect_unit, indentation, leading_ws, stripped


OPENERS = (":", "{", "(", "[")
CLOSERS = ("}", ")", "]")


@dataclass(frozen=True)
class Region:
    """The file lines an edit replaces and `old`'s lines as the model wrote them, one for one.

    content_start: `old` began right after the first line's indentation (its first line has
    none), so a first line of `new` without indentation continues from there too.
    unit: the file's indent unit around the region (None when it shows none).
    """

    model: list[str]
    file: list[str]
    unit: str | None
    content_start: bool = False


def place(region: Region, new: list[str]) -> list[str] | None:
    """Return `new` (lines without newlines) in the file's own indentation, or None when it
    cannot be told which frame `new` was written in (the caller refuses the edit)."""
    align = _align(region.model, new)
    pairs = [(leading_ws(m), leading_ws(f)) for m, f in zip(region.model, region.file) if not blank(m)]
    if all(m == f for m, f in pairs):
        return new  # the model's indentation is the file's: nothing moves
    mapper = _Mapper(region)
    readings = []
    for indents, as_sent in ((mapper.indents(new, align), False), (_file_frame(region, new), True)):
        lines = _emit(new, [i or "" for i in indents], as_sent)
        possible = int(None not in indents)  # a reading that puts a line left of column 0 is wrong
        readings.append(((possible, *_fit(region, new, align, lines)), lines))
    (best, lines), (other, lines2) = sorted(readings, key=lambda r: r[0], reverse=True)
    if best == other and lines != lines2:
        return None
    return lines


def _align(model: list[str], new: list[str]) -> list[tuple[int, bool] | None]:
    """For each line of `new`: (index in `model`, kept unchanged) when it keeps or rewrites one
    of old's lines in place, else None. Lines are compared without their indentation."""
    out: list[tuple[int, bool] | None] = [None] * len(new)
    matcher = SequenceMatcher(None, [stripped(x) for x in model], [stripped(x) for x in new], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            for i, j in zip(range(i1, i2), range(j1, j2)):
                out[j] = (i, tag == "equal")
    return out


def _first(lines: list[str]) -> int | None:
    return next((i for i, line in enumerate(lines) if not blank(line)), None)


def _file_frame(region: Region, new: list[str]) -> list[str]:
    """`new` read as written in the file's frame: kept, except a first line without
    indentation after a match that began after the indentation."""
    indents = [leading_ws(line) for line in new]
    k = _first(new)
    if k is not None and region.content_start and not indents[k]:
        indents[k] = leading_ws(region.file[0])
    return indents


def _emit(new: list[str], indents: list[str], blanks_as_sent: bool) -> list[str]:
    """`new` with the given indentation per line; a blank line is empty once re-indented, or as
    sent when `new` is read in the file's frame."""
    return [(line if blanks_as_sent else "") if blank(line) else ind + line.lstrip(" \t")
            for line, ind in zip(new, indents)]


def _fit(region: Region, new: list[str], align: list[tuple[int, bool] | None], lines: list[str]) -> tuple:
    """How well a reading of `new` sits in the region: (its first line at the depth of the line
    it replaces, minus the lines shallower than the region, minus the lines that open a block
    (`:`, `{`, `(`, `[` at their end) not followed by a deeper line, the lines kept from old at
    their own depth, the lines rewritten in place at the depth of the line they rewrite, the
    lines indented with the file's own characters)."""
    k = _first(new)
    if k is None:
        return (0, 0, 0, 0, 0, 0)
    at = align[k]
    target = leading_ws(region.file[at[0] if at is not None else 0])
    unit = region.unit or TAB
    floor = min((columns(leading_ws(f), len(unit)) for f in region.file if not blank(f)), default=0)
    shallow = sum(1 for line in lines if not blank(line) and columns(leading_ws(line), len(unit)) < floor)
    at_depth = Counter(a[1] for i, a in enumerate(align)
                       if a is not None and not blank(new[i]) and leading_ws(lines[i]) == leading_ws(region.file[a[0]]))
    own = sum(1 for line in lines if not blank(line) and _own_characters(leading_ws(line), unit))
    return (int(leading_ws(lines[k]) == target), -shallow, -_flat_openers(lines, unit), at_depth[True],
            at_depth[False], own)


def _flat_openers(lines: list[str], unit: str) -> int:
    """How many lines end by opening a block but are followed by a line no deeper (closing
    lines — `}`, `)`, `]` — apart)."""
    text = [line for line in lines if not blank(line)]
    flat = 0
    for line, after in zip(text, text[1:]):
        if line.rstrip().endswith(OPENERS) and not after.lstrip(" \t").startswith(CLOSERS):
            flat += columns(leading_ws(after), len(unit)) <= columns(leading_ws(line), len(unit))
    return flat


def _own_characters(ws: str, unit: str) -> bool:
    """True when the indentation `ws` is made the way the file's `unit` makes it: tabs then
    alignment spaces in a tab-indented file, spaces only (whole units) in a space-indented one."""
    if unit == TAB:
        return not ws or ws[0] == TAB and TAB not in ws.lstrip(TAB)
    return TAB not in ws and len(ws) % len(unit) == 0


class _Mapper:
    """The model's indentation → the file's, learned from old's lines and the lines they matched."""

    def __init__(self, region: Region):
        self.region = region
        self.known: dict[str, Counter] = {}
        for m, f in zip(region.model, region.file):
            if not blank(m):
                self.known.setdefault(leading_ws(m), Counter())[leading_ws(f)] += 1
        self.unit = region.unit or detect_unit(region.file) or self._model_unit()
        self.step = self._step()

    def _model_unit(self) -> str:
        models = list(self.known)
        return TAB if any(TAB in m for m in models) else "    "

    def _step(self) -> int:
        """Columns of the model's indentation per unit of the file's."""
        points = sorted({(depth(f, self.unit)[0], columns(m)) for m, fs in self.known.items() for f in fs
                         if depth(f, self.unit)[1] == 0})
        slopes = Counter()
        for (l1, c1), (l2, c2) in zip(points, points[1:]):
            if l2 > l1 and c2 > c1 and (c2 - c1) % (l2 - l1) == 0:
                slopes[(c2 - c1) // (l2 - l1)] += 1
        if slopes:
            return slopes.most_common(1)[0][0]
        if any(TAB in m for m in self.known):
            return columns(TAB)
        if self.unit == TAB:
            ratios = Counter(c // lv for lv, c in points if lv and c and c % lv == 0)
            return ratios.most_common(1)[0][0] if ratios else columns(TAB)
        return len(self.unit)

    def indents(self, new: list[str], align: list[tuple[int, bool] | None]) -> list[str | None]:
        """The file indentation of every line of `new`, read in the model's frame (None for a
        line this reading would put left of column 0)."""
        out = []
        k = _first(new)
        model0 = leading_ws(self.region.model[0])
        for i, line in enumerate(new):
            s = leading_ws(line)
            at = align[i]
            if blank(line):
                out.append("")
            elif at is not None and leading_ws(self.region.model[at[0]]) == s:
                out.append(leading_ws(self.region.file[at[0]]))
            elif i == k and not s and model0:  # a first line without indent stays at the file's
                out.append(leading_ws(self.region.file[0]))
            elif s in self.known:
                out.append(self.known[s].most_common(1)[0][0])
            else:
                out.append(self._computed(s))
        return out

    def _computed(self, s: str) -> str | None:
        """The file indentation for a depth `s` old never used: whole units from the nearest
        known depth, leftover columns kept as alignment spaces; None left of column 0."""
        want = columns(s)
        refs = [(columns(m), fs.most_common(1)[0][0]) for m, fs in self.known.items()]
        pure = [r for r in refs if r[0] <= want and (want - r[0]) % self.step == 0 and depth(r[1], self.unit)[1] == 0]
        below = [r for r in refs if r[0] <= want]
        ref = max(pure or below) if (pure or below) else min(refs)
        levels, rest = divmod(want - ref[0], self.step)
        base_levels, base_rest = depth(ref[1], self.unit)
        if base_levels + levels < 0:
            return None
        return indentation(base_levels + levels, base_rest + rest, self.unit)
