"""Context compaction: older turns summarised by the model into one user-role message.

Rules: mm-acp.md §session/prompt (`/compact`: the three lines, forced, `keepLastTurns` honoured),
mm-tools.md §search_memory (a summary is a user-role message with a wrapper line, then an
acknowledgement), the `context:` settings (docs/configuration.md) and docs/engine.md §Context.
"""

from __future__ import annotations

import time
from typing import Any, Protocol

from mm.config.schema import ContextConfig
from mm.engine import tokens
from mm.engine.turns import WINDOW_EXCEEDED, WindowExceeded, is_prompt, split_turns
from mm.text import one_line
from mm.llm.types import AssistantMessage, LLMError, Usage


class Compactable(Protocol):
    """What compaction needs of a conversation (mm.engine.conversation.Conversation)."""

    history: list[dict]
    system_prompt: str
    context: ContextConfig
    context_window: int | None
    meter: tokens.TokenMeter
    totals: Usage

    def tools_text(self) -> str: ...

    def used_tokens(self) -> int: ...

    async def call_model(self, messages: list[dict], tools: list[dict], on_delta: Any = None,
                         **options: Any) -> AssistantMessage: ...


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
    "paths), commands run and their outcomes, errors met, and what remains to do. Quote every "
    "constraint and instruction the user gave word for word. Be factual and dense; plain text or "
    "short bullet points; no preamble."
)
PROMPTS_HEADER = "[The user's requests in the compacted part, word for word, oldest first]"
PROMPTS_LEFT_OUT = "[{n} longer request(s) left out: only the notes above keep them]"
PROMPTS_KEY = "prompts"  # the summary message's list of the requests it keeps verbatim
SUMMARY_REQUEST = "Write the notes (at most about {budget} tokens) for this conversation:\n\n{transcript}"
PROMPT_TOO_LARGE = (
    "[error: the prompt is about {tokens} tokens: with the system prompt and the tool definitions the request "
    "would hold {needed}, more than the {limit} tokens mm lets a request fill ({percent}% of the model's context "
    "window of {window}) — not sent, rather than cut; send a shorter prompt, or save the text to a file and ask "
    "about the file, or give the model a larger context window (docs/models.md)]"
)
TOOL_RESULT_CHARS = 2000  # a tool result longer than this is cut (head and tail) in the transcript
MIN_CUT_TOKENS = 256  # a message cut to fit the window keeps at least this many tokens


def summary_body(message: dict) -> str:
    """A summary message's notes and the requests it keeps, without its wrapper line."""
    text = message.get("content") or ""
    return text[len(SUMMARY_WRAPPER) + 1:] if text.startswith(SUMMARY_WRAPPER + "\n") else text


def summary_text(message: dict) -> str:
    """The notes of a summary message alone: without its wrapper line and the requests it keeps
    (for the session/load replay, mm-acp.md §session/load replay)."""
    return summary_body(message).partition(f"\n\n{PROMPTS_HEADER}\n")[0]


def summary_messages(notes: str, prompts: list[str] | None = None, left_out: int = 0) -> list[dict]:
    """The two messages that stand for the summarised turns: the marked user-role summary (the
    wrapper line, the notes, then the user's requests kept word for word, also listed under
    PROMPTS_KEY for the next compaction), then the assistant's acknowledgement."""
    summary: dict[str, Any] = {"role": "user", "content": f"{SUMMARY_WRAPPER}\n{notes}", "summary": True}
    if prompts:
        shown = [f"User: {p}" for p in prompts]
        if left_out:
            shown.insert(1, PROMPTS_LEFT_OUT.format(n=left_out))
        summary["content"] += f"\n\n{PROMPTS_HEADER}\n" + "\n\n".join(shown)
        summary[PROMPTS_KEY] = list(prompts)
    return [summary, {"role": "assistant", "content": SUMMARY_ACK}]


def compacted_prompts(messages: list[dict]) -> list[str]:
    """The user's requests in `messages` (a part about to be summarised), oldest first: those an
    earlier summary kept, and every prompt (not mm's notes, not standing instructions)."""
    prompts: list[str] = []
    for message in messages:
        if message.get("summary"):
            listed = message.get(PROMPTS_KEY)
            prompts += [p for p in listed if isinstance(p, str)] if isinstance(listed, list) else []
        elif is_prompt(message):
            content = message.get("content")
            prompts.append(content if isinstance(content, str) else " ".join(tokens.message_texts(message)))
    return prompts


def kept_prompts(prompts: list[str], budget: int) -> tuple[list[str], int]:
    """The requests a summary keeps verbatim, oldest first, and how many were left out.

    Rule (docs/engine.md §Context): the first one (the conversation's first request) always,
    cut in the middle to `budget` tokens if larger; then the others newest first, each whole,
    while they fit in what is left of `budget`; one that does not fit is left out.
    """
    if not prompts:
        return [], 0
    first = cut_to_tokens(prompts[0], budget)
    room = budget - tokens.count_text(first)
    kept: list[str] = []
    for prompt in reversed(prompts[1:]):
        size = tokens.count_text(prompt)
        if size <= room:
            kept.append(prompt)
            room -= size
    return [first] + kept[::-1], len(prompts) - 1 - len(kept)


async def compact(conversation: Compactable, force: bool) -> str:
    """Compact `conversation.history` with its `context` settings; returns the line to show.

    force: True for `/compact` (threshold ignored, the last `keepLastTurns` turns kept). False
    for the automatic check before a request: returns "" while the history is under the
    threshold (or the window is unknown) or when nothing is older than the kept turns, and
    always keeps the turn in progress. On success the history becomes head (its system prompt
    made again: _refresh_system_prompt) + standing instructions + summary (the notes, then the
    user's requests of the summarised part kept verbatim: kept_prompts) + acknowledgement + kept turns and the
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
    prompts, left_out = kept_prompts(compacted_prompts(old), settings.summaryTokens)
    history[:] = head + carried + summary_messages(notes, prompts, left_out) + kept_turns
    _refresh_system_prompt(conversation)
    conversation.meter.forget()
    return COMPRESSED.format(n=len(old) - len(standing), kept=len(standing) + len(kept_turns),
                             tokens=conversation.used_tokens(), seconds=seconds)


def _refresh_system_prompt(conversation: Compactable) -> None:
    """The system prompt made again by the conversation's `fresh_system_prompt` (MEMORY.md as it
    is now: notes/mnemoai.md §4.6, docs/memory.md), when it has one and the history starts with it."""
    fresh = getattr(conversation, "fresh_system_prompt", None)
    history = conversation.history
    if fresh is None or not history or history[0].get("role") != "system":
        return
    prompt = fresh()
    conversation.system_prompt = prompt
    history[0] = {**history[0], "content": prompt}


def over_threshold(conversation: Compactable) -> bool:
    """True when the window is known and the history fills more than `threshold` of it."""
    window = conversation.context_window
    if not window:
        return False
    limit = int(conversation.context.threshold * window)
    extra_bytes = len(conversation.tools_text().encode("utf-8", "replace"))
    if conversation.meter.surely_under(conversation.history, limit, extra_bytes):
        return False
    return conversation.used_tokens() > limit


def prompt_too_large(conversation: Compactable, message: dict) -> str | None:
    """PROMPT_TOO_LARGE when the prompt `message`, with the system prompt and the tool schemas
    alone, exceeds `context.threshold` of the known context window and holds more than
    MIN_CUT_TOKENS: compaction could only make it fit by cutting the prompt itself (cut_largest),
    so it is refused instead (docs/engine.md §Context). None when it fits, when the window is
    unknown, or when the prompt is too short to be cut (the window is too small for mm itself:
    the server's error, or WINDOW_EXCEEDED for a server that cuts silently, says so)."""
    window = conversation.context_window
    if not window:
        return None
    limit = int(conversation.context.threshold * window)
    head = conversation.history[:1] + [message]  # the system prompt, then the prompt
    schemas = conversation.tools_text()
    if tokens.upper_bound(head) + len(schemas.encode("utf-8", "replace")) <= limit:
        return None  # surely fits: no tokenizer
    size = tokens.count_text(message.get("content") or "")
    if size <= MIN_CUT_TOKENS:
        return None
    needed = tokens.estimate(head) + tokens.count_text(schemas)
    if needed <= limit:
        return None
    return PROMPT_TOO_LARGE.format(tokens=size, needed=needed, limit=limit,
                                   percent=round(100 * conversation.context.threshold), window=window)


async def _summarise(conversation: Compactable, messages: list[dict]) -> str:
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
            lines.append(f"Notes of the conversation before:\n{summary_body(message)}")
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


def cut_largest(conversation: Compactable, limit: int) -> str:
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


async def fit_window(conv: Any, ui: Any) -> None:
    """Before a request of `conv` (a Conversation whose context window is known): compact when
    over the threshold, then cut messages if still over; with `refuse_overflow`, raise
    WindowExceeded when the history still exceeds the window. Steps are shown to `ui`."""
    from mm.events import Compacted

    if not over_threshold(conv):
        return
    line = await compact(conv, force=False)
    if line:
        ui.emit(Compacted(line))
    if over_threshold(conv):
        line = cut_largest(conv, int(conv.context.threshold * (conv.context_window or 0)))
        if line:
            ui.emit(Compacted(line))
    if conv.refuse_overflow and (used := conv.used_tokens()) > conv.context_window:
        raise WindowExceeded(WINDOW_EXCEEDED.format(used=used, window=conv.context_window))
