"""The changes a model means to make to a block of real code, written in the file's own frame
(bench/fit/edit_cases.py applies the mistakes to them).

A change takes the block's lines (no newlines) and returns the lines that should replace them,
or None when it does not apply to this block. Lines the change writes anew carry no trailing
whitespace; lines it keeps are kept byte for byte.
"""

from __future__ import annotations

import random
import re
from typing import Callable

TOKEN = re.compile(r"\b(?:[A-Za-z_][A-Za-z0-9_]{2,}|[0-9]+)\b")
STATEMENT = {
    "py": 'log.debug("checked %s", name)',
    "go": 'log.Printf("checked %v", n)',
    "c": 'fprintf(stderr, "checked %d\\n", n);',
    "js": "console.debug('checked', name);",
    "ts": "console.debug('checked', name);",
}
OPENER = {"py": ("if DEBUG:", None), "go": ("if debug {", "}"), "c": ("if (debug) {", "}"),
          "js": ("if (debug) {", "}"), "ts": ("if (debug) {", "}")}

Change = Callable[[random.Random, list[str], str, str], "list[str] | None"]


def leading(line: str) -> str:
    """The spaces and tabs that start `line`."""
    return line[: len(line) - len(line.lstrip(" \t"))]


def blank(line: str) -> bool:
    """True for an empty or whitespace-only line."""
    return not line.strip(" \t")


def opens_a_block(lines: list[str]) -> bool:
    """True when a line ending with `:`, `{`, `(` or `[` is followed by a deeper one (the
    benchmark's own test, independent of mm's)."""
    text = [line for line in lines if not blank(line)]
    return any(a.rstrip().endswith((":", "{", "(", "[")) and len(leading(b)) > len(leading(a)) + 1
               for a, b in zip(text, text[1:]))


def _touchable(block: list[str]) -> list[int]:
    """Indexes of the lines a change may rewrite: non-blank, holding a word or number."""
    return [i for i, line in enumerate(block) if not blank(line) and TOKEN.search(line)]


def _rewrite(rng: random.Random, line: str) -> str:
    """`line` with one word renamed or one number changed, without trailing whitespace."""
    found = list(TOKEN.finditer(line, len(leading(line))))
    m = rng.choice(found)
    word = m.group(0)
    new = str(int(word) + 1) if word.isdigit() else word + "2"
    return (line[: m.start()] + new + line[m.end():]).rstrip(" \t")


def modify(rng: random.Random, block: list[str], lang: str, unit: str) -> list[str] | None:
    """One line rewritten."""
    spots = _touchable(block)
    if not spots:
        return None
    i = rng.choice(spots)
    return block[:i] + [_rewrite(rng, block[i])] + block[i + 1:]


def modify2(rng: random.Random, block: list[str], lang: str, unit: str) -> list[str] | None:
    """Two lines rewritten."""
    spots = _touchable(block)
    if len(spots) < 2:
        return None
    out = list(block)
    for i in rng.sample(spots, 2):
        out[i] = _rewrite(rng, block[i])
    return out


def insert(rng: random.Random, block: list[str], lang: str, unit: str) -> list[str] | None:
    """A statement added after a line, at that line's indentation."""
    spots = [i for i, line in enumerate(block) if not blank(line)]
    i = rng.choice(spots)
    return block[: i + 1] + [leading(block[i]) + STATEMENT[lang]] + block[i + 1:]


def delete_line(rng: random.Random, block: list[str], lang: str, unit: str) -> list[str] | None:
    """One line removed (blocks of two lines or more)."""
    spots = [i for i, line in enumerate(block) if not blank(line)]
    if len(spots) < 2:
        return None
    i = rng.choice(spots)
    return block[:i] + block[i + 1:]


def wrap(rng: random.Random, block: list[str], lang: str, unit: str) -> list[str] | None:
    """A line put inside a new `if` block: one level deeper, by the file's unit."""
    spots = [i for i, line in enumerate(block)
             if not blank(line) and leading(line) == unit * (len(leading(line)) // len(unit))]
    if not spots:
        return None
    i = rng.choice(spots)
    ind = leading(block[i])
    opener, closer = OPENER[lang]
    lines = [ind + opener, ind + unit + block[i][len(ind):].rstrip(" \t")]
    if closer:
        lines.append(ind + closer)
    return block[:i] + lines + block[i + 1:]


def delete_block(rng: random.Random, block: list[str], lang: str, unit: str) -> list[str] | None:
    """The whole block removed (`new` is empty)."""
    return []


CHANGES: dict[str, Change] = {"modify": modify, "modify2": modify2, "insert": insert,
                              "delete-line": delete_line, "wrap": wrap, "delete-block": delete_block}
STRUCTURAL = ("wrap", "insert")
