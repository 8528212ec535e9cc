"""The prompt history of line mode, kept across runs in prompt_toolkit's FileHistory format,
read and appended through mm.fs: only a regular file, never a named pipe or a device,
never under /dev, /proc or /sys; read without blocking, its last HISTORY_BYTES only
(docs/line-mode.md §Prompt history)."""

from __future__ import annotations

import datetime
import os
from pathlib import Path
from typing import Iterable

from prompt_toolkit.history import History

HISTORY_BYTES = 4 << 20  # the end of the file read at start (a history grows for ever)
NOT_KEPT = "[warning: the prompt history is not kept: {reason}]"


def history_problem(path: Path) -> str | None:
    """NOT_KEPT for `path` when mm will not write it (mm.fs.write_target), else None."""
    from mm.fs import write_target

    try:
        write_target(path)
    except OSError as err:
        return NOT_KEPT.format(reason=err)
    return None


class PromptHistory(History):
    """prompt_toolkit's FileHistory, each entry `# <time>` then `+<line>` lines, written and read
    by mm.fs; a file mm may not read or write is no history (nothing raised)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        super().__init__()

    def load_history_strings(self) -> Iterable[str]:
        """The entries, newest first, from the last HISTORY_BYTES of the file."""
        from mm.fs import open_regular, read_chunks

        try:
            fd = open_regular(self.path)
            try:
                start = max(0, os.fstat(fd).st_size - HISTORY_BYTES)
                os.lseek(fd, start, os.SEEK_SET)
                data = b"".join(read_chunks(fd, HISTORY_BYTES, str(self.path)))
            finally:
                os.close(fd)
        except OSError:
            return []
        lines = data.decode("utf-8", errors="replace").split("\n")
        if start:  # the first entry may be cut: it starts at the first line that is no `+` line
            lines = lines[next((n for n, line in enumerate(lines) if not line.startswith("+")), len(lines)):]
        entries: list[str] = []
        held: list[str] = []
        for line in lines + [""]:
            if line.startswith("+"):
                held.append(line[1:])
            elif held:
                entries.append("\n".join(held))
                held = []
        return reversed(entries)

    def store_string(self, string: str) -> None:
        """Append `string` as one entry (mm.fs.append_to); a refused or failed write is
        let go: the prompt goes on (history_problem told it at start)."""
        from mm.fs import append_to

        entry = f"\n# {datetime.datetime.now()}\n" + "".join(f"+{line}\n" for line in string.split("\n"))
        try:
            append_to(self.path, entry.encode("utf-8", errors="replace"))
        except OSError:
            pass
