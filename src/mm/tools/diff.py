"""Unified diffs with line numbers, shared by write_file and edit_file.

mm-tools.md §write_file and §edit_file: the output is a one-line headline and "the diff with
line numbers". Each row is `<sign><line number> │ <text>`: the new file's number for context
and added rows, the old file's number for deleted rows, under standard `@@ -a,b +c,d @@`
hunk headers with 3 lines of context.

Only the changed windows (`Block`s) are compared with difflib, so a small edit in a large file
costs time in proportion to the edit, not to the file.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

CONTEXT = 3
NO_EOL = "\\ No newline at end of file"
TRUNCATED = "[... diff truncated: {n} more lines ...]"
HUNK = "@@ -{old} +{new} @@"
ROW = "{sign}{num:>{width}} │ {text}"

Opcode = tuple[str, int, int, int, int]


def split_lines(text: str) -> list[str]:
    """Split `text` (str) on "\\n" only, keeping the newlines; "" gives [].

    str.splitlines would also split on \\r, \\f, \\u2028…, which are ordinary characters here.
    """
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


@dataclass(frozen=True)
class Block:
    """A changed window: old lines [i1, i2) became new lines [j1, j2) (0-based)."""

    i1: int
    i2: int
    j1: int
    j2: int


@dataclass(frozen=True)
class Diff:
    """A rendered diff: `rows` (str lines), lines `added` and `deleted`, and `first_line`,
    the 1-based line of the new file where the first change is (None when nothing changed)."""

    rows: list[str]
    added: int
    deleted: int
    first_line: int | None


def outer_block(old: list[str], new: list[str]) -> list[Block]:
    """Return the one window between the common first and last lines of `old` and `new`
    (lists of str), or [] when they are equal."""
    n = min(len(old), len(new))
    start = 0
    while start < n and old[start] == new[start]:
        start += 1
    end = 0
    while end < n - start and old[-1 - end] == new[-1 - end]:
        end += 1
    if start == len(old) and start == len(new):
        return []
    return [Block(start, len(old) - end, start, len(new) - end)]


def opcodes(old: list[str], new: list[str], blocks: list[Block]) -> list[Opcode]:
    """Return difflib-style opcodes for `old` → `new` (lists of str) given the changed
    `blocks` (sorted, disjoint); the lines between blocks must be equal."""
    ops: list[Opcode] = []
    i = j = 0
    for b in blocks:
        if b.i1 > i:
            ops.append(("equal", i, b.i1, j, b.j1))
        matcher = difflib.SequenceMatcher(None, old[b.i1:b.i2], new[b.j1:b.j2])
        for tag, a1, a2, c1, c2 in matcher.get_opcodes():
            ops.append((tag, b.i1 + a1, b.i1 + a2, b.j1 + c1, b.j1 + c2))
        i, j = b.i2, b.j2
    if i < len(old):
        ops.append(("equal", i, len(old), j, len(new)))
    return ops


def group(ops: list[Opcode], context: int = CONTEXT) -> list[list[Opcode]]:
    """Cut `ops` into hunks with `context` (int) equal lines around each change
    (the algorithm of difflib.SequenceMatcher.get_grouped_opcodes)."""
    if not any(op[0] != "equal" for op in ops):
        return []
    ops = list(ops)
    tag, i1, i2, j1, j2 = ops[0]
    if tag == "equal":
        ops[0] = (tag, max(i1, i2 - context), i2, max(j1, j2 - context), j2)
    tag, i1, i2, j1, j2 = ops[-1]
    if tag == "equal":
        ops[-1] = (tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context))
    hunks: list[list[Opcode]] = []
    current: list[Opcode] = []
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal" and i2 - i1 > 2 * context:
            current.append((tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)))
            hunks.append(current)
            current = []
            i1, j1 = max(i1, i2 - context), max(j1, j2 - context)
        current.append((tag, i1, i2, j1, j2))
    if current and not (len(current) == 1 and current[0][0] == "equal"):
        hunks.append(current)
    return hunks


def _range(start: int, stop: int) -> str:
    """Unified-diff range `a,b` for lines [start, stop) (difflib's convention)."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


def _row(sign: str, num: int, line: str, width: int) -> list[str]:
    """One diff row, plus the no-newline marker when `line` is a last line without newline."""
    text = line[:-1] if line.endswith("\n") else line
    row = ROW.format(sign=sign, num=num, width=width, text=text.removesuffix("\r"))
    return [row] if line.endswith("\n") else [row, NO_EOL]


def render(old: list[str], new: list[str], ops: list[Opcode], context: int = CONTEXT) -> Diff:
    """Render `ops` over `old` and `new` (lists of str) as numbered unified-diff rows."""
    hunks = group(ops, context)
    if not hunks:
        return Diff([], 0, 0, None)
    width = len(str(max(hunks[-1][-1][2], hunks[-1][-1][4], 1)))
    rows: list[str] = []
    added = deleted = 0
    first_line = None
    for hunk in hunks:
        first, last = hunk[0], hunk[-1]
        rows.append(HUNK.format(old=_range(first[1], last[2]), new=_range(first[3], last[4])))
        for tag, i1, i2, j1, j2 in hunk:
            if tag == "equal":
                for k in range(i2 - i1):
                    rows += _row(" ", j1 + k + 1, new[j1 + k], width)
                continue
            if first_line is None:
                first_line = min(j1 + 1, max(len(new), 1))
            for k in range(i1, i2):
                rows += _row("-", k + 1, old[k], width)
            for k in range(j1, j2):
                rows += _row("+", k + 1, new[k], width)
            deleted += i2 - i1
            added += j2 - j1
    return Diff(rows, added, deleted, first_line)


def diff_lines(old: list[str], new: list[str], blocks: list[Block] | None = None,
               context: int = CONTEXT) -> Diff:
    """Diff two line lists (from `split_lines`); `blocks` are the changed windows when the
    caller knows them, else the window between common first and last lines is used."""
    if blocks is None:
        blocks = outer_block(old, new)
    return render(old, new, opcodes(old, new, blocks), context)


def diff_texts(old: str, new: str, context: int = CONTEXT) -> Diff:
    """Diff two texts (str); see `diff_lines`."""
    return diff_lines(split_lines(old), split_lines(new), None, context)


def fit(head: str, rows: list[str], budget: int) -> str:
    """Join `head` (str, never cut) and diff `rows` into one text of at most about `budget`
    characters, cutting whole rows and saying how many were left out."""
    text = "\n".join([head, *rows])
    if len(text) <= budget:
        return text
    kept: list[str] = []
    used = len(head) + len(TRUNCATED) + 12
    for row in rows:
        if used + len(row) + 1 > budget:
            break
        kept.append(row)
        used += len(row) + 1
    return "\n".join([head, *kept, TRUNCATED.format(n=len(rows) - len(kept))])
