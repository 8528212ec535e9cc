"""The background tasks of one conversation: started through mm's command supervisor, watched
until they end, stopped with the conversation (mnemo-tools.md §Run work in the background;
notes/mnemoai.md §2.7; docs/tools-tasks.md).

A task is one `bash -c <command>` in a session (process group) of its own, its stdout and stderr
appended to its log. It outlives the turn that started it, never mm: `close()` (the conversation
ends: mm leaves, an ACP session closes) stops every task still running, and if mm dies the
supervisor kills them (docs/tools-bash.md §No command outlives mm). When a task's command ends,
whatever it left running in the background is stopped with it: a task is its process group.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

FINISHED = ("completed", "failed", "error", "cancelled")
STOP_WAIT = 10.0  # seconds a cancel or mm's exit waits for the supervisor's word that a task ended
SIZE_EVERY = 1.0  # seconds between two looks at a log's size
DESCRIPTION_CHARS = 50  # the default description: the command's first 50 characters
STOPPED_AT_EXIT = "mm: stopped the background task(s) still running: {tasks}"
STOPPED_TASK = "{id} ({description})"
STOPPED_BY_EXIT = "stopped when its conversation ended (mm left)"
FLOODED = "the task wrote more than 256 MiB of output — stopped"


def now() -> str:
    """The local time, ISO 8601 to the second with its offset (the tasks' timestamps)."""
    return datetime.now().astimezone().isoformat(timespec="seconds")


@dataclass
class Task:
    """One background task: what runs, where it logs, how it stands (`status`, one of pending,
    running, completed, failed, error, cancelled)."""

    id: str
    command: str
    description: str
    working_directory: Path
    log: Path
    fd: int  # the log, open in mm for reading its tail (and passed to the supervisor)
    created_at: str = field(default_factory=now)
    status: str = "pending"
    started_at: str | None = None
    completed_at: str | None = None
    return_code: int | None = None
    error: str | None = None
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    process: Any = None  # mm.tools.supervised.Command
    watcher: Any = None  # the asyncio task waiting for it
    began: float = 0.0  # time.monotonic() when it started, and when it ended
    stopped: float = 0.0

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    def duration(self) -> float | None:
        """Seconds it ran (so far), rounded to 0.1; None before it started."""
        if not self.began:
            return None
        return round((self.stopped or time.monotonic()) - self.began, 1)


class TaskTable:
    """The tasks of one conversation, newest last; logs in `directory` (swept of logs older than
    7 days at its first task)."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.tasks: dict[str, Task] = {}
        self._swept = False

    def get(self, task_id: str) -> Task | None:
        """The task `task_id` names (spaces around it and case ignored), or None."""
        return self.tasks.get(task_id.strip().lower())

    def start(self, command: str, description: str, cwd: Path) -> Task:
        """Start `command` with `bash -c` in `cwd` (a directory the caller checked); returns its
        Task, `running` — or `error` when it could not be started. Raises OSError when its log
        cannot be created. Call from the event loop the conversation runs on."""
        from mm.tools.process import command_environment
        from mm.tools.supervised import SUPERVISOR
        from mm.tools.tasks.logs import new_log, sweep

        if not self._swept:
            self._swept = True
            sweep(self.directory)
        task_id, path, fd = new_log(self.directory, set(self.tasks))
        task = Task(task_id, command, description or command[:DESCRIPTION_CHARS], cwd, path, fd)
        self.tasks[task_id] = task
        try:
            task.process = SUPERVISOR.start(["bash", "-c", command], cwd, command_environment(), fd)
        except OSError as err:
            self._end(task, "error", error=str(err))
            return task
        task.status, task.started_at, task.began = "running", now(), time.monotonic()
        task.watcher = asyncio.ensure_future(self._watch(task))
        return task

    async def _watch(self, task: Task) -> None:
        """Wait for the task's command to end (or flood its log); then record how, and stop what
        it left running."""
        from mm.tools.bash import start_failure_reason
        from mm.tools.process import OUTPUT_CAP_BYTES
        from mm.tools.supervised import SupervisorLost

        process = task.process
        exited = process.exited
        flood = asyncio.ensure_future(_grows_past(task.fd, OUTPUT_CAP_BYTES))
        try:
            await asyncio.wait({exited, flood}, return_when=asyncio.FIRST_COMPLETED)
            flooded = flood.done() and not exited.done()
            if flooded:
                process.kill()
            try:
                code = await exited
            except SupervisorLost as err:
                self._end(task, "error", error=str(err))
            except OSError as err:
                self._end(task, "error", error=start_failure_reason("bash", err))
            else:
                status = "completed" if code == 0 and not flooded else "failed"
                self._end(task, status, code, FLOODED if flooded else None)
        finally:
            flood.cancel()
            process.kill()  # a task is its process group: what it left in the background goes with it

    def _end(self, task: Task, status: str, code: int | None = None, error: str | None = None) -> None:
        """Record the end of `task`; a cancellation is never overwritten (notes §2.7)."""
        if task.status != "cancelled":
            task.status = status
            task.error = error
        if task.return_code is None:
            task.return_code = code
        task.completed_at = task.completed_at or now()
        task.stopped = task.stopped or time.monotonic()
        task.ended.set()

    async def cancel(self, task: Task, why: str | None = None) -> None:
        """Kill `task`'s process group (its session, tree and tagged processes) and mark it
        `cancelled` (`why`: its error); waits up to STOP_WAIT s for the supervisor to confirm."""
        task.status, task.error = "cancelled", why
        task.completed_at, task.stopped = now(), time.monotonic()
        if task.process is not None:
            task.process.kill()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(task.ended.wait(), STOP_WAIT)

    def clear(self) -> list[Task]:
        """Forget the finished tasks and delete their logs; returns them."""
        gone = [t for t in self.tasks.values() if t.finished]
        for task in gone:
            del self.tasks[task.id]
            with contextlib.suppress(OSError):
                os.unlink(task.log)
            self._let_go(task, release=True)
        return gone

    def _let_go(self, task: Task, release: bool = False) -> None:
        """Close the log in mm, once; with `release`, in the supervisor too — only for a log
        deleted already: the supervisor empties an output file a process still holds, and a
        process just killed may hold it a moment longer (the log kept would be emptied)."""
        if release and task.process is not None:
            task.process.release()
            task.process = None
        if task.fd >= 0:
            with contextlib.suppress(OSError):
                os.close(task.fd)
            task.fd = -1

    async def close(self) -> list[Task]:
        """The conversation ends: stop every task still running, say which on stderr
        (STOPPED_AT_EXIT), close the logs (kept on disk). Returns the tasks stopped. Raises nothing."""
        running = [t for t in self.tasks.values() if not t.finished]
        if running:
            await asyncio.gather(*(self.cancel(t, STOPPED_BY_EXIT) for t in running), return_exceptions=True)
            said = ", ".join(STOPPED_TASK.format(id=t.id, description=t.description) for t in running)
            with contextlib.suppress(OSError, ValueError):
                print(STOPPED_AT_EXIT.format(tasks=said), file=sys.stderr, flush=True)
        for task in list(self.tasks.values()):
            if task.watcher is not None and not task.watcher.done():
                task.watcher.cancel()
            self._let_go(task)
        return running


async def _grows_past(fd: int, limit: int) -> None:
    """Return once the open file `fd` holds more than `limit` bytes (looked at every SIZE_EVERY s)."""
    from mm.tools.tasks.logs import size_of

    while size_of(fd) <= limit:
        await asyncio.sleep(SIZE_EVERY)
