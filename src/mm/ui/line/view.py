"""Line mode's rendering of engine events: Markdown answers, dimmed thoughts, tool calls, spinner.

The answer streams into a `rich` Live region rendered as Markdown; when a tool call or the end of
the turn comes, the region is closed and stays on screen as it was (mm-tools.md, Terminal display).
"""

from __future__ import annotations

from typing import Any

from mm.engine.events import (Compacted, Composing, Event, RelayedText, TextChunk, ThoughtChunk, ToolCallDone,
                              ToolCallStarted, TurnDone)
from mm.engine.recap import recap_line
from mm.ui.render import call_header, preview, shown_output

THINKING, COMPOSING = "Thinking", "Composing a tool call"


class LineView:
    """Renders one conversation's events on a rich Console (`console`)."""

    def __init__(self, console: Any, preview_lines: int):
        self.console = console
        self.preview_lines = preview_lines
        self._live: Any = None
        self._answer = ""
        self._thought = ""
        self._status = THINKING

    def start_turn(self) -> None:
        """Show the spinner until the first event of the turn."""
        self._open(THINKING)

    def emit(self, event: Event) -> None:
        """Render one event."""
        if isinstance(event, TextChunk):
            self._answer += event.text
            self._refresh()
        elif isinstance(event, ThoughtChunk):
            self._thought += event.text
            self._refresh()
        elif isinstance(event, RelayedText):  # an asked agent's output streams as the answer does
            if event.thought:
                self._thought += event.text
            else:
                self._answer += event.text
            self._refresh()
        elif isinstance(event, Composing):
            self._status = COMPOSING
            self._refresh()
        elif isinstance(event, ToolCallStarted):
            self.close()
            self.console.print(call_header(event.name, event.arguments, event.title), markup=False,
                               highlight=False, soft_wrap=True)
        elif isinstance(event, ToolCallDone):
            self.close()
            self.console.print(preview(shown_output(event.result), self.preview_lines, dim=False),
                               style="dim", markup=False, highlight=False, soft_wrap=True)
            self._open(THINKING)
        elif isinstance(event, Compacted):
            self.close()
            self.say(event.line, style="dim")
            self._open(THINKING)
        elif isinstance(event, TurnDone):
            self.close()
            if event.error:
                self.console.print(event.error if event.error.startswith("[") else f"mm: {event.error}",
                                   style="red", markup=False, highlight=False, soft_wrap=True)
            self.console.print(recap_line(event.recap), style="dim", markup=False, highlight=False, soft_wrap=True)

    def say(self, line: str, style: str | None = None) -> None:
        """Print one plain line (no markup, no wrapping)."""
        self.console.print(line, style=style, markup=False, highlight=False, soft_wrap=True)

    def close(self) -> None:
        """End the live region, leaving its last rendering on screen."""
        if self._live is not None:
            shown = bool(self._answer.strip() or self._thought.strip())
            self._live.update(self._renderable(final=True))
            self._live.stop()
            self._live = None
            if shown and not self.console.is_terminal:  # a terminal's Live ends its own line
                self.console.line()
        self._answer = self._thought = ""

    def _open(self, status: str) -> None:
        from rich.live import Live

        self._status = status
        self._live = Live(self._renderable(), console=self.console, refresh_per_second=8, transient=False)
        self._live.start()

    def _refresh(self) -> None:
        if self._live is None:
            self._open(self._status)
        self._live.update(self._renderable())

    def _renderable(self, final: bool = False) -> Any:
        from rich.console import Group
        from rich.markdown import Markdown
        from rich.spinner import Spinner
        from rich.text import Text

        parts: list[Any] = []
        if self._thought.strip():
            parts.append(Text(self._thought.strip(), style="dim italic"))
        if self._answer.strip():
            parts.append(Markdown(self._answer))
        if not final:
            parts.append(Spinner("dots", text=Text(self._status, style="dim")))
        return Group(*parts)
