"""The `tasks` tool group: seven tools for commands run in the background (mnemo-tools.md §Run
work in the background; docs/tools-tasks.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping


def tools(config: Any, env: Mapping[str, str], cwd: Path | None) -> list:
    """The seven tools, sharing one TaskTable (the conversation's tasks, logs in
    `$XDG_STATE_HOME/mm/tasks` as `env` says)."""
    from mm.tools.tasks import actions as t
    from mm.tools.tasks.logs import tasks_dir
    from mm.tools.tasks.table import TaskTable

    table = TaskTable(tasks_dir(env))
    return [cls(table) for cls in (t.StartBackgroundTask, t.GetTaskStatus, t.GetTaskOutput, t.ListBackgroundTasks,
                                   t.CancelBackgroundTask, t.WaitForTask, t.ClearCompletedTasks)]
