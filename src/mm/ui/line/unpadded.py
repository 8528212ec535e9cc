"""Line mode's output when stdout is not a terminal (`mm > log`, `mm | tee log`): rich pads
every line of a rendered answer with spaces up to the console's width (80 columns in a pipe);
those spaces are taken off here, so a transcript holds the text and nothing after it
(docs/line-mode.md §Rendering).
"""

from __future__ import annotations

import re
from typing import Any, TextIO

# Spaces at the end of a line, before the line break (and the style codes that may close it).
_PADDING = re.compile(r" +((?:\x1b\[[0-9;]*m)*)(?=\n)")
# Spaces at the very end of a write: held until the next write tells whether a line break follows.
_HELD = re.compile(r" +(?:\x1b\[[0-9;]*m)*\Z")


class Unpadded:
    """A text stream (`stream`, default stdout) that drops the spaces rich writes at the end of a
    line. Spaces followed by more text on the same line are kept, even across writes; what this
    class does not define is the stream's own (`isatty`, `fileno`, `encoding`…)."""

    def __init__(self, stream: TextIO):
        self.stream = stream
        self._held = ""

    def write(self, text: str) -> int:
        """Write `text` without its lines' trailing spaces; returns len(text)."""
        whole = self._held + text
        held = _HELD.search(whole)
        self._held = held.group() if held else ""
        kept = whole[:held.start()] if held else whole
        self.stream.write(_PADDING.sub(r"\1", kept))
        return len(text)

    def flush(self) -> None:
        """Flush the stream (spaces still held wait for what follows them)."""
        self.stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def line_console(**options: Any) -> Any:
    """The rich Console of line mode on stdout (`options`: Console's): as it is on a terminal,
    writing through Unpadded otherwise."""
    from rich.console import Console

    console = Console(**options)
    if not console.is_terminal:
        console.file = Unpadded(console.file)
    return console
