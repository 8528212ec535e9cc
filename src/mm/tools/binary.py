"""A command's output that is not text (`cat` of an executable, an image, a compressed file):
the model reads one line saying so, with its size, instead of mojibake (docs/tools-bash.md
§Binary output)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

BINARY_OUTPUT = ("[binary output: {size} bytes that are not text (NUL bytes, control characters or bytes that are "
                 "not UTF-8) — not shown; to look inside, run it through `file`, `strings` or `xxd | head`]")
# Above this share of such characters the output is binary: executables, images and compressed
# files measure 0.5 and more, text in Latin-1 (each accented letter an undecodable byte) under 0.2.
BINARY_SHARE = 0.3
BINARY_LEAST = 32  # and there must be more of them than this: a few stray bytes are shown as they are
# Characters of the decoded output that no text holds: the control characters but tab, line feed,
# vertical tab, form feed, carriage return, backspace and escape (colours, `man`'s overstrike);
# DEL; and U+FFFD, which stands for each byte that was not UTF-8.
NOT_TEXT = [chr(c) for c in range(32) if chr(c) not in "\t\n\v\f\r\b\x1b"] + ["\x7f", "\ufffd"]


def is_binary(text: str) -> bool:
    """Whether `text` (a command's output, decoded from UTF-8 with errors replaced) holds more
    NOT_TEXT characters than BINARY_LEAST and than BINARY_SHARE of its length."""
    if len(text) <= BINARY_LEAST:
        return False
    return sum(text.count(c) for c in NOT_TEXT) > max(BINARY_SHARE * len(text), BINARY_LEAST)


def text_or_notice(outcome: Any) -> Any:
    """`outcome` (mm.tools.process.ProcessOutcome: `output`, `size` in bytes) as it is, or a copy
    whose output is BINARY_OUTPUT when its output is binary (is_binary)."""
    if not is_binary(outcome.output):
        return outcome
    return replace(outcome, output=BINARY_OUTPUT.format(size=outcome.size or len(outcome.output.encode())))
