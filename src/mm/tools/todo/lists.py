"""todo_write, todo_read and todo_clear (mnemo-tools.md §Track multi-step work; notes/mnemoai.md
§2.8; docs/tools-todo.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from mm.tools.base import Param, ToolContext, ToolKind, ToolResult
from mm.tools.json_reply import refusal, reply
from mm.tools.todo.board import TodoBoard, checklist, counts, parse_todos, plan_of, sanitize_scope

UPDATED = "Todo list updated: {done}/{total} completed"
NO_LIST = "No active todo list"
CLEARED = "Todo list cleared"
CLEARED_SHOWN = "📋 todo list cleared"
SCOPE_STORED_AS = "The scope {given!r} is stored as {stored!r}: only letters, digits, _ and - are kept (64 at most)."
SCOPE = "The list's name, for separate workstreams; read and clear it with the same scope."
TODOS = ("The whole list, replacing the previous one: an array of {\"content\": what to do (imperative), "
         "\"status\": pending | in_progress | completed, \"activeForm\": the same in present continuous "
         "(\"Running tests\")}. Keep exactly one item in_progress.")
ITEM_SCHEMA = {"type": "object", "properties": {
    "content": {"type": "string"},
    "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
    "activeForm": {"type": "string"}}, "required": ["content", "status", "activeForm"]}


def scope_param() -> Param:
    return Param("scope", "string", SCOPE, required=False, default="default")


@dataclass
class TodoTool:
    """What the three tools share: the conversation's TodoBoard."""

    board: TodoBoard
    kind: ToolKind = "other"
    needs_permission: bool = False

    @staticmethod
    def scope_note(given: Any, stored: str) -> dict[str, str]:
        """`{"scope_note": …}` when the scope was stored under another name, else {}."""
        given = str(given if given is not None else "")
        return {} if given == stored else {"scope_note": SCOPE_STORED_AS.format(given=given, stored=stored)}


class TodoWrite(TodoTool):
    """todo_write: validates and replaces a scope's list; the user is shown it (preview, plan)."""
    name = "todo_write"
    description = ("Write the todo list for a task of 3 steps or more, and update it as you go: mark an item "
                   "in_progress when you start it and completed as soon as it is done. Each call replaces the list.")
    params = [Param("todos", "array", TODOS, items=ITEM_SCHEMA), scope_param()]

    @staticmethod
    def normalize_arguments(args: Any) -> Any:
        """A JSON string holding the array becomes the array; anything else that is not an
        array reaches `run` as sent (in an _AsSent), for parse_todos to say what is wrong with it
        in the reference's words rather than the generic type fault."""
        todos = args.get("todos") if isinstance(args, dict) else None
        if todos is None or isinstance(todos, list):
            return args
        if isinstance(todos, str):
            try:
                decoded = json.loads(todos)
            except ValueError:
                decoded = None
            if isinstance(decoded, list):
                return {**args, "todos": decoded}
        return {**args, "todos": _AsSent([todos])}

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        todos = args["todos"]
        items = parse_todos(todos[0] if isinstance(todos, _AsSent) else todos)
        if isinstance(items, str):
            return refusal(items)
        given = args.get("scope", "default")
        scope = sanitize_scope(given)
        self.board.lists[scope] = items
        self.board.shown = scope
        n = counts(items)
        answer: dict[str, Any] = {"success": True, "total": len(items), **n,
                                  "message": UPDATED.format(done=n["completed"], total=len(items))}
        if n["in_progress"] > 1:
            from mm.tools.todo.board import SEVERAL_IN_PROGRESS

            answer["warning"] = SEVERAL_IN_PROGRESS.format(n=n["in_progress"])
        return reply(answer | self.scope_note(given, scope), preview=checklist(items, scope), plan=plan_of(items))


class TodoRead(TodoTool):
    """todo_read: a scope's list, or the reference's "No active todo list"."""
    name = "todo_read"
    description = "Read the current todo list."
    params = [scope_param()]

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        scope = sanitize_scope(args.get("scope", "default"))
        items = self.board.lists.get(scope)
        if items is None:
            return reply({"todos": [], "message": NO_LIST})
        return reply({"todos": items, "count": len(items)})


class TodoClear(TodoTool):
    """todo_clear: deletes a scope's list (and takes it from the user's view when it is shown)."""
    name = "todo_clear"
    description = "Delete the todo list, when its work is done or no longer relevant."
    params = [scope_param()]

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        scope = sanitize_scope(args.get("scope", "default"))
        self.board.lists.pop(scope, None)
        if self.board.shown != scope:  # the list the user sees is another one: it stays
            return reply({"success": True, "message": CLEARED})
        self.board.shown = None
        return reply({"success": True, "message": CLEARED}, preview=CLEARED_SHOWN, plan=[])


class _AsSent(list):
    """A `todos` that is no array, as the model sent it, carried through argument coercion (which
    takes any list for an array) to parse_todos, which says what is wrong with it."""
