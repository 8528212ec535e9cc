"""Context compaction: older turns summarised by the model into one user-role message.

Rules: mm-acp.md §session/prompt (`/compact`: the three lines, forced, `keepLastTurns` honoured),
mm-tools.md §search_memory (a summary is a user-role message with a wrapper line, then an
acknowledgement), the `context:` settings (docs/configuration.md) and docs/engine.md §Context.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from mm.engine import tokens
from mm.llm.types import LLMError, one_line

if TYPE_CHECKING:
    from mm.engine.conversation import Conversation

COMPRESSED = "🗜️ compressed {n} messages → 1 summary + {kept} kept ({tokens} tokens, {seconds:.1f}s)"
NOTHING = "🗜️ nothing to compact: {n} message(s), no turn older than the last {k}"
FAILED = "[compact: failed, history kept: {why}]"
EMPTY_SUMMARY = "the model's summary was empty"
CUT_NOTE = "✂️ cut {n} message(s) to fit the context window ({before} → {after} tokens)"
CUT_MARKER = "[… {n} characters cut here to fit the context window …]"

SUMMARY_WRAPPER = "[Summary of the earlier conversation — older turns were compacted to save context]"
SUMMARY_ACK = "Understood: I have the summary of our earlier conversation and will continue from it."
PINNED_ACK = "Noted: these standing instructions still apply."
SUMMARY_SYSTEM = (
    "You write the running notes of a coding session between a user and an AI assistant that "
    "uses tools. The notes replace the older part of the conversation, so keep everything needed "
    "to continue: the user's goals and requests, decisions made, files read or changed (with "
    "paths), commands run and their outcomes, errors met, and what remains to do. Be factual and "
    "dense; plain text or short bullet points; no preamble."
)
SUMMARY_REQUEST = "Write the notes (at most about {budget} tokens) for this conversation:\n\n{transcript}"
TOOL_RESULT_CHARS = 2000  # a tool result longer than this is cut (head and tail) in the transcript
MIN_CUT_TOKENS = 256  # a message cut to fit the window keeps at least this many tokens


def is_note(message: dict) -> bool:
    """True for mm's own user-role notes (`[mm: …`, docs/engine.md §Unknown tool): not a turn."""
    content = message.get("content")
    return isinstance(content, str) and content.startswith("[mm: ")


def is_turn_start(message: dict) -> bool:
    """True when `message` opens a turn: a user message that is a prompt or a summary, not a note."""
    return message.get("role") == "user" and (bool(message.get("summary")) or not is_note(message))


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


def summary_text(message: dict) -> str:
    """The notes of a summary message, without its wrapper line (for replay and search_memory)."""
    text = message.get("content") or ""
    return text[len(SUMMARY_WRAPPER) + 1:] if text.startswith(SUMMARY_WRAPPER + "\n") else text


def summary_messages(notes: str) -> list[dict]:
    """The two messages that stand for the summarised turns: the marked user-role summary, then
    the assistant's acknowledgement."""
    return [{"role": "user", "content": f"{SUMMARY_WRAPPER}\n{notes}", "summary": True},
            {"role": "assistant", "content": SUMMARY_ACK}]


async def compact(conversation: Conversation, force: bool) -> str:
    """Compact `conversation.history` with its `context` settings; returns the line to show.

    force: True for `/compact` (threshold ignored, the last `keepLastTurns` turns kept). False
    for the automatic check before a request: returns "" while the history is under the
    threshold (or the window is unknown) or when nothing is older than the kept turns, and
    always keeps the turn in progress. On success the
    history becomes head + standing instructions + summary + acknowledgement + kept turns and the
    token measure is forgotten; on failure the history is unchanged. Raises nothing for model
    failures (they make the FAILED line); a cancelled turn's exception propagates.
    """
    history, settings = conversation.history, conversation.context
    if not force and not over_threshold(conversation):
        return ""
    keep = settings.keepLastTurns if force else max(settings.keepLastTurns, 1)
    head, turns = split_turns(history)
    first_real = 1 if turns and turns[0][0].get("summary") else 0
    old_count = max(len(turns) - first_real - keep, 0)
    if old_count == 0:
        return NOTHING.format(n=len(history) - 1, k=keep) if force else ""
    old = [m for turn in turns[:first_real + old_count] for m in turn]
    kept_turns = [m for turn in turns[first_real + old_count:] for m in turn]
    standing = [m for m in old if m.get("pinned") or m.get("role") == "system"]
    pinned_ids = {id(m) for m in standing}
    started = time.monotonic()
    try:
        notes = await _summarise(conversation, [m for m in old if id(m) not in pinned_ids])
    except LLMError as err:
        return FAILED.format(why=str(err))
    if not notes:
        return FAILED.format(why=EMPTY_SUMMARY)
    seconds = time.monotonic() - started
    carried = []
    for message in standing:
        carried += [message] + ([{"role": "assistant", "content": PINNED_ACK}] if message.get("role") == "user" else [])
    history[:] = head + carried + summary_messages(notes) + kept_turns
    conversation.meter.forget()
    return COMPRESSED.format(n=len(old) - len(standing), kept=len(standing) + len(kept_turns),
                             tokens=conversation.used_tokens(), seconds=seconds)


def over_threshold(conversation: Conversation) -> bool:
    """True when the window is known and the history fills more than `threshold` of it."""
    window = conversation.context_window
    if not window:
        return False
    limit = int(conversation.context.threshold * window)
    extra_bytes = len(conversation.tools_text().encode("utf-8", "replace"))
    if conversation.meter.surely_under(conversation.history, limit, extra_bytes):
        return False
    return conversation.used_tokens() > limit


async def _summarise(conversation: Conversation, messages: list[dict]) -> str:
    """The model's notes on `messages` (one request, no tools, max_tokens = summaryTokens)."""
    budget = conversation.context.summaryTokens
    transcript = render(messages)
    if conversation.context_window:
        room = conversation.context_window - budget - tokens.count_text(SUMMARY_SYSTEM + SUMMARY_REQUEST) - 64
        transcript = cut_to_tokens(transcript, max(room, MIN_CUT_TOKENS))
    request = [{"role": "system", "content": SUMMARY_SYSTEM},
               {"role": "user", "content": SUMMARY_REQUEST.format(budget=budget, transcript=transcript)}]
    answer = await conversation.call_model(request, [], max_tokens=budget)
    if answer.usage is not None:
        conversation.totals.add(answer.usage)
    return (answer.content or "").strip()


def render(messages: list[dict]) -> str:
    """`messages` as a plain transcript for the summary request: one paragraph per message,
    tool results longer than TOOL_RESULT_CHARS cut in the middle, acknowledgements left out."""
    lines: list[str] = []
    for message in messages:
        role, text = message.get("role"), message.get("content") or ""
        text = text if isinstance(text, str) else " ".join(tokens.message_texts({"content": text}))
        if message.get("summary"):
            lines.append(f"Notes of the conversation before:\n{summary_text(message)}")
        elif role == "user":
            lines.append(f"User: {text}")
        elif role == "tool":
            lines.append(f"Tool result: {cut_chars(text, TOOL_RESULT_CHARS)}")
        elif role == "assistant" and text not in (SUMMARY_ACK, PINNED_ACK):
            calls = [f"{c.get('function', {}).get('name')}({one_line(c.get('function', {}).get('arguments', ''), 300)})"
                     for c in message.get("tool_calls") or []]
            lines.append("Assistant: " + "\n".join(filter(None, [text] + [f"calls {c}" for c in calls])))
    return "\n\n".join(lines)


def cut_chars(text: str, keep: int) -> str:
    """`text` cut to about `keep` characters: its head and tail around a CUT_MARKER line."""
    if len(text) <= keep:
        return text
    half = max(keep // 2, 1)
    return f"{text[:half]}\n{CUT_MARKER.format(n=len(text) - 2 * half)}\n{text[-half:]}"


def cut_to_tokens(text: str, limit: int) -> str:
    """`text` cut in the middle so that it holds about `limit` tokens at most."""
    size = tokens.count_text(text)
    if size <= limit:
        return text
    return cut_chars(text, int(len(text) * limit / size * 0.95))


def cut_largest(conversation: Conversation, limit: int) -> str:
    """Cut the largest messages (never the system prompt) until the history fits `limit` tokens.

    Each cut keeps the head and tail of the message's text around a marker line, at least
    MIN_CUT_TOKENS; stops when it fits or nothing is left to cut (no loop). Returns the CUT_NOTE
    line, or "" when nothing was cut. Forgets the token measure when it cut.
    """
    history = conversation.history
    before = conversation.used_tokens()
    over, cut = before - limit, 0
    sizes = sorted(((tokens.count_text(m["content"]), i) for i, m in enumerate(history)
                    if i > 0 and isinstance(m.get("content"), str)), reverse=True)
    for size, i in sizes:
        if over <= 0 or size <= MIN_CUT_TOKENS:
            break
        target = max(size - over, MIN_CUT_TOKENS)
        history[i] = dict(history[i], content=cut_to_tokens(history[i]["content"], target))
        over -= size - tokens.count_text(history[i]["content"])
        cut += 1
    if not cut:
        return ""
    conversation.meter.forget()
    return CUT_NOTE.format(n=cut, before=before, after=conversation.used_tokens())
