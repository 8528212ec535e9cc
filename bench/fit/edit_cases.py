"""The edit_file mutation cases (issue 9, point 1): real code, realistic small-model mistakes,
and for each the exact file that must result, or a refusal.

A case takes a block of 1–15 consecutive lines of a real file (unique in it, exactly and
loosely), a change a model means to make to it (changes.py), and one mistake (mistakes.py)
in the `old` and `new` the model sends. `expected` is the file with the block replaced by the
meant change in the file's own frame — or None when the call must be refused (the model
misquoted the text: a token, a missing line, a Unicode lookalike, an ambiguity).
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from changes import CHANGES, blank  # noqa: E402
from sources import Source  # noqa: E402

MAX_LINES = 15
TRIES = 200


@dataclass(frozen=True)
class EditCase:
    """One call of edit_file on `file` (text as on disk) and what must come of it."""

    kind: str
    source: str
    change: str
    file: str
    old: str
    new: str
    expected: str | None  # the file after the call; None: the call must be refused

    @property
    def suffix(self) -> str:
        return "." + self.source.rsplit(".", 1)[-1]


@dataclass
class Target:
    """A block of a source: lines [start, start+k) of `lines`, and the change meant for it."""

    src: Source
    lines: list[str]
    start: int
    block: list[str]
    change: str
    meant: list[str]

    def file_with(self, block: list[str]) -> str:
        """The source's text with the block replaced by `block` (lines)."""
        rows = self.lines[: self.start] + block + self.lines[self.start + len(self.block):]
        return "".join(row + "\n" for row in rows)

    @property
    def file(self) -> str:
        return self.file_with(self.block)

    @property
    def expected(self) -> str:
        return self.file_with(self.meant)


def text_of(lines: list[str]) -> str:
    """Lines as text: each ends with a newline; no line, no text."""
    return "".join(line + "\n" for line in lines)


def _count(text: str, needle: str, limit: int = 2) -> int:
    """Occurrences of `needle` in `text` (overlapping), counted up to `limit`."""
    n, pos = 0, text.find(needle)
    while pos != -1 and n < limit:
        n += 1
        pos = text.find(needle, pos + 1)
    return n


def loose_count(lines: list[str], block: list[str]) -> int:
    """How many windows of `lines` equal `block` once every line is stripped of spaces and tabs."""
    want = [b.strip(" \t") for b in block]
    stripped = [line.strip(" \t") for line in lines]
    return sum(1 for i in range(len(lines) - len(want) + 1)
               if stripped[i] == want[0] and stripped[i:i + len(want)] == want)


def pick(rng: random.Random, src: Source, change: str, need: Callable[[Target], bool]) -> Target | None:
    """A random target of `src` for `change` meeting `need`: a unique block (exactly, loosely, and
    for one line its text without indentation), starting and ending with a non-blank line."""
    lines = src.text.split("\n")[:-1] if src.text.endswith("\n") else src.text.split("\n")
    for _ in range(TRIES):
        k = rng.choice([1, 1, 2, 2, 3, 3, 4, 5, 6, 8, 10, 12, 15])
        start = rng.randrange(0, max(1, len(lines) - k))
        block = lines[start:start + k]
        if len(block) < k or blank(block[0]) or blank(block[-1]) or len(block[0].strip()) < 3:
            continue
        if _count(src.text, text_of(block)) != 1 or loose_count(lines, block) != 1:
            continue
        if k == 1 and (len(block[0].strip()) < 10 or _count(src.text, block[0].strip(" \t")) != 1):
            continue
        meant = CHANGES[change](rng, block, src.lang, src.unit)
        if meant is None or meant == block:
            continue
        target = Target(src, lines, start, block, change, meant)
        if need(target):
            return target
    return None


def _equal_pairs(block: list[str], meant: list[str]) -> list[tuple[int, int]]:
    """(i in block, j in meant) for the lines the change kept."""
    pairs = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, block, meant, autojunk=False).get_opcodes():
        if tag == "equal":
            pairs += list(zip(range(i1, i2), range(j1, j2)))
    return pairs


def _case(kind: str, t: Target, old: str, new: str, expected: str | None, file: str | None = None) -> EditCase:
    return EditCase(kind, t.src.name, t.change, t.file if file is None else file, old, new, expected)


def _not_found(t: Target, old: str, file: str | None = None) -> bool:
    """True when `old` is in the file neither exactly nor loosely (a must-refuse case stays one)."""
    text = t.file if file is None else file
    body = old.split("\n")
    while body and blank(body[-1]):
        body.pop()
    core = old.strip(" \t\r\n")
    return _count(text, old) == 0 and _count(text, core) == 0 and loose_count(text.split("\n"), body) == 0
