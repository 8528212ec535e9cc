"""The `write_file` tool: create a file or replace its whole content (mm-tools.md §write_file)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from mm.tools.base import FileChange, Param, ToolContext, ToolResult

DESCRIPTION = (
    "Create a file with the given content, or replace an existing file's whole content. "
    "Parent directories are created. To change part of an existing file, use edit_file instead."
)
PATH_REQUIRED = "write_file: path is required — the path of the file to write, relative to the working directory"
CONTENT_REQUIRED = '{path}: content is required — the whole text of the file ("" for an empty file); nothing was written'
IS_DIR = "{path} is a directory — give the path of a file; nothing was written"
CANNOT_WRITE = "{path}: cannot write the file — {error}; nothing was written"
PARENT_IS_FILE = "{path}: cannot create it — {parent} is a file, not a directory; nothing was written"
UNCHANGED = "{path}: unchanged — the file already has exactly this content; nothing was written"
CREATED = "{path}: created · {lines} line{s}"
TRAILING_SLASH = "{path}: the path ends with a slash — give the path of a file, e.g. {path}notes.txt; nothing was written"
REPLACED = "{path}: replaced · +{added} -{deleted} lines · first change at line {line}"
REPLACED_NOT_TEXT = "{path}: replaced · {lines} line{s} (the previous content was not UTF-8 text: no diff)"
REPLACED_TOO_LARGE = "{path}: replaced · {lines} line{s} (the previous content was larger than {limit}: no diff)"
NOTHING_WRITTEN = "; nothing was written"


def content_text(value: Any) -> str | None:
    """Return the text to write for `content`: a string as is; an object or array as JSON
    text (indent 2) ending with a newline (tool-args case args-06); a number or boolean as its
    JSON text, as mm.tools.coerce renders it; None for a missing content."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        return json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    return json.dumps(value)


def keep_conventions(content: str, previous: str | None, had_bom: bool) -> str:
    """Give `content` (str) the line endings and BOM of the file it replaces: LF text written
    over a pure-CRLF file becomes CRLF; a BOM is kept. `previous` is the old text (no BOM)."""
    from mm.fs import BOM, line_endings

    if previous is not None and line_endings(previous) == "\r\n" and "\r" not in content:
        content = content.replace("\n", "\r\n")
    if had_bom and not content.startswith(BOM):
        content = BOM + content
    return content


def _plural(n: int) -> str:
    return "" if n == 1 else "s"


def _file_in_the_way(where: Path) -> Path | None:
    """Return the nearest existing ancestor of `where` when it is not a directory, else None."""
    for parent in where.parents:
        if parent.exists():
            return None if parent.is_dir() else parent
    return None


def _shown(where: Path, cwd: Path) -> str:
    """`where` relative to `cwd` when inside it, else absolute."""
    try:
        return str(where.relative_to(cwd))
    except ValueError:
        return str(where)


def write(args: dict[str, Any], ctx: ToolContext, plan_only: bool = False, read_first: bool = False) -> ToolResult:
    """Write `args["content"]` to `args["path"]`; return the headline and, for a replaced
    file, the numbered diff against the previous content (mm-tools.md §write_file).

    plan_only: write nothing and return the diff with the `change` that would be made.
    read_first (`readBeforeWrite: true`): an existing file must have been read whole, and not
    changed since (mm.tools.reads). A write is recorded as a read in every case.
    """
    from mm.tools.diff import diff_texts, fit, split_lines  # on first use: start-up time
    from mm.fs import (BOM, TEXT_FILE_BYTES, FileRefused, TextFileError, line_endings, read_head, read_text,
                             size_text, write_atomic, write_target)
    from mm.tools.reads import Seen

    path = args.get("path")
    if not isinstance(path, str) or not path.strip():
        return ToolResult(PATH_REQUIRED, failed=True)
    content = content_text(args.get("content"))
    if content is None:
        return ToolResult(CONTENT_REQUIRED.format(path=path), failed=True)
    where = Path(os.path.abspath(ctx.resolve(path)))
    if where.is_dir():
        return ToolResult(IS_DIR.format(path=path), failed=True, locations=[where])
    if path.endswith(("/", os.sep)):
        return ToolResult(TRAILING_SLASH.format(path=path), failed=True)
    try:
        write_target(where, path)  # not under /dev, /proc or /sys; a regular file or none
    except FileRefused as err:
        return ToolResult(str(err) + NOTHING_WRITTEN, failed=True, locations=[where])
    blocker = _file_in_the_way(where)
    if blocker is not None:
        return ToolResult(PARENT_IS_FILE.format(path=path, parent=_shown(blocker, ctx.cwd)), failed=True)
    if read_first:
        verdict = ctx.reads.verdict(where, whole=True)
        if verdict is not None:
            return ToolResult(verdict.text(path), failed=True, locations=[where])
    previous: str | None = None
    before: str | None = None
    readable, too_large = True, False
    if where.exists():
        try:
            file = read_text(where, path)
            previous, before = file.text, (BOM if file.bom else "") + file.text
            content = keep_conventions(content, previous, file.bom)
        except (TextFileError, OSError) as err:
            readable, too_large, before = False, getattr(err, "too_large", False), ""
            if not too_large:
                try:
                    before = read_head(where, TEXT_FILE_BYTES, path).decode("utf-8", errors="replace")
                except OSError:
                    pass
    if before is not None and readable and content == before:
        return ToolResult(UNCHANGED.format(path=path), locations=[where])
    if not plan_only:
        try:
            write_atomic(where, content, path)
            ctx.reads.record(where, Seen.of(content.encode("utf-8"), os.stat(where)))
        except FileRefused as err:
            return ToolResult(str(err) + NOTHING_WRITTEN, failed=True, locations=[where])
        except OSError as err:
            return ToolResult(CANNOT_WRITE.format(path=path, error=err.strerror or err), failed=True,
                              locations=[where])
    change = FileChange(where, before, content)
    count = len(split_lines(content))
    if before is None:  # the reference's "headline and the diff against the previous content": all added
        head = CREATED.format(path=path, lines=count, s=_plural(count))
        rows = diff_texts("", content.replace("\r\n", "\n")).rows
        return ToolResult(fit(head, rows, ctx.settings.max_output), change=change, locations=[where])
    if not readable:
        template = REPLACED_TOO_LARGE if too_large else REPLACED_NOT_TEXT
        text = template.format(path=path, lines=count, s=_plural(count), limit=size_text(TEXT_FILE_BYTES))
        return ToolResult(text, change=change, locations=[where])
    if line_endings(before) == line_endings(content) == "\r\n":
        before, content = before.replace("\r\n", "\n"), content.replace("\r\n", "\n")
    diff = diff_texts(before, content)
    head = REPLACED.format(path=path, added=diff.added, deleted=diff.deleted, line=diff.first_line or 1)
    return ToolResult(fit(head, diff.rows, ctx.settings.max_output), change=change, locations=[where])


class WriteFile:
    """The write_file tool (mm-tools.md §write_file); `read_first`: readBeforeWrite."""

    def __init__(self, read_first: bool = False):
        self.read_first = read_first

    name = "write_file"
    kind = "edit"
    description = DESCRIPTION
    needs_permission = True
    json_text_params = ("content",)  # mm.tools.coerce: an object or array becomes JSON text
    params = [
        Param("path", "string", "File path, relative to the working directory; parent directories are created."),
        Param("content", "string", "The whole content of the file."),
    ]

    async def plan(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """What the call would change, written nowhere (the permission prompt's diff)."""
        return await asyncio.to_thread(write, args, ctx, True, self.read_first)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Write the file in a worker thread; see `write`."""
        return await asyncio.to_thread(write, args, ctx, False, self.read_first)
