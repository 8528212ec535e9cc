"""`/sessions` (`/resume`) and `--resume`: the saved conversations of a folder, and going on with
one in place (docs/sessions.md; docs/line-mode.md §Sessions; docs/acp.md §Commands).

The files are read in a thread: the event loop (Esc, Ctrl-C, the editor's messages) never waits
on the disk.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

NO_SESSIONS = "sessions are off: set `sessions: {enabled: true}` in the agent file to keep conversations"
NOTHING_TO_RESUME = "no saved conversation in {dir}"
NO_SUCH_SESSION = "no saved conversation {id} in {dir} — /sessions lists them"
RESUMED = "resumed {id}: {n} message(s)"
RESUME_HINT = "go on with one: /sessions <id> (or mm --resume <id>)"
SESSIONS_SHOWN = 20


def session_to_resume(config: Any, cwd: Path, resume: str) -> Path | str:
    """The file `--resume [ID]` (or `/sessions ID`) names in `cwd`'s sessions folder — the latest
    when ID is empty — or the one-line reason it cannot (NO_SESSIONS, NOTHING_TO_RESUME,
    NO_SUCH_SESSION). `config`: the AgentConfig."""
    from mm.sessions.load import latest_session

    directory = cwd / config.sessions.dir
    if not config.sessions.enabled:
        return NO_SESSIONS
    if not resume:
        latest = latest_session(directory)
        return latest.path if latest is not None else NOTHING_TO_RESUME.format(dir=directory)
    path = directory / f"{Path(resume).name.removesuffix('.json')}.json"
    found = path.exists() and not path.is_dir()  # a named pipe is found, and refused when read
    return path if found else NO_SUCH_SESSION.format(id=resume, dir=directory)


async def sessions_list(config: Any, cwd: Path) -> str:
    """The saved conversations of `cwd`, newest first, at most SESSIONS_SHOWN
    (`<id> · <updated> · <first question>`), then RESUME_HINT; or NO_SESSIONS, NOTHING_TO_RESUME."""
    from mm.sessions.load import list_sessions

    if not config.sessions.enabled:
        return NO_SESSIONS
    found = (await asyncio.to_thread(list_sessions, cwd / config.sessions.dir))[:SESSIONS_SHOWN]
    if not found:
        return NOTHING_TO_RESUME.format(dir=cwd / config.sessions.dir)
    lines = [f"{s.id} · {s.updated[:16].replace('T', ' ')} · {s.first_question[:80]}" for s in found]
    return "\n".join(lines + [RESUME_HINT])


async def resume_in_place(config: Any, cwd: Path, choice: str, conv: Any) -> tuple[str, Any]:
    """Go on with the saved conversation `choice` (an id) in `conv`: its history replaced by that
    one, its file rewritten from then on (the conversation left is let go:
    mm.sessions.store.SessionFile.claim). Returns (RESUMED, or why not; what
    mm.sessions.load.load_session read — (meta, messages) — or None when nothing changed)."""
    from mm.engine.resume import resume_session
    from mm.sessions.load import SessionError, load_session

    path = await asyncio.to_thread(session_to_resume, config, cwd, choice)
    if isinstance(path, str):
        return path, None
    try:
        loaded = await asyncio.to_thread(load_session, path)
        return RESUMED.format(id=path.stem, n=resume_session(conv, path, loaded)), loaded
    except SessionError as err:
        return str(err), None


async def sessions_text(config: Any, cwd: Path, choice: str = "", conv: Any = None) -> str:
    """`/sessions`: the list (sessions_list); `/sessions <id>` goes on with that one (resume_in_place)."""
    if choice and conv is not None:
        return (await resume_in_place(config, cwd, choice, conv))[0]
    return await sessions_list(config, cwd)
