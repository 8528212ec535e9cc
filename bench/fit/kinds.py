"""One function per kind of mistake (issue 9, point 1): each builds an EditCase from a random
target, or returns None when the source offers no fitting block.

Fixable kinds expect the meant change in the file's own frame; the must-refuse kinds expect a
refusal (`expected` None). Every kind's `old` and `new` are what a model would send.
"""

from __future__ import annotations

import random
from typing import Callable

from changes import CHANGES, STRUCTURAL, TOKEN, blank, leading, opens_a_block
from edit_cases import (EditCase, Target, _case, _count, _equal_pairs, _not_found, loose_count, pick,
                        text_of)
from mistakes import add_trailing, indentation_mistakes, lookalike, shift, tabs_to
from sources import Source, kept_sources, stdlib_sources

Kind = Callable[[random.Random, Source], "EditCase | None"]
ANY = lambda t: True  # noqa: E731


def _change(rng: random.Random, allow: tuple[str, ...] | None = None) -> str:
    return rng.choice(allow or tuple(CHANGES))


def exact(rng, src):
    t = pick(rng, src, _change(rng), ANY)
    if t is None:
        return None
    old, new = text_of(t.block), text_of(t.meant)
    if t.meant and rng.random() < 0.5:  # many models leave the last newline out of both
        old, new = old[:-1], new[:-1]
    return _case("exact copy", t, old, new, t.expected)


def retyped(t: Target) -> str:
    """The file once new, retyped by the model, replaced the block: its blank lines are empty
    (mm-tools.md: "A blank line stays empty rather than becoming a line of spaces")."""
    return t.file_with(["" if blank(line) else line for line in t.meant])


def indentation(name: str) -> Kind:
    """old and new both carry the same indentation mistake `name`."""
    def kind(rng, src):
        t = pick(rng, src, _change(rng), lambda t: name in indentation_mistakes(t.block, t.src.unit))
        if t is None:
            return None
        retype = indentation_mistakes(t.block, src.unit)[name]
        old, new = retype(t.block), retype(t.meant)
        if old is None or new is None or old == t.block:
            return None
        return _case(name, t, text_of(old), text_of(new), retyped(t))
    return kind


def both_mistyped(rng, src):
    """A structural change (a line wrapped in a block, a line inserted) with old and new both
    retyped with one indentation mistake."""
    t = pick(rng, src, _change(rng, STRUCTURAL), ANY)
    if t is None:
        return None
    mistakes = indentation_mistakes(t.block, src.unit)
    retype = mistakes[rng.choice(sorted(mistakes))]
    old, new = retype(t.block), retype(t.meant)
    if old is None or new is None or old == t.block:
        return None
    return _case("old and new with the same indentation mistake", t, text_of(old), text_of(new), retyped(t))


def new_in_file_frame(rng, src):
    """old retyped with an indentation mistake, new already in the file's own indentation."""
    t = pick(rng, src, _change(rng), ANY)
    if t is None or not t.meant:
        return None
    mistakes = indentation_mistakes(t.block, src.unit)
    old = mistakes[rng.choice(sorted(mistakes))](t.block)
    if old is None or old == t.block:
        return None
    return _case("old mistyped, new in the file's indentation", t, text_of(old), text_of(t.meant), t.expected)


def new_in_another_style(rng, src):
    """old copied exactly, new typed in another indentation style: spaces in a tab-indented file,
    tabs or two-space steps in a space-indented one (the slip public bug reports show most)."""
    t = pick(rng, src, _change(rng, ("modify", "insert", "wrap", "modify2")), lambda t: any(
        leading(line) for line in t.meant))
    if t is None:
        return None
    if src.unit == "\t":
        retype = tabs_to(rng.choice((2, 4, 8)))
    else:
        # tabs; or half-width steps, only when new opens a block (a narrower step alone, with
        # nothing nested, cannot be told from a deliberate dedent: it is written as sent) and
        # holds no alignment spaces (halved, 22 columns read as 6 levels as well as 5 and 2)
        width = len(src.unit)
        narrower = width > 2 and opens_a_block(t.meant) and all(
            len(leading(line)) % width == 0 for line in t.meant)
        def retype(lines, width=width, to=rng.choice(("\t", " " * (width // 2))) if narrower else "\t"):
            out = []
            for line in lines:
                if blank(line):
                    out.append("")
                    continue
                ind = leading(line)
                levels, rest = divmod(len(ind), width)
                out.append(to * levels + " " * rest + line[len(ind):])
            return out
    new = retype(t.meant)
    if new is None or new == t.meant:
        return None
    return _case("old exact, new in another indentation style", t, text_of(t.block), text_of(new), retyped(t))


def trailing_added(rng, src):
    """old's lines (and the lines new keeps from it) carry trailing whitespace the file lacks:
    new is written as sent (tests/cases/edits/edit-11: the matched lines are replaced by new),
    except the whitespace ending old, which is padding and comes off new too (the edges pass)."""
    t = pick(rng, src, _change(rng), ANY)
    if t is None:
        return None
    marked = {i for i in range(len(t.block)) if rng.random() < 0.5} or {0}
    old = add_trailing(rng, t.block, marked)
    kept = dict(_equal_pairs(t.block, t.meant))
    new = list(t.meant)
    for i in marked:
        if i in kept and not blank(t.block[i]):
            new[kept[i]] = old[i]
    written = list(new)
    pad = old[-1][len(t.block[-1]):]
    if pad and written and written[-1].endswith(pad):
        written[-1] = written[-1][: -len(pad)]
    return _case("trailing whitespace added", t, text_of(old), text_of(new), t.file_with(written))


def trailing_dropped(rng, src):
    """The file has trailing whitespace on lines the change keeps; the model drops it, and new is
    written as sent (edit-11)."""
    t = pick(rng, src, _change(rng), lambda t: len(t.block) >= 2)
    if t is None:
        return None
    marked = {i for i in range(len(t.block)) if not blank(t.block[i]) and rng.random() < 0.6}
    if not marked:
        return None
    file = t.file_with(add_trailing(rng, t.block, marked))
    if _count(file, text_of(t.block)) != 0:
        return None
    return _case("trailing whitespace dropped", t, text_of(t.block), text_of(t.meant), t.expected, file)


def leading_blank(rng, src):
    """old begins with a blank line the file does not have there. (A change whose own text begins
    with a blank line is left out: that call is the same as one deleting a blank line.)"""
    t = pick(rng, src, _change(rng), lambda t: t.start > 0 and not blank(t.lines[t.start - 1])
             and not (t.meant and blank(t.meant[0])))
    if t is None:
        return None
    new = text_of(t.meant)
    if new and rng.random() < 0.5:
        new = "\n" + new
    return _case("a leading blank line", t, "\n" + text_of(t.block), new, t.expected)


def trailing_blank(rng, src):
    """old ends with a blank line the file does not have there (changes whose own text ends with
    a blank line are left out, as for a leading one)."""
    def fits(t: Target) -> bool:
        after = t.start + len(t.block)
        return after < len(t.lines) and not blank(t.lines[after]) and not (t.meant and blank(t.meant[-1]))
    t = pick(rng, src, _change(rng), fits)
    if t is None:
        return None
    new = text_of(t.meant)
    if new and rng.random() < 0.5:
        new += "\n"
    return _case("a trailing blank line", t, text_of(t.block) + "\n", new, t.expected)


def no_final_newline_in_file(rng, src):
    """The file ends without a newline; the model's old and new end with one."""
    lines = src.text.rstrip("\n").split("\n")
    for k in rng.sample(range(1, 8), 7):
        block = lines[-k:]
        if blank(block[0]) or _count(src.text, text_of(block)) != 1 or loose_count(lines, block) != 1:
            continue
        change = _change(rng, ("modify", "insert", "delete-line", "wrap"))
        meant = CHANGES[change](rng, block, src.lang, src.unit)
        if meant is None or meant == block:
            continue
        t = Target(src, lines, len(lines) - k, block, change, meant)
        file, expected = t.file[:-1], t.expected[:-1]
        return _case("missing final newline (file)", t, text_of(block), text_of(meant), expected, file)
    return None


def no_final_newline_in_call(rng, src):
    t = pick(rng, src, _change(rng, ("modify", "modify2", "insert", "wrap", "delete-line")), ANY)
    if t is None or _count(t.file, text_of(t.block)[:-1]) != 1:  # without its newline it may occur twice
        return None
    return _case("missing final newline (call)", t, text_of(t.block)[:-1], text_of(t.meant)[:-1], t.expected)


def crlf_file(rng, src):
    t = pick(rng, src, _change(rng), ANY)
    if t is None:
        return None
    crlf = t.file.replace("\n", "\r\n")
    return _case("CRLF file, LF call", t, text_of(t.block), text_of(t.meant),
                 t.expected.replace("\n", "\r\n"), crlf)


def crlf_call(rng, src):
    t = pick(rng, src, _change(rng), ANY)
    if t is None:
        return None
    old, new = text_of(t.block).replace("\n", "\r\n"), text_of(t.meant).replace("\n", "\r\n")
    return _case("LF file, CRLF call", t, old, new, t.expected)


def token_misremembered(rng, src):
    t = pick(rng, src, _change(rng, ("modify", "insert")), ANY)
    if t is None:
        return None
    spots = [i for i, line in enumerate(t.block) if TOKEN.search(line, len(leading(line)))]
    if not spots:
        return None
    i = rng.choice(spots)
    m = rng.choice(list(TOKEN.finditer(t.block[i], len(leading(t.block[i])))))
    word = m.group(0)
    wrong = str(int(word) + 7) if word.isdigit() else rng.choice([word[:-1], word + "s", word.capitalize()
                                                                  if word[0].islower() else word.lower()])
    if wrong == word or not wrong:
        return None
    line = t.block[i][: m.start()] + wrong + t.block[i][m.end():]
    old = text_of(t.block[:i] + [line] + t.block[i + 1:])
    if not _not_found(t, old):
        return None
    return _case("one token misremembered (refuse)", t, old, text_of(t.meant), None)


def _loose_copy(t: Target) -> list[str] | None:
    """The block retyped with another indentation, to be planted elsewhere in the file."""
    retype = tabs_to(4) if t.src.unit == "\t" else shift(4)
    return retype(t.block)


def exact_and_loose(rng, src):
    """The block once exactly, and a copy with other indentation further on: applied at the exact place."""
    t = pick(rng, src, _change(rng), lambda t: len(t.block) >= 2)
    copy = _loose_copy(t) if t else None
    if t is None or copy is None:
        return None
    at = rng.randrange(t.start + len(t.block), len(t.lines) + 1)
    lines = t.lines[:at] + copy + t.lines[at:]
    planted = Target(src, lines, t.start, t.block, t.change, t.meant)
    file = planted.file
    if _count(file, text_of(t.block)) != 1:
        return None
    return _case("exact once, loose elsewhere", planted, text_of(t.block), text_of(t.meant), planted.expected, file)


def two_loose(rng, src):
    """Two loose copies and no exact one: refused as ambiguous."""
    t = pick(rng, src, _change(rng), lambda t: len(t.block) >= 2)
    copy = _loose_copy(t) if t else None
    if t is None or copy is None:
        return None
    at = rng.randrange(t.start + len(t.block), len(t.lines) + 1)
    file = text_of(t.lines[:at] + copy + t.lines[at:])
    mistakes = indentation_mistakes(t.block, src.unit)
    old = mistakes["dedent to column 0"](t.block) or shift(2)(t.block)
    if old is None or _count(file, text_of(old)) or _count(file, text_of(old).strip(" \t\n")):
        return None
    return _case("two loose places, no exact one (refuse)", t, text_of(old), text_of(t.meant), None, file)


def middle_line_omitted(rng, src):
    t = pick(rng, src, _change(rng), lambda t: len(t.block) >= 3)
    if t is None:
        return None
    spots = [i for i in range(1, len(t.block) - 1) if not blank(t.block[i])]
    if not spots:
        return None
    i = rng.choice(spots)
    old = text_of(t.block[:i] + t.block[i + 1:])
    if not _not_found(t, old):
        return None
    return _case("a middle line omitted (refuse)", t, old, text_of(t.meant), None)


def lookalikes(what: str) -> Kind:
    def kind(rng, src):
        t = pick(rng, src, _change(rng, ("modify", "insert", "wrap")), lambda t: lookalike(
            random.Random(0), text_of(t.block), what) is not None)
        if t is None:
            return None
        old = lookalike(rng, text_of(t.block), what)
        if old is None or not _not_found(t, old):
            return None
        new = text_of(t.meant)
        if rng.random() < 0.5:  # the model typed the same lookalike in new
            new = lookalike(random.Random(1), new, what) or new
        return _case(f"{what} instead of ASCII (refuse)", t, old, new, None)
    return kind


TABS = ("go", "c")
SPACES = ("py", "js", "ts")
KINDS: list[tuple[Kind, tuple[str, ...]]] = [
    (exact, TABS + SPACES),
    *[(indentation(f"tabs→{w} spaces"), TABS) for w in (2, 4, 8)],
    *[(indentation(f"shift {c:+d}"), SPACES) for c in (2, 4, -2, -4)],
    (indentation("dedent to column 0"), TABS + SPACES),
    (trailing_added, TABS + SPACES),
    (trailing_dropped, TABS + SPACES),
    (leading_blank, TABS + SPACES),
    (trailing_blank, TABS + SPACES),
    (no_final_newline_in_file, TABS + SPACES),
    (no_final_newline_in_call, TABS + SPACES),
    (crlf_file, TABS + SPACES),
    (crlf_call, TABS + SPACES),
    (token_misremembered, TABS + SPACES),
    (exact_and_loose, TABS + SPACES),
    (two_loose, TABS + SPACES),
    (both_mistyped, TABS + SPACES),
    (new_in_file_frame, TABS + SPACES),
    (new_in_another_style, TABS + SPACES),
    (middle_line_omitted, TABS + SPACES),
    *[(lookalikes(w), TABS + SPACES) for w in ("curly quotes", "non-breaking spaces", "dashes")],
]


def generate(seed: int = 9, per_kind: int = 30, python_files: int = 40) -> list[EditCase]:
    """Up to `per_kind` cases of every kind, from the kept files and `python_files` standard-library
    modules, drawn with `seed` (int): the same seed on the same interpreter gives the same cases."""
    rng = random.Random(seed)
    sources = kept_sources() + stdlib_sources(python_files, seed)
    cases = []
    for kind, langs in KINDS:
        fitting = [s for s in sources if s.lang in langs]
        made, tries = 0, 0
        while made < per_kind and tries < per_kind * 20:
            tries += 1
            case = kind(rng, rng.choice(fitting))
            if case is not None:
                cases.append(case)
                made += 1
    return cases
