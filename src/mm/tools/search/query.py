"""One grep_search, as both searchers (ripgrep, and the pure-Python one) take it and answer it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Query:
    """What to look for and where.

    `pattern`: the regular expression; `root`: the absolute file or folder searched; `cwd`: the
    working directory (`file_pattern` is relative to it, as ripgrep's `--glob` is to its own);
    `before`/`after`: context lines around each match (content mode only)."""

    pattern: str
    root: str
    cwd: str
    file_pattern: str | None = None
    case_insensitive: bool = False
    before: int = 0
    after: int = 0


@dataclass(frozen=True)
class Row:
    """One line of a content result: its file (absolute), number, text (no line end) and whether
    it matched (else it is a context line)."""

    path: str
    line: int
    text: str
    is_match: bool


@dataclass
class Counted:
    """The files with matches, each with its number of matching lines, in any order; and what the
    searcher warned about on the way (a file it could not read, an ignore rule it could not use)."""

    files: list[tuple[str, int]]
    warnings: list[str]


class SearchFailed(Exception):
    """The search could not run (a bad regular expression): str(err) says why."""


class Unavailable(Exception):
    """ripgrep could not be run: the pure-Python search takes over."""


NEWLINE_IN_PATTERN = 'the literal "\\n" is not allowed in a regex'  # ripgrep's words; mm has no multiline mode
RowSink = Callable[[Row], bool]  # takes one row; False: enough, stop reading
