"""Read-before-write: what the model has read in this conversation, and the gate a write passes
(mnemo-tools.md §Read-before-write; docs/tools-files.md §Read-before-write).

One ReadLog per conversation (mm.engine.conversation keeps it, the tools reach it through
ToolContext.reads): it lives as long as the conversation — /compact keeps it, /new empties it, a
resumed session starts without one. A record is keyed by the resolved path (symlinks and `..`
resolved) and holds what the file was when it was read: its size, modification time and a SHA-256
of its bytes, and whether the whole file was shown. A file changed since then is stale even when
its modification time was put back or did not move (the reference compares the time only).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import Any

HASH_LIMIT = 256 << 20  # bytes of a file hashed for the check; a larger file is compared by size and time
MUST_READ_FIRST = "must_read_first"
STALE_READ = "stale_read"
PARTIAL = "partial"  # only part was read and the write replaces the whole file: reported as must_read_first

# The reference's payloads (fs_write, file_edit), word for word.
MUST_READ_MESSAGE = "Refusing to modify {path}: read it first with {reader} so the edit is based on its current content."
MUST_READ_STEPS = ('Call {reader}(path="{path}") to load the file', "Then retry this change against the exact text you just read")
STALE_MESSAGE = ("Refusing to modify {path}: it changed on disk since you last read it. Read it again so your edit "
                 "is based on the current content.")
STALE_STEPS = ('Call {reader}(path="{path}") to reload the current content', "Re-derive your edit from the fresh read, then retry")
# mm's own case: a whole-file write after a partial read (a line range, a truncated read, a Search).
PARTIAL_MESSAGE = ("Refusing to replace {path} whole: only part of it was read ({part}). Read it whole with {reader} "
                   "first, so nothing you have not seen is overwritten.")
PARTIAL_STEPS = ('Call {reader}(path="{path}") without a line range to load the whole file',
                 "Then retry, or change only the part you read with an edit")
# write_file and edit_file with `readBeforeWrite: true`: mm's one-line refusals.
MUST_READ_TEXT = "{path}: not modified — read it first with {reader}, so the change is based on its current content; nothing was written"
STALE_TEXT = ("{path}: not modified — it changed on disk since you last read it; read it again with {reader} and "
              "re-derive the change; nothing was written")
PARTIAL_TEXT = ("{path}: not replaced — only part of it was read ({part}); read it whole with {reader} first, so "
                "nothing you have not seen is overwritten; nothing was written")
PART_LINES = "lines {first}-{last} of {total}"
PART_TRUNCATED = "the output was cut short after line {last} of {total}"
PART_SEARCH = "a search in it"
PART_DOCUMENT = "its start only: the text was cut at the token limit"


@dataclass(frozen=True)
class Seen:
    """A file as read: size (bytes), modification time (ns) and SHA-256 of its bytes (None when
    they were not all hashed)."""

    size: int
    mtime_ns: int
    digest: bytes | None

    @classmethod
    def of(cls, data: bytes, st: os.stat_result) -> "Seen":
        """The Seen of `data`, a whole file's bytes, read from a file whose stat was `st`."""
        return cls(st.st_size, st.st_mtime_ns, hashlib.sha256(data).digest())


def seen_now(path: str | os.PathLike) -> Seen | None:
    """What `path` is now (its bytes hashed up to HASH_LIMIT), or None when it does not exist.
    Reads as every mm read does (mm.fs: regular files only, never waiting)."""
    from mm.fs import CHUNK, FileRefused, open_regular, read_chunks

    try:
        fd = open_regular(path, "r")
    except FileNotFoundError:
        return None
    except (FileRefused, OSError):  # not a regular file, or not readable: its stat alone
        try:
            st = os.stat(path)
        except OSError:
            return None
        return Seen(st.st_size, st.st_mtime_ns, None)
    try:
        st = os.fstat(fd)
        digest = hashlib.sha256()
        if st.st_size > HASH_LIMIT:
            return Seen(st.st_size, st.st_mtime_ns, None)
        for chunk in read_chunks(fd, max(st.st_size, CHUNK), str(path)):
            digest.update(chunk)
        return Seen(st.st_size, st.st_mtime_ns, digest.digest())
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Verdict:
    """Why a write is refused: `kind` (MUST_READ_FIRST, STALE_READ or PARTIAL) and, for PARTIAL,
    what was read (`part`)."""

    kind: str
    part: str = ""

    def payload(self, path: str, reader: str = "fs_read") -> dict[str, Any]:
        """The reference's error object (fs_write, file_edit): `must_read_first` or `stale_read`
        with its message and next_steps; a partial read is a `must_read_first` of its own words."""
        fields = {"path": path, "reader": reader, "part": self.part}
        if self.kind == STALE_READ:
            return {"error": True, "stale_read": True, "message": STALE_MESSAGE.format(**fields),
                    "next_steps": [s.format(**fields) for s in STALE_STEPS]}
        message, steps = (PARTIAL_MESSAGE, PARTIAL_STEPS) if self.kind == PARTIAL else (MUST_READ_MESSAGE, MUST_READ_STEPS)
        return {"error": True, "must_read_first": True, "message": message.format(**fields),
                "next_steps": [s.format(**fields) for s in steps]}

    def text(self, path: str, reader: str = "read_file") -> str:
        """mm's one-line refusal (write_file, edit_file with readBeforeWrite)."""
        template = {MUST_READ_FIRST: MUST_READ_TEXT, STALE_READ: STALE_TEXT, PARTIAL: PARTIAL_TEXT}[self.kind]
        return template.format(path=path, reader=reader, part=self.part)


@dataclass
class _Record:
    seen: Seen
    whole: bool
    part: str


@dataclass
class ReadLog:
    """The files read in one conversation (see the module docstring)."""

    records: dict[str, _Record] = field(default_factory=dict)

    @staticmethod
    def key(path: str | os.PathLike) -> str:
        """The record's key: the path resolved (symlinks, `..`), case folded where the file system does."""
        return os.path.normcase(os.path.realpath(path))

    def record(self, path: str | os.PathLike, seen: Seen, whole: bool = True, part: str = "") -> None:
        """Remember that `path` was read as `seen`; `whole`: all of it was shown, else `part`
        says what was (PART_* texts). A successful write is recorded the same way, whole."""
        self.records[self.key(path)] = _Record(seen, whole, part)

    def forget(self) -> None:
        """Forget every read (/new: the model no longer has what it read)."""
        self.records.clear()

    def verdict(self, path: str | os.PathLike, whole: bool = False, now: Seen | None = None) -> Verdict | None:
        """None when a write to `path` may go on, else why not. `whole`: the write replaces the
        whole file (a partial read is not enough). `now`: the file as the writing tool just read
        it (else it is read here). A file that does not exist, or is empty, needs no read."""
        now = now if now is not None else seen_now(path)
        if now is None or now.size == 0:
            return None
        record = self.records.get(self.key(path))
        if record is None:
            return Verdict(MUST_READ_FIRST)
        before = record.seen
        if before.digest is not None and now.digest is not None:
            changed = before.digest != now.digest
        else:
            changed = (before.size, before.mtime_ns) != (now.size, now.mtime_ns)
        if changed:
            return Verdict(STALE_READ)
        if whole and not record.whole:
            return Verdict(PARTIAL, record.part)
        return None
