"""Writing session files atomically (mm-acp.md §session/new: `<cwd>/<sessions.dir>/<id>.json`)."""

from __future__ import annotations

import json
import os
import secrets
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FORMAT_VERSION = 1


def new_session_id(now: float | None = None) -> str:
    """A time-sortable id, `20260916-101530-4f2a9c1e` (mm-acp.md §session/new)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now if now is not None else time.time()))
    return f"{stamp}-{secrets.token_hex(4)}"


def write_json_atomic(path: Path, data: Any) -> None:
    """Write `data` as JSON to `path` so that a crash leaves the old file or the new one, never a mix.

    Temporary file in the same directory, fsync, rename, then fsync of the directory.
    Raises OSError when the directory cannot be written.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=False, indent=1)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


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
