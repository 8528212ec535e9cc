"""Background tasks' logs: `$XDG_STATE_HOME/mm/tasks/<task id>.log` (mnemo-tools.md §Run work in the
background: "Output goes to …/tasks/<task_id>.log; logs older than 7 days are swept at startup";
docs/tools-tasks.md §Logs)."""

from __future__ import annotations

import os
import re
import secrets
import stat
import time
from pathlib import Path
from typing import Mapping

LOG_MAX_AGE_DAYS = 7  # notes/mnemoai.md §2.7: TASK_LOG_MAX_AGE_DAYS
LOG_NAME = re.compile(r"[0-9a-f]{8}\.log")  # only mm's own logs are ever swept
TAIL_BYTES = 2 * 1024 * 1024  # read at most this much from the end of a log for its last lines
BLOCK = 64 * 1024


def tasks_dir(env: Mapping[str, str] | None = None) -> Path:
    """The folder of the logs: `$XDG_STATE_HOME/mm/tasks` (default `~/.local/state/mm/tasks`)."""
    from mm.config.places import state_home

    return state_home(env) / "mm" / "tasks"


def sweep(directory: Path, max_age_days: float = LOG_MAX_AGE_DAYS) -> int:
    """Delete the logs (`<8 hex digits>.log`, regular files) in `directory` last written more than
    `max_age_days` ago; returns how many. Anything else there is left alone; nothing raises."""
    cutoff = time.time() - max_age_days * 86400
    removed = 0
    try:
        names = os.listdir(directory)
    except OSError:
        return 0
    for name in names:
        if not LOG_NAME.fullmatch(name):
            continue
        path = directory / name
        try:
            st = os.lstat(path)
            if st.st_mtime < cutoff and stat.S_ISREG(st.st_mode):
                os.unlink(path)
                removed += 1
        except OSError:
            continue
    return removed


def new_log(directory: Path, taken: set[str]) -> tuple[str, Path, int]:
    """A new task id (8 hex digits, not in `taken`) and its log, created empty (mode 0600, in a
    0700 folder made as needed) and open for appending (and reading): `(id, path, descriptor)`. Raises OSError."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    while True:
        task_id = secrets.token_hex(4)
        if task_id in taken:
            continue
        path = directory / f"{task_id}.log"
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        except FileExistsError:  # a log of another mm: another id
            continue
        return task_id, path, fd


def size_of(fd: int) -> int:
    """Bytes the open log `fd` holds (0 when it cannot be read)."""
    try:
        return os.fstat(fd).st_size
    except OSError:
        return 0


def count_lines(fd: int) -> int:
    """Lines in the open log `fd` (a last line without its newline counts)."""
    lines, offset, last = 0, 0, b"\n"
    while True:
        data = os.pread(fd, BLOCK * 16, offset)
        if not data:
            break
        lines += data.count(b"\n")
        offset += len(data)
        last = data[-1:]
    return lines + (last != b"\n")


def tail(fd: int, lines: int) -> tuple[bytes, bool]:
    """The last `lines` lines of the open log `fd` (`lines` ≤ 0: all of it), read from its end:
    at most TAIL_BYTES (2 × TAIL_BYTES for all of it) — and whether the start of what was asked
    for was left out for that."""
    size = size_of(fd)
    if lines <= 0:
        start = max(size - 2 * TAIL_BYTES, 0)
        return os.pread(fd, size - start, start), start > 0
    data, start = b"", size
    while start > 0 and len(data) < TAIL_BYTES:
        step = min(BLOCK, start)
        start -= step
        data = os.pread(fd, step, start) + data
        if data.count(b"\n") > lines:  # one more break than asked: the first line asked for starts after it
            break
    body = data[:-1] if data.endswith(b"\n") else data
    kept = body.split(b"\n")[-lines:]
    text = b"\n".join(kept) + (b"\n" if data.endswith(b"\n") else b"")
    cut = start > 0 and len(data) >= TAIL_BYTES and len(kept) < lines
    return text, cut
