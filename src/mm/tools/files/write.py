"""The `fs_write` tool: create a file, or change one through four commands (mnemo-tools.md, Write
and edit files, fs_write commands; notes/mnemoai.md §2.2; docs/tools-files.md).

Unlike the reference: the command and its arguments are checked before the read-before-write
gate; `create` over an existing file keeps its encoding, BOM and line endings; an empty
`old_str` is refused; `insert` after a last line without a newline does not join the two lines;
every write is atomic.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from mm.tools.base import Param, ToolContext, ToolResult
from mm.tools.files.common import PATH_REQUIRED, error, resolve, result
from mm.tools.files.matching import as_file_text, has_gutters, occurrences, replace, strip_gutters
from mm.tools.files.writing import commit, load
from mm.fs import TextFile

COMMANDS = ("create", "str_replace", "insert", "append")
INVALID_COMMAND = "Invalid command '{command}'. Use: create, str_replace, insert, append"
DOES_NOT_EXIST = "File does not exist: {path}"
NOT_FOUND = "Text to replace not found in file"
MANY = "{n} occurrences of old_str were found when only 1 is expected"
BAD_LINE = "Invalid line number {n}. File has {total} lines."
EMPTY_OLD = "old_str is empty: give the exact text to replace, present once in the file"
EMPTY_NEW = "new_str is empty: give the text to {command}"
NO_CHANGE = "Replacement produced no changes (old_str and new_str are identical)"
GUTTER_IN_NEW = ("old_str matched once its line numbers were taken off, and new_str starts each line with a line "
                 "number too (as fs_read shows them): send new_str without them; nothing was written")
CREATED = "File created successfully"
OVERWRITTEN = "File overwritten successfully"
UNCHANGED = "File unchanged: it already has exactly this content (nothing was written)"
REPLACED = "Text replaced successfully"
INSERTED = "Content inserted after line {n}"
APPENDED = "Content appended successfully"
DESCRIPTION = (
    "Create a file (command create, file_text; overwrites), or change one: str_replace (old_str, present once, "
    "becomes new_str), insert (new_str after line insert_line; 0 = at the top), append (new_str at the end). "
    "An existing file must be read first (fs_read). Keeps the file's encoding and line endings."
)
PARAMS = [
    Param("path", "string", "File path, relative to the working directory; parent directories are created."),
    Param("command", "string", "create, str_replace, insert or append."),
    Param("file_text", "string", "create: the whole content.", required=False, default=""),
    Param("old_str", "string", "str_replace: exact text, present once.", required=False, default=""),
    Param("new_str", "string", "str_replace, insert, append: the new text.", required=False, default=""),
    Param("insert_line", "integer", "insert: the line to insert after (0 = at the top).", required=False, default=0),
    Param("summary", "string", "What the change does, in a few words.", required=False, default=""),
]
LINE = re.compile(r"[^\n]*\n|[^\n]+$")


def command_named(value: Any) -> str | None:
    """The command `value` names (any case), or None."""
    text = str(value or "").strip().lower()
    return text if text in COMMANDS else None


def _arguments_problem(command: str, args: dict[str, Any]) -> str | None:
    """What is missing for `command` (checked before anything is read), or None."""
    if command == "str_replace" and not args.get("old_str"):
        return EMPTY_OLD
    if command in ("insert", "append") and not args.get("new_str"):
        return EMPTY_NEW.format(command=command)
    return None


def _str_replace(file: TextFile, old: str, new: str) -> str | dict[str, Any]:
    """The file's text with `old` (present once) replaced, or the error object."""
    text = file.logical()
    old, new = as_file_text(file, old), as_file_text(file, new)
    starts = occurrences(text, old)
    if not starts:
        bare = strip_gutters(old)
        if bare != old and occurrences(text, bare):
            if has_gutters(new):
                return error(GUTTER_IN_NEW)
            old, starts = bare, occurrences(text, bare)
    if not starts:
        return error(NOT_FOUND)
    if len(starts) > 1:
        return error(MANY.format(n=len(starts)))
    if old == new:
        return error(NO_CHANGE)
    return replace(text, starts, old, new, file.eol == "mixed")


def _insert(file: TextFile, after: int, new: str) -> str | dict[str, Any]:
    """The file's text with `new` put after line `after` (0: first), or the error object. The
    inserted text ends with a line break, except after a last line that has none: then the break
    goes before it, and the file still ends without one."""
    text = file.logical()
    lines = LINE.findall(text)
    if after < 0 or after > len(lines):
        return error(BAD_LINE.format(n=after, total=len(lines)))
    new = as_file_text(file, new)
    if after == len(lines) and lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
        new = new.removesuffix("\n")
    elif not new.endswith("\n"):
        new += "\n"
    if file.eol == "mixed" and after:  # the line break of the line it follows
        ending = "\r\n" if lines[after - 1].endswith("\r\n") else "\n"
        new = new.replace("\r\n", "\n").replace("\n", ending)
    return "".join(lines[:after] + [new] + lines[after:])


def _append(file: TextFile, new: str) -> str:
    """The file's text with `new` at its end, after a line break when it has no final one."""
    text = file.logical()
    new = as_file_text(file, new)
    return text + ("\n" if text and not text.endswith("\n") else "") + new


def write(args: dict[str, Any], ctx: ToolContext, plan_only: bool = False) -> ToolResult:
    """Run one fs_write call (see the module docstring); `plan_only`: write nothing."""
    raw = str(args.get("path") or "")
    if not raw.strip():
        return result(error(PATH_REQUIRED))
    command = command_named(args.get("command"))
    if command is None:
        return result(error(INVALID_COMMAND.format(command=args.get("command"))))
    problem = _arguments_problem(command, args)
    if problem is not None:
        return result(error(problem))
    where = resolve(ctx, raw)
    from mm.fs import FileRefused, write_target

    try:
        write_target(where, str(where))
    except FileRefused as err:
        return result(error(str(err)), where)
    exists = where.exists()
    if command != "create" and not exists:
        return result(error(DOES_NOT_EXIST.format(path=where)), where)
    file = None
    if exists:
        file, refusal = load(ctx, where, whole=command == "create", need_text=command != "create")
        if refusal is not None:
            return result(refusal, where)
    before = file.logical() if file is not None else None
    if command == "create":
        text = str(args.get("file_text") or "")
        after = as_file_text(file, text) if file is not None else text
    elif command == "str_replace":
        after = _str_replace(file, str(args["old_str"]), str(args.get("new_str") or ""))
    elif command == "insert":
        after = _insert(file, int(args.get("insert_line") or 0), str(args["new_str"]))
    else:
        after = _append(file, str(args["new_str"]))
    if isinstance(after, dict):
        return result(after, where)
    payload = {"success": True, "operation": command, "path": str(where), "message": _message(command, args, exists),
               "summary": str(args.get("summary") or "")}
    if command == "create" and file is not None and after == before:
        return result({**payload, "message": UNCHANGED}, where)
    return commit(ctx, where, file, before, after, payload, command, plan_only)


def _message(command: str, args: dict[str, Any], existed: bool) -> str:
    if command == "create":
        return OVERWRITTEN if existed else CREATED
    if command == "insert":
        return INSERTED.format(n=int(args.get("insert_line") or 0))
    return REPLACED if command == "str_replace" else APPENDED


class FsWrite:
    """The fs_write tool (mnemo-tools.md, fs_write commands)."""

    name = "fs_write"
    kind = "edit"
    description = DESCRIPTION
    needs_permission = True
    json_text_params = ("file_text",)  # mm.tools.coerce: an object or array becomes JSON text
    params = PARAMS

    async def plan(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """What the call would change, written nowhere (the permission prompt's diff)."""
        return await asyncio.to_thread(write, args, ctx, True)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run the call in a worker thread; see `write`."""
        return await asyncio.to_thread(write, args, ctx)
