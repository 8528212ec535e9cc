"""Line mode's rendering of engine events: Markdown answers, dimmed thoughts, tool calls, spinner.

The answer streams into a `rich` Live region rendered as Markdown; when a tool call or the end of
the turn comes, the region is closed and stays on screen as it was (mm-tools.md, Terminal display).
The blocks of the answer (and the lines of the thoughts) that are complete are printed once above
the region, which renders only the open rest again (mm.ui.line.stream); it is updated at most
eight times a second, and less often when an update is slow, so rendering costs time linear in
the answer's size (issue 10 §9).
Every text is made safe for the terminal before it reaches the console: lone surrogates repaired
(mm.llm.types.fix_surrogates, else rich's write fails with UnicodeEncodeError) and control
characters shown in caret notation (mm.ui.render.visible, else `\\x1b[2J` clears the screen);
newlines and tabs are kept (docs/line-mode.md §Rendering).
"""

from __future__ import annotations

import time
from typing import Any

from mm.events import (Compacted, Composing, Event, HookLine, RelayedText, TextChunk, ThoughtChunk,
                              ToolCallDone, ToolCallStarted, TurnDone)
from mm.engine.recap import recap_line
from mm.llm.types import fix_surrogates
from mm.ui.oneshot import EMPTY_ANSWER
from mm.ui.line.stream import MarkdownTail, Rendered, ThoughtTail
from mm.ui.render import call_header, preview, preview_lines, shown_output, visible

THINKING, COMPOSING = "Thinking", "Composing a tool call"
TURN_CANCELLED = "turn cancelled"  # dim, before the recap of a turn stopped by Esc, Ctrl-C or a signal
SHOW_CURSOR = "\x1b[?25h"  # written straight to the terminal when rich itself cannot write any more
UPDATE_EVERY = 1 / 8  # seconds at least between two renderings of the live region (rich's refresh rate)
UPDATE_SHARE = 4  # …and at least this many times what the last one cost, so rendering takes at most a fifth


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
        self._spinner: Any = None
        self._status = THINKING
        self._next_update = 0.0  # time.monotonic() before which the live region is not rendered again
        self._later: Any = None  # the update planned on the event loop for text that came meanwhile
        self._failure: BaseException | None = None  # what that update raised: raised again by the next call
        self._forget_text()
        self._forget_turn()

    def _forget_turn(self) -> None:
        self._started: set[str] = set()  # the calls whose header is shown (ToolCallStarted came)
        self._last_shown = ""  # the last call output shown: a turn's error already in it is not repeated
        self._answered = False  # the model's own answer had visible text

    def _forget_text(self) -> None:
        self._answer = MarkdownTail(safe)
        self._thought = ThoughtTail(safe)
        self._shown = False  # the live region's text (printed or open) is not blank

    def start_turn(self, status: str = THINKING) -> None:
        """Show the spinner, saying `status`, until the first event of the turn (or of a slash
        command that waits)."""
        self._forget_turn()
        self._open(status)

    def emit(self, event: Event) -> None:
        """Render one event."""
        if isinstance(event, TextChunk):
            self._add(event.text, thought=False)
            self._answered = self._answered or bool(event.text.strip())
        elif isinstance(event, ThoughtChunk):
            self._add(event.text, thought=True)
        elif isinstance(event, RelayedText):  # an asked agent's output streams as the answer does
            self._add(event.text, thought=event.thought)
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
            lines = preview_lines(event.result, self.preview_lines)
            self.say(preview(shown_output(event.result), lines, dim=False), style="dim")
            self._open(THINKING)
        elif isinstance(event, Compacted):
            self.close()
            self.say(event.line, style="dim")
            self._open(THINKING)
        elif isinstance(event, HookLine):  # between the lines of the turn; the spinner goes on if it was on
            spinning = self._live is not None
            self.close()
            self.say(event.line, style="yellow")
            if spinning:
                self._open(self._status)
        elif isinstance(event, TurnDone):
            self.close()
            self._end_of_turn(event)
            self._forget_turn()

    def _end_of_turn(self, event: TurnDone) -> None:
        if event.stop_reason == "max_tokens":  # cut at the output limit: a notice, not a failure of mm's
            self.say(event.error or "", style="dim")
        elif event.error and event.error not in self._last_shown:  # a stop already shown is not repeated
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
        self._cancel_later()
        live, self._live = self._live, None
        if live is not None:
            try:
                self._raise_failure()
                live.update(self._open_part(final=True))
                live.stop()
            except BaseException:
                self._abort(live)
                raise
            if self._shown and not self.console.is_terminal:  # a terminal's Live ends its own line
                self.console.line()
        self._forget_text()

    def abort(self) -> None:
        """Stop the live region without a last rendering, and show the cursor again, whatever
        the console does meanwhile: for an unexpected error on its way out. Raises nothing."""
        self._cancel_later()
        self._failure = None
        live, self._live = self._live, None
        self._forget_text()
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
        self._live = Live(self._open_part(), console=self.console, refresh_per_second=8, transient=False)
        self._live.start()

    def _add(self, text: str, thought: bool) -> None:
        """Stream `text` into the answer, or the thoughts (`thought`), then update when it is time."""
        (self._thought if thought else self._answer).feed(text)
        self._shown = self._shown or bool(text.strip())
        self._refresh(soon=True)

    def _refresh(self, soon: bool = False) -> None:
        """Update the live region now, or (`soon`: text came) when UPDATE_EVERY has passed."""
        self._raise_failure()
        if self._live is None:
            self._open(self._status)
        wait = self._next_update - time.monotonic()
        if not soon or wait <= 0:
            self._update()
        elif self._later is None:
            self._later = _call_later(wait, self._update_later)

    def _update_later(self) -> None:
        """The planned update: what it raises (the console failed) is raised by the next call
        of the REPL (`_raise_failure`), which stops the region and shows the cursor again."""
        self._later = None
        try:
            self._update()
        except Exception as err:
            self._failure = err

    def _raise_failure(self) -> None:
        failure, self._failure = self._failure, None
        if failure is not None:
            raise failure

    def _update(self) -> None:
        """Print what is complete once, render the open rest in the live region, and put the
        next update off by UPDATE_EVERY, or UPDATE_SHARE times what this one cost."""
        self._cancel_later()
        if self._live is None:
            return
        started = time.monotonic()
        done = self._answer.complete()
        thought = self._thought.complete(everything=done is not None)  # printed above the answer
        for part in (thought, done):
            if part is not None:
                self.console.print(part)
        self._live.update(self._open_part(), refresh=self.console.is_terminal)
        spent = time.monotonic() - started
        self._next_update = time.monotonic() + max(UPDATE_EVERY, UPDATE_SHARE * spent)

    def _cancel_later(self) -> None:
        later, self._later = self._later, None
        if later is not None:
            later.cancel()

    def _open_part(self, final: bool = False) -> Any:
        """The live region: the open thoughts and answer, rendered once (`Rendered`), then the
        spinner (not when `final`)."""
        from rich.console import Group
        from rich.spinner import Spinner
        from rich.text import Text

        parts = [p for p in (self._thought.open(), self._answer.open()) if p is not None]
        shown: list[Any] = [Rendered(Group(*parts))] if parts else []
        if final:
            return Group(*shown)
        if self._spinner is None:
            self._spinner = Spinner("dots")
        self._spinner.update(text=Text(self._status, style="dim"))
        return Group(*shown, self._spinner)


def _call_later(delay: float, callback: Any) -> Any:
    """`callback()` after `delay` seconds on the running event loop (a handle with `cancel()`),
    or None outside one (the next text or the end of the region updates instead)."""
    import asyncio

    try:
        return asyncio.get_running_loop().call_later(delay, callback)
    except RuntimeError:
        return None
