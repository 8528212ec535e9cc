"""The `todo` tool group: todo_write, todo_read and todo_clear (mnemo-tools.md §Track multi-step
work; docs/tools-todo.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping


def tools(config: Any, env: Mapping[str, str], cwd: Path | None) -> list:
    """The three tools, sharing the conversation's TodoBoard."""
    from mm.tools.todo.board import TodoBoard
    from mm.tools.todo.lists import TodoClear, TodoRead, TodoWrite

    board = TodoBoard()
    return [TodoWrite(board), TodoRead(board), TodoClear(board)]
