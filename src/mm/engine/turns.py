"""Turns in a history: where one starts, which user messages are mm's notes (docs/engine.md §Context).

Shared by the turn loop (mm.engine.conversation) and compaction (mm.engine.compaction); imports
nothing of either.
"""

from __future__ import annotations

WINDOW_EXCEEDED = (
    "[error: the request holds about {used} tokens but the model's context window is {window} tokens, and this "
    "server would cut it without saying so — not sent; give the model a larger context window (docs/models.md), "
    "or start a new conversation (/new)]"
)
NOTE_PREFIX = "[mm: "  # mm's own user-role notes start so (UNKNOWN_TOOL_NOTE, EDIT_IN_TEXT_NOTE…)


def is_note(message: dict) -> bool:
    """True for mm's own user-role notes (`[mm: …`, docs/engine.md §Unknown tool): not a turn."""
    content = message.get("content")
    return isinstance(content, str) and content.startswith(NOTE_PREFIX)


def is_turn_start(message: dict) -> bool:
    """True when `message` opens a turn: a user message that is a prompt or a summary, not a note."""
    return message.get("role") == "user" and (bool(message.get("summary")) or not is_note(message))


def is_prompt(message: dict) -> bool:
    """True for a prompt the user wrote: a turn start that is neither a summary nor pinned
    (standing instructions are carried on their own by compaction)."""
    return is_turn_start(message) and not message.get("summary") and not message.get("pinned")


def split_turns(history: list[dict]) -> tuple[list[dict], list[list[dict]]]:
    """The history as (head, turns): head = the messages before the first turn (the system
    prompt), each turn = a user message and everything up to the next one."""
    head: list[dict] = []
    turns: list[list[dict]] = []
    for message in history:
        if is_turn_start(message):
            turns.append([message])
        elif turns:
            turns[-1].append(message)
        else:
            head.append(message)
    return head, turns


def current_turn_start(history: list[dict]) -> int:
    """The index of the last turn start in `history` (the turn in progress), or len(history)
    when there is none."""
    for i in range(len(history) - 1, -1, -1):
        if is_turn_start(history[i]):
            return i
    return len(history)


class WindowExceeded(Exception):
    """The request would not fit the context window of a server that cuts silently; `str(err)`
    is WINDOW_EXCEEDED (raised by mm.engine.compaction.fit_window, ends the turn)."""


def forget_reasoning(history: list[dict]) -> None:
    """Drop the reasoning kept for the turn that ended: later turns never send it, and the session
    file does not keep it (docs/engine.md §Reasoning)."""
    from mm.llm.types import REASONING_KEY

    for message in history[current_turn_start(history):]:
        message.pop(REASONING_KEY, None)
