"""Plain data the model client returns: the assembled assistant message, usage, errors."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass
class Usage:
    """Token counts of one request, as the server reported them (0 when not reported)."""

    input_tokens: int = 0
    output_tokens: int = 0
    thought_tokens: int = 0
    cached_tokens: int = 0

    def add(self, other: Usage) -> None:
        """Add `other`'s counts to these (session totals)."""
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.thought_tokens += other.thought_tokens
        self.cached_tokens += other.cached_tokens


@dataclass
class ToolCall:
    """One tool call of the assistant message.

    `arguments` is the parsed object, or None when `raw_arguments` could not be parsed;
    then `error` says why, in words the model can act on.
    """

    id: str
    name: str
    arguments: dict[str, Any] | None
    raw_arguments: str = ""
    error: str | None = None

    def to_wire(self) -> dict:
        """The call as an OpenAI `tool_calls[]` entry for the history (arguments as a JSON string)."""
        args = self.raw_arguments
        if self.arguments is not None:
            args = json.dumps(self.arguments, ensure_ascii=False)
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": args}}


REASONING_KEY = "reasoning_content"  # the history's (and the request's) key of an answer's reasoning


@dataclass
class AssistantMessage:
    """The assistant message assembled from one response.

    `content` is the text to show and keep (a call written in the text already taken out);
    `reasoning` is None when the server sent none.
    """

    content: str = ""
    reasoning: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage | None = None
    timings: dict | None = None
    # Calls written in the text that name no declared tool: (name, raw text). The engine
    # answers them with the list of declared tools.
    unknown_calls: list[tuple[str, str]] = field(default_factory=list)

    def to_history(self) -> dict:
        """The message as sent back to the server: content is "" (never null) beside tool calls;
        the reasoning of a message with tool calls under REASONING_KEY (models that think between
        tool calls read it again; the engine drops it when the turn ends, docs/engine.md §Reasoning)."""
        msg: dict[str, Any] = {"role": "assistant", "content": self.content or ""}
        if self.tool_calls:
            msg["tool_calls"] = [c.to_wire() for c in self.tool_calls]
            if self.reasoning:
                msg[REASONING_KEY] = self.reasoning
        return msg


MALFORMED = "the model server at {url} sent a malformed stream: {detail}"
ErrorClass = Literal["incomplete_stream", "malformed_stream", "server_error", "unreachable", "loading", "timeout"]


class LLMError(Exception):
    """A request to the model server failed; `str(err)` is one line naming the URL and the cause."""

    def __init__(self, kind: ErrorClass, message: str, url: str = ""):
        super().__init__(message)
        self.kind = kind
        self.url = url


class ResolveError(Exception):
    """No usable model server (mm.llm.resolve); `str(err)` is one line saying what to install or
    configure. Here, below both mm.llm.resolve and mm.llm.embedded, so neither imports the other back."""


@dataclass
class StreamDelta:
    """One piece of a streaming answer, passed to the engine's callback as it arrives.

    kind: "text" (visible content), "thought" (reasoning), or "tool_args" (a tool call's
    arguments grew: `index`, `name`, and `text` = the arguments so far).
    """

    kind: Literal["text", "thought", "tool_args"]
    text: str
    index: int = 0
    name: str = ""


_SURROGATE = re.compile("[\ud800-\udfff]")


def fix_surrogates(value: Any) -> Any:
    """`value` with UTF-16 surrogates made valid: a split pair joined, a lone one replaced by U+FFFD.

    Strings in dicts and lists are fixed too. Lone surrogates come from servers that cut an emoji
    between two chunks and from file names that are not UTF-8; they cannot be encoded, so the
    next request or the terminal would fail on them.
    """
    if isinstance(value, str):
        if _SURROGATE.search(value) is None:
            return value
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {fix_surrogates(k): fix_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [fix_surrogates(v) for v in value]
    return value


def shown_url(url: str) -> str:
    """`url` as messages show it: a password in it (`user:pw@host`) replaced by `***`."""
    scheme, sep, rest = url.partition("://")
    userinfo, at, host = rest.partition("@")
    if not at or "/" in userinfo:
        return url
    user = userinfo.split(":", 1)[0]
    return f"{scheme}{sep}{user}:***@{host}"


def repair_text(message: AssistantMessage) -> None:
    """Make `message`'s text encodable in place: content, reasoning and every call's arguments
    (a server may split an emoji between two chunks: fix_surrogates)."""
    message.content = fix_surrogates(message.content)
    message.reasoning = fix_surrogates(message.reasoning)
    for call in message.tool_calls:
        call.arguments = fix_surrogates(call.arguments)
        call.raw_arguments = fix_surrogates(call.raw_arguments)
