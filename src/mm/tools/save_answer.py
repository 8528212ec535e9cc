"""The save_answer tool: the model's answer written to a new file, never retyped (mm-tools.md §save_answer)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from mm.tools.base import FileChange, Param, ToolContext, ToolKind, ToolResult

DESCRIPTION = (
    "Save your answer to a new file without typing it again: the text of your message that calls this tool, "
    "or, when that message has no text, your previous answer. The file must not exist yet."
)
EXISTS = "[save_answer: {path} already exists — nothing was written. Pick another name, or ask the user]"
NO_ANSWER = ("[save_answer: there is no answer to save yet — write the answer in your reply first, then call "
             "save_answer with the file name]")
SAVED = "saved {which} to {path} ({size} bytes), starting with: {first}"
CANNOT_WRITE = "[save_answer: {path} cannot be written — {error}; nothing was written]"
REFUSED = "[save_answer: {refusal}; nothing was written]"
NO_PATH = "[save_answer: path is empty — give the name of the file to create]"
THIS, PREVIOUS = "this answer", "the previous answer"


def _answer(ctx: ToolContext) -> tuple[str, str]:
    """(which, text): the calling message's text when it has any, else the turn's previous answer."""
    if ctx.message_text.strip():
        return THIS, ctx.message_text
    return PREVIOUS, ctx.previous_answer


class SaveAnswer:
    """save_answer: kind `edit`, permission like write_file (declared with `saveAnswerTool: true`)."""

    name = "save_answer"
    kind: ToolKind = "edit"
    description = DESCRIPTION
    needs_permission = True
    params = [Param("path", "string", "The file to create, relative to the working directory. It must not exist yet.")]

    def requires_permission(self, args: dict[str, Any], ctx: ToolContext | None = None) -> bool:
        """Asked like write_file, except when there is no answer to save: then nothing is asked."""
        return ctx is None or bool(_answer(ctx)[1].strip())

    def title(self, args: dict[str, Any], ctx: ToolContext | None = None) -> str:
        """`save_answer: <path> (this answer|the previous answer)` for the terminal display."""
        which = _answer(ctx)[0] if ctx is not None else THIS
        return f"{self.name}: {args.get('path', '')} ({which})"

    async def plan(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """What the call would write (the permission prompt's diff), or the refusal it will meet."""
        prepared = self._prepare(args, ctx)
        if isinstance(prepared, ToolResult):
            return prepared
        target, content, which = prepared
        return ToolResult(f"{args.get('path')}: {which}", change=FileChange(target, None, content),
                          locations=[target])

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Write the answer with a trailing newline to a new file (in a worker thread); never
        overwrite one, never write under /dev, /proc or /sys (mm.fs.write_atomic)."""
        from mm.fs import FileRefused, write_atomic

        prepared = self._prepare(args, ctx)
        if isinstance(prepared, ToolResult):
            return prepared
        target, content, which = prepared
        path = str(args.get("path") or "").strip()
        try:
            await asyncio.to_thread(write_atomic, target, content, path)
        except FileRefused as err:
            return ToolResult(REFUSED.format(refusal=err), failed=True, locations=[target])
        except (OSError, ValueError) as err:
            reason = getattr(err, "strerror", None) or str(err)
            return ToolResult(CANNOT_WRITE.format(path=path, error=reason), failed=True)
        first = content.strip().split("\n", 1)[0]
        size = len(content.encode("utf-8"))
        return ToolResult(SAVED.format(which=which, path=path, size=size, first=first),
                          change=FileChange(target, None, content), locations=[target])

    @staticmethod
    def _prepare(args: dict[str, Any], ctx: ToolContext) -> tuple[Path, str, str] | ToolResult:
        """(the file, the text to write, which answer), or the refusal."""
        path = str(args.get("path") or "").strip()
        if not path:
            return ToolResult(NO_PATH, failed=True)
        which, text = _answer(ctx)
        if not text.strip():
            return ToolResult(NO_ANSWER, failed=True)
        target = Path(os.path.abspath(ctx.resolve(path)))
        if target.exists() or target.is_symlink():
            return ToolResult(EXISTS.format(path=path), failed=True, locations=[target])
        return target, (text if text.endswith("\n") else text + "\n"), which
