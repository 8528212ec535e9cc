"""The todo lists of one conversation, by scope (mnemo-tools.md §Track multi-step work;
notes/mnemoai.md §2.8; docs/tools-todo.md).

Lists live in memory, one board per conversation: two mm processes, or two ACP sessions of one,
never see each other's lists (the reference's "namespaced per running instance").
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from mm.tools.base import PlanEntry

STATUSES = ("pending", "in_progress", "completed")
KEYS = ("content", "status", "activeForm")
SCOPE_CHARS = 64
DEFAULT_SCOPE = "default"
INVALID_JSON = "Invalid JSON format: {error}"
NOT_A_LIST = "todos must be a JSON array of todo items, not {kind}"
NOT_AN_ITEM = "Each todo must be an object with 'content', 'status', and 'activeForm' — item {n} is {kind}"
MISSING_KEYS = "Each todo must have 'content', 'status', and 'activeForm' — item {n} has no {missing}"
INVALID_STATUS = "Invalid status: {status}. Must be: pending, in_progress, or completed"
EMPTY_TEXT = "'{key}' of item {n} must be a non-empty string"
SEVERAL_IN_PROGRESS = ("Expected exactly 1 in_progress task, but found {n}. You should have exactly one task "
                       "in_progress at a time.")
CHECKLIST_HEAD = "📋 todo: {done}/{total} completed"
CHECKLIST_SCOPE = "📋 todo ({scope}): {done}/{total} completed"
MARKS = {"completed": "✔", "in_progress": "▶", "pending": "☐"}
KINDS = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "a number",
         float: "a number", type(None): "null"}


def sanitize_scope(scope: Any) -> str:
    """`scope` as a list's name: every character but [A-Za-z0-9_-] replaced by `_`, cut to 64
    characters; empty (or only spaces) is `default` (notes §2.8)."""
    token = re.sub(r"[^A-Za-z0-9_-]", "_", str(scope or "").strip()) or DEFAULT_SCOPE
    return token[:SCOPE_CHARS]


def kind_of(value: Any) -> str:
    """`an object`, `a string`… — what a JSON value is, for a message."""
    return KINDS.get(type(value), type(value).__name__)


def parse_todos(todos: Any) -> list[dict[str, str]] | str:
    """The list `todos` holds (a list, or a JSON string of one), each item reduced to its three
    keys, its status normalised (case, `-` or space for `_`) — or the message saying what is wrong
    with it, the first problem found."""
    if isinstance(todos, str):
        try:
            todos = json.loads(todos)
        except ValueError as err:
            return INVALID_JSON.format(error=err)
    if not isinstance(todos, list):
        return NOT_A_LIST.format(kind=kind_of(todos))
    items = []
    for n, item in enumerate(todos, 1):
        if not isinstance(item, dict):
            return NOT_AN_ITEM.format(n=n, kind=kind_of(item))
        missing = [k for k in KEYS if k not in item]
        if missing:
            return MISSING_KEYS.format(n=n, missing=" or ".join(f"'{k}'" for k in missing))
        status = item["status"]
        normal = re.sub(r"[-\s]+", "_", status.strip().lower()) if isinstance(status, str) else status
        if normal not in STATUSES:
            return INVALID_STATUS.format(status=status)
        for key in ("content", "activeForm"):
            if not isinstance(item[key], str) or not item[key].strip():
                return EMPTY_TEXT.format(key=key, n=n)
        items.append({"content": item["content"], "status": normal, "activeForm": item["activeForm"]})
    return items


def counts(items: list[dict[str, str]]) -> dict[str, int]:
    """How many items have each status."""
    return {status: sum(i["status"] == status for i in items) for status in STATUSES}


def checklist(items: list[dict[str, str]], scope: str) -> str:
    """The list as the user sees it: `📋 todo: 1/3 completed`, then one line per item, `✔` done,
    `▶` under way (its activeForm), `☐` to do."""
    done = counts(items)["completed"]
    head = (CHECKLIST_HEAD if scope == DEFAULT_SCOPE else CHECKLIST_SCOPE).format(scope=scope, done=done,
                                                                                   total=len(items))
    rows = [f"{MARKS[i['status']]} {i['activeForm'] if i['status'] == 'in_progress' else i['content']}" for i in items]
    return "\n".join([head, *rows])


def plan_of(items: list[dict[str, str]]) -> list[PlanEntry]:
    """The list as a plan for front ends (an ACP `plan` update): every item, priority medium."""
    return [PlanEntry(i["content"], i["status"]) for i in items]


@dataclass
class TodoBoard:
    """The lists of one conversation by sanitised scope, and the scope front ends show."""

    lists: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    shown: str | None = None  # the scope whose list the user sees (the last one written)
