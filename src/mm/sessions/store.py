"""Writing session files atomically (mm-acp.md §session/new: `<cwd>/<sessions.dir>/<id>.json`).

The format is documented in docs/sessions.md. Every save also refreshes the memory-search index
of the directory (mm.sessions.index), best effort: a stale or missing index only makes a search
fall back to reading the files.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from mm.sessions.load import SessionError
from mm.fs import write_atomic

FORMAT_VERSION = 1
SESSION_MODE = 0o600  # a session file holds a conversation: its owner alone reads it (docs/sessions.md)
FOLDER_MODE = 0o700  # the sessions folder, when mm creates it (its index and locks hold the same texts)
GITIGNORE = "# Created by mm: the conversations kept here stay out of commits (docs/sessions.md).\n*\n"
BUSY = "the conversation {id} is open in another mm process: go on with it there, or pick another one (/sessions)"


class SessionBusy(SessionError):
    """Another process holds the conversation (SessionFile.claim); `str(err)` says so."""


def new_session_id(now: float | None = None) -> str:
    """A time-sortable id, `20260916-101530-4f2a9c1e` (mm-acp.md §session/new); `now` in epoch seconds."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now if now is not None else time.time()))
    return f"{stamp}-{secrets.token_hex(4)}"


def iso(t: float) -> str:
    """`t` (epoch seconds) as ISO 8601 local time with its offset, `2026-09-16T10:15:30+02:00`."""
    return datetime.fromtimestamp(t).astimezone().isoformat(timespec="seconds")


def prepare_folder(directory: Path) -> None:
    """Make the sessions folder ready for a save: created when missing (mode FOLDER_MODE), and
    given a `.gitignore` of its own holding `*` (GITIGNORE), so that no transcript ends up in a
    commit. The `.gitignore` is written only when the folder has none and holds nothing but mm's
    files (a folder of other files — the project itself, `sessions.dir: .` — is never hidden
    from git). Raises OSError (a file where the folder should be…)."""
    if not directory.is_dir():
        directory.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    ignore = directory / ".gitignore"
    if not os.path.lexists(ignore) and str(directory) not in _SHARED and _only_sessions(directory):
        write_atomic(ignore, GITIGNORE)


_SHARED: set[str] = set()  # folders found holding other files than mm's: not scanned again


def _only_sessions(directory: Path) -> bool:
    """Whether `directory` holds only what mm writes there: session files (`*.json`), lock files
    (`.<id>.lock`), the search index (`.index.sqlite…`) and temporary files (`.….tmp`)."""
    with os.scandir(directory) as entries:
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                ours = name.endswith((".lock", ".tmp")) or name.startswith(".index.sqlite")
            else:
                ours = name.endswith(".json") and entry.is_file(follow_symlinks=False)
            if not ours:
                _SHARED.add(str(directory))
                return False
    return True


def _lock(path: Path, session_id: str) -> int | None:
    """The descriptor of `path` flocked by this process, None when no lock can be made there.
    A lock file removed by its holder between our open and our flock is opened again, so two
    processes never hold "the" lock on two different files. Raises SessionBusy."""
    import fcntl

    try:
        prepare_folder(path.parent)
    except OSError:
        return None
    from mm.fs import open_regular

    for _ in range(5):
        try:  # a regular file only (mm.fs): a named pipe or a device there is no lock
            fd = open_regular(path, "w")
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if os.fstat(fd).st_ino == os.stat(path).st_ino:
                return fd
        except BlockingIOError:
            os.close(fd)
            raise SessionBusy(BUSY.format(id=session_id)) from None
        except OSError:
            pass
        os.close(fd)
    return None


def session_record(*, id: str, messages: list[dict], created: str, updated: str, cwd: str = "",
                   model: str = "", errors: list[dict] | None = None, usage: dict | None = None,
                   extra: dict | None = None) -> dict[str, Any]:
    """The JSON object of one session file (docs/sessions.md); `extra` keys are kept as they are."""
    return {"version": FORMAT_VERSION, "id": id, "created": created, "updated": updated, "cwd": cwd,
            "model": model, **(extra or {}), "messages": messages, "errors": errors or [],
            "usage": usage or {}}


def write_session(path: Path, record: dict[str, Any], index: bool = True) -> None:
    """Write `record` to `path` atomically, mode SESSION_MODE (mm.fs.write_atomic: a
    regular file only), in a folder made ready by prepare_folder; raises OSError (FileRefused
    for a named pipe, a device…).

    With `index`, the directory's search index is refreshed for this file (errors ignored).
    """
    prepare_folder(Path(path).parent)
    write_atomic(path, json.dumps(record, ensure_ascii=False, indent=1) + "\n", mode=SESSION_MODE)
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
    _lock: int | None = field(default=None, repr=False)  # the descriptor holding `.<id>.lock`

    @property
    def path(self) -> Path:
        """`<directory>/<id>.json`."""
        return self.directory / f"{self.id}.json"

    def claim(self, session_id: str) -> None:
        """Make `session_id` this file's conversation, held by this process: another mm cannot
        go on with it at the same time (its turns would overwrite these). The lock is an flock
        on `<directory>/.<id>.lock`, removed by `release()` (at exit too) and dropped by the
        system however the process ends. Raises SessionBusy when another process holds it; a
        lock that cannot be made (a read-only folder) is not an error: the save says what fails."""
        if self._lock is not None and session_id == self.id:
            return
        lock = _lock(self.directory / f".{session_id}.lock", session_id)
        self.release()
        self.id, self._lock = session_id, lock
        if lock is not None:
            import atexit

            atexit.register(self.release)

    def release(self) -> None:
        """Let another process go on with this conversation (its lock file removed)."""
        if self._lock is not None:
            try:
                os.unlink(self.directory / f".{self.id}.lock")
            except OSError:
                pass
            os.close(self._lock)
            self._lock = None

    def save(self, messages: list[dict], errors: list[dict], usage: dict[str, int], index: bool = True) -> None:
        """Rewrite the file with the whole conversation (atomically); raises OSError, and
        SessionBusy when another process holds this id (see claim). `index`: refresh the
        search index too (a save in the middle of a turn leaves it stale: searches read the
        file then)."""
        if self._lock is None:
            self.claim(self.id)
        meta = dict(self.meta)
        record = session_record(id=self.id, messages=messages, created=iso(self.created),
                                updated=iso(time.time()), cwd=str(meta.pop("cwd", "")),
                                model=str(meta.pop("model", "") or ""), errors=errors, usage=usage,
                                extra=meta)
        write_session(self.path, record, index)
