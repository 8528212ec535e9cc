"""A rename's WorkspaceEdit applied to the files on disk (mm-tools.md §lsp, `rename`; docs/lsp.md).

All or nothing: every file the server named is read and every edit placed (UTF-16 positions
converted) before anything is written; a file outside the project, a resource operation, edits
that overlap or fall outside their file refuse the whole rename. Each file is then written
atomically through mm.fs (regular files only); when a write fails, the files written
before it get their old content back.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from mm.tools.lsp.symbols import from_utf16, lines_of

NOT_A_FILE = "the edit names {uri}, which is not a file on this machine"
OUTSIDE = "the edit changes {path}, outside the project"
RESOURCE_OPERATION = "the edit also creates, renames or deletes files, which mm does not do"
OVERLAP = "two edits of {path} overlap"
PAST_END = "an edit of {path} starts or ends past its end (line {line})"
UNREADABLE = "{path} cannot be read: {reason}"
UNWRITABLE = "{path} cannot be written: {reason}"
CHANGED_MEANWHILE = "{path} changed on disk while the server worked on it"
MISALIGNED = ('an edit of {path} on line {line} does not fall on "{symbol}" (the server may count columns in '
              "another unit than UTF-16)")
NOTHING_CHANGED = "{reason} — nothing was changed"


class EditRefused(Exception):
    """The server's edit cannot be applied; `str(err)` ends with `— nothing was changed`."""

    def __init__(self, reason: str):
        super().__init__(NOTHING_CHANGED.format(reason=reason))


@dataclass
class FileEdit:
    """One file of a rename: its path, as shown, its text before and after, and the edit count."""

    path: Path
    shown: str
    old: str
    new: str
    edits: int
    bom: bool = False


def path_of(uri: str) -> Path | None:
    """The file a `file:` URI names (percent-decoded, normalised), else None."""
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    return Path(os.path.normpath(unquote(parsed.path)))


def text_edits(workspace_edit: Any) -> dict[str, list[Any]]:
    """The TextEdits of a WorkspaceEdit by URI, from `documentChanges` when it has them, else
    from `changes`. Raises EditRefused (RESOURCE_OPERATION) for a create, rename or delete."""
    found: dict[str, list[Any]] = {}
    if workspace_edit.document_changes:
        for change in workspace_edit.document_changes:
            if not hasattr(change, "edits"):
                raise EditRefused(RESOURCE_OPERATION)
            found.setdefault(change.text_document.uri, []).extend(change.edits)
    else:
        for uri, edits in (workspace_edit.changes or {}).items():
            found.setdefault(uri, []).extend(edits)
    return {uri: edits for uri, edits in found.items() if edits}


def plan(workspace_edit: Any, root: Path, shown: Any, synced: dict[str, str], symbol: str) -> list[FileEdit]:
    """Each file the edit changes, with its new text, sorted by shown path; nothing written.
    `shown(path)` is how a path is said; `synced` maps a path to the text the server was last
    sent for it (it must still be on disk); `symbol`, the name renamed (apply). Raises EditRefused."""
    from mm.fs import TextFileError, read_text

    project = os.path.realpath(root)
    planned = []
    for uri, edits in text_edits(workspace_edit).items():
        path = path_of(uri)
        if path is None:
            raise EditRefused(NOT_A_FILE.format(uri=uri))
        said = shown(path)
        if os.path.commonpath([project, os.path.realpath(path)]) != project:
            raise EditRefused(OUTSIDE.format(path=said))
        try:
            text = read_text(path, said)
        except (TextFileError, OSError) as err:
            raise EditRefused(UNREADABLE.format(path=said, reason=_reason(err))) from None
        if str(path) in synced and synced[str(path)] != text.text:
            raise EditRefused(CHANGED_MEANWHILE.format(path=said))
        planned.append(FileEdit(path, said, text.text, apply(text.text, edits, said, symbol), len(edits), text.bom))
    return sorted(planned, key=lambda f: f.shown)


def apply(text: str, edits: list[Any], shown: str, symbol: str = "") -> str:
    """`text` with the LSP TextEdits `edits` (UTF-16 ranges) applied; raises EditRefused when one
    lies past the end of the text, two overlap, or — on a line with other than ASCII characters,
    where UTF-16 columns and a server's code points or bytes differ — an edit does not fall on an
    occurrence of `symbol` (a server that counts otherwise would change the wrong characters)."""
    lines = lines_of(text)
    starts = [0] + _line_ends(text)
    words = _words(text, symbol)
    placed = []
    for order, edit in enumerate(edits):
        start = _offset(lines, starts, edit.range.start, shown)
        end = max(start, _offset(lines, starts, edit.range.end, shown))
        line = edit.range.start.line
        if symbol and not lines[min(line, len(lines) - 1)].isascii() and not _on_word(words, start, end):
            raise EditRefused(MISALIGNED.format(path=shown, line=line + 1, symbol=symbol))
        placed.append((start, end, order, edit.new_text))
    placed.sort()
    for before, after in zip(placed, placed[1:]):
        if before[1] > after[0]:
            raise EditRefused(OVERLAP.format(path=shown))
    pieces, at = [], 0
    for start, end, _, new_text in placed:
        pieces += [text[at:start], new_text]
        at = end
    pieces.append(text[at:])
    return "".join(pieces)


def write_all(planned: list[FileEdit]) -> None:
    """Write each file's new text atomically (mm.fs.write_atomic); when one cannot be
    written, put back the files written before it and raise EditRefused (UNWRITABLE)."""
    from mm.fs import BOM, write_atomic

    written: list[FileEdit] = []
    for file in planned:
        try:
            write_atomic(file.path, (BOM if file.bom else "") + file.new, file.shown)
        except OSError as err:
            for done in written:
                try:
                    write_atomic(done.path, (BOM if done.bom else "") + done.old, done.shown)
                except OSError:
                    pass
            raise EditRefused(UNWRITABLE.format(path=file.shown, reason=_reason(err))) from None
        written.append(file)


def _words(text: str, symbol: str) -> list[tuple[int, int]]:
    """Where `symbol` stands as a whole word in `text` (start, end offsets)."""
    import re

    if not symbol:
        return []
    return [m.span() for m in re.finditer(r"(?<![\w$])" + re.escape(symbol) + r"(?![\w$])", text)]


def _on_word(words: list[tuple[int, int]], start: int, end: int) -> bool:
    """Whether the range start–end lies within one of `words` (their edges included)."""
    import bisect

    index = bisect.bisect_right(words, (start, float("inf"))) - 1
    return index >= 0 and words[index][0] <= start and end <= words[index][1]


def _line_ends(text: str) -> list[int]:
    """The offset just after each line break of `text` (CRLF, CR, LF)."""
    import re

    return [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]


def _offset(lines: list[str], starts: list[int], position: Any, shown: str) -> int:
    """The offset in the text of an LSP position (0-based line, UTF-16 character)."""
    line = position.line
    if line == len(lines) and position.character == 0:  # just past the last line: the end of the text
        return starts[-1] + len(lines[-1])
    if line >= len(lines):
        raise EditRefused(PAST_END.format(path=shown, line=line + 1))
    return starts[line] + from_utf16(lines[line], position.character)


def _reason(err: BaseException) -> str:
    if isinstance(err, OSError) and err.strerror:
        return err.strerror.lower()
    return str(err)
