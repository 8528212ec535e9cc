"""Finding where an edit's `old` text is: three passes, strictest first, each held to
uniqueness (mm-tools.md §edit_file, How `old` is matched).

1. Exact: `old` byte for byte.
2. Edges: `old` without the whitespace around it (a line's indent, a leading or trailing
   newline); the file must have only whitespace there too, up to the line's edge.
3. Indent: every line compared without its leading and trailing spaces and tabs (two lines or more).

The first pass that finds anything wins; two or more matches are refused, at every pass. Only
ASCII space and tab (and line breaks) are forgiven. Where a match stands for whole lines,
`new` is put in the file's indentation (place.py); an empty `new` on a relaxed match of whole
lines removes them with their line breaks (issue 9, point 4).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from mm.tools.edit.closest import not_found
from mm.tools.edit.index import FileIndex, find_all
from mm.tools.edit.place import CLOSERS, OPENERS, Region, foreign_style, place
from mm.tools.edit.reindent import blank, leading_ws, stripped

AMBIGUOUS = (
    "{path}: edit #{n}: old text appears {count} times ({lines}) — to change ONE of them, include its "
    "surrounding lines in old until the text is unique; to change several, send one edit per place."
)
TWO_FRAMES = (
    "{path}: edit #{n}: old matches line{s} {first}{last} only when indentation is ignored, and new's "
    "indentation fits those lines in two ways — send the edit again with old copied exactly from the "
    "file (read_file) and new indented the same way"
)
FIRST_LINE_BARE = (
    "{path}: edit #{n}: old starts with its indentation but new's first line has none, and new's other "
    "lines may be indented from that first line or as the file is — send new with every line indented "
    "exactly as it must stand in the file"
)
FOREIGN_SPACE = (
    "{path}: edit #{n}: new's line {line} is indented with {name} (U+{code:04X}), which the file does not "
    "use — indent with spaces or tabs as the file does"
)
FOREIGN_INDENT = (
    "{path}: edit #{n}: line {line} is indented with {name} (U+{code:04X}), which mm never re-indents, and new "
    "has more lines than one — send old and new with that indentation copied exactly from the file (read_file), "
    "every line of new indented as it must stand"
)
EDGE_WS = " \t\r\n"
MAX_LINES_LISTED = 10


@dataclass(frozen=True)
class Match:
    """Where an edit applies: text [start, end) of the file becomes `new`; `relaxed` when a
    whitespace-forgiving pass found it."""

    start: int
    end: int
    new: str
    relaxed: bool


def body_lines(text: str) -> tuple[list[str], int, int]:
    """Split `text` (str) into lines and drop blank lines at both ends.

    Returns (lines, number dropped at the start, number dropped at the end).
    """
    lines = text.split("\n")
    lead = 0
    while lead < len(lines) and blank(lines[lead]):
        lead += 1
    trail = 0
    while trail < len(lines) - lead and blank(lines[-1 - trail]):
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


def _two_frames(path: str, n: int, first: int, count: int) -> str:
    """The refusal when new's indentation fits the matched lines (0-based `first`) two ways."""
    last = f"-{first + count}" if count > 1 else ""
    return TWO_FRAMES.format(path=path, n=n, s="s" if count > 1 else "", first=first + 1, last=last)


def _lines(text: str) -> tuple[list[str], bool]:
    """`text` as lines, and whether it ended with a newline (which starts no line)."""
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        return lines[:-1], True
    return lines, False


def _whole_lines_removed(index: FileIndex, start: int, end: int) -> Match:
    """A relaxed match of whole lines [start, end) with an empty `new`: the lines go with their
    line break (the one after them, or before them at the end of a file without a final one)."""
    text = index.text
    if text.startswith("\r\n", end):  # a CRLF line in a file of mixed endings goes whole too
        return Match(start, end + 2, "", True)
    if end < len(text):
        return Match(start, end + 1, "", True)
    return Match(max(0, start - 1 - text.endswith("\r\n", 0, start)), end, "", True)


def _placed(index: FileIndex, path: str, n: int, region: Region, first: int, new: str,
            start: int, end: int) -> Match | str:
    """The match of file lines from 0-based `first`, [start, end), with `new` put in the file's frame."""
    lines, newline = _lines(new)
    placed = place(region, lines)
    if placed is None:
        return _two_frames(path, n, first, len(region.file))
    line_end = index.line_end(end)
    if not newline and not index.text[end:line_end].strip(" \t\r"):
        end = line_end - index.text[end:line_end].endswith("\r")  # the line's trailing whitespace is replaced too
    return Match(start, end, "\n".join(placed) + ("\n" if newline else ""), True)


def _exact(index: FileIndex, path: str, n: int, old: str, new: str, p: int) -> Match | str:
    """Pass 1 found `old` at `p`. A line break at an edge of `old` that a non-empty `new` does not
    carry stays in the file (no two lines are joined by accident); when `old` began inside or
    after its first line's indentation, `new` is put in the file's frame."""
    q = p + len(old)
    if old[:1] == new[:1] == "\n" and len(old) > 1 and len(new) > 1:  # a line break both carry is not replaced:
        p, old, new = p + 1, old[1:], new[1:]  # two such edits on neighbouring lines do not overlap
    if old[-1:] == new[-1:] == "\n" and len(old) > 1 and len(new) > 1:
        q, old, new = q - 1, old[:-1], new[:-1]
    if new and old.startswith("\n") and not new.startswith("\n") and len(old) > 1:
        p, old = p + 1, old[1:]
    elif not new and old.startswith("\n") and old.endswith("\n") and len(old) > 1:
        p, old = p + 1, old[1:]  # deleting "\nX\n" would join the lines around X: one line break stays
    if new and old.endswith("\n") and not new.endswith("\n") and len(old) > 1:
        q, old = q - 1, old[:-1]
    start = index.line_start(p)
    inside = p > start and not index.text[start:p].strip(" \t")  # old began inside or after the indentation
    foreign = next((c for c in index.text[start:p] if c not in " \t"), None)
    if foreign is not None and not index.text[start:p].strip() and "\n" in new.strip("\n"):
        # old began after an indentation of Unicode spaces, which is no indentation to mm (W10)
        return FOREIGN_INDENT.format(path=path, n=n, line=index.line_of(p) + 1, code=ord(foreign),
                                     name=unicodedata.name(foreign, "a Unicode space").lower())
    if not new and inside and old.endswith("\n"):
        return Match(start, q, "", False)  # the lines go whole, not the text after part of their indentation
    if not new and inside and not index.text[q:index.line_end(q)].strip("\r"):
        gone = _whole_lines_removed(index, start, q)  # with their line break, and no final newline is added
        return Match(gone.start, gone.end, "", False)
    first = index.line_of(p)
    model, _ = _lines(old)
    if inside and not leading_ws(old) and len(model) > 1 and new.strip() and new[:1] not in (" ", "\t", "\n"):
        # old began after its first line's indentation and its other lines are the file's, exactly:
        # new's bare first line continues at that indentation, as if old had been copied with it (W4)
        p, old, inside = start, index.text[start:p] + old, False
    if (not inside and p == start and leading_ws(old) and old.split("\n")[0].strip(" \t\r") and new.strip()
            and new[:1] not in (" ", "\t", "\n") and not _keeps_a_later_line(old, new)):
        new = _continued(new, leading_ws(old))  # new's first line continues at old's indentation (§Frames 5)
        if new is None:
            return FIRST_LINE_BARE.format(path=path, n=n)
    if "\n" not in new and new[:1] not in (" ", "\t"):
        return Match(p, q, new, False)
    unit = index.unit_at(first, len(model))
    if not inside and (p != start or unit is None
                       or not foreign_style(_lines(new)[0], unit, index.file_lines(first, len(model)))):
        return Match(p, q, new, False)  # new in the file's style: written as sent
    region = Region(model, index.file_lines(first, len(model)), unit,
                    content_start=inside and not leading_ws(old))
    found = _placed(index, path, n, region, first, new, start, q)
    return found if isinstance(found, str) else Match(found.start, found.end, found.new, False)


def _keeps_a_later_line(old: str, new: str) -> bool:
    """True when new's first line is one of old's later lines, kept as it stood there without
    indentation (`\treturn nil\n}` → `}`): it is no first line sent bare."""
    head = new.split("\n")[0]
    return any(line.rstrip("\r") == head.rstrip("\r") for line in old.split("\n")[1:])


def _continued(new: str, indent: str) -> str | None:
    """`new`, whose first line has no indentation although the `old` it replaces (copied exactly)
    starts with `indent`: that line continues at `indent` — alone, or followed by lines already
    at `indent` or deeper (typed in the file's frame). Lines shallower than `indent` could be
    relative to the first line or absolute: None (refused, never guessed) — and so is a first
    line that opens a block (`if a:`, `{`) whose next line is not deeper than it, or one that
    opens none followed by a deeper line: the rest was typed relative to it."""
    lines = new.split("\n")
    rest = [line for line in lines[1:] if not blank(line)]
    if not rest:
        return indent + new
    if not all(line.startswith(indent) for line in rest):
        return None
    opens = lines[0].rstrip().endswith(OPENERS)
    deeper = len(leading_ws(rest[0])) > len(indent)
    closing = rest[0].lstrip(" \t").startswith(CLOSERS)
    if opens != deeper and not (opens and closing):
        return None
    return indent + new


def _edges(index: FileIndex, path: str, n: int, old: str, new: str) -> Match | str | None:
    """Pass 2: `old` without the whitespace around it, which the file must also have only
    whitespace around, up to the line's edge; the same padding comes off `new`."""
    text = index.text
    core = old.strip(EDGE_WS)
    if not core or core == old:
        return None
    before = old[: old.index(core)]
    after = old[len(before) + len(core):]
    found = [p for p in find_all(text, core)
             if (not before or p == index.content_start(p)) and (not after or p + len(core) == index.content_end(p + len(core)))]
    if len(found) > 1:
        return _ambiguous(path, n, [index.line_no(p) for p in found])
    if not found:
        return None
    p, q = found[0], found[0] + len(core)
    if after:  # old's trailing padding stands for the rest of the line: it is replaced too
        q = index.line_end(q) - text[q: index.line_end(q)].endswith("\r")
    body = _unpadded(new, before, after)
    start = index.line_start(p)
    whole = start == p or not text[start:p].strip(" \t")
    if not body:
        ends_line = not text[q: index.line_end(q)].strip(" \t\r")
        return _whole_lines_removed(index, start, index.line_end(q)) if whole and ends_line else Match(p, q, "", True)
    if not whole:
        return Match(p, q, body, True)
    pad = before[before.rfind("\n") + 1:]
    model = (pad + core).split("\n")
    first = index.line_of(p)
    file_ind = leading_ws(index.lines[first])
    region = Region(model, index.file_lines(first, len(model)), index.unit_at(first, len(model)),
                    content_start=not pad and bool(file_ind))
    if not body.startswith((" ", "\t")) and "\n" not in body and not pad:
        return Match(p, q, body, True)
    return _placed(index, path, n, region, first, body, start, q)


def _unpadded(new: str, before: str, after: str) -> str:
    """`new` without the padding it shares with old's: the leading newlines and the trailing
    whitespace (a `new` that deliberately adds blank lines keeps the ones beyond old's)."""
    nl = before[: before.rfind("\n") + 1]
    k = 0
    while k < min(len(nl), len(new)) and nl[k] == new[k]:
        k += 1
    body = new[new.rfind("\n", 0, k) + 1:]
    tail = 0
    while tail < min(len(after), len(body)) and after[-1 - tail] == body[-1 - tail]:
        tail += 1
    return body[: len(body) - tail]


def _indent(index: FileIndex, path: str, n: int, old: str, new: str) -> Match | str | None:
    """Pass 3: whole lines equal to old's once spaces and tabs around each are ignored."""
    body, lead, trail = body_lines(old)
    if len(body) < 2:
        return None
    wanted = [stripped(line) for line in body]
    k = len(body)
    found = [i for i in index.by_stripped.get(wanted[0], ()) if index.stripped[i:i + k] == wanted]
    if len(found) > 1:
        return _ambiguous(path, n, [i + 1 for i in found])
    if not found:
        return None
    i = found[0]
    start = index.starts[i]
    end = index.starts[i + k - 1] + len(index.lines[i + k - 1].rstrip("\r"))
    lines = new.split("\n")
    cut = 0
    while cut < lead and cut < len(lines) - 1 and blank(lines[cut]):
        cut += 1
    lines = lines[cut:]
    cut = 0
    while cut < trail and cut < len(lines) - 1 and blank(lines[-1 - cut]):
        cut += 1
    lines = lines[: len(lines) - cut]
    pad = body[-1][len(body[-1].rstrip(" \t\r")):]
    if pad and lines[-1].endswith(pad):  # whitespace ending old is padding, as in the edges pass
        lines[-1] = lines[-1][: -len(pad)]
    if lines == [""]:
        return _whole_lines_removed(index, start, end)
    region = Region(body, index.file_lines(i, k), index.unit_at(i, k))
    return _placed(index, path, n, region, i, "\n".join(lines), start, end)


def locate(index: FileIndex, path: str, n: int, old: str, new: str) -> Match | str:
    """Find edit `n` (1-based int) of `path` (str, as the model wrote it) in the file.

    `old` and `new` (str) use LF line endings. Returns the Match, or the refusal text
    (ambiguous, not found, or new's frame undecidable) for this edit. Rule source:
    mm-tools.md §edit_file, How `old` is matched.
    """
    found = find_all(index.text, old)
    if len(found) > 1:
        skip = len(old) - len(old.lstrip(EDGE_WS))
        return _ambiguous(path, n, [index.line_no(p + skip) for p in found])
    hit = _exact(index, path, n, old, new, found[0]) if found else _edges(index, path, n, old, new)
    if hit is None:
        hit = _indent(index, path, n, old, new)
    if hit is None:
        return not_found(index, path, n, old)
    if isinstance(hit, Match):
        foreign = _foreign_space(hit.new, index.text[hit.start:hit.end])
        if foreign is not None:
            line, char = foreign
            return FOREIGN_SPACE.format(path=path, n=n, line=line, code=ord(char),
                                        name=unicodedata.name(char, "a Unicode space").lower())
    return hit


def _foreign_space(new: str, replaced: str) -> tuple[int, str] | None:
    """The first (line number, character) of `new` whose indentation holds a space other than
    ASCII space and tab that the `replaced` text does not hold itself (issue 9, point 3)."""
    for k, line in enumerate(new.split("\n"), 1):
        for char in line:
            if char in " \t":
                continue
            if not (char.isspace() or unicodedata.category(char) in ("Zs", "Cf")):
                break
            if char not in replaced:
                return k, char
    return None
