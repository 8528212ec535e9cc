"""The `fs_read` tool: a file — or a directory — read in one of eight modes (mnemo-tools.md,
Read files; notes/mnemoai.md §2.1; docs/tools-files.md).

Every mode but Directory records the read for read-before-write (mm.tools.reads). The output
is the reference's JSON, capped at docMaxTokens tokens (files.docMaxTokens), which replaces
maxOutput for this tool.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mm.tools.base import Param, ToolContext, ToolKind, ToolResult
from mm.tools.files.common import (NOT_A_FILE, NOT_FOUND, PATH_REQUIRED, doc_max_tokens, error, image_pointer,
                                   resolve, result)

MODES = ("Line", "Search", "Directory", "CSV", "JSON", "JSONL", "PDF", "DOCX")
INVALID_MODE = "Invalid mode '{mode}'. Use 'Line', 'Search', 'Directory', 'CSV', 'JSON', 'JSONL', 'PDF', or 'DOCX'"
READ_ERROR = "Error reading {path}: {error}"
CANCELLED = "[error: cancelled]"  # as every tool (mm-tools.md §bash, Cancellation)
CHARS_PER_TOKEN_BOUND = 64  # the engine's backstop: a result never exceeds this many characters per token
JSON_ROOM = 4096  # characters of the payload's other fields and escapes
DESCRIPTION = (
    "Read a file, or list a directory, in one of eight modes: Line (numbered lines; start_line/end_line, "
    "negative counts from the end), Search (pattern: literal, any case, with context_lines), Directory "
    "(depth, 0 = this level), CSV, JSON or JSONL (start_line/end_line), PDF, DOCX. Output is JSON, capped in tokens."
)
PARAMS = [
    Param("path", "string", "File or directory path, relative to the working directory."),
    Param("mode", "string", "Line (default), Search, Directory, CSV, JSON, JSONL, PDF or DOCX.", required=False,
          default="Line"),
    Param("start_line", "integer", "First line (1-based; negative counts from the end).", required=False, default=1),
    Param("end_line", "integer", "Last line, inclusive; -1 = the end.", required=False, default=-1),
    Param("pattern", "string", "Search: the text to find.", required=False, default=""),
    Param("context_lines", "integer", "Search: lines shown around each hit (default 2).", required=False, default=2),
    Param("depth", "integer", "Directory: levels below it to list.", required=False, default=0),
]


def mode_named(value: Any) -> str | None:
    """The mode `value` names (any case: `line` is Line), or None."""
    text = str(value if value is not None else "Line").strip()
    return next((m for m in MODES if m.lower() == text.lower()), None)


def _integer(args: dict[str, Any], name: str, default: int) -> int:
    value = args.get(name)
    return default if value is None else int(value)


def _read(mode: str, where: Path, args: dict[str, Any], budget: int, cancelled: Any):
    """Run `mode` on `where` (in a worker thread); returns its Outcome."""
    if mode == "Directory":
        from mm.tools.files.directory import read_directory

        return read_directory(where, _integer(args, "depth", 0), budget, cancelled)
    if mode in ("PDF", "DOCX"):
        from mm.tools.files.documents import read_docx, read_pdf

        return (read_pdf if mode == "PDF" else read_docx)(where, budget, cancelled)
    from mm.tools.files.source import open_source

    from mm.tools.files.data_modes import JSON_TEXT_BYTES

    # Lines longer than the cap could show are cut, but not for CSV and JSON: a cut line is no record.
    keep = budget * CHARS_PER_TOKEN_BOUND if mode in ("Line", "Search") else JSON_TEXT_BYTES
    source = open_source(where, keep, cancelled)
    try:
        start, end = _integer(args, "start_line", 1), _integer(args, "end_line", -1)
        if mode == "Line":
            from mm.tools.files.text_modes import read_lines

            return read_lines(source, start, end, budget)
        if mode == "Search":
            from mm.tools.files.text_modes import search

            return search(source, str(args.get("pattern") or ""), _integer(args, "context_lines", 2), budget)
        from mm.tools.files.data_modes import read_csv, read_json

        return read_csv(source, budget) if mode == "CSV" else read_json(source, start, end, budget)
    finally:
        source.close()


@dataclass
class FsRead:
    """The fs_read tool: kind `read`, no permission, the path as location."""

    doc_max_tokens: int | None = None  # files.docMaxTokens; None: the default (common.doc_max_tokens)
    describer: bool = False  # describe_image is declared beside it (an image's refusal points there)
    documents: Any = None  # the documents index (mm.tools.documents.index), when that group is declared
    name: str = "fs_read"
    kind: ToolKind = "read"
    description: str = DESCRIPTION
    params: list[Param] = field(default_factory=lambda: list(PARAMS))
    needs_permission: bool = False

    def budget(self, ctx: ToolContext) -> int:
        """The cap in tokens for this conversation (docMaxTokens)."""
        return doc_max_tokens(self.doc_max_tokens, ctx.context_window)

    def output_limit(self, ctx: ToolContext) -> int:
        """The engine's backstop in characters: docMaxTokens replaces maxOutput for fs_read."""
        return max(ctx.settings.max_output, self.budget(ctx) * CHARS_PER_TOKEN_BOUND + JSON_ROOM)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Read `args["path"]` in `args["mode"]`; the reference's JSON, or its error object.
        A successful read of a file records it in `ctx.reads`."""
        from mm.tools.files.source import Cancelled, NotText
        from mm.fs import FileRefused

        raw = str(args.get("path") or "")
        if not raw.strip():
            return result(error(PATH_REQUIRED))
        mode = mode_named(args.get("mode"))
        if mode is None:
            return result(error(INVALID_MODE.format(mode=args.get("mode"))))
        where = resolve(ctx, raw)
        if mode != "Directory":
            if not os.path.exists(where):
                return result(error(NOT_FOUND.format(path=where)), where)
            if os.path.isdir(where):
                return result(error(NOT_A_FILE.format(path=where)), where)
        if mode in ("PDF", "DOCX") and self.documents is not None and (mode == "PDF" or where.name.lower().endswith(".docx")):
            from mm.tools.documents.adding import offload_document
            from mm.tools.waiting import Cancelled as Stopped, unless_cancelled

            try:
                offloaded = await unless_cancelled(offload_document(self.documents, where, ctx.model_client),
                                                   ctx.cancelled)
            except Stopped:
                return ToolResult(CANCELLED, failed=True, locations=[where])
            if offloaded is not None:
                return result(offloaded, where)
        try:
            outcome = await asyncio.to_thread(_read, mode, where, args, self.budget(ctx), ctx.cancelled)
        except Cancelled:
            return ToolResult(CANCELLED, failed=True, locations=[where])
        except NotText as err:
            return result(image_pointer(err.payload, where, self.describer), where)
        except FileRefused as err:
            return result(error(str(err)), where)
        except OSError as err:
            return result(error(READ_ERROR.format(path=where, error=err.strerror or err)), where)
        if outcome.seen is not None and not outcome.payload.get("error"):
            ctx.reads.record(where, outcome.seen, outcome.whole, outcome.part)
        preview = None if outcome.payload.get("error") else outcome.preview
        return result(outcome.payload, where, preview)
