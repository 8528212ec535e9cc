"""The `edit_file` tool: replacements in an existing file, all resolved against the original
text, written atomically or not at all (mm-tools.md §edit_file). The work is in
`mm.tools.edit.apply`, imported on the first call (start-up time)."""

from __future__ import annotations

import asyncio
from typing import Any

from mm.tools.base import Param, ToolContext, ToolResult
from mm.tools.edit.args import NEW_ALIASES, OLD_ALIASES

DESCRIPTION = (
    "Change an existing file by replacing text. Each edit has `old`, text copied exactly from the "
    "file (indentation included) that appears exactly once, and `new`, its replacement (empty "
    "deletes it). To change several places send several edits; they are all matched against the "
    "original file and must not overlap. If any edit fails, nothing is written. "
    "Use write_file to create a file or rewrite it whole."
)
EDIT_ITEM = {
    "type": "object",
    "properties": {
        "old": {"type": "string", "description": "Exact text to find, present exactly once."},
        "new": {"type": "string", "description": "Replacement; empty deletes the matched text."},
    },
    "required": ["old", "new"],
}


class EditFile:
    """The edit_file tool (mm-tools.md §edit_file); `read_first`: readBeforeWrite."""

    def __init__(self, read_first: bool = False):
        self.read_first = read_first

    name = "edit_file"
    kind = "edit"
    description = DESCRIPTION
    needs_permission = True
    params = [
        Param("path", "string", "Path of an existing file, relative to the working directory."),
        Param("edits", "array", "Replacements, all resolved against the original file: "
              '[{"old": exact text present once, "new": its replacement}].', items=EDIT_ITEM),
        Param("dry_run", "boolean", "Report what would change, write nothing.", required=False, default=False),
    ]

    @staticmethod
    def normalize_arguments(args: dict[str, Any]) -> dict[str, Any]:
        """Put the shapes small models send into the declared one before coercion.

        old/new (or old_string/new_string, old_str/new_str) at the top level become one edit, and
        one {old, new} object given as `edits` becomes a list of it; anything else is left as sent.
        """
        if not isinstance(args, dict):
            return args
        aliases = set(OLD_ALIASES) | set(NEW_ALIASES)
        if "edits" not in args and any(k in args for k in OLD_ALIASES):
            edit = {k: v for k, v in args.items() if k in aliases}
            return {**{k: v for k, v in args.items() if k not in aliases}, "edits": [edit]}
        edits = args.get("edits")
        if isinstance(edits, dict) and any(k in edits for k in OLD_ALIASES):
            return {**args, "edits": [edits]}
        return args

    async def plan(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """What the call would change, written nowhere (the permission prompt's diff)."""
        from mm.tools.edit.apply import edit

        return await asyncio.to_thread(edit, args, ctx, True, self.read_first)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run the edits in a worker thread; see `edit`."""
        from mm.tools.edit.apply import edit

        return await asyncio.to_thread(edit, args, ctx, False, self.read_first)
