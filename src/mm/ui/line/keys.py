"""Line mode's keys at its prompts: Esc-Enter adds a line and Ctrl-X Ctrl-E opens $EDITOR at the
main prompt; Esc at a `🔐` or ask_user prompt gives up the question (docs/line-mode.md §Keys).

prompt_toolkit is imported on first use (start-up time).
"""

from __future__ import annotations

import functools
from typing import Any


class EscapePressed(Exception):
    """Esc was typed at a question's prompt (`🔐` or ask_user): raised by `ask_line`."""


@functools.cache
def newline_keys() -> Any:
    """The main prompt's bindings (a prompt_toolkit KeyBindings): Esc then Enter (Alt-Enter) inserts
    a new line. A lone Esc stays unbound there, so the two keys need no timeout to tell apart.
    Ctrl-X Ctrl-E opens the prompt in $VISUAL or $EDITOR (prompt_toolkit's Buffer.open_in_editor:
    then /usr/bin/editor, nano, pico, vi, emacs); what is saved there comes back to the prompt,
    sent by Enter — not at once as bash does, so the text is seen before it goes (docs/line-mode.md)."""
    from prompt_toolkit.key_binding import KeyBindings

    keys = KeyBindings()

    @keys.add("escape", "enter")
    def _newline(event: Any) -> None:
        event.current_buffer.insert_text("\n")

    @keys.add("c-x", "c-e")
    def _editor(event: Any) -> None:
        event.current_buffer.open_in_editor(validate_and_handle=False)

    return keys


@functools.cache
def question_keys() -> Any:
    """A question's bindings (a prompt_toolkit KeyBindings): a lone Esc ends the prompt with
    EscapePressed. `eager` makes it win over the editing keys that start with Esc (Esc-b…); the
    terminal's own Esc sequences (arrows) are parsed before the bindings, and a lone Esc byte is
    told from them by prompt_toolkit's `ttimeoutlen` (0.5 s)."""
    from prompt_toolkit.key_binding import KeyBindings

    keys = KeyBindings()

    @keys.add("escape", eager=True)
    def _give_up(event: Any) -> None:
        event.app.exit(exception=EscapePressed(), style="class:aborting")

    return keys


async def ask_line(session: Any, message: str) -> str:
    """Read one line at a question's prompt `message` with the shared PromptSession `session`.

    Returns the line typed. Raises EscapePressed (Esc), KeyboardInterrupt (Ctrl-C) or EOFError
    (end of input). The session's own bindings are put back afterwards: prompt_toolkit keeps the
    `key_bindings` of a call for the calls after it, and the main prompt must not inherit Esc.
    """
    kept = session.key_bindings
    try:
        return await session.prompt_async(message, key_bindings=question_keys())
    finally:
        session.key_bindings = kept
