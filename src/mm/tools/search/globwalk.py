"""The walk behind glob_search: the files a glob pattern names under a folder, in path order
(mnemo-tools.md §Search; notes/mnemoai.md §2.4; docs/tools-search.md §glob_search).

- Leading segments without a wildcard are folded into the folder walked (`src/**/*.ts` walks
  `src`), and an absolute pattern anchors itself at `/`.
- One segment per path part: `*`, `?`, `[…]` within a name, `**` for zero or more folders, so
  `*.py` names the top level only; `{a,b}` alternatives are expanded first (mm.tools.search.paths).
- A hidden name (starting with a dot) is matched only by a segment that starts with a dot.
- The eleven noise folders (NOISE) are never entered unless `include_ignored`, or a segment of
  the pattern names the folder as it is.
- Symlinked folders are not entered (a link to a parent would make the walk endless); a symlink
  to a file is a file.
The walk runs in a worker thread and stops at `deadline` (time.monotonic()) or when `stop` is set.
"""

from __future__ import annotations

import heapq
import os
import re
import threading
import time
from fnmatch import fnmatchcase
from typing import Iterator

from mm.tools.search.paths import expand_braces, order_key

NOISE = frozenset({".git", ".idea", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".venv", "__pycache__",
                   "build", "dist", "node_modules"})  # mnemo-tools.md §Search: "eleven noise directories"
_MAGIC = re.compile(r"[*?\[]")
CHECK_EVERY = 256  # entries between two looks at the clock


class Walk:
    """One glob walk; `files()` yields the matches, `timed_out` tells whether `deadline` stopped it."""

    def __init__(self, root: str, pattern: str, include_ignored: bool, deadline: float, stop: threading.Event):
        self.root, self.pattern, self.include_ignored = root, pattern, include_ignored
        self.deadline, self.stop = deadline, stop
        self.timed_out = False
        self._seen = 0

    def files(self) -> Iterator[str]:
        """The matching files, in path order (paths.order_key), each once."""
        walks = [self._one(alternative) for alternative in expand_braces(self.pattern)]
        previous = None
        for path in heapq.merge(*walks, key=order_key):
            if path != previous:
                previous = path
                yield path

    def _one(self, pattern: str) -> Iterator[str]:
        root, segments = split_pattern(self.root, pattern)
        if not segments:
            if os.path.isfile(root):
                yield root
            return
        literal = {part for part in pattern.split("/") if not _MAGIC.search(part)}  # names the pattern spells out
        start = _closure({0}, segments)
        if os.path.isdir(root):
            yield from self._below(root, start, segments, literal)

    def _below(self, folder: str, states: set[int], segments: list[str], literal: set[str]) -> Iterator[str]:
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: os.fsencode(e.name))
        except OSError:  # unreadable or gone: the walk goes on
            return
        for entry in entries:
            if self._must_stop():
                return
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            after = _step(states, entry.name, segments)
            if is_dir:
                if entry.name in NOISE and not self.include_ignored and entry.name not in literal:
                    continue
                if after - {len(segments)}:
                    yield from self._below(entry.path, after, segments, literal)
            elif len(segments) in after:
                try:
                    if entry.is_file():  # a symlink to a file counts; to a folder, or broken, not
                        yield entry.path
                except OSError:
                    continue

    def _must_stop(self) -> bool:
        self._seen += 1
        if self._seen % CHECK_EVERY == 0 and time.monotonic() >= self.deadline:
            self.timed_out = True
        return self.timed_out or self.stop.is_set()


def split_pattern(root: str, pattern: str) -> tuple[str, list[str]]:
    """(the folder to walk, the segments left): leading segments without a wildcard folded into
    `root`; an absolute pattern starts at `/`."""
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    if pattern.startswith("/"):
        root = "/"
    while parts and not _MAGIC.search(parts[0]):
        root = os.path.join(root, parts.pop(0))
    return os.path.normpath(root), parts


def _closure(states: set[int], segments: list[str]) -> set[int]:
    """`states` with, after each `**`, the state past it (`**` matches no folder too)."""
    found, todo = set(states), list(states)
    while todo:
        i = todo.pop()
        if i < len(segments) and segments[i] == "**" and i + 1 not in found:
            found.add(i + 1)
            todo.append(i + 1)
    return found


def _step(states: set[int], name: str, segments: list[str]) -> set[int]:
    """The states after one more path part `name`; len(segments) among them: the path matches."""
    hidden = name.startswith(".")
    after: set[int] = set()
    for i in states:
        if i >= len(segments):
            continue
        segment = segments[i]
        if segment == "**":
            if not hidden:
                after.add(i)
        elif (not hidden or segment.startswith(".")) and fnmatchcase(name, segment):
            after.add(i + 1)
    return _closure(after, segments)
