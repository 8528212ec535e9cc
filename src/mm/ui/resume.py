"""Which saved conversation `--resume [ID]` and `--continue` go on with, in line mode and `-p`
(docs/sessions.md §Finding a conversation again)."""

from __future__ import annotations

from pathlib import Path

from mm.config.schema import AgentConfig
from mm.ui.line.commands import NO_SESSIONS

NOTHING_TO_RESUME = "no saved conversation in {dir}"
NO_SUCH_SESSION = "no saved conversation {id} in {dir} — /sessions lists them"


def session_to_resume(config: AgentConfig, cwd: Path, resume: str) -> Path | str:
    """The file `--resume ID` names, or the latest conversation of `cwd` when `resume` is ""
    (`--resume` alone, `--continue`); else the one-line reason it cannot (sessions off:
    NO_SESSIONS; none saved: NOTHING_TO_RESUME; no such id: NO_SUCH_SESSION)."""
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
