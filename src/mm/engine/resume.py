"""Going on with a saved conversation: its session file loaded into a Conversation, which
writes to that file from then on (docs/sessions.md; mm-acp.md §session/load)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mm.engine.conversation import Conversation


def resume_session(conv: Conversation, path: Path, loaded: tuple | None = None,
                   session_id: str | None = None) -> int:
    """Load the session file at `path` into `conv`, whose session file becomes that one (held by
    this process, under `session_id` or the file's own id); returns the number of messages
    loaded. `loaded`: what mm.sessions.load.load_session(path) returned, when the caller read it
    already. Raises mm.sessions.load.SessionError when it cannot be read, SessionBusy (one of
    them) when another mm holds it; `conv` is unchanged then."""
    from mm.sessions.load import load_session, timestamp

    meta, messages = loaded if loaded is not None else load_session(path)
    conv.session.claim(session_id or meta.id)
    if messages and messages[0].get("role") == "system":
        messages = messages[1:]
    conv.history[1:] = messages
    conv.errors[:] = list(meta.errors)
    conv.totals = usage_of(meta.usage)
    conv.meter.forget()
    conv.loops.reset()
    conv.session.created = timestamp(meta.created, path)
    return len(messages)


def usage_of(record: dict) -> Any:
    """The session's token totals as a session file records them (`usage`: the fields of
    mm.llm.types.Usage); unreadable counts are 0."""
    from dataclasses import fields

    from mm.llm.types import Usage

    counts = {}
    for name in (f.name for f in fields(Usage)):
        value = record.get(name) if isinstance(record, dict) else None
        counts[name] = value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
    return Usage(**counts)
