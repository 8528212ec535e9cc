"""Runaway generation: a streamed tool call, answer or reasoning that repeats one short pattern
(mm-tools.md §Loop detection, last row; answers and reasoning: docs/engine.md §Loops); and an
answer cut at the output limit whose end repeats a longer passage (long_repeat: docs/engine.md
§Output limit)."""

from __future__ import annotations

RUNAWAY_PATTERN = (
    "[error: the model's tool call ran away: its arguments repeat the same pattern ({n} characters so far: …{tail})"
    " — generation stopped; rephrase the request, or try another model]"
)
RUNAWAY_SIZE = (
    "[error: the model's tool call ran away: its arguments exceed 256 KB ({n} characters so far: …{tail})"
    " — generation stopped; rephrase the request, or try another model]"
)
ANSWER_RUNAWAY = (
    "[error: the model's answer ran away: its {what} repeats the same pattern ({n} characters so far: …{tail})"
    " — generation stopped; rephrase the request, or try another model]"
)
RUNAWAY_MARKER = "[… mm stopped the answer here: its {what} kept repeating the same {period}-character pattern …]"
TEXT, REASONING = "text", "reasoning"  # the {what} of ANSWER_RUNAWAY and RUNAWAY_MARKER

WINDOW = 256  # characters examined for a repeating pattern
PATTERN_MIN, PATTERN_MAX = 4, 64
MAX_ARGUMENT_CHARS = 256 * 1000  # "256 KB" of arguments
# An answer cut at the output limit (mm.engine.outputlimit), where the reference is silent: its end
# is one passage of 65-512 characters repeated at least 3 times (docs/engine.md §Output limit).
LONG_PATTERN_MAX, LONG_REPEATS = 512, 3


class RunawayError(Exception):
    """A streamed generation ran away; `str(err)` is the one-line error that ends the turn."""


class AnswerRunaway(RunawayError):
    """The answer's text or reasoning ran away: `what` is TEXT or REASONING, `period` the
    length of the repeated pattern."""

    def __init__(self, message: str, what: str, period: int):
        super().__init__(message)
        self.what, self.period = what, period


def check_runaway(arguments: str) -> None:
    """Raise RunawayError when `arguments` (a tool call's arguments streamed so far) ran away.

    It has when it exceeds 256 KB, or when its last 256 characters are one 4-64-character
    pattern repeated (mm-tools.md §Loop detection, last row).
    """
    n = len(arguments)
    if n > MAX_ARGUMENT_CHARS:
        raise RunawayError(RUNAWAY_SIZE.format(n=n, tail=_tail(arguments)))
    if n >= WINDOW and repeat_period(arguments[-WINDOW:]):
        raise RunawayError(RUNAWAY_PATTERN.format(n=n, tail=_tail(arguments)))


class RepeatWatch:
    """Watches a text streamed piece by piece (`what`: TEXT or REASONING) for the runaway rule:
    its last 256 characters one 4-64-character pattern repeated. Holds those characters only."""

    def __init__(self, what: str):
        self.what = what
        self.size = 0
        self._tail = ""

    def feed(self, piece: str) -> None:
        """Take the next piece; raises AnswerRunaway when the text ran away."""
        self.size += len(piece)
        self._tail = (self._tail + piece)[-WINDOW:]
        period = repeat_period(self._tail) if len(self._tail) == WINDOW else 0
        if period:
            raise AnswerRunaway(ANSWER_RUNAWAY.format(what=self.what, n=self.size, tail=_tail(self._tail)),
                                self.what, period)


def repeat_period(window: str) -> int:
    """The length (4-64) of the pattern `window` repeats from its start to its end, 0 when none."""
    for period in range(PATTERN_MIN, PATTERN_MAX + 1):
        if window[period:] == window[:-period]:
            return period
    return 0


def long_repeat(text: str) -> tuple[int, int]:
    """(period, count) when `text` ends with one passage of PATTERN_MAX+1 to LONG_PATTERN_MAX
    characters repeated at least LONG_REPEATS times (the last copy may be cut short): the
    shortest such period in characters and the whole copies counted; (0, 0) when none.
    Longer than the runaway rule's patterns, which stops the stream at once (check_runaway,
    RepeatWatch); this one is only asked of an answer the output limit cut (docs/engine.md §Output limit)."""
    for period in range(PATTERN_MAX + 1, LONG_PATTERN_MAX + 1):
        span = period * LONG_REPEATS
        if len(text) < span:
            break
        tail = text[-span:]
        if tail[period:] == tail[:-period]:
            start = len(cut_repetition(text, period)) - period
            return period, (len(text) - start) // period
    return 0, 0


def cut_repetition(text: str, period: int) -> str:
    """`text` without the run of one `period`-character pattern it ends with, one pattern kept."""
    start = len(text) - period
    while start > 0 and text[start - 1] == text[start - 1 + period]:
        start -= 1
    return text[:max(start, 0) + period]


def runaway_marker(err: AnswerRunaway, shown: str) -> str:
    """What the history keeps of a runaway answer: the text `shown` (the repetition cut out of a
    runaway text), then RUNAWAY_MARKER on a line of its own."""
    kept = cut_repetition(shown, err.period) if err.what == TEXT and len(shown) > err.period else shown
    marker = RUNAWAY_MARKER.format(what=err.what, period=err.period)
    return f"{kept.rstrip()}\n{marker}" if kept.strip() else marker


def _tail(text: str, size: int = 40) -> str:
    return text[-size:].replace("\n", "\\n")
