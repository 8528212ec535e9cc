"""Reading and writing text files byte for byte, atomically (DESIGN.md §Conventions).

Text is read and written with `newline=""` semantics: no line-ending translation, so a CRLF
file keeps its carriage returns and a file without a final newline stays without one.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

BOM = "\ufeff"
NOT_UTF8 = "{path} is not UTF-8 text — edit_file and write_file only change UTF-8 text files"
BINARY = "{path} is a binary file — edit_file and write_file only change text files"
IS_DIR = "{path} is a directory, not a file"
NOT_REGULAR = "{path} is a {kind}, not a regular file — the file tools read and write regular files only"
DEFAULT_UMASK = 0o022


class TextFileError(Exception):
    """A file that cannot be handled as text; `str(err)` is the message for the model."""


@dataclass(frozen=True)
class TextFile:
    """A text file's content: `text` without BOM, whether it had one, and its line endings.

    `eol` is "\\r\\n" when every newline of the file is a CRLF, "\\n" when none is, and
    "mixed" otherwise (then nothing is normalised).
    """

    text: str
    bom: bool
    eol: str

    def logical(self) -> str:
        """Return the text with CRLF turned into LF when the file is pure CRLF."""
        return self.text.replace("\r\n", "\n") if self.eol == "\r\n" else self.text

    def physical(self, logical: str) -> str:
        """Return `logical` (LF text) as it goes on disk: file's line endings, BOM restored."""
        body = logical.replace("\n", "\r\n") if self.eol == "\r\n" else logical
        return (BOM if self.bom else "") + body


def line_endings(text: str) -> str:
    """Return "\\r\\n", "\\n" or "mixed" for `text` (str); "\\n" when it has no newline."""
    crlf = text.count("\r\n")
    if crlf == 0:
        return "\n"
    return "\r\n" if crlf == text.count("\n") else "mixed"


def read_text(path: Path, shown: str) -> TextFile:
    """Read `path` as UTF-8 without newline translation.

    `shown` (str) is the path as the model wrote it, used in messages.
    Raises TextFileError for a directory, a binary (NUL byte) or non-UTF-8 file;
    OSError for other I/O failures.
    """
    if path.is_dir():
        raise TextFileError(IS_DIR.format(path=shown))
    kind = special_kind(path)
    if kind:
        raise TextFileError(NOT_REGULAR.format(path=shown, kind=kind))
    data = path.read_bytes()
    if b"\0" in data:
        raise TextFileError(BINARY.format(path=shown))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise TextFileError(NOT_UTF8.format(path=shown)) from None
    bom = text.startswith(BOM)
    if bom:
        text = text[1:]
    return TextFile(text=text, bom=bom, eol=line_endings(text))


def special_kind(path: Path) -> str | None:
    """What `path` is when it exists but is neither a regular file nor a directory, else None.

    Opening a named pipe blocks for ever and a device can be endless (/dev/zero): the file tools
    refuse them instead, and never replace one by a regular file.
    """
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    for test, kind in ((stat.S_ISFIFO, "named pipe"), (stat.S_ISCHR, "character device"),
                       (stat.S_ISBLK, "block device"), (stat.S_ISSOCK, "socket")):
        if test(mode):
            return kind
    return None


def _umask() -> int:
    """Return the process umask without changing it (threads may be running)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return DEFAULT_UMASK


def write_text_atomic(path: Path, text: str) -> None:
    """Write `text` (str) to `path` as UTF-8, atomically, creating parent directories.

    A temporary file in the same directory is written, fsynced and renamed over `path`,
    so a reader sees either the old or the new content. The file keeps its mode; a new file
    gets 0o666 minus the umask. A symlink is followed: its target is replaced, not the link.
    Raises OSError when the file cannot be written. (DESIGN.md §Conventions: atomic writes.)
    """
    target = Path(os.path.realpath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    owner = None
    try:
        st = target.stat()
        mode, owner = stat.S_IMODE(st.st_mode), (st.st_uid, st.st_gid)
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        if owner is not None and owner != (os.getuid(), os.getgid()):
            with contextlib.suppress(OSError):  # keeps the owner when allowed (root); else the new file is ours
                os.chown(tmp, *owner)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(target.parent)


def _fsync_dir(directory: Path) -> None:
    """Make the rename itself durable (best effort: not every file system allows it)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
