"""Writing session files atomically (mm-acp.md §session/new: `<cwd>/<sessions.dir>/<id>.json`).

The format is documented in docs/sessions.md. Every save also refreshes the memory-search index
of the directory (mm.sessions.index), best effort: a stale or missing index only makes a search
fall back to reading the files.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from mm.tools.fs import write_text_atomic

FORMAT_VERSION = 1


def new_session_id(now: float | None = None) -> str:
    """A time-sortable id, `20260916-101530-4f2a9c1e` (mm-acp.md §session/new); `now` in epoch seconds."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now if now is not None else time.time()))
    return f"{stamp}-{secrets.token_hex(4)}"


def iso(t: float) -> str:
    """`t` (epoch seconds) as ISO 8601 local time with its offset, `2026-09-16T10:15:30+02:00`."""
    return datetime.fromtimestamp(t).astimezone().isoformat(timespec="seconds")


def session_record(*, id: str, messages: list[dict], created: str, updated: str, cwd: str = "",
                   model: str = "", errors: list[dict] | None = None, usage: dict | None = None,
                   extra: dict | None = None) -> dict[str, Any]:
    """The JSON object of one session file (docs/sessions.md); `extra` keys are kept as they are."""
    return {"version": FORMAT_VERSION, "id": id, "created": created, "updated": updated, "cwd": cwd,
            "model": model, **(extra or {}), "messages": messages, "errors": errors or [],
            "usage": usage or {}}


def write_session(path: Path, record: dict[str, Any], index: bool = True) -> None:
    """Write `record` to `path` atomically (mm.tools.fs.write_text_atomic); raises OSError.

    With `index`, the directory's search index is refreshed for this file (errors ignored).
    """
    write_text_atomic(path, json.dumps(record, ensure_ascii=False, indent=1) + "\n")
    if index:
        from mm.sessions.index import index_saved

        index_saved(Path(path), record)


@dataclass
class SessionFile:
    """One conversation's file: where it lives and the metadata written beside the history.

    `meta` may hold `cwd` and `model`; any other key is written at the top level as it is.
    """

    directory: Path
    id: str = field(default_factory=new_session_id)
    created: float = field(default_factory=time.time)
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        """`<directory>/<id>.json`."""
        return self.directory / f"{self.id}.json"

    def save(self, messages: list[dict], errors: list[dict], usage: dict[str, int]) -> None:
        """Rewrite the file with the whole conversation (atomically); raises OSError."""
        meta = dict(self.meta)
        record = session_record(id=self.id, messages=messages, created=iso(self.created),
                                updated=iso(time.time()), cwd=str(meta.pop("cwd", "")),
                                model=str(meta.pop("model", "") or ""), errors=errors, usage=usage,
                                extra=meta)
        write_session(self.path, record)
