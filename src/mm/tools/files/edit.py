"""The `file_edit` tool: exact-string replacement, validated for existence and uniqueness
(mnemo-tools.md, Write and edit files, file_edit matching; notes/mnemoai.md §2.3;
docs/tools-files.md). Not mm's edit_file: nothing is matched loosely.

`old_string` must be in the file exactly; when it is not, a leading `cat -n` gutter is taken off
each of its lines and the match tried again (`new_string` is never altered — and refused when it
carries line numbers too). More than one occurrence without `replace_all` is an error with up to
three sample locations; a replacement that changes nothing is refused.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from mm.tools.base import Param, ToolContext, ToolResult
from mm.tools.files.common import error, resolve, result
from mm.tools.files.matching import as_file_text, has_gutters, occurrences, replace, samples, strip_gutters
from mm.tools.files.writing import commit, load

PATH_REQUIRED = "file_path is required: the path of the file to edit"
FILE_NOT_FOUND = "File not found: {path}"
NOT_FOUND_STEPS = ["Check if the file path is correct", "Verify the file exists with glob_search or execute_bash",
                   "Make sure you're using an absolute path, not a relative path"]
NOT_A_FILE = "Path is not a file: {path}"
NOT_A_FILE_STEPS = ["This path points to a directory, not a file"]
NO_MATCH = "String to replace not found in file"
NO_MATCH_STEPS = ["Make sure you read the file with fs_read FIRST",
                  "Copy the EXACT text from the file (including spaces/tabs)",
                  "Check for invisible characters (tabs vs spaces)", "Verify line endings (\\n vs \\r\\n)",
                  "Use a larger context snippet to ensure exact match"]
PREVIEW_CHARS = 100
AMBIGUOUS = "Found {n} occurrences of old_string, but replace_all=False"
AMBIGUOUS_STEPS = ["Option 1: Set replace_all=True to replace all {n} occurrences",
                   "Option 2: Make old_string more specific by including more surrounding context",
                   "Example: Include the line before and after to make it unique"]
NO_CHANGE = "Replacement produced no changes (old_string and new_string are identical)"
EMPTY_OLD = ("old_string is empty: give the exact text to replace (an empty old_string only fills an empty file); "
             "to add text, quote a neighbouring line and repeat it in new_string")
GUTTER_IN_NEW = ("old_string matched once its line numbers were taken off, and new_string starts each line with a "
                 "line number too (as fs_read shows them): send new_string without them; nothing was written")
REPLACED = "Successfully replaced {n} occurrence(s) in {path}"
DESCRIPTION = (
    "Replace old_string with new_string in an existing file. old_string must match the file exactly "
    "(indentation included) and once, unless replace_all. Read the file first (fs_read)."
)
PARAMS = [
    Param("file_path", "string", "Path of the file, relative to the working directory."),
    Param("old_string", "string", "Exact text to replace, copied from the file."),
    Param("new_string", "string", 'Replacement text; pass "" to delete old_string.'),
    Param("replace_all", "boolean", "Replace every occurrence.", required=False, default=False),
]
ALIASES = {"old_str": "old_string", "new_str": "new_string", "old": "old_string", "new": "new_string"}


def _preview(old: str) -> str:
    return old[:PREVIEW_CHARS] + ("..." if len(old) > PREVIEW_CHARS else "")


def edit(args: dict[str, Any], ctx: ToolContext, plan_only: bool = False) -> ToolResult:
    """Run one file_edit call (see the module docstring); `plan_only`: write nothing."""
    raw = str(args.get("file_path") or "")
    if not raw.strip():
        return result(error(PATH_REQUIRED))
    where = resolve(ctx, raw)
    if not os.path.exists(where):
        return result(error(FILE_NOT_FOUND.format(path=where), next_steps=NOT_FOUND_STEPS))
    if os.path.isdir(where):
        return result(error(NOT_A_FILE.format(path=where), next_steps=NOT_A_FILE_STEPS), where)
    from mm.fs import FileRefused, write_target

    try:
        write_target(where, str(where))
    except FileRefused as err:
        return result(error(str(err)), where)
    file, refusal = load(ctx, where, whole=False)
    if refusal is not None:
        return result(refusal, where)
    text = file.logical()
    old, new = as_file_text(file, str(args.get("old_string") or "")), as_file_text(file, str(args.get("new_string") or ""))
    if not old:
        if text:
            return result(error(EMPTY_OLD), where)
        starts = [0]
    else:
        starts = occurrences(text, old)
    if not starts:
        bare = strip_gutters(old)
        if bare != old and occurrences(text, bare):
            if has_gutters(new):
                return result(error(GUTTER_IN_NEW), where)
            old, starts = bare, occurrences(text, bare)
    if not starts:
        return result(error(NO_MATCH, old_string_preview=_preview(old), next_steps=NO_MATCH_STEPS), where)
    replace_all = bool(args.get("replace_all"))
    if len(starts) > 1 and not replace_all:
        return result(error(AMBIGUOUS.format(n=len(starts)), occurrences_sample=samples(text, starts),
                            next_steps=[s.format(n=len(starts)) for s in AMBIGUOUS_STEPS]), where)
    after = replace(text, starts if replace_all else starts[:1], old, new, file.eol == "mixed")
    if after == text:
        return result(error(NO_CHANGE), where)
    count = len(starts) if replace_all else 1
    old_lines, new_lines = len(old.split("\n")), len(new.split("\n"))
    payload = {"success": True, "file_path": str(where), "replacements": count, "old_lines": old_lines,
               "new_lines": new_lines, "lines_delta": new_lines - old_lines,
               "message": REPLACED.format(n=count, path=where)}
    return commit(ctx, where, file, text, after, payload, "file_edit", plan_only)


class FileEdit:
    """The file_edit tool (mnemo-tools.md, file_edit matching)."""

    name = "file_edit"
    kind = "edit"
    description = DESCRIPTION
    needs_permission = True
    params = PARAMS

    @staticmethod
    def normalize_arguments(args: dict[str, Any]) -> dict[str, Any]:
        """fs_write's names given to file_edit: `path` for `file_path` (the same path sent under
        both names counts once; two different ones stay, and the call is refused as invalid: it
        fails closed, as the reference's client does), old_str/new_str (and old/new) for
        old_string/new_string."""
        if not isinstance(args, dict):
            return args
        out = {ALIASES.get(k, k): v for k, v in args.items() if not (k in ALIASES and ALIASES[k] in args)}
        if "path" in out and ("file_path" not in out or out["file_path"] == out["path"]):
            out["file_path"] = out.pop("path")
        return out

    async def plan(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """What the call would change, written nowhere (the permission prompt's diff)."""
        return await asyncio.to_thread(edit, args, ctx, True)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run the call in a worker thread; see `edit`."""
        return await asyncio.to_thread(edit, args, ctx)
