"""Reading one typed line as the answer to a question (mm-tools.md §ask_user, Line mode)."""

from __future__ import annotations

import re

from mm.tools.ask_user.questions import NO, YES, Question

HINTS = {
    "choice": "a number, an option, or your own answer",
    "multi": "numbers separated by commas, e.g. 1,3",
    "confirm": "y or n",
    "text": "your answer",
}
DEFAULT_HINT = " — Enter for the default"
SKIP = "/skip"


def hint(question: Question) -> str:
    """The hint line shown under a question (and again after a line that does not answer it)."""
    extra = DEFAULT_HINT if question.default is not None else ""
    return f"  ({HINTS[question.type]}{extra}; {SKIP} declines)"


def read_answer(question: Question, line: str) -> str | None:
    """The answer `line` gives to `question`, or None when it does not answer it.

    An empty line takes the default (None when there is none). choice: a number, an option's
    text, the start of exactly one option, or any other text; multi: numbers separated by
    commas, spaces or semicolons, all in range; confirm: yes/no words in English or French.
    """
    text = line.strip()
    if not text:
        return question.default
    if question.type == "text":
        return text
    if question.type == "confirm":
        low = text.lower()
        return "yes" if low in YES else "no" if low in NO else None
    if question.type == "multi":
        return _multi(question.options, text)
    return _choice(question.options, text)


def _choice(options: list[str], text: str) -> str:
    if text.isdigit() and 1 <= int(text) <= len(options):
        return options[int(text) - 1]
    exact = [o for o in options if o.lower() == text.lower()]
    if exact:
        return exact[0]
    starts = [o for o in options if o.lower().startswith(text.lower())]
    return starts[0] if len(starts) == 1 else text


def _multi(options: list[str], text: str) -> str | None:
    parts = [p for p in re.split(r"[,;\s]+", text) if p]
    if not parts or not all(p.isdigit() and 1 <= int(p) <= len(options) for p in parts):
        return None
    picked = list(dict.fromkeys(int(p) for p in parts))
    return ", ".join(options[i - 1] for i in picked)
