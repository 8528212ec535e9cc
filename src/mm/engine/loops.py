"""The loop detector and the runaway-arguments guard (mm-tools.md §Loop detection)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

LOOP_DETECTED = (
    "[LOOP_DETECTED: You have attempted the same action multiple times with the same result. "
    "Please try a different approach or provide more information.]"
)
LOOP_STOPPED = (
    "[error: the model repeated the same {tool} call {count} times in a row with the same failing result — "
    "turn stopped by the loop detector; rephrase the request, or fix what the tool kept reporting]"
)
RUNAWAY_PATTERN = (
    "[error: the model's tool call ran away: its arguments repeat the same pattern ({n} characters so far: …{tail})"
    " — generation stopped; rephrase the request, or try another model]"
)
RUNAWAY_SIZE = (
    "[error: the model's tool call ran away: its arguments exceed 256 KB ({n} characters so far: …{tail})"
    " — generation stopped; rephrase the request, or try another model]"
)

APPEND_AT = 3  # the same triple this many times in a row: LOOP_DETECTED appended
STOP_AT = 6  # ... and this many: the turn stops
WINDOW = 256  # characters examined for a repeating pattern
PATTERN_MIN, PATTERN_MAX = 4, 64
MAX_ARGUMENT_CHARS = 256 * 1000  # "256 KB" of arguments


@dataclass
class LoopVerdict:
    """What to do with a tool's output: keep it, append LOOP_DETECTED, or stop the turn."""

    action: Literal["keep", "append", "stop"]
    count: int


class LoopDetector:
    """Counts identical (tool, input, output) triples in a row.

    Rule (mm-tools.md §Loop detection): the 3rd, 4th and 5th identical triple in a row get
    LOOP_DETECTED appended; the 6th stops the turn. A different triple starts the count again.
    """

    def __init__(self) -> None:
        self._last: tuple[str, str, str] | None = None
        self._count = 0

    def reset(self) -> None:
        """Forget every call (`/new`)."""
        self._last, self._count = None, 0

    def record(self, tool: str, arguments: Any, output: str) -> LoopVerdict:
        """Record one call and return the verdict for its output."""
        triple = (tool, json.dumps(arguments, sort_keys=True, ensure_ascii=False), output)
        self._count = self._count + 1 if triple == self._last else 1
        self._last = triple
        if self._count >= STOP_AT:
            return LoopVerdict("stop", self._count)
        if self._count >= APPEND_AT:
            return LoopVerdict("append", self._count)
        return LoopVerdict("keep", self._count)

    @staticmethod
    def stop_message(tool: str, count: int) -> str:
        """The error that ends the turn."""
        return LOOP_STOPPED.format(tool=tool, count=count)


class RunawayError(Exception):
    """A streamed tool call's arguments ran away; `str(err)` is the reference's error text."""


def check_runaway(arguments: str) -> None:
    """Raise RunawayError when `arguments` (the text streamed so far) has run away.

    It has when it exceeds 256 KB, or when its last 256 characters are one 4-64-character
    pattern repeated (mm-tools.md §Loop detection, last row).
    """
    n = len(arguments)
    if n > MAX_ARGUMENT_CHARS:
        raise RunawayError(RUNAWAY_SIZE.format(n=n, tail=_tail(arguments)))
    if n >= WINDOW and _repeats(arguments[-WINDOW:]):
        raise RunawayError(RUNAWAY_PATTERN.format(n=n, tail=_tail(arguments)))


def _repeats(window: str) -> bool:
    """True when `window` is a prefix-aligned repetition of one pattern of 4-64 characters."""
    for period in range(PATTERN_MIN, PATTERN_MAX + 1):
        if window[period:] == window[:-period]:
            return True
    return False


def _tail(arguments: str, size: int = 40) -> str:
    return arguments[-size:].replace("\n", "\\n")
