"""Putting `new` in the file's own indentation (mm-tools.md §edit_file, How `old` is matched: "The
file's indentation" is not relaxed; issue 9, point 2; docs/tools-edit.md §Frames).

A model that mistyped `old`'s indentation may write `new` with the same mistake (the model's
frame) or already as the file has it (the file's frame); a model that copied `old` exactly may
still type `new` in another style (spaces in a tab-indented file, two-space steps in a
four-space one). The readings of `new` tried:

- the model's frame: each indentation of `new` is mapped the way `old`'s lines map onto the
  matched file lines (line by line where `new` keeps or rewrites one of them, else by the
  indentation itself, else by whole units from the nearest known depth);
- the file's frame: `new` as sent;
- new's own style, when it differs from the file's: `new`'s indentation mapped the way the lines
  `new` keeps from `old` map onto the file, in `new`'s own unit.

The reading under which `new` sits where the replaced lines sat wins: its first line at the
depth of the line it replaces, no line shallower than the region, no block opened without a
deeper line after it, the lines kept from `old` at their own depth, the file's own indentation
characters. When the best readings fit equally and differ — or the best one changes how `new`'s
lines nest into each other — nothing is guessed: the edit is refused. When the model's
indentation equals the file's and `new` is in the file's style, nothing moves.

Only indentation moves: the rest of each line, trailing whitespace included, is written as sent
(tests/cases/edits/edit-11), and a re-indented blank line is written empty.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher

from mm.tools.edit.mapper import Mapper
from mm.tools.edit.reindent import (
    CLOSERS,
    OPENERS,
    TAB,
    blank,
    columns,
    depth,
    detect_unit,
    indentation,
    leading_ws,
    nesting_step,
    stripped,
)
from mm.tools.edit.reindent import first_filled as _first

MAX_ALIGNED = 3000  # lines on each side past which the middle of old and new is not aligned (cost)


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
    cannot be told how `new` was meant (the caller refuses the edit)."""
    align = _align(region.model, new)
    file_unit = region.unit or detect_unit(region.file)
    unit = file_unit or _unit_of([leading_ws(m) for m in region.model])
    pairs = [(leading_ws(m), leading_ws(f)) for m, f in zip(region.model, region.file) if not blank(m)]
    foreign = file_unit is not None and foreign_style(new, file_unit, region.file)  # a file with no style keeps the model's
    exact = all(m == f for m, f in pairs)  # old has the file's indentation: its style is the file's
    model_unit = detect_unit(region.model) or _unit_of([leading_ws(m) for m in region.model])
    own_style = foreign and (exact or foreign_style(new, model_unit))  # new typed unlike old, and unlike the file
    if all(m == f for m, f in pairs) and not foreign:
        return new  # the model's indentation is the file's: nothing moves
    candidates = [(_file_frame(region, new), True)]
    guessed = False
    if not (exact and own_style):  # an exact old maps nothing: new's own style is its reading then
        mapper = Mapper(pairs, unit, new)
        model = mapper.indents(new, align, region)
        if _relative_or_absolute(region, new, align, model, mapper, unit):
            return None
        candidates.append((model, False))
        guessed = mapper.disagree
    if own_style:
        candidates.append((_own_style(region, new, align, unit), False))
    readings = []
    changes = new != region.model
    for n, (indents, as_sent) in enumerate(candidates):
        if not as_sent:
            indents = _kept_in_place(region, new, align, indents)
        lines = _emit(new, [i or "" for i in indents], as_sent)
        if n == 1 and guessed:
            guessed = lines  # the model's frame, which chose among depths old's lines disagree on
        # a reading that puts a line left of column 0, or that turns a change into none, is wrong
        possible = int(None not in indents and (lines != region.file or not changes))
        readings.append(((possible, *_fit(region, new, align, lines, unit)), lines))
    readings.sort(key=lambda r: r[0], reverse=True)
    (best, lines), (other, lines2) = readings[0], readings[1]
    if best == other and lines != lines2:
        return None
    if _unwrapped(region, align) is not None and (other[0] and lines != lines2 or leading_ws(
            lines[_first(new)]) != _target(region, new, align)):
        return None  # a block's opener dropped: its body moved out with it, or kept where it was? (W3)
    if guessed and lines == guessed:
        return None  # the model's frame won by a tie-break between the depths old's lines disagree on
    if _flat(new) and _flat_openers(lines) > _flat_openers(region.file):
        return None  # a flat new never opens a block left empty in the file (W5: `def g():\ny = 2`)
    if not _keeps_nesting(new, lines) or _flat_openers(lines) > _flat_openers(new):
        return None  # the reading would change how new's lines nest: a block opened with nothing in it
    if _aligned_block_line(region, lines):
        return None  # a block's opener or closer at tabs plus alignment spaces: a depth between two units
    return lines


def _aligned_block_line(region: Region, lines: list[str]) -> bool:
    """True when a line of the reading `lines` that opens or closes a block (`if debug {`, `}`) is
    indented with tabs then spaces that no line of the region has: alignment spaces belong to
    continuation lines, so such a line sits between two depths — the model's columns were read
    against the wrong unit (a Go `} else {` wrapped in `if debug {` typed with spaces: the
    benchmark's one wrong write over fourteen seeds)."""
    had = {leading_ws(line) for line in region.file}
    for line in lines:
        ws = leading_ws(line)
        body = line[len(ws):].rstrip()
        if TAB in ws and ws.endswith(" ") and ws not in had and (body.endswith(OPENERS) or body.startswith(CLOSERS)):
            return True
    return False


def _kept_in_place(region: Region, new: list[str], align: list[tuple[int, bool] | None],
                   indents: list[str | None]) -> list[str | None]:
    """`indents` with every line kept verbatim at the place it had given its file line's exact
    indentation: a line equal to an old line, right after a line that keeps the old line before
    it at that line's file indentation, and as many columns deeper or shallower than it as in old. So a
    continuation line's alignment (`\t    b);`, `                2)`) never becomes a nesting
    depth when new is retyped in another style (the outside tester's W6)."""
    out = list(indents)
    rows = [i for i, line in enumerate(new) if not blank(line)]
    olds = [i for i, line in enumerate(region.model) if not blank(line)]
    for i, j in zip(rows, rows[1:]):
        a, b = align[i], align[j]
        if a is None or b is None or not b[1] or a[0] not in olds or olds.index(a[0]) + 1 >= len(olds) \
                or olds[olds.index(a[0]) + 1] != b[0] or out[i] != leading_ws(region.file[a[0]]):
            continue
        sent = columns(leading_ws(new[j])) - columns(leading_ws(new[i]))
        had = columns(leading_ws(region.model[b[0]])) - columns(leading_ws(region.model[a[0]]))
        if sent == had and out[j] is not None:  # a reading that puts a line left of column 0 stays impossible
            out[j] = leading_ws(region.file[b[0]])
    return out


def _flat(new: list[str]) -> bool:
    """True when `new` has two lines or more and all at one indentation: how it nests is not sent."""
    indents = {leading_ws(line) for line in new if not blank(line)}
    return len(indents) == 1 and sum(1 for line in new if not blank(line)) > 1


def _align(model: list[str], new: list[str]) -> list[tuple[int, bool] | None]:
    """For each line of `new`: (index in `model`, kept unchanged) when it keeps or rewrites one
    of old's lines in place, else None. Lines are compared without their indentation; the lines
    both start and end with are paired first, so a long retyped block costs little."""
    a, b = [stripped(x) for x in model], [stripped(x) for x in new]
    out: list[tuple[int, bool] | None] = [None] * len(new)
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        out[head] = (head, True)
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        out[len(b) - 1 - tail] = (len(a) - 1 - tail, True)
        tail += 1
    mid_a, mid_b = a[head: len(a) - tail], b[head: len(b) - tail]
    if len(mid_a) > MAX_ALIGNED and len(mid_b) > MAX_ALIGNED:
        return out
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, mid_a, mid_b, autojunk=False).get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            for i, j in zip(range(i1, i2), range(j1, j2)):
                out[head + j] = (head + i, tag == "equal")
    return out


def _unit_of(indents: list[str]) -> str:
    return TAB if any(TAB in s for s in indents) else "    "


def foreign_style(new: list[str], unit: str, around: list[str] | None = None) -> bool:
    """True when `new` is indented in another style than the file's `unit`: a line led by spaces
    alone in a tab-indented file, a tab in a space-indented one, or nesting steps of a narrower
    width dividing the unit (two-space steps in a four-space file) that the file lines `around`
    the edit do not show themselves (a docstring's `Args:` with its two-space items)."""
    indents = [leading_ws(line) for line in new if not blank(line)]
    if unit == TAB:
        return any(len(s) >= 2 and TAB not in s for s in indents)
    if any(TAB in s for s in indents):
        return True
    step = nesting_step(new)
    return (step is not None and step < len(unit) and len(unit) % step == 0
            and (around is None or nesting_step(around) != step))


def _file_frame(region: Region, new: list[str]) -> list[str | None]:
    """`new` read as written in the file's frame: kept, except a first line without
    indentation after a match that began after the indentation."""
    indents: list[str | None] = [leading_ws(line) for line in new]
    k = _first(new)
    if k is not None and region.content_start and not indents[k]:
        indents[k] = leading_ws(region.file[0])
    return indents


def _own_style(region: Region, new: list[str], align: list[tuple[int, bool] | None], unit: str) -> list[str | None]:
    """`new` read in its own style: each line's depth counted in new's own unit — a tab for a
    line led by tabs, else new's nesting step, else the columns per file unit of the
    space-led lines it keeps or rewrites in place, else the file's width — and turned into the file's
    units, from the offset most kept lines agree on (new's first line, standing for the line it
    replaces, votes too and wins a tie: a line a change moved deeper votes for another
    offset). Alignment spaces stay; a line that keeps or rewrites a file line at that line's
    depth takes its exact indentation."""
    spaced = [(columns(leading_ws(new[i])), depth(leading_ws(region.file[at[0]]), unit)[0])
              for i, at in enumerate(align) if at is not None and not blank(new[i])
              and leading_ws(new[i])[:1] == " "]  # kept or rewritten in place: at the same depth, mostly
    ratios = Counter(c // lv for c, lv in spaced if lv and c % lv == 0)
    step = " " * (nesting_step(new) or (ratios.most_common(1)[0][0] if ratios else
                                        (len(unit) if unit != TAB else columns(TAB))))

    def own_depth(line: str) -> tuple[int, int]:
        ws = leading_ws(line)
        return depth(ws, TAB if ws[:1] == TAB else step)

    votes: Counter = Counter()
    for i, at in enumerate(align):
        if at is not None and at[1] and not blank(new[i]):
            votes[own_depth(new[i])[0] - depth(leading_ws(region.file[at[0]]), unit)[0]] += 1
    k = _first(new)
    anchor = None
    if k is not None:
        at = align[k]
        anchor = own_depth(new[k])[0] - depth(leading_ws(region.file[at[0] if at is not None else 0]), unit)[0]
        votes[anchor] += 1
    if not votes:
        return [leading_ws(line) for line in new]
    best = max(votes.values())
    offset = anchor if anchor is not None and votes[anchor] == best else max(votes, key=votes.__getitem__)
    out: list[str | None] = []
    for line, at in zip(new, align):
        if blank(line):
            out.append("")
            continue
        levels, rest = own_depth(line)
        if at is not None:
            there = leading_ws(region.file[at[0]])
            if depth(there, unit) == (levels - offset, rest):  # kept at its depth: the file's own indentation
                out.append(there)
                continue
        out.append(None if levels < offset else indentation(levels - offset, rest, unit))
    return out


def _emit(new: list[str], indents: list[str], blanks_as_sent: bool) -> list[str]:
    """`new` with the given indentation per line; a blank line is empty once re-indented, or as
    sent when `new` is read in the file's frame."""
    return [(line if blanks_as_sent else "") if blank(line) else ind + line.lstrip(" \t")
            for line, ind in zip(new, indents)]


def _fit(region: Region, new: list[str], align: list[tuple[int, bool] | None], lines: list[str], unit: str) -> tuple:
    """How well a reading of `new` sits in the region: (its first line at the depth of the line
    it replaces, minus the lines shallower than the region, minus the lines that open a block
    (`:`, `{`, `(`, `[` at their end) not followed by a deeper line, the lines indented with the
    file's own characters, the lines kept from old at their own depth, the lines rewritten in
    place at the depth of the line they rewrite)."""
    k = _first(new)
    if k is None:
        return (0, 0, 0, 0, 0, 0)
    target = _target(region, new, align)
    floor = min((columns(leading_ws(f)) for f in region.file if not blank(f)), default=0)
    shallow = sum(1 for line in lines if not blank(line) and columns(leading_ws(line)) < floor)
    at_depth = Counter(a[1] for i, a in enumerate(align)
                       if a is not None and not blank(new[i]) and leading_ws(lines[i]) == leading_ws(region.file[a[0]]))
    own = sum(1 for line in lines if not blank(line) and _own_characters(leading_ws(line), unit))
    return (int(leading_ws(lines[k]) == target), -shallow, -_flat_openers(lines), own, at_depth[True],
            at_depth[False])


def _target(region: Region, new: list[str], align: list[tuple[int, bool] | None]) -> str:
    """The file indentation `new`'s first line must stand at: that of the line it keeps or
    rewrites — or, when `new` drops the block opener `old` starts with and begins with a line of
    its body (a block unwrapped), that of the opener (the body moves out with it)."""
    k = _first(new)
    at = align[k] if k is not None else None
    opener = _unwrapped(region, align)
    if opener is not None:
        return leading_ws(region.file[opener])
    return leading_ws(region.file[at[0] if at is not None else 0])


def _unwrapped(region: Region, align: list[tuple[int, bool] | None]) -> int | None:
    """The index of the block opener `old` starts with when `new` drops it and begins with a
    line of old after it (an unwrap), else None."""
    k = _first([stripped(line) for line in region.model])
    first = next((a for a in align if a is not None), None)
    if k is None or first is None or first[0] <= k or any(a is not None and a[0] == k for a in align):
        return None
    return k if region.model[k].rstrip().endswith(OPENERS) else None


def _own_characters(ws: str, unit: str) -> bool:
    """True when the indentation `ws` is made the way the file's `unit` makes it: tabs then
    alignment spaces in a tab-indented file, spaces only (whole units) in a space-indented one."""
    if unit == TAB:
        return not ws or ws[0] == TAB and TAB not in ws.lstrip(TAB)
    return TAB not in ws and len(ws) % len(unit) == 0


def _flat_openers(lines: list[str]) -> int:
    """How many lines end by opening a block but are followed by a line no deeper (closing
    lines — `}`, `)`, `]` — apart)."""
    text = [line for line in lines if not blank(line)]
    flat = 0
    for line, after in zip(text, text[1:]):
        if line.rstrip().endswith(OPENERS) and not after.lstrip(" \t").startswith(CLOSERS):
            flat += columns(leading_ws(after)) <= columns(leading_ws(line))
    return flat


def _relative_or_absolute(region: Region, new: list[str], align: list[tuple[int, bool] | None],
                          model: list[str | None], mapper: Mapper, unit: str) -> bool:
    """True when `old` had lines typed without indentation that stand for indented file lines,
    and `new`'s lines at an indentation old never used read as well absolute (as sent, whole
    units of the file) as relative to those bare lines (the model's frame, `model`): both keep
    new's nesting and open no block left empty (docs/tools-edit.md §Frames, point 4; the outside
    tester's W2: `return 1` → `return 1\n\ndef g():…` nested g in f)."""
    if (not any(f for f in mapper.known.get("", ())) or None in model
            or any(m != f for m, fs in mapper.known.items() if m for f in fs)):
        return False  # old had no bare lines for indented ones, or its other lines were mistyped too
    kept = [at is not None and leading_ws(region.model[at[0]]) == leading_ws(line) for line, at in zip(new, align)]
    if not any(leading_ws(line) and not k for line, k in zip(new, kept)):
        return False  # new's other lines are bare too: typed in old's bare frame
    absolute = [ind if blank(line) or k else leading_ws(line) for line, ind, k in zip(new, model, kept)]
    first = _first(new)
    if not leading_ws(new[first]):
        absolute[first] = model[first]  # a bare first line continues at the file's indentation (point 5)
    if any(a != m for a, m, at in zip(absolute, model, align) if at is not None):
        return False  # the readings differ on a line old had: the scoring tells them apart
    if absolute == model or not all(_own_characters(a, unit) for a in absolute if a is not None):
        return False
    as_model = _emit(new, model, False)
    as_absolute = _emit(new, absolute, False)
    return (_keeps_nesting(new, as_model, bare=True) and _keeps_nesting(new, as_absolute, bare=True)
            and _flat_openers(as_absolute) <= _flat_openers(new))


def _keeps_nesting(new: list[str], lines: list[str], bare: bool = False) -> bool:
    """True when the reading `lines` nests `new`'s lines into each other as `new` does: every
    line deeper, level or shallower than the one before it stays so. (A first line sent without
    indentation, which continues at the file's, does not count; with `bare`, no line sent
    without indentation and given some counts.)"""
    def sign(a: int, b: int) -> int:
        return (b > a) - (b < a)

    rows = [i for i, line in enumerate(new) if not blank(line)]
    if bare:
        rows = [i for i in rows if leading_ws(new[i]) or not leading_ws(lines[i])]
    elif rows and not leading_ws(new[rows[0]]) and leading_ws(lines[rows[0]]):
        rows = rows[1:]
    for i, j in zip(rows, rows[1:]):
        a, b = leading_ws(new[i]), leading_ws(new[j])
        if a[:1] and b[:1] and (a[0] == TAB) != (b[0] == TAB):
            continue  # one led by a tab, the other by spaces: how they nest cannot be read
        sent = sign(columns(a), columns(b))
        made = sign(columns(leading_ws(lines[i])), columns(leading_ws(lines[j])))
        if sent != made:
            return False
    return True
