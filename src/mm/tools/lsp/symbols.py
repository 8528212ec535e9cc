"""Symbols as the model names them, their occurrences in a file, and columns in UTF-16 (mm-tools.md
§lsp: `symbol`, `new_name`, Positions).

The tool's columns count characters (code points, 1-based); the wire counts UTF-16 code units
(0-based): a character beyond the Basic Multilingual Plane (most emoji) is two units, a combining
mark one, as it is one character.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # what ends a line for LSP (not U+2028, form feeds…)
_NAME = re.compile(r"[\w$]+")
_ARGUMENTS = re.compile(r"[(\[<{]")  # a call's, an index's, generic arguments: cut off
_COMMENT_START = re.compile(r"\s*(#|//|/\*|\*|--|;|%|<!--|\"\"\"|''')")
_INLINE_COMMENT = re.compile(r"(^|\s)(#|//|--)\s")
MAX_OCCURRENCES = 20  # occurrences of a symbol tried in one call


@dataclass(frozen=True)
class Occurrence:
    """A symbol in a file: 0-based `line`, 0-based `column` in characters, whether it lies in a
    comment (comment lines are tried last) and whether a character beyond the Basic Multilingual
    Plane comes before it on its line (`astral`: tried after the others, as a server that counts
    columns otherwise than in UTF-16 would miss it)."""

    line: int
    column: int
    comment: bool
    astral: bool = False


def _word(word: str) -> str:
    """The identifier a word names: call or generic arguments cut off, then the last name in it
    (`person.Greet(x)` → `Greet`, `Greet',` → `Greet`, `pkg::f` → `f`), or "" for a number."""
    for part in (_ARGUMENTS.split(word, 1)[0], word):  # `(greet)`: nothing before the bracket
        names = [n for n in _NAME.findall(part) if not n.isdigit()]
        if names:
            return names[-1]
    return ""


def identifiers(text: str) -> list[str]:
    """Every identifier `text` names, one per word, numbers left out (`Greet 1 12 Hello` →
    [Greet, Hello])."""
    return [name for name in map(_word, text.split()) if name]


def clean_symbol(text: str) -> str:
    """The symbol `text` names: its first identifier, cleaned (mm-tools.md §lsp, `symbol`); "" when
    it names none."""
    names = identifiers(text)
    return names[0] if names else ""


def rename_names(symbol: str, new_name: str) -> tuple[str, str]:
    """The symbol and the new name of a rename: each cleaned; with no new name and several words
    in `symbol`, its first identifier and its last (mm-tools.md §lsp, `new_name`)."""
    new = clean_symbol(new_name)
    if new:
        return clean_symbol(symbol), new
    names = identifiers(symbol)
    if len(names) >= 2:
        return names[0], names[-1]
    return (names[0] if names else ""), ""


def lines_of(text: str) -> list[str]:
    """The lines of `text` as LSP counts them (split at CRLF, CR and LF), without their ends."""
    return _LINE_BREAK.split(text)


def is_comment(line: str, column: int) -> bool:
    """Whether the character at `column` of `line` lies in a comment: a line that starts as one
    (`#`, `//`, `/*`, `*`, `--`, `;`, `%`, `<!--`, a docstring's quotes), or after a `#`, `//` or
    `--` that follows a blank."""
    if _COMMENT_START.match(line):
        return True
    inline = _INLINE_COMMENT.search(line)
    return inline is not None and inline.start(2) < column


def occurrences(lines: list[str], symbol: str, line: int | None = None) -> list[Occurrence]:
    """Where `symbol` stands as a whole word in `lines` (on 0-based `line` only, when given):
    code first, comments last, each in file order, those after an astral character last of
    their kind; at most MAX_OCCURRENCES."""
    pattern = re.compile(r"(?<![\w$])" + re.escape(symbol) + r"(?![\w$])")
    rows = range(len(lines)) if line is None else [line]
    found = [Occurrence(n, m.start(), is_comment(lines[n], m.start()), _astral(lines[n][:m.start()]))
             for n in rows for m in pattern.finditer(lines[n])]
    found.sort(key=lambda o: (o.comment, o.astral))  # stable: file order within each kind
    return found[:MAX_OCCURRENCES]


def _astral(text: str) -> bool:
    return any(ord(c) > 0xFFFF for c in text)


def word_at(line: str, column: int) -> str:
    """The identifier of `line` the 0-based character `column` falls in (or just after), or ""."""
    for match in _NAME.finditer(line):
        if match.start() <= column <= match.end():
            return match.group()
    return ""


def to_utf16(line: str, column: int) -> int:
    """The UTF-16 offset of the 0-based character `column` of `line`."""
    return len(line[:column].encode("utf-16-le", "surrogatepass")) // 2


def from_utf16(line: str, units: int) -> int:
    """The 0-based character of `line` at UTF-16 offset `units` (inside a pair: the character after
    it; past the end: the end of the line, as LSP defaults)."""
    count = 0
    for index, char in enumerate(line):
        if count >= units:
            return index
        count += 2 if ord(char) > 0xFFFF else 1
    return len(line)
