"""Line mode's rendering of engine events: Markdown answers, dimmed thoughts, tool calls, spinner.

The answer streams into a `rich` Live region rendered as Markdown; when a tool call or the end of
the turn comes, the region is closed and stays on screen as it was (mm-tools.md, Terminal display).
Every text is made safe for the terminal before it reaches the console: lone surrogates repaired
(mm.llm.types.fix_surrogates, else rich's write fails with UnicodeEncodeError) and control
characters shown in caret notation (mm.ui.render.visible, else `\\x1b[2J` clears the screen);
newlines and tabs are kept (docs/line-mode.md §Rendering).
"""

from __future__ import annotations

from typing import Any

from mm.engine.events import (Compacted, Composing, Event, RelayedText, TextChunk, ThoughtChunk, ToolCallDone,
                              ToolCallStarted, TurnDone)
from mm.engine.recap import recap_line
from mm.llm.types import fix_surrogates
from mm.ui.oneshot import EMPTY_ANSWER
from mm.ui.render import call_header, preview, shown_output, visible

THINKING, COMPOSING = "Thinking", "Composing a tool call"
TURN_CANCELLED = "turn cancelled"  # dim, before the recap of a turn stopped by Esc, Ctrl-C or a signal
SHOW_CURSOR = "\x1b[?25h"  # written straight to the terminal when rich itself cannot write any more


def safe(text: str) -> str:
    """`text` as line mode prints it: surrogates repaired, control characters (but newline and
    tab) in caret notation (`^[`)."""
    return visible(fix_surrogates(text))


class LineView:
    """Renders one conversation's events on a rich Console (`console`); error lines go to
    `errors` (stderr's Console; default `console`)."""

    def __init__(self, console: Any, preview_lines: int, errors: Any = None):
        self.console = console
        self.errors = errors or console
        self.preview_lines = preview_lines
        self._live: Any = None
        self._answer = ""
        self._thought = ""
        self._status = THINKING
        self._forget_turn()

    def _forget_turn(self) -> None:
        self._started: set[str] = set()  # the calls whose header is shown (ToolCallStarted came)
        self._last_shown = ""  # the last call output shown: a turn's error already in it is not repeated
        self._answered = False  # the model's own answer had visible text

    def start_turn(self, status: str = THINKING) -> None:
        """Show the spinner, saying `status`, until the first event of the turn (or of a slash
        command that waits)."""
        self._forget_turn()
        self._open(status)

    def emit(self, event: Event) -> None:
        """Render one event."""
        if isinstance(event, TextChunk):
            self._answer += event.text
            self._answered = self._answered or bool(event.text.strip())
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
            self._started.add(event.call_id)
            self.close()
            self.say(call_header(event.name, event.arguments, event.title))
        elif isinstance(event, ToolCallDone):
            self.close()
            if event.call_id not in self._started:  # refused before it could run: show what was sent
                self.say(call_header(event.name, event.arguments))
            self._last_shown = event.result.text
            self.say(preview(shown_output(event.result), self.preview_lines, dim=False), style="dim")
            self._open(THINKING)
        elif isinstance(event, Compacted):
            self.close()
            self.say(event.line, style="dim")
            self._open(THINKING)
        elif isinstance(event, TurnDone):
            self.close()
            self._end_of_turn(event)
            self._forget_turn()

    def _end_of_turn(self, event: TurnDone) -> None:
        if event.error and event.error not in self._last_shown:  # a stop already shown is not repeated
            self.error(event.error if event.error.startswith("[") else f"mm: {event.error}")
        elif event.stop_reason == "cancelled":
            self.say(TURN_CANCELLED, style="dim")
        elif event.stop_reason == "end_turn" and not self._answered:
            self.say(EMPTY_ANSWER, style="dim")
        self.say(recap_line(event.recap), style="dim")

    def say(self, line: Any, style: str | None = None, wrap: bool = False) -> None:
        """Print one plain line (no markup), made safe (`safe`) when it is text; a rich
        renderable (the planned change before a `🔐` question) is printed as it is. Not wrapped, unless `wrap` and the
        console is a terminal: then between words (the banner)."""
        shown = safe(line) if isinstance(line, str) else line
        soft = not (wrap and self.console.is_terminal)
        self.console.print(shown, style=style, markup=False, highlight=False, soft_wrap=soft)

    def error(self, line: str) -> None:
        """Print an error line, in red, on the `errors` console (docs/line-mode.md §Errors)."""
        self.errors.print(safe(line), style="red", markup=False, highlight=False, soft_wrap=True)

    def close(self) -> None:
        """End the live region, leaving its last rendering on screen. When the console fails
        meanwhile, the cursor is shown again before the error goes on (`abort`)."""
        live, self._live = self._live, None
        if live is not None:
            shown = bool(self._answer.strip() or self._thought.strip())
            try:
                live.update(self._renderable(final=True))
                live.stop()
            except BaseException:
                self._abort(live)
                raise
            if shown and not self.console.is_terminal:  # a terminal's Live ends its own line
                self.console.line()
        self._answer = self._thought = ""

    def abort(self) -> None:
        """Stop the live region without a last rendering, and show the cursor again, whatever
        the console does meanwhile: for an unexpected error on its way out. Raises nothing."""
        live, self._live = self._live, None
        self._answer = self._thought = ""
        if live is not None:
            self._abort(live)

    def _abort(self, live: Any) -> None:
        try:
            live.stop()
        except Exception:  # the console cannot write: its buffer keeps what failed
            pass
        if self.console.is_terminal:  # rich's own show-cursor may sit in that buffer: bypass it
            try:
                self.console.file.write(SHOW_CURSOR)
                self.console.file.flush()
            except Exception:
                pass

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
            parts.append(Text(safe(self._thought.strip()), style="dim italic"))
        if self._answer.strip():
            parts.append(Markdown(safe(self._answer)))
        if not final:
            parts.append(Spinner("dots", text=Text(self._status, style="dim")))
        return Group(*parts)
