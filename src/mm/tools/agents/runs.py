"""The sub-agents of one conversation: their runs, the concurrency limit, background reports,
and each one's isolated history kept as a session file so that `resume_agent` works after a
restart (mnemoai.md §2.10; docs/subagents.md)."""

from __future__ import annotations

import asyncio
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol

KEPT = 64  # sub-agent records kept per folder (mnemoai.md §2.10: the registry retains 64 runs)
FOLDER = "agents"  # under the sessions folder: `<sessions.dir>/agents/<id>.json`
RECORD_KEY = "subagent"  # the session file's key holding the run's type, task, report and status
RECORD_NAME = re.compile(r"[a-z0-9-]{1,40}-[0-9a-f]{6}\.json")  # `<type>-<6 hex>.json` (new_id)
LINKED_FOLDER = ("mm: {folder} is a symbolic link: sub-agent records are not kept there, so resume_agent "
                 "finds no earlier run (make it a real folder)")
REPORT = ("[mm: Your background sub-agent '{id}' ({type}{about}) {outcome} while you were working. Its report:\n"
          "{report}\n\nAddress this now: tell the user what matters, or carry on with it.]")
NO_REPORT = "(no report)"


class Runner(Protocol):
    """What runs one sub-agent turn (mm.engine.subagent.SubagentRunner, given by mm.run)."""

    async def run(self, kind: Any, history: list[dict], prompt: str, ui: Any, save: Callable[[list[dict]], None],
                  cancelled: asyncio.Event, headless: bool) -> tuple[str, str | None]: ...


@dataclass
class Run:
    """One sub-agent: its id, type, what it is about, its first task, its last report, its
    status (`running`, `finished`, `failed`) and its isolated history."""

    id: str
    type: str
    description: str
    task: str
    report: str = ""
    status: str = "finished"
    history: list[dict] = field(default_factory=list)
    background: bool = False
    handle: asyncio.Task | None = None
    file: Any = None  # its record (mm.sessions.store.SessionFile) while it runs


class SubAgents:
    """The sub-agents of one conversation (one per SpawnAgent tool): see the module docstring.

    `folder`: where their records are kept (None: sessions are off, nothing survives a restart);
    `limit`: subagentMaxConcurrency, the runs at once; `runner` is attached by mm.run."""

    def __init__(self, folder: Path | None, limit: int, meta: dict[str, Any] | None = None):
        self.folder, self.meta = folder, dict(meta or {})
        self.limit: asyncio.Semaphore | None = None  # made in the running loop, on first use
        self._limit_size = max(1, limit)
        self.runner: Runner | None = None
        self.runs: dict[str, Run] = {}  # known this session, by id
        self._reports: list[str] = []  # background reports not delivered yet
        self.running_now = 0  # runs holding a slot now

    # -- the limit
    def _slots(self) -> asyncio.Semaphore:
        if self.limit is None:
            self.limit = asyncio.Semaphore(self._limit_size)
        return self.limit

    # -- runs
    def new_id(self, kind: str) -> str:
        """`<type>-<6 hex digits>`, unknown among the runs and the records."""
        slug = re.sub(r"[^a-z0-9]+", "-", kind.lower()).strip("-")[:40] or "agent"
        while True:
            candidate = f"{slug}-{secrets.token_hex(3)}"
            if candidate not in self.runs and not (self.folder is not None and (self.folder / f"{candidate}.json").exists()):
                return candidate

    def find(self, agent_id: str) -> Run | None:
        """The run `agent_id`, live or read back from its record (None: neither)."""
        run = self.runs.get(agent_id)
        if run is None and self.folder is not None and re.fullmatch(r"[a-z0-9-]{1,60}", agent_id):
            run = self._read(agent_id)
            if run is not None:
                self.runs[agent_id] = run
        return run

    async def execute(self, run: Run, kind: Any, prompt: str, ui: Any, cancelled: asyncio.Event,
                      headless: bool) -> tuple[str, str | None]:
        """Run `prompt` on `run` within the concurrency limit; returns (report, error or None)."""
        assert self.runner is not None, "the sub-agent runner is attached by mm.run.build_conversation"
        run.status = "running"
        async with self._slots():
            self.running_now += 1
            try:
                report, error = await self.runner.run(kind, run.history, prompt, ui, lambda h: self._save(run),
                                                      cancelled, headless)
            except asyncio.CancelledError:
                report, error = "", "cancelled"
            except Exception as err:  # a sub-agent's fault never ends the parent's turn
                report, error = "", f"{type(err).__name__}: {err}"
            finally:
                self.running_now -= 1
        run.report, run.status = report, ("failed" if error else "finished")
        self._save(run)
        if run.file is not None:  # let another mm go on with it
            run.file.release()
            run.file = None
            self._prune()
        return report, error

    def start_background(self, run: Run, kind: Any, prompt: str, ui: Any) -> None:
        """Run `prompt` on `run` in the background, headless; its report waits in the inbox."""
        run.background, run.status = True, "running"
        cancelled = asyncio.Event()

        async def go() -> None:
            report, error = await self.execute(run, kind, prompt, ui, cancelled, headless=True)
            about = f", {run.description}" if run.description else ""
            text = report.strip() or NO_REPORT
            if error:
                text = f"{text}\n[error: {error}]" if report.strip() else f"[error: {error}]"
            self._reports.append(REPORT.format(id=run.id, type=run.type, about=about,
                                               outcome="failed" if error else "finished", report=text))

        run.handle = asyncio.ensure_future(go())

    # -- the inbox (mm.engine.conversation: delivered before a request, awaited in `mm -p`)
    def take(self) -> list[str]:
        """The background reports not delivered yet (then forgotten here)."""
        reports, self._reports = self._reports, []
        return reports

    def busy(self) -> bool:
        """Whether a background run is still going."""
        return any(r.handle is not None and not r.handle.done() for r in self.runs.values())

    async def wait(self) -> None:
        """Until a background run ends (at once when none runs)."""
        going = [r.handle for r in self.runs.values() if r.handle is not None and not r.handle.done()]
        if going:
            await asyncio.wait(going, return_when=asyncio.FIRST_COMPLETED)

    async def close(self) -> None:
        """Stop the background runs (mm leaves)."""
        going = [r.handle for r in self.runs.values() if r.handle is not None and not r.handle.done()]
        for handle in going:
            handle.cancel()
        if going:
            await asyncio.gather(*going, return_exceptions=True)

    # -- records (session files: mm.sessions.store)
    def _save(self, run: Run) -> None:
        """Write `run`'s record, best effort (a run whose record cannot be written still runs)."""
        if self.folder is None:
            return
        from mm.sessions.store import SessionFile

        record = {"type": run.type, "description": run.description, "task": run.task, "report": run.report,
                  "status": run.status}
        if run.file is None:
            run.file = SessionFile(self.folder, id=run.id)
        run.file.meta = {**self.meta, RECORD_KEY: record}
        try:
            run.file.save(run.history, [], {}, index=False)
        except (OSError, ValueError):  # SessionBusy too: another mm goes on with it
            pass

    def _read(self, agent_id: str) -> Run | None:
        from mm.sessions.load import SessionError, clean_messages, read_record, repair

        path = self.folder / f"{agent_id}.json"
        try:
            data = read_record(path)
        except (SessionError, OSError):
            return None
        record = data.get(RECORD_KEY)
        if not isinstance(record, dict) or not isinstance(record.get("type"), str):
            return None
        history, _ = repair(clean_messages(data.get("messages")))
        status = record.get("status") if record.get("status") in ("finished", "failed") else "failed"
        return Run(agent_id, record["type"], str(record.get("description") or ""), str(record.get("task") or ""),
                   str(record.get("report") or ""), status, history)

    def _prune(self) -> None:
        """Keep the KEPT newest records; delete only older ones that are records: regular files
        named `<type>-<6 hex>.json` holding RECORD_KEY, never through a symlinked folder
        (docs/subagents.md §Records) — a user's own files beside them are left alone."""
        if self.folder is None or self.folder.is_symlink():
            return
        try:
            paths = sorted((p for p in self.folder.iterdir() if RECORD_NAME.fullmatch(p.name) and _regular(p)),
                           key=lambda p: p.lstat().st_mtime, reverse=True)
        except OSError:
            return
        for path in paths[KEPT:]:
            if _is_record(path):
                try:
                    path.unlink()
                except OSError:
                    pass


def _regular(path: Path) -> bool:
    """Whether `path` itself (not a link's target) is a regular file."""
    import stat

    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def _is_record(path: Path) -> bool:
    """Whether `path` is a regular file whose JSON carries a sub-agent record (RECORD_KEY)."""
    from mm.sessions.load import SessionError, read_record

    if not _regular(path):
        return False
    try:
        return isinstance(read_record(path).get(RECORD_KEY), dict)
    except (SessionError, OSError):
        return False
