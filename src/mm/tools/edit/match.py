"""Finding where an edit's `old` text is: three passes, strictest first, each held to
uniqueness (mm-tools.md §edit_file, How `old` is matched).

1. Exact: `old` byte for byte.
2. Edges: `old` without the whitespace around it; the same padding comes off `new`.
3. Indent: every line compared without its leading and trailing whitespace (two lines or more).

The first pass that finds anything wins; two or more matches are refused, at every pass.
A relaxed match re-indents `new` to the file's own indentation (reindent.py).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate

from mm.tools.edit.reindent import detect_unit, file_unit, leading_ws, model_unit, reindent

AMBIGUOUS = (
    "{path}: edit #{n}: old text appears {count} times ({lines}) — to change ONE of them, include its "
    "surrounding lines in old until the text is unique; to change several, send one edit per place."
)
NOT_FOUND = (
    "{path}: edit #{n}: old text not found — it must match the file exactly, including indentation "
    "and line breaks:"
)
QUOTE = "  │ {line}"
QUOTE_MORE = "  │ … ({count} more lines)"
CLOSEST = "the closest the file comes to it — copy these lines:"
EXCERPT = "  │ {num:>{width}} │ {line}"
NO_CLOSE = "no part of the file comes close — read the file again (read_file) and copy old from it."
MAX_QUOTED = 30
MAX_LINES_LISTED = 10
UNIT_WINDOW = 1000


@dataclass(frozen=True)
class Match:
    """Where an edit applies: text [start, end) of the file becomes `new`; `relaxed` when a
    whitespace-forgiving pass found it."""

    start: int
    end: int
    new: str
    relaxed: bool


class FileIndex:
    """The file's text (LF line endings) and what the relaxed passes need, computed lazily
    and shared by all edits of one call."""

    def __init__(self, text: str):
        self.text = text

    @cached_property
    def lines(self) -> list[str]:
        """Lines without newlines; a final newline does not start an extra line."""
        lines = self.text.split("\n")
        return lines[:-1] if lines[-1] == "" else lines

    @cached_property
    def starts(self) -> list[int]:
        """Offset in the text where each line starts."""
        return [0, *accumulate(len(line) + 1 for line in self.lines)][: len(self.lines)]

    @cached_property
    def stripped(self) -> list[str]:
        """Each line without its leading and trailing whitespace."""
        return [line.strip() for line in self.lines]

    @cached_property
    def by_stripped(self) -> dict[str, list[int]]:
        """Stripped line → indexes of the lines that have it."""
        index: dict[str, list[int]] = {}
        for i, s in enumerate(self.stripped):
            index.setdefault(s, []).append(i)
        return index

    def unit_near(self, line: int) -> str | None:
        """The file's indent unit ("\\t", "  ", "    "…) around 0-based `line` (int), read from
        up to UNIT_WINDOW lines on each side; None when nothing there is indented."""
        return detect_unit(self.lines[max(0, line - UNIT_WINDOW): line + UNIT_WINDOW])

    def line_no(self, pos: int) -> int:
        """1-based line number of offset `pos` (int)."""
        return self.text.count("\n", 0, pos) + 1


def find_all(text: str, needle: str) -> list[int]:
    """Return every offset where `needle` (non-empty str) occurs in `text`, overlaps included."""
    found, pos = [], text.find(needle)
    while pos != -1:
        found.append(pos)
        pos = text.find(needle, pos + 1)
    return found


def body_lines(text: str) -> tuple[list[str], int, int]:
    """Split `text` (str) into lines and drop blank lines at both ends.

    Returns (lines, number dropped at the start, number dropped at the end).
    """
    lines = text.split("\n")
    lead = 0
    while lead < len(lines) and not lines[lead].strip():
        lead += 1
    trail = 0
    while trail < len(lines) - lead and not lines[-1 - trail].strip():
        trail += 1
    return lines[lead: len(lines) - trail], lead, trail


def _ambiguous(path: str, n: int, line_numbers: list[int]) -> str:
    """The ambiguity refusal for edit `n` found at `line_numbers` (1-based, one per match)."""
    unique = sorted(set(line_numbers))
    shown = ", ".join(str(x) for x in unique[:MAX_LINES_LISTED])
    if len(unique) > MAX_LINES_LISTED:
        shown += ", …"
    lines = f"line {shown}" if len(unique) == 1 else f"lines {shown}"
    return AMBIGUOUS.format(path=path, n=n, count=len(line_numbers), lines=lines)


def _common_prefix(a: str, b: str) -> int:
    """Length of the common prefix of `a` and `b`."""
    k = 0
    while k < min(len(a), len(b)) and a[k] == b[k]:
        k += 1
    return k


def _edges_new(index: FileIndex, old: str, new: str, start: int, end: int) -> Match:
    """Build the pass-2 replacement for `old` whose core was found at [start, end).

    The padding around `old` comes off `new` as far as `new` carries it. When `old` had
    leading whitespace and the core begins its line's text, the line's indent is part of the
    region and `new` is re-indented from the model's indent to the file's.
    """
    text = index.text
    pad_before = old[: len(old) - len(old.lstrip())]
    pad_after = old[len(old.rstrip()):]
    cut = pad_before.rfind("\n") + 1
    pad_nl, pad_ind = pad_before[:cut], pad_before[cut:]
    body = new[new.rfind("\n", 0, _common_prefix(pad_nl, new)) + 1:]
    tail = _common_prefix(pad_after[::-1], body[::-1])
    body = body[: len(body) - tail]
    line_start = text.rfind("\n", 0, start) + 1
    file_ind = text[line_start:start]
    if not pad_before or file_ind.strip():
        return Match(start, end, body.removeprefix(pad_ind), True)
    lines = body.split("\n")
    if not leading_ws(lines[0]):
        lines[0] = pad_ind + lines[0]
    src = model_unit(detect_unit([*(pad_ind + old.strip()).split("\n"), *lines]), pad_ind)
    dst = file_unit(index.unit_near(index.line_no(start) - 1), file_ind, src)
    return Match(line_start, end, "\n".join(reindent(lines, pad_ind, src, file_ind, dst)), True)


def _indent_new(index: FileIndex, old_body: list[str], first: int, new: str, lead: int, trail: int) -> str:
    """Build the pass-3 replacement for the file lines [first, first+len(old_body)).

    Blank lines `new` carries at its ends come off, as many as `old` had (`lead`, `trail`).
    `new` is re-indented when any matched line's indent differs from the file's.
    """
    lines = new.split("\n")
    k = 0
    while k < lead and k < len(lines) - 1 and not lines[k].strip():
        k += 1
    lines = lines[k:]
    k = 0
    while k < trail and k < len(lines) - 1 and not lines[-1 - k].strip():
        k += 1
    lines = lines[: len(lines) - k]
    file_lines = index.lines[first: first + len(old_body)]
    if all(leading_ws(o) == leading_ws(f) for o, f in zip(old_body, file_lines) if o.strip()):
        return "\n".join(lines)
    src_base, dst_base = leading_ws(old_body[0]), leading_ws(file_lines[0])
    src = model_unit(detect_unit([*old_body, *lines]), src_base)
    dst = file_unit(index.unit_near(first), dst_base, src)
    return "\n".join(reindent(lines, src_base, src, dst_base, dst))


def closest_region(index: FileIndex, old: str) -> tuple[int, int] | None:
    """Return the 0-based file lines [a, b) that come closest to `old` (str), or None.

    Each window of the file as tall as `old` scores the stripped lines equal to `old`'s at
    the same position; the best (earliest on ties) is offered only when at least half of
    `old`'s non-blank lines line up (mm-tools.md §edit_file). Cost: one pass over the file
    to index its lines, then one step per occurrence of each of `old`'s lines.
    """
    body, _, _ = body_lines(old)
    wanted = [(j, line.strip()) for j, line in enumerate(body) if line.strip()]
    if len(wanted) < 2:
        return None
    scores: Counter[int] = Counter()
    for j, s in wanted:
        for i in index.by_stripped.get(s, ()):
            scores[i - j] += 1
    if not scores:
        return None
    best = max(scores.values())
    if best * 2 < len(wanted):
        return None
    start = min(s for s, c in scores.items() if c == best)
    return max(0, start), min(len(index.lines), start + len(body))


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
        return "\n".join(rows)
    a, b = region
    width = len(str(b))
    rows.append(CLOSEST)
    rows += [EXCERPT.format(num=i + 1, width=width, line=index.lines[i]) for i in range(a, b)]
    return "\n".join(rows)


def locate(index: FileIndex, path: str, n: int, old: str, new: str) -> Match | str:
    """Find edit `n` (1-based int) of `path` (str, as the model wrote it) in the file.

    `old` and `new` (str) use LF line endings. Returns the Match, or the refusal text
    (ambiguous or not found) for this edit. Rule source: mm-tools.md §edit_file.
    """
    text = index.text
    found = find_all(text, old)
    if found:
        if len(found) > 1:
            skip = len(old) - len(old.lstrip())
            return _ambiguous(path, n, [index.line_no(p + skip) for p in found])
        return Match(found[0], found[0] + len(old), new, False)

    core = old.strip()
    if core and core != old:
        need_before, need_after = old[0].isspace(), old[-1].isspace()
        found = [
            p for p in find_all(text, core)
            if (not need_before or p == 0 or text[p - 1].isspace())
            and (not need_after or p + len(core) == len(text) or text[p + len(core)].isspace())
        ]
        if len(found) > 1:
            return _ambiguous(path, n, [index.line_no(p) for p in found])
        if found:
            return _edges_new(index, old, new, found[0], found[0] + len(core))

    body, lead, trail = body_lines(old)
    if len(body) >= 2:
        wanted = [line.strip() for line in body]
        stripped, k = index.stripped, len(body)
        head = wanted[0]
        found = [
            i for i, s in enumerate(stripped)
            if s == head and i + k <= len(stripped) and stripped[i:i + k] == wanted
        ]
        if len(found) > 1:
            return _ambiguous(path, n, [i + 1 for i in found])
        if found:
            i = found[0]
            last = index.lines[i + k - 1]
            end = index.starts[i + k - 1] + len(last) - last.endswith("\r")
            return Match(index.starts[i], end, _indent_new(index, body, i, new, lead, trail), True)

    return not_found(index, path, n, old)
