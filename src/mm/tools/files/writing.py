"""The last step of fs_write and file_edit: the new text encoded as the file was (encoding,
BOM, line endings), written atomically, recorded as read (mnemo-tools.md, Write and edit files and
Read-before-write: "A successful write counts as a read").
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mm.tools.base import FileChange, ToolContext, ToolResult
from mm.tools.files.common import error, result
from mm.fs import TextFile
from mm.tools.reads import Seen

UNENCODABLE = ("The new text holds {char!r} (U+{code:04X}), which the file's encoding ({encoding}) cannot store; "
               "nothing was written")
WRITE_ERROR = "Error writing {path}: {error}"
PREVIEW_HEAD = "{path}: {operation} · +{added} -{deleted} lines"


def _preview(where: Path, operation: str, before: str, after: str) -> str:
    """The terminal's view of a write: a headline, then the changed rows of the numbered diff."""
    from mm.tools.diff import diff_texts

    diff = diff_texts(before, after)
    head = PREVIEW_HEAD.format(path=where, operation=operation, added=diff.added, deleted=diff.deleted)
    return "\n".join([head] + [row for row in diff.rows if row[:1] in "+-"])


def commit(ctx: ToolContext, where: Path, file: TextFile | None, before: str | None, after: str,
           payload: dict[str, Any], operation: str, plan_only: bool = False) -> ToolResult:
    """Write `after` (LF text in the terms of `file.logical()`; a new file's text when `file` is
    None) over `before` and return `payload` with the change. `file` gives the bytes their
    encoding, BOM and line endings; a new file is UTF-8 as sent. `plan_only`: write nothing (the
    permission prompt's preview). The write is recorded in `ctx.reads`, whole."""
    from mm.fs import FileRefused, write_atomic
    from mm.textcodec import unencodable

    encoding = file.encoding if file is not None else "utf-8"
    bad = unencodable(after, encoding)
    if bad is not None:
        return result(error(UNENCODABLE.format(char=bad, code=ord(bad), encoding=encoding)), where)
    data = file.encoded(after) if file is not None else after.encode("utf-8")
    old_text = file.physical(before) if file is not None and before is not None else None
    change = FileChange(where, old_text, file.physical(after) if file is not None else after)
    preview = _preview(where, operation, before or "", after)
    if plan_only:
        return result(payload, where, preview, change)
    try:
        write_atomic(where, data, str(where))
        st = os.stat(where)
    except FileRefused as err:
        return result(error(str(err)), where)
    except OSError as err:
        return result(error(WRITE_ERROR.format(path=where, error=err.strerror or err)), where)
    ctx.reads.record(where, Seen.of(data, st))
    return result(payload, where, preview, change)


READ_ERROR = "Error reading {path}: {error}"


def load(ctx: ToolContext, where: Path, whole: bool, need_text: bool = True) -> tuple[TextFile | None, dict | None]:
    """The existing file `where` to change, after the read-before-write gate (mm.tools.reads;
    `whole`: the write replaces all of it): (its TextFile, None), or (None, the refusal payload).
    With `need_text` False (a file replaced whole) a file that is not text, or too large to read
    as text, is (None, None): nothing of it is kept."""
    from mm.fs import TEXT_FILE_BYTES, FileRefused, FileTooLarge, TextFileError, decode_any, read_with_stat

    data = st = None
    try:
        data, st = read_with_stat(where, TEXT_FILE_BYTES, str(where))
    except FileTooLarge as err:
        too_large = str(err)
    except FileRefused as err:
        return None, error(str(err))
    except OSError as err:
        return None, error(READ_ERROR.format(path=where, error=err.strerror or err))
    verdict = ctx.reads.verdict(where, whole, Seen.of(data, st) if data is not None else None)
    if verdict is not None:
        return None, verdict.payload(str(where))
    if data is None:
        return None, (error(too_large) if need_text else None)
    try:
        return decode_any(data, str(where)), None
    except TextFileError as err:
        return None, (error(str(err)) if need_text else None)
