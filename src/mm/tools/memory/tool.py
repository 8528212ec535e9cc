"""The `memory` tool: add, replace or remove an entry of MEMORY.md (mnemo-tools.md §Conditional
tools; notes/mnemoai.md §2.11; docs/memory.md)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from mm.tools.base import FileChange, Param, ToolContext, ToolKind, ToolResult
from mm.tools.memory.store import NOT_UPDATED, MemoryFile, MemoryRefused

ACTIONS = ("add", "replace", "remove")
UNKNOWN_ACTION = "Unknown action {action!r}. Use 'add', 'replace', or 'remove'."  # the reference's
DESCRIPTION = (
    "Maintain your durable memory across sessions: MEMORY.md, shown whole in your system prompt at the start "
    "of every session (and again after compaction), so keep it small and dense. Save at once, without being "
    "asked, what will matter next session: the user's preferences and corrections, environment facts, project "
    "conventions, hard-won lessons. Not what the repository already says. Tag each entry [user], [feedback], "
    "[project] or [reference]; pack related facts into one entry. It is capped at {limit} characters: when an add "
    "is refused, consolidate with replace or remove first.")
PARAMS = (
    Param("action", "string", "add, replace or remove."),
    Param("text", "string", "The entry to add, or the new text for replace.", required=False, default=""),
    Param("old_text", "string", "For replace and remove: a substring found in exactly one entry.",
          required=False, default=""),
)


def action_of(args: dict[str, Any]) -> str:
    """The call's action trimmed and in lower case (the reference's normalisation)."""
    return str(args.get("action") or "").strip().lower()


@dataclass
class Memory:
    """memory: kind `edit` (the change is MEMORY.md's diff); asks the permission when `yolo` is
    off, for add, replace and remove only (notes §3: "Update memory?")."""

    file: MemoryFile
    name: str = "memory"
    kind: ToolKind = "edit"
    description: str = ""
    params: list[Param] = field(default_factory=lambda: list(PARAMS))
    needs_permission: bool = True

    def __post_init__(self) -> None:
        self.description = DESCRIPTION.format(limit=self.file.max_chars)

    @staticmethod
    def normalize_arguments(args: Any) -> Any:
        """`new_text` (the name the reference's own refusal taught) read as `text` when the call
        has no `text`; anything else unchanged."""
        if isinstance(args, dict) and "new_text" in args and "text" not in args:
            args = {("text" if k == "new_text" else k): v for k, v in args.items()}
        return args

    def requires_permission(self, args: dict[str, Any], ctx: ToolContext | None = None) -> bool:
        """Only a call that may write asks (an unknown action changes nothing)."""
        return action_of(args) in ACTIONS

    def title(self, args: dict[str, Any], ctx: ToolContext | None = None) -> str:
        """`memory: <action> <text or old_text>` (one line: mm.tools.titles cuts it)."""
        what = args.get("text") or args.get("old_text") or ""
        return f"{self.name}: {args.get('action', '')} {what}".rstrip()

    async def plan(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """What the call would do, written nowhere: its change of MEMORY.md, or its refusal
        (the permission prompt shows it)."""
        return await self._do(args, write=False)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Apply the action; the reference's texts, refusals failed. Never raises."""
        return await self._do(args, write=True)

    async def _do(self, args: dict[str, Any], write: bool) -> ToolResult:
        action = action_of(args)
        if action not in ACTIONS:
            return ToolResult(UNKNOWN_ACTION.format(action=args.get("action")), failed=True)
        how = self.file.apply if write else self.file.plan
        try:  # in a thread: the folder's lock may wait for another mm
            before, after, message = await asyncio.to_thread(how, action, args.get("text") or "",
                                                             args.get("old_text") or "")
        except MemoryRefused as err:
            return ToolResult(NOT_UPDATED.format(reason=err), failed=True, locations=[self.file.path])
        return ToolResult(message, change=FileChange(self.file.path, before if before else None, after),
                          locations=[self.file.path], preview=message)
