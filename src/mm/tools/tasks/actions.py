"""The seven background-task tools (mnemo-tools.md §Run work in the background; notes/mnemoai.md
§2.7 for their answers and texts; docs/tools-tasks.md for mm's decisions)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mm.tools.base import Param, ToolContext, ToolKind, ToolResult
from mm.tools.json_reply import refusal, reply
from mm.tools.tasks.table import Task, TaskTable

NOT_FOUND = "Task not found: {id}"
NOT_FOUND_HINT = "Use list_background_tasks() to see all tasks"
NO_COMMAND = "No command provided"
NO_DIRECTORY = "Working directory does not exist: {path}"
NOT_A_DIRECTORY = "Working directory is not a directory: {path}"
PROTECTED_DIRECTORY = ("Refusing to run a background task with its working directory inside a protected system "
                       "location. {reason}")
NO_LOG = "The task's log could not be created in {directory}: {reason}"
NOT_STARTED = "The task could not be started: {reason}"
STARTED = "Task started in background: {description}"
CHECK_STATUS = 'get_task_status(task_id="{id}")'
GET_OUTPUT = 'get_task_output(task_id="{id}")'
NOT_RUNNING = "Task is not running (status: {status})"
CANCELLED = "Task {id} cancelled"
TIMED_OUT = "Timeout after {seconds} seconds"
TIMED_OUT_HINT = 'Task still running. Use get_task_status(task_id="{id}") to check later.'
WAIT_CANCELLED = "The wait was cancelled with the turn; the task goes on running."
NEGATIVE_WAIT = "timeout_seconds must be 0 or more (got {seconds})"
REMOVED = "Removed {n} completed tasks"
LOG_CUT = "[... the start of the log is left out: the whole log is {path} ...]"
WAIT_LINES = 50  # wait_for_task returns the last 50 lines (notes §2.7)
MAX_WAIT = 3600.0  # seconds: the reference's client deadline caps a wait at 1 h (notes §2.7)
ROOM_FOR_FIELDS = 1000  # characters of maxOutput kept for the other fields of an answer with output

TASK_ID = "The id start_background_task returned."


@dataclass
class TaskTool:
    """What the seven tools share: the conversation's TaskTable."""

    table: TaskTable

    def find(self, args: dict[str, Any]) -> Task | ToolResult:
        """The task `args["task_id"]` names, or the not-found answer."""
        task_id = str(args.get("task_id", ""))
        task = self.table.get(task_id)
        if task is None:
            return refusal(NOT_FOUND.format(id=task_id.strip()), suggestion=NOT_FOUND_HINT)
        return task


class StartBackgroundTask(TaskTool):
    """start_background_task: checks, then starts a task; kind `execute`, asks with `yolo: false`."""
    name = "start_background_task"
    kind: ToolKind = "execute"
    needs_permission = True
    description = ("Start a shell command (bash -c) in the background, for work too slow to wait on: test suites, "
                   "builds, installs, servers. Returns an 8-character task id at once; follow it with "
                   "get_task_status, get_task_output or wait_for_task. Tasks stop when mm exits.")
    params = [
        Param("command", "string", "The shell command to run."),
        Param("description", "string", "What the task does, in a few words (default: the command's start).",
              required=False, default=""),
        Param("working_directory", "string", "Directory to run in (default: the working directory).",
              required=False, default=""),
    ]

    def title(self, args: dict[str, Any], ctx: Any = None) -> str:
        """`start_background_task: <command>` (the call's header and ACP title)."""
        return f"{self.name}: {args.get('command', '')}"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Check the command (safety floor) and the working directory (path policy), then start it."""
        from mm.tools.tasks.policy import floor_refusal
        from mm.tools.protected import write_refusal

        from mm.tools.supervised import ARGUMENT_REASON

        command = args.get("command") or ""
        if not command.strip():
            return refusal(NO_COMMAND)
        if "\x00" in command:  # no program can be given it: said now, not as the task's error
            return refusal(NOT_STARTED.format(reason=ARGUMENT_REASON))
        where = args.get("working_directory") or ""
        cwd = ctx.resolve(where) if where.strip() else ctx.cwd
        blocked = floor_refusal(command, cwd)
        if blocked is not None:
            return refusal(blocked, blocked=True, command=command)
        if not cwd.exists():
            return refusal(NO_DIRECTORY.format(path=cwd))
        if not cwd.is_dir():
            return refusal(NOT_A_DIRECTORY.format(path=cwd))
        reason = write_refusal(str(cwd))
        if reason is not None:
            return refusal(PROTECTED_DIRECTORY.format(reason=reason), blocked=True, working_directory=str(cwd))
        try:
            task = self.table.start(command, args.get("description") or "", cwd)
        except OSError as err:
            return refusal(NO_LOG.format(directory=self.table.directory, reason=err.strerror or err))
        if task.status == "error":
            return refusal(NOT_STARTED.format(reason=task.error), task_id=task.id)
        return reply({"success": True, "task_id": task.id, "message": STARTED.format(description=task.description),
                      "check_status": CHECK_STATUS.format(id=task.id), "get_output": GET_OUTPUT.format(id=task.id)})

    async def close(self) -> None:
        """The conversation ends: the tasks still running are stopped (said on stderr)."""
        await self.table.close()


class GetTaskStatus(TaskTool):
    """get_task_status: the task's record (status, timings, return code, log file)."""
    name = "get_task_status"
    kind: ToolKind = "read"
    needs_permission = False
    description = ("A background task's status (pending, running, completed, failed, error, cancelled), timings, "
                   "return code and log file.")
    params = [Param("task_id", "string", TASK_ID)]

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        task = self.find(args)
        if isinstance(task, ToolResult):
            return task
        return reply({"success": True, "task_id": task.id, "status": task.status, "command": task.command,
                      "description": task.description, "working_directory": str(task.working_directory),
                      "created_at": task.created_at, "started_at": task.started_at,
                      "completed_at": task.completed_at, "duration_seconds": task.duration(),
                      "return_code": task.return_code, "error": task.error, "output_file": str(task.log)})


class GetTaskOutput(TaskTool):
    """get_task_output: the log's last `tail_lines` lines (≤ 0: all) and its line count."""
    name = "get_task_output"
    kind: ToolKind = "read"
    needs_permission = False
    description = "The output (stdout and stderr) a background task wrote so far, running or finished."
    params = [Param("task_id", "string", TASK_ID),
              Param("tail_lines", "integer", "Lines from the end to return; 0 or less returns the whole log.",
                    required=False, default=50)]

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        task = self.find(args)
        if isinstance(task, ToolResult):
            return task
        output, total = await read_output(task, args.get("tail_lines", 50), ctx, count=True)
        return reply({"success": True, "task_id": task.id, "status": task.status, "output": output,
                      "output_file": str(task.log), "total_lines": total})


class ListBackgroundTasks(TaskTool):
    """list_background_tasks: the tasks, newest first, and a count per status."""
    name = "list_background_tasks"
    kind: ToolKind = "read"
    needs_permission = False
    description = "The background tasks of this conversation, newest first, with a summary count."
    params = [Param("include_completed", "boolean", "Include the finished tasks (completed, failed, error, cancelled).",
                    required=False, default=True)]

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        shown = [t for t in reversed(list(self.table.tasks.values()))
                 if args.get("include_completed", True) or not t.finished]
        tasks = [{"id": t.id, "status": t.status, "description": t.description, "created_at": t.created_at,
                  "return_code": t.return_code} for t in shown]
        summary = {"total": len(shown)} | {s: sum(t.status == s for t in shown) for s in ("running", "completed", "failed")}
        return reply({"success": True, "tasks": tasks, "summary": summary})


class CancelBackgroundTask(TaskTool):
    """cancel_background_task: kills a running task's process group."""
    name = "cancel_background_task"
    kind: ToolKind = "execute"
    needs_permission = False
    description = "Stop a running background task: its whole process group is killed."
    params = [Param("task_id", "string", TASK_ID)]

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        task = self.find(args)
        if isinstance(task, ToolResult):
            return task
        if task.finished:
            return refusal(NOT_RUNNING.format(status=task.status))
        await self.table.cancel(task)
        return reply({"success": True, "message": CANCELLED.format(id=task.id), "task_id": task.id,
                      "status": task.status})


class WaitForTask(TaskTool):
    """wait_for_task: waits for the task's end, `timeout_seconds` at most, stopped with the turn."""
    name = "wait_for_task"
    kind: ToolKind = "execute"
    needs_permission = False
    description = ("Wait until a background task finishes, then return its status and last 50 lines of output. "
                   "Cancelling the turn stops the wait, not the task.")
    params = [Param("task_id", "string", TASK_ID),
              Param("timeout_seconds", "number", "How long to wait at most, in seconds (at most 3600).",
                    required=False, default=300)]

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        from mm.tools.coerce import render_value
        from mm.tools.waiting import Cancelled, unless_cancelled

        task = self.find(args)
        if isinstance(task, ToolResult):
            return task
        seconds = args.get("timeout_seconds", 300)
        if seconds < 0:
            return refusal(NEGATIVE_WAIT.format(seconds=seconds))
        seconds = min(seconds, MAX_WAIT)
        try:
            await unless_cancelled(asyncio.wait_for(task.ended.wait(), seconds), ctx.cancelled)
        except Cancelled:
            return refusal(WAIT_CANCELLED, task_id=task.id, status=task.status)
        except asyncio.TimeoutError:
            return refusal(TIMED_OUT.format(seconds=render_value(seconds)), task_id=task.id,
                           status=task.status, suggestion=TIMED_OUT_HINT.format(id=task.id))
        output, _ = await read_output(task, WAIT_LINES, ctx)
        return reply({"success": task.status == "completed", "task_id": task.id, "status": task.status,
                      "return_code": task.return_code, "error": task.error, "output": output,
                      "duration_seconds": task.duration()})


class ClearCompletedTasks(TaskTool):
    """clear_completed_tasks: forgets the finished tasks, deletes their logs."""
    name = "clear_completed_tasks"
    kind: ToolKind = "other"
    needs_permission = False
    description = "Remove the finished background tasks from the list and delete their logs."
    params: list[Param] = []

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        removed = self.table.clear()
        return reply({"success": True, "message": REMOVED.format(n=len(removed)), "removed_count": len(removed)})


async def read_output(task: Task, lines: int, ctx: ToolContext, count: bool = False) -> tuple[str, int | None]:
    """The last `lines` lines of `task`'s log as text (≤ 0: all of it), terminal control sequences
    removed, cut from the start (LOG_CUT) to leave room in maxOutput; and, with `count`, how many
    lines the log holds. An unreadable log reads as empty."""
    from mm.tools.tasks.logs import count_lines, tail
    from mm.tools.terminal_text import plain_text

    try:
        data, cut = await asyncio.to_thread(tail, task.fd, lines)
        total = await asyncio.to_thread(count_lines, task.fd) if count else None
    except OSError:
        return "", 0 if count else None
    text = plain_text(data.decode("utf-8", errors="replace"))[0]
    return keep_end(text, ctx.settings.max_output - ROOM_FOR_FIELDS, task.log, cut), total


def keep_end(text: str, budget: int, log: Path, cut: bool = False) -> str:
    """`text` whole when it fits `budget` characters (and nothing was `cut` before), else its end
    from a line start, after LOG_CUT saying how much is left out."""
    if len(text) <= budget and not cut:
        return text
    marker = LOG_CUT.format(path=log)
    room = max(budget - len(marker) - 1, 0)
    kept = text[len(text) - room:] if room else ""
    line_start = kept.find("\n")
    if 0 <= line_start < len(kept) // 2:
        kept = kept[line_start + 1:]
    return marker + "\n" + kept
