"""Writing session files atomically (mm-acp.md §session/new: `<cwd>/<sessions.dir>/<id>.json`)."""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mm.tools.fs import write_text_atomic

FORMAT_VERSION = 1


def new_session_id(now: float | None = None) -> str:
    """A time-sortable id, `20260916-101530-4f2a9c1e` (mm-acp.md §session/new)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now if now is not None else time.time()))
    return f"{stamp}-{secrets.token_hex(4)}"


def write_json_atomic(path: Path, data: Any) -> None:
    """Write `data` as JSON to `path` atomically (mm.tools.fs.write_text_atomic); raises OSError."""
    write_text_atomic(path, json.dumps(data, ensure_ascii=False, indent=1) + "\n")


@dataclass
class SessionFile:
    """One conversation's file: where it lives and the metadata written beside the history."""

    directory: Path
    id: str = field(default_factory=new_session_id)
    created: float = field(default_factory=time.time)
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        """`<directory>/<id>.json`."""
        return self.directory / f"{self.id}.json"

    def save(self, messages: list[dict], errors: list[dict], usage: dict[str, int]) -> None:
        """Rewrite the file with the whole conversation (atomically)."""
        write_json_atomic(self.path, {
            "version": FORMAT_VERSION,
            "id": self.id,
            "created": _iso(self.created),
            "updated": _iso(time.time()),
            **self.meta,
            "messages": messages,
            "errors": errors,
            "usage": usage,
        })


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(t))
