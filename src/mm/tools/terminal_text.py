"""A command's output made plain text: terminal control sequences removed, progress lines kept
at their last state (docs/tools-bash.md §Terminal control sequences)."""

from __future__ import annotations

import re

CONTROL_NOTE = ("[note: terminal control sequences (colours, cursor movement, progress bars redrawn with "
                "carriage returns) were removed from this output; a redrawn line shows its last state]")
# ECMA-48: CSI (colours, cursor movement, erasing), OSC (titles, hyperlinks) ended by BEL or ST,
# DCS/SOS/PM/APC strings, two- and three-byte escapes (character sets, keypad modes), a lone ESC.
_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b[ -/]*[0-~]"
    r"|\x1b"
)
_OVERSTRUCK = re.compile(r"[^\x08\n]\x08")  # a character then a backspace: the next one replaces it


def plain_text(text: str) -> tuple[str, bool]:
    """Return `text` without terminal control sequences, and whether any was removed.

    Escape sequences are removed; a carriage return that does not end a line starts the line
    again (the line keeps the text after its last such return: a progress bar's last state);
    a backspace removes the character before it (man pages' overstrike). A CR before LF stays.
    """
    if "\x1b" not in text and "\x08" not in text and not _has_redraw(text):
        return text, False
    original = text
    text = _SEQUENCE.sub("", text)
    while "\x08" in text:
        shorter = _OVERSTRUCK.sub("", text)
        if shorter == text:
            text = text.replace("\x08", "")
            break
        text = shorter
    if _has_redraw(text):
        text = "\n".join(_last_state(line) for line in text.split("\n"))
    return text, text != original


def _has_redraw(text: str) -> bool:
    """True when `text` holds a carriage return that is not the CR of a CRLF line end."""
    return "\r" in text.replace("\r\n", "")


def _last_state(line: str) -> str:
    """What a terminal shows of `line` redrawn with carriage returns: its last non-empty part.
    A line whose only CR ends it (CRLF) is returned as it is."""
    body = line[:-1] if line.endswith("\r") else line
    if "\r" not in body:
        return line
    parts = [part for part in body.split("\r") if part]
    return parts[-1] if parts else ""
