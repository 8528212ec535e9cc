"""One-shot mode: `mm -p PROMPT` runs one turn; the answer on stdout, the rest on stderr."""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, TextIO

from mm.events import (Compacted, Event, HookLine, PermissionAnswer, TextChunk, ToolCallDone,
                              ToolCallStarted, TurnDone)
from mm.engine.recap import recap_line
from mm.llm.types import fix_surrogates
from mm.ui.render import call_header, preview, preview_lines, shown_output, visible

EMPTY_ANSWER = "mm: the model's answer was empty"
NOBODY_TO_ASK = ("mm: with `yolo: false` a call that needs permission is refused in {mode}, where nobody can be asked "
                 "— set `yolo: true` in the agent file (or MM_YOLO=true for one run) to let such calls run")
SESSION_LINE = "💾 session {id} · mm --resume {id} goes on with it"  # stderr, last (docs/scripting.md)


class OneShotUI:
    """Renders events for `-p`: text to `out`, tool calls, previews and the recap to `err`; at the
    end (`end_run`) the session's id, when it is kept (SESSION_LINE).

    Nobody can be asked in this mode, so every permission request is rejected
    (mm-tools.md, Permissions note), and the first rejection says so on `err` (NOBODY_TO_ASK,
    naming `mode`). When the reader of `out` goes away (`mm -p … | head`), `on_closed_output` is
    called once (the turn is cancelled) and `closed_output` is set. `structured`: a structured
    output is in effect — the answer's text is not streamed, `out` gets the validated JSON alone
    at the end (docs/scripting.md §Structured output).
    mm.ui.scripting.JsonUI renders the same events as JSON.
    """

    mode = "-p"

    def __init__(self, preview_lines: int, out: TextIO = sys.stdout, err: TextIO = sys.stderr,
                 on_closed_output: Callable[[], None] | None = None, structured: bool = False):
        self.out, self.err = out, err
        self.structured = structured
        self.preview_lines = preview_lines
        self.dim = err.isatty()
        self.screen = _is_terminal(out)
        self.on_closed_output = on_closed_output
        self.closed_output = False
        self._text_open = False  # stdout has text not yet ended by a newline
        self._answered = False
        self._started: set[str] = set()
        self._last_shown = ""
        self._refused = False  # NOBODY_TO_ASK was said

    def emit(self, event: Event) -> None:
        """Render one engine event."""
        if isinstance(event, TextChunk):
            if not self.structured:
                self._write_answer(event.text)
        elif isinstance(event, ToolCallStarted):
            self._started.add(event.call_id)
            self._end_text()
            self._note(call_header(event.name, event.arguments, event.title))
        elif isinstance(event, ToolCallDone):
            if event.call_id not in self._started:  # refused before it could run: show what was sent
                self._end_text()
                self._note(call_header(event.name, event.arguments))
            self._last_shown = event.result.text
            lines = preview_lines(event.result, self.preview_lines)
            self._note(preview(shown_output(event.result, streamed=False), lines, self.dim))
        elif isinstance(event, (Compacted, HookLine)):
            self._end_text()
            self._note(event.line)
        elif isinstance(event, TurnDone):
            self._end_text()
            if event.structured is not None:
                self._write_answer(event.structured + "\n")
            if event.error and event.error not in self._last_shown:  # a stop already shown is not repeated
                self._note(event.error if event.error.startswith("[") else f"mm: {event.error}")
            elif event.stop_reason == "end_turn" and not self._answered:
                self._note(EMPTY_ANSWER)
            self._note(recap_line(event.recap))

    def started(self, session_id: str | None, model: str, tools: list[str], cwd: str, prompt: str) -> None:
        """The turn is about to run in session `session_id` (None when sessions are off), with
        `model` and `tools`, for `prompt`: nothing to show in text (the banner is line mode's)."""

    def end_run(self, status: int, session_id: str | None = None, error: str | None = None,
               stop_reason: str = "error", usage_error: bool = False) -> None:
        """The run ends with exit status `status`: `error` (a failure outside the turn: the
        server not found, an interruption, a usage error) as `mm: <error>`, then SESSION_LINE
        when the conversation is kept. `stop_reason` and `usage_error` are for JsonUI."""
        if error is not None:
            self._note(f"mm: {error}")
        if session_id:
            self._note(SESSION_LINE.format(id=session_id))

    def _write_answer(self, text: str) -> None:
        if not text or self.closed_output:
            return
        text = fix_surrogates(text)
        if self.screen:  # a terminal must not obey the answer's escape codes (a pipe gets them as they are)
            text = visible(text)
        self._answered = self._answered or bool(text.strip())
        if self._write_out(text):
            self._text_open = not text.endswith("\n")

    def _write_out(self, text: str) -> bool:
        """Write `text` to `out` at once; False when it could not (the reader left: _close_output)."""
        if self.closed_output:
            return False
        try:
            self.out.write(text)
            self.out.flush()
        except BrokenPipeError:
            self._close_output()
            return False
        return True

    def _close_output(self) -> None:
        """The reader left: send further output to /dev/null (so exiting does not fail) and say so once."""
        self.closed_output = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.out.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass
        if self.on_closed_output is not None:
            self.on_closed_output()

    def note(self, line: str) -> None:
        """Say `line` to people (stderr), whatever the output format."""
        self._note(line)

    def _note(self, line: str) -> None:
        try:
            self.err.write(fix_surrogates(line) + "\n")
            self.err.flush()
        except BrokenPipeError:
            pass

    def finish(self) -> None:
        """End the answer's last line (a front end that emits no TurnDone, `mm --ask`)."""
        self._end_text()

    def _end_text(self) -> None:
        if self._text_open:
            self._write_answer("\n")

    async def request_permission(self, name: str, arguments: dict[str, Any], preview: str) -> PermissionAnswer:
        """Nobody can be asked in one-shot mode: always `reject_once`, said once (NOBODY_TO_ASK)."""
        if not self._refused:
            self._refused = True
            self._end_text()
            self._note(NOBODY_TO_ASK.format(mode=self.mode))
        return "reject_once"


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
