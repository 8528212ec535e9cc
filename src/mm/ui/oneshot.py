"""One-shot mode: `mm -p PROMPT` runs one turn; the answer on stdout, the rest on stderr."""

from __future__ import annotations

import sys
from typing import Any, TextIO

from mm.engine.events import (Event, PermissionAnswer, TextChunk, ToolCallDone, ToolCallStarted,
                              TurnDone)
from mm.engine.recap import recap_line
from mm.ui.render import call_header, preview


class OneShotUI:
    """Renders events for `-p`: text to `out`, tool calls, previews and the recap to `err`.

    Nobody can be asked in this mode, so every permission request is rejected
    (mm-tools.md, Permissions note).
    """

    def __init__(self, preview_lines: int, out: TextIO = sys.stdout, err: TextIO = sys.stderr,
                 declared: frozenset[str] = frozenset()):
        self.out, self.err = out, err
        self.preview_lines = preview_lines
        self.declared = declared
        self.dim = err.isatty()
        self._text_open = False  # stdout has text not yet ended by a newline

    def emit(self, event: Event) -> None:
        """Render one engine event."""
        if isinstance(event, TextChunk):
            self.out.write(event.text)
            self.out.flush()
            self._text_open = not event.text.endswith("\n")
        elif isinstance(event, ToolCallStarted):
            self._end_text()
            self.err.write(call_header(event.name, event.arguments, event.name in self.declared) + "\n")
            self.err.flush()
        elif isinstance(event, ToolCallDone):
            shown = event.result.preview if event.result.preview is not None else event.result.text
            self.err.write(preview(shown, self.preview_lines, self.dim) + "\n")
            self.err.flush()
        elif isinstance(event, TurnDone):
            self._end_text()
            if event.error:
                self.err.write(event.error + "\n")
            self.err.write(recap_line(event.recap) + "\n")
            self.err.flush()

    def _end_text(self) -> None:
        if self._text_open:
            self.out.write("\n")
            self.out.flush()
            self._text_open = False

    async def request_permission(self, name: str, arguments: dict[str, Any], preview: str) -> PermissionAnswer:
        """Nobody can be asked in one-shot mode: always `reject_once`."""
        return "reject_once"
