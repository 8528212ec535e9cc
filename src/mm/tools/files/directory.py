"""fs_read's "Directory" mode (mnemo-tools.md, fs_read modes; notes/mnemoai.md §2.1): a sorted,
recursive listing to `depth` (0: the folder's own entries), dot-entries skipped. Unlike the
reference: capped at docMaxTokens, folders that cannot be listed are named (`unreadable`), and a
link to a folder is listed, not entered (a loop of links is never walked). Nothing is recorded
for read-before-write: a listing is no read of a file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mm.tools.files.common import TokenBudget, error
from mm.tools.files.source import Cancelled
from mm.tools.files.text_modes import Outcome

NOT_FOUND = "Path doesn't exist: {path}"
NOT_A_DIRECTORY = "Path is not a directory: {path}"
LISTING_CUT = ("Listing truncated at the token limit ({limit} tokens): {shown} entries shown; list a subfolder, "
               "or lower depth")
UNKNOWN_SIZE = "unknown"


class _Walk:
    """One listing: the token budget spent so far, the entries shown, the folders not listed."""

    def __init__(self, root: Path, budget: int, cancelled: Any):
        self.root, self.room, self.cancelled = root, TokenBudget(budget), cancelled
        self.shown = 0
        self.unreadable: list[str] = []

    def entries(self, folder: Path, depth_left: int) -> list[dict[str, Any]]:
        """The entries of `folder`, folders holding theirs while `depth_left` > 0."""
        try:
            found = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            self.unreadable.append(os.path.relpath(folder, self.root))
            return []
        items: list[dict[str, Any]] = []
        for entry in found:
            if self.cancelled is not None and self.cancelled.is_set():
                raise Cancelled()
            if entry.name.startswith("."):
                continue
            item = self._item(entry)
            if not self.room.take(item):
                break
            self.shown += 1
            items.append(item)
            if item["type"] == "directory" and not item.get("symlink") and depth_left > 0:
                item["contents"] = self.entries(Path(entry.path), depth_left - 1)
        return items

    def _item(self, entry: os.DirEntry) -> dict[str, Any]:
        relative = os.path.relpath(entry.path, self.root)
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        if is_dir:
            item: dict[str, Any] = {"name": entry.name, "type": "directory", "path": relative}
            if entry.is_symlink():
                item["symlink"] = True
            return item
        try:
            size: Any = os.path.getsize(entry.path)
        except OSError:
            size = UNKNOWN_SIZE
        return {"name": entry.name, "type": "file", "path": relative, "size": size}


def read_directory(where: Path, depth: int, budget: int, cancelled: Any = None) -> Outcome:
    """The Directory mode of `where` (absolute) to `depth` levels below it (negative: 0), at most
    `budget` tokens of entries."""
    if not os.path.exists(where):
        return Outcome(error(NOT_FOUND.format(path=where)))
    if not os.path.isdir(where):
        return Outcome(error(NOT_A_DIRECTORY.format(path=where)))
    walk = _Walk(where, budget, cancelled)
    contents = walk.entries(where, max(0, depth))
    payload: dict[str, Any] = {"path": str(where), "type": "directory", "depth": depth, "contents": contents,
                               "total_items": len(contents), "truncated": walk.room.cut}
    if walk.unreadable:
        payload["unreadable"] = walk.unreadable
    if walk.room.cut:
        payload["message"] = LISTING_CUT.format(limit=budget, shown=walk.shown)
    return Outcome(payload, None, preview="\n".join(_tree(contents)))


def _tree(items: list[dict[str, Any]], indent: str = "") -> list[str]:
    """The listing as indented lines, folders ending in `/` (the terminal's preview)."""
    lines = []
    for item in items:
        lines.append(indent + item["name"] + ("/" if item["type"] == "directory" else ""))
        lines += _tree(item.get("contents", []), indent + "  ")
    return lines
