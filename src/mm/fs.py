"""Files on disk: the one place mm opens, reads and writes them (docs/tools-edit.md §Files on disk).

Writing: `write_atomic` (a whole file) and `append_to` (a log, the prompt history) write only
regular files, never where the safety floor's path policy refuses (the filesystem root, the
system folders /etc, /usr, /dev, /proc, /sys…: mm.protected_paths), as written or as resolved
(`write_target`).
Reading: `open_regular` opens without blocking and checks what was opened, not the path; every
read is bounded by size (`read_head`, `read_bytes`, `read_chunks`).

Text is read and written with `newline=""` semantics: no line-ending translation, so a CRLF
file keeps its carriage returns and a file without a final newline stays without one.
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

BOM = "\ufeff"
NOT_UTF8 = "{path} is not UTF-8 text — edit_file and write_file only change UTF-8 text files"
BINARY = "{path} is a binary file — edit_file and write_file only change text files"
TEXT_TOO_LARGE = "{path} is larger than {limit} — edit_file and write_file change text files up to that size"
# read_any_text (fs_write, file_edit): neutral words, the tool says what it could not do.
ANY_BINARY = "{path} is a binary file, not text"
ANY_NOT_TEXT = ("{path} is not text in an encoding mm can keep exactly (UTF-8; UTF-16 or UTF-32 with a byte-order "
                "mark; a single-byte encoding)")
ANY_TOO_LARGE = "{path} is larger than {limit}, the largest text file mm changes"
# Every refusal starts with "{path} ": FileRefused.reason says the same of "it".
IS_DIR = "{path} is a directory, not a file"
NOT_REGULAR = "{path} is a {kind}, not a regular file — mm reads and writes regular files only"
SYSTEM_PATH = "{path} is in {root}, a folder of the system's devices and processes — mm never writes there"
SYSTEM_LINK = "{path} leads to {target}, in {root}, a folder of the system's devices and processes — mm never writes there"
# The rest of the safety floor's path policy (mm.protected_paths, docs/safety.md §Path policy).
PROTECTED_PATH = ("{path} is {where} — mm never writes there, in any mode (docs/safety.md); "
                  "write in the project, your home or a temporary folder")
PROTECTED_LINK = ("{path} leads to {target}, {where} — mm never writes there, in any mode (docs/safety.md); "
                  "write in the project, your home or a temporary folder")
IN_SYSTEM_FOLDER = "in {root}, a system folder"
AT_ROOT = "at the filesystem root /"
WOULD_WAIT = "{path} cannot be read without waiting (it is no ordinary file)"
TOO_LARGE = "{path} is larger than {limit}"
CHUNK = 1 << 20  # bytes a read asks for at once
TEXT_FILE_BYTES = 64 << 20  # the largest file edit_file and write_file read as text
DEFAULT_UMASK = 0o022
_OPEN = {"r": os.O_RDONLY, "w": os.O_RDWR | os.O_CREAT, "a": os.O_WRONLY | os.O_APPEND | os.O_CREAT}
_KINDS = ((stat.S_ISDIR, "directory"), (stat.S_ISFIFO, "named pipe"), (stat.S_ISCHR, "character device"),
          (stat.S_ISBLK, "block device"), (stat.S_ISSOCK, "socket"))


class FileRefused(OSError):
    """A path mm does not read or write: not a regular file, a system path, too large, or a read
    that would wait. `str(err)` is the one-line message naming the path; `reason` says the
    same of "it" (for a message that names the path already)."""

    def __init__(self, template: str, path: str, **fields: str):
        super().__init__(template.format(path=path, **fields))
        self.reason = template.format(path="it", **fields)


class FileTooLarge(FileRefused):
    """A file larger than the limit of its reader (TOO_LARGE)."""


class TextFileError(Exception):
    """A file that cannot be handled as text; `str(err)` is the message for the model.
    `too_large`: the file is larger than TEXT_FILE_BYTES (its content was not read)."""

    def __init__(self, message: str, too_large: bool = False):
        super().__init__(message)
        self.too_large = too_large


@dataclass(frozen=True)
class TextFile:
    """A text file's content: `text` without BOM, whether it had one, and its line endings.

    `eol` is "\\r\\n" when every newline of the file is a CRLF, "\\n" when none is, and
    "mixed" otherwise (then nothing is normalised).
    """

    text: str
    bom: bool
    eol: str
    encoding: str = "utf-8"  # the Python codec its bytes are in (mm.textcodec)

    def encoded(self, logical: str) -> bytes:
        """`logical` (LF text) as the file's bytes: its line endings, BOM and encoding (physical).
        Raises UnicodeEncodeError for a character the encoding cannot hold (textcodec.unencodable
        finds it first)."""
        return self.physical(logical).encode(self.encoding)

    def logical(self) -> str:
        """Return the text with CRLF (or a lone CR) turned into LF when the file uses it alone."""
        return self.text.replace(self.eol, "\n") if self.eol in ("\r\n", "\r") else self.text

    def physical(self, logical: str) -> str:
        """Return `logical` (LF text) as it goes on disk: file's line endings, BOM restored."""
        body = logical.replace("\n", self.eol) if self.eol in ("\r\n", "\r") else logical
        return (BOM if self.bom else "") + body


def line_endings(text: str) -> str:
    """Return "\\r\\n", "\\n", "\\r" (old Mac files: CR alone) or "mixed" for `text` (str);
    "\\n" when it has no newline."""
    crlf = text.count("\r\n")
    if crlf == 0:
        return "\r" if "\r" in text and "\n" not in text else "\n"
    return "\r\n" if crlf == text.count("\n") else "mixed"


def size_text(n: int) -> str:
    """`n` bytes as `64 MiB`, `4 KiB` or `100 bytes` (limits in messages)."""
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} bytes"


def read_text(path: Path, shown: str) -> TextFile:
    """Read `path` as UTF-8 without newline translation (at most TEXT_FILE_BYTES).

    `shown` (str) is the path as the model wrote it, used in messages.
    Raises TextFileError for anything but a regular file, a binary (NUL byte), non-UTF-8 or too
    large file; OSError (FileNotFoundError…) for other I/O failures.
    """
    try:
        data = read_bytes(path, TEXT_FILE_BYTES, shown)
    except FileTooLarge:
        raise TextFileError(TEXT_TOO_LARGE.format(path=shown, limit=size_text(TEXT_FILE_BYTES)), True) from None
    except FileRefused as err:
        raise TextFileError(str(err)) from None
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


def read_any_text(path: Path, shown: str) -> tuple[TextFile, bytes, os.stat_result]:
    """Read `path` as text in whatever encoding it is in (decode_any), without newline
    translation, at most TEXT_FILE_BYTES. Returns the TextFile, the bytes read and the file's stat
    when opened. Raises TextFileError (ANY_TOO_LARGE, a refusal of read_bytes, those of
    decode_any) and OSError (FileNotFoundError…) as read_text does."""
    try:
        data, st = read_with_stat(path, TEXT_FILE_BYTES, shown)
    except FileTooLarge:
        raise TextFileError(ANY_TOO_LARGE.format(path=shown, limit=size_text(TEXT_FILE_BYTES)), True) from None
    except FileRefused as err:
        raise TextFileError(str(err)) from None
    return decode_any(data, shown), data, st


def decode_any(data: bytes, shown: str) -> TextFile:
    """A whole file's bytes `data` as a TextFile in the encoding they are in (mm.textcodec:
    UTF-8, UTF-16/32 with a BOM, a single-byte encoding that reads back the same). Raises
    TextFileError: ANY_BINARY (a NUL byte outside UTF-16/32), ANY_NOT_TEXT (`shown`: the path)."""
    from mm.textcodec import decode, wide

    if b"\0" in data and not wide(data):
        raise TextFileError(ANY_BINARY.format(path=shown))
    decoded = decode(data)
    if decoded is None:
        raise TextFileError(ANY_NOT_TEXT.format(path=shown))
    text = decoded.text
    return TextFile(text=text, bom=decoded.bom, eol=line_endings(text), encoding=decoded.encoding)


def kind_of(mode: int) -> str | None:
    """What a file of `mode` (st_mode) is when it is not a regular file ("named pipe",
    "character device", "directory"…), else None."""
    if stat.S_ISREG(mode):
        return None
    return next((kind for test, kind in _KINDS if test(mode)), "special file")


def _refusal(mode: int, shown: str) -> FileRefused | None:
    kind = kind_of(mode)
    if kind is None:
        return None
    if kind == "directory":
        return FileRefused(IS_DIR, shown)
    return FileRefused(NOT_REGULAR, shown, kind=kind)


def write_target(path: Path | str, shown: str | None = None) -> Path:
    """The file a write to `path` replaces: `path` with every symlink resolved.

    Raises FileRefused when the safety floor's path policy refuses `path` as written, through one
    of its symlinks or once resolved (mm.protected_paths: /dev, /proc, /sys, the other system
    folders, the filesystem root; `/dev/stdout` while `mm -p > answer.txt` runs leads to
    answer.txt: refused all the same), and when it exists and is not a regular file. Touches
    nothing (docs/tools-edit.md §Files on disk, docs/safety.md §Path policy)."""
    from mm.protected_paths import DEVICE_FOLDERS, ROOT, absolute, refused_step

    shown = str(path) if shown is None else shown
    refused = refused_step(str(path))
    if refused is not None:
        step, root = refused
        written = step == absolute(str(path), os.getcwd())
        if root in DEVICE_FOLDERS:
            raise FileRefused(SYSTEM_PATH, shown, root=root) if written else \
                FileRefused(SYSTEM_LINK, shown, target=step, root=root)
        where = AT_ROOT if root == ROOT else IN_SYSTEM_FOLDER.format(root=root)
        raise FileRefused(PROTECTED_PATH, shown, where=where) if written else \
            FileRefused(PROTECTED_LINK, shown, target=step, where=where)
    target = Path(os.path.realpath(path))
    try:
        refused = _refusal(os.lstat(target).st_mode, shown)
    except OSError:  # not there (or a file where a folder should be): the write itself says so
        return target
    if refused is not None:
        raise refused
    return target


def open_regular(path: Path | str, how: str = "r", shown: str | None = None) -> int:
    """A descriptor of `path` opened without blocking (O_NONBLOCK, no controlling terminal):
    `how` "r" reads, "w" reads and writes, "a" appends ("w" and "a" create the file, and
    parent folders, and go through write_target first).

    What was opened is checked (fstat), not only the path: raises FileRefused when it is not a
    regular file (a named pipe is never waited on, a device never read); OSError otherwise.
    """
    shown = str(path) if shown is None else shown
    flags = _OPEN[how] | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    if how == "r":
        refused = _refusal(os.stat(path).st_mode, shown)  # a device is not even opened
        if refused is not None:
            raise refused
    else:
        path = write_target(path, shown)
        path.parent.mkdir(parents=True, exist_ok=True)
        flags |= os.O_NOFOLLOW  # resolved: a link put there since is refused (ELOOP)
    fd = os.open(path, flags, 0o666)
    try:
        refused = _refusal(os.fstat(fd).st_mode, shown)
    except BaseException:
        os.close(fd)
        raise
    if refused is not None:
        os.close(fd)
        raise refused
    return fd


def read_chunks(fd: int, limit: int, shown: str) -> Iterator[bytes]:
    """The content of the open file `fd` from its current offset, CHUNK bytes at a time, at
    most `limit` bytes in all. Raises FileRefused (WOULD_WAIT) when a read would block (a file
    that stat calls regular but whose read waits, as /proc/kmsg)."""
    left = limit
    while left > 0:
        try:
            data = os.read(fd, min(CHUNK, left))
        except BlockingIOError:
            raise FileRefused(WOULD_WAIT, shown) from None
        if not data:
            return
        left -= len(data)
        yield data


def read_head(path: Path | str, limit: int, shown: str | None = None) -> bytes:
    """At most the first `limit` bytes of the regular file `path` (open_regular, read_chunks)."""
    shown = str(path) if shown is None else shown
    fd = open_regular(path, "r", shown)
    try:
        return b"".join(read_chunks(fd, limit, shown))
    finally:
        os.close(fd)


def read_bytes(path: Path | str, limit: int, shown: str | None = None) -> bytes:
    """The whole content of the regular file `path`; raises FileTooLarge when it
    holds more than `limit` bytes, and as open_regular and read_chunks."""
    return read_with_stat(path, limit, shown)[0]


def read_with_stat(path: Path | str, limit: int, shown: str | None = None) -> tuple[bytes, os.stat_result]:
    """read_bytes, with the file's stat taken when it was opened (fstat: what was read, not
    the path), for the read-before-write record (mm.tools.reads.Seen)."""
    shown = str(path) if shown is None else shown
    fd = open_regular(path, "r", shown)
    try:
        st = os.fstat(fd)
        data = b"".join(read_chunks(fd, limit + 1, shown))
    finally:
        os.close(fd)
    if len(data) > limit:
        raise FileTooLarge(TOO_LARGE, shown, limit=size_text(limit))
    return data, st


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


def write_atomic(path: Path | str, data: str | bytes, shown: str | None = None, mode: int | None = None) -> None:
    """Write `data` (str as UTF-8, or bytes) to `path` atomically, creating parent folders.

    The only regular-file rule (write_target) comes first: raises FileRefused for a path the
    safety floor's path policy refuses (a system folder, the filesystem root) and for anything
    but a regular file; OSError when the file cannot be
    written. A temporary file in the same directory is written, fsynced and renamed over the
    file, so a reader sees either the old or the new content. Without `mode` the file keeps its
    mode, and a new file gets 0o666 minus the umask; `mode` (permission bits, e.g. 0o600 for a
    session file: docs/sessions.md) is the file's mode whether it is new or replaced, and the
    content is never readable with another mode meanwhile. The owner is kept when mm may. A
    symlink is followed: its target is replaced, not the link. (DESIGN.md §Conventions: atomic
    writes.)
    """
    import tempfile  # on first write: start-up time

    shown = str(path) if shown is None else shown
    target = write_target(path, shown)
    target.parent.mkdir(parents=True, exist_ok=True)
    owner = None
    try:
        st = target.stat()
        kept, owner = stat.S_IMODE(st.st_mode), (st.st_uid, st.st_gid)
    except FileNotFoundError:
        kept = 0o666 & ~_umask()
    mode = kept if mode is None else mode
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        if owner is not None and owner != (os.getuid(), os.getgid()):
            with contextlib.suppress(OSError):  # keeps the owner when allowed (root); else the new file is ours
                os.chown(tmp, *owner)
        write_target(target, shown)  # still a regular file (or none) at the last moment
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(target.parent)


def append_to(path: Path | str, data: str | bytes, shown: str | None = None) -> None:
    """Append `data` (str as UTF-8, or bytes) to the regular file `path`, created with its
    parent folders when missing; the same rule and errors as write_atomic (open_regular "a")."""
    fd = open_regular(path, "a", shown)
    try:
        view = memoryview(data.encode("utf-8") if isinstance(data, str) else data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


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
