"""Line mode reading prompts from a pipe or a file (`mm < prompts.txt`, `printf … | mm`).

prompt_toolkit wants a terminal: given a pipe it warns, echoes every line twice and draws blank
lines. Without a terminal each prompt is one line of stdin instead, written after its prompt
text so that the transcript reads as a session would; the slash commands, the `🔐` answers and
ask_user answers are lines too. There are no keys to press: end of input leaves.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any, TextIO

from mm.llm.types import fix_surrogates


class PlainSession:
    """What line mode needs of a PromptSession (`prompt_async`, `key_bindings`, `input`), over a
    text stream (default stdin), echoing to `echo` (default stdout)."""

    input = None  # no terminal: Esc cannot cancel a turn (Ctrl-C, a signal, still does)

    def __init__(self, stream: TextIO | None = None, echo: TextIO | None = None):
        self.stream, self.echo = stream or sys.stdin, echo or sys.stdout
        self.key_bindings: Any = None

    async def prompt_async(self, message: str = "", **_: Any) -> str:
        """The next line of the stream without its newline; raises EOFError at its end."""
        line = await asyncio.to_thread(self.stream.readline)
        if not line:
            raise EOFError
        text = line.rstrip("\r\n")
        try:  # a byte that is not UTF-8 arrives as a lone surrogate: echoed repaired
            self.echo.write(fix_surrogates(f"{message}{text}\n"))
            self.echo.flush()
        except (OSError, ValueError):
            pass
        return text


def stdin_is_a_terminal() -> bool:
    """Whether stdin is a terminal (line mode's keys need one)."""
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False
