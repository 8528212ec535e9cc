"""The loop detector (mm-tools.md §Loop detection; cycles and repeated errors: docs/engine.md §Loops)."""

from __future__ import annotations

import hashlib
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
CYCLE_STOPPED = (
    "[error: the model repeated the same cycle of {n} calls ({tools}) {count} times in a row with the same "
    "results — turn stopped by the loop detector; rephrase the request, or fix what the tools kept reporting]"
)
SAME_ERROR_NOTE = (
    "[mm: {tool} failed {count} times in a row with this same error, each time with other arguments — "
    "this approach keeps failing the same way: read what the error says and change the approach]"
)
SAME_ERROR_STOPPED = (
    "[error: {tool} failed {count} times in a row with the same error, each time with other arguments — "
    "turn stopped by the loop detector; rephrase the request, or fix what the tool kept reporting]"
)

APPEND_AT = 3  # the same triple (a cycle, an error) this many times in a row: a note appended
STOP_AT = 6  # ... and this many: the turn stops
CYCLE_LENGTHS = (2, 3)  # calls in a cycle watched besides the single call
MEMORY = STOP_AT * max(CYCLE_LENGTHS) + 1  # recent calls kept to find cycles

Action = Literal["keep", "append", "stop"]
_STRENGTH = {"keep": 0, "append": 1, "stop": 2}


@dataclass
class LoopVerdict:
    """What to do with a tool's output: keep it, append `text` to it, or stop the turn with the
    error `text`. `count`: how many times in a row the same call was made."""

    action: Action
    count: int
    text: str = ""


@dataclass(frozen=True)
class _Call:
    tool: str
    key: str  # digest of the canonical input and the output

    @staticmethod
    def of(tool: str, arguments: Any, output: str) -> _Call:
        canonical = json.dumps(arguments, sort_keys=True, ensure_ascii=False)
        digest = hashlib.sha256(f"{tool}\0{canonical}\0{output}".encode("utf-8", "surrogatepass")).hexdigest()
        return _Call(tool, digest)


class LoopDetector:
    """Watches the calls of a conversation for three kinds of loop.

    Rules: the same (tool, input, output) triple in a row: the 3rd, 4th and 5th get LOOP_DETECTED
    appended, the 6th stops the turn (mm-tools.md §Loop detection). A cycle of 2 or 3 different
    triples repeating: LOOP_DETECTED from its 3rd repetition on, stop at its 6th. The same tool
    failing with the same output on consecutive calls: SAME_ERROR_NOTE from the 3rd, stop at the
    6th (docs/engine.md §Loops). A stop wins over a note; the single-call rule over the others.
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget every call (`/new`)."""
        self._recent: list[_Call] = []
        self._count = 0  # the same triple in a row
        self._failure: tuple[str, str] | None = None
        self._failures = 0  # the same tool failing with the same output in a row

    def record(self, tool: str, arguments: Any, output: str, failed: bool = False) -> LoopVerdict:
        """Record one call (`output`: the tool's own text, before any note; `failed`: the tool
        reported a failure) and return the verdict for its output."""
        call = _Call.of(tool, arguments, output)
        self._count = self._count + 1 if self._recent and self._recent[-1] == call else 1
        self._recent = (self._recent + [call])[-MEMORY:]
        failure = (tool, output) if failed else None
        self._failures = (self._failures + 1 if failure == self._failure else 1) if failure else 0
        self._failure = failure
        verdicts = [self._single(tool), self._cycle(), self._same_error(tool)]
        return max(verdicts, key=lambda v: _STRENGTH[v.action])  # the first of the strongest

    @staticmethod
    def stop_message(tool: str, count: int) -> str:
        """The error that ends the turn for the same call repeated `count` times."""
        return LOOP_STOPPED.format(tool=tool, count=count)

    def _single(self, tool: str) -> LoopVerdict:
        if self._count >= STOP_AT:
            return LoopVerdict("stop", self._count, self.stop_message(tool, self._count))
        if self._count >= APPEND_AT:
            return LoopVerdict("append", self._count, LOOP_DETECTED)
        return LoopVerdict("keep", self._count)

    def _cycle(self) -> LoopVerdict:
        for length in CYCLE_LENGTHS:
            block = self._recent[-length:]
            if len(self._recent) < 2 * length or len(set(block)) == 1:
                continue
            run = periodic_suffix(self._recent, length)
            repeats = run // length
            if repeats >= STOP_AT:
                tools = ", ".join(c.tool for c in self._recent[-run:][:length])
                return LoopVerdict("stop", self._count, CYCLE_STOPPED.format(n=length, tools=tools, count=repeats))
            if repeats >= APPEND_AT:
                return LoopVerdict("append", self._count, LOOP_DETECTED)
        return LoopVerdict("keep", self._count)

    def _same_error(self, tool: str) -> LoopVerdict:
        if self._failures >= STOP_AT:
            return LoopVerdict("stop", self._count, SAME_ERROR_STOPPED.format(tool=tool, count=self._failures))
        if self._failures >= APPEND_AT:
            return LoopVerdict("append", self._count, SAME_ERROR_NOTE.format(tool=tool, count=self._failures))
        return LoopVerdict("keep", self._count)


def periodic_suffix(items: list, period: int) -> int:
    """The length of the longest suffix of `items` in which every item equals the one `period`
    places later (at least `period`, at most len(items))."""
    run = min(period, len(items))
    while run < len(items) and items[-run - 1] == items[-run - 1 + period]:
        run += 1
    return run


def with_note(text: str, verdict: LoopVerdict) -> str:
    """`text` with the verdict's note on a line of its own when the action is "append"."""
    if verdict.action != "append":
        return text
    return f"{text.rstrip(chr(10))}\n{verdict.text}" if text else verdict.text
