"""Assembling one assistant message from chat-completion chunks, whatever the server's quirks.

Rules (DESIGN.md "Model servers: what the client must absorb", notes/local-model.md §3 and §5,
cases llm-streams/*): text and reasoning deltas are joined; tool-call deltas are merged per
`index` (else per id, else into the last call), `id` and `name` are assigned, never appended
(llama-cpp-python repeats them), and only `arguments` text is appended; an entry with neither
name nor arguments is dropped; a call without a usable id gets a made-up one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from mm.llm.args import parse_arguments, tool_param_types
from mm.llm.shapes import chunk_problem
from mm.llm.textcalls import extract_text_calls, new_call_id
from mm.text import one_line
from mm.llm.types import MALFORMED, AssistantMessage, LLMError, StreamDelta, ToolCall, Usage

SERVER_REPORTED = "the model server at {url} reported an error: {detail}"
NO_TOOL_NAME = "the call has no tool name"
REASONING_KEYS = ("reasoning_content", "reasoning", "thinking")


@dataclass
class _Call:
    """A tool call being assembled."""

    index: Any
    id: str = ""
    name: str = ""
    raw: str = ""
    obj: Any = None  # arguments sent as an object (stream-06)


class StreamAssembler:
    """Feed parsed chunk dicts (`chat.completion.chunk`, or a whole `chat.completion` turned into
    one chunk by the client), then call `finish()` for the AssistantMessage.

    tools: the OpenAI `tools` array of the request (names decide which calls written in the
    text count; parameter types decode Qwen's XML values). on_delta: called with a StreamDelta
    for every piece of text, reasoning or tool-call arguments; whatever it raises propagates out
    of `feed` unchanged so the client can abandon the stream. url: named in error messages.
    """

    def __init__(self, tools: list[dict] | None = None,
                 on_delta: Callable[[StreamDelta], None] | None = None, url: str = ""):
        self._types = tool_param_types(tools)
        self._on_delta = on_delta
        self._url = url
        self._content: list[str] = []
        self._reasoning: list[str] = []
        self._calls: list[_Call] = []
        self._legacy: _Call | None = None
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.timings: dict | None = None
        self.chunks = 0
        self.answered = False  # a chunk held choices

    def feed(self, chunk: dict) -> None:
        """Take one chunk. Raises LLMError("server_error") for an `error` object in the stream,
        LLMError("malformed_stream") for a field of a type the format does not allow (mm.llm.shapes)."""
        self.chunks += 1
        error = chunk.get("error")
        if error:
            detail = error.get("message") if isinstance(error, dict) else error
            raise LLMError("server_error", one_line(SERVER_REPORTED.format(url=self._url, detail=detail), 400), self._url)
        problem = chunk_problem(chunk)
        if problem is not None:
            raise LLMError("malformed_stream", one_line(MALFORMED.format(url=self._url, detail=problem), 600), self._url)
        self.answered = self.answered or bool(chunk.get("choices"))
        if isinstance(chunk.get("usage"), dict):
            self.usage = parse_usage(chunk["usage"])
        if isinstance(chunk.get("timings"), dict):
            self.timings = chunk["timings"]
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) not in (0, None):
                continue
            delta = choice.get("delta") or choice.get("message") or {}
            if isinstance(delta, dict):
                self._delta(delta)
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]

    def _emit(self, kind: str, text: str, index: int = 0, name: str = "") -> None:
        if self._on_delta is not None:
            self._on_delta(StreamDelta(kind, text, index, name))  # type: ignore[arg-type]

    def _delta(self, delta: dict) -> None:
        for key in REASONING_KEYS:
            piece = delta.get(key)
            if isinstance(piece, str) and piece:
                self._reasoning.append(piece)
                self._emit("thought", piece)
                break
        piece = delta.get("content")
        if isinstance(piece, list):  # content parts: [{"type": "text", "text": …}]
            piece = "".join(p.get("text", "") for p in piece if isinstance(p, dict) and isinstance(p.get("text"), str))
        if isinstance(piece, str) and piece:
            self._content.append(piece)
            self._emit("text", piece)
        entries = delta.get("tool_calls")
        if isinstance(entries, list):
            for entry in entries:
                if isinstance(entry, dict):
                    self._tool_delta(entry)
        elif isinstance(delta.get("function_call"), dict) and not self._calls:
            self._legacy = self._legacy or _Call(0)
            self._merge(self._legacy, delta["function_call"], "")

    def _tool_delta(self, entry: dict) -> None:
        index, call_id = entry.get("index"), entry.get("id")
        call_id = "" if call_id is None else str(call_id)
        fn = entry.get("function") if isinstance(entry.get("function"), dict) else {}
        call = self._find(index, call_id, fn)
        before = (call.raw, call.obj, call.name)
        self._merge(call, fn, call_id)
        if (call.raw, call.obj, call.name) != before:
            position = self._calls.index(call)
            self._emit("tool_args", call.raw, position, call.name)

    def _find(self, index: Any, call_id: str, fn: dict) -> _Call:
        """The call an entry continues: the latest with the same index, else the same id, else the
        last call. A new call when none fits, or when an entry names a function under a new id
        (or without index and id) after the call it would continue is complete."""
        if isinstance(index, int):
            for call in reversed(self._calls):
                if call.index == index:
                    if not (call_id and call.id and call_id != call.id and fn.get("name") and _complete(call)):
                        return call
                    break
        elif call_id:
            for call in self._calls:
                if call.id == call_id:
                    return call
        elif self._calls and not (fn.get("name") and self._calls[-1].name and _complete(self._calls[-1])):
            return self._calls[-1]
        call = _Call(index if isinstance(index, int) else len(self._calls))
        self._calls.append(call)
        return call

    @staticmethod
    def _merge(call: _Call, fn: dict, call_id: str) -> None:
        if call_id:
            call.id = call_id
        name = fn.get("name")
        if isinstance(name, str) and name:
            call.name = name
        args = fn.get("arguments")
        if isinstance(args, str):
            call.raw += args
        elif isinstance(args, (dict, list)):
            call.obj = args
            call.raw = json.dumps(args, ensure_ascii=False)

    def finish(self) -> AssistantMessage:
        """The assembled message: calls parsed, ids made unique, text calls taken out of the
        content when the server sent no structured call, usage from `usage` or `timings`. After
        finish_reason "length", the arguments the text ends inside are refused, never completed."""
        calls = [c for c in self._calls if c.name or c.raw.strip() or c.obj is not None]
        if not calls and self._legacy is not None and self._legacy.name:
            self._legacy.name = self._legacy.name.rstrip(":")
            calls = [self._legacy]
        message = AssistantMessage(
            content="".join(self._content),
            reasoning="".join(self._reasoning) or None,
            finish_reason=self.finish_reason,
            usage=self.usage or usage_from_timings(self.timings),
            timings=self.timings,
        )
        seen: set[str] = set()
        cut = self.finish_reason == "length"  # stopped on the token limit: the last call may be cut
        for n, call in enumerate(calls, 1):
            call_id = call.id if call.id and call.id not in seen else new_call_id()
            seen.add(call_id)
            if not call.name:
                message.tool_calls.append(ToolCall(call_id, "", None, call.raw, NO_TOOL_NAME))
                continue
            parsed, error = parse_arguments(call.obj if call.obj is not None else call.raw,
                                            self._types.get(call.name), cut and n == len(calls))
            message.tool_calls.append(ToolCall(call_id, call.name, parsed, call.raw, error))
        if not message.tool_calls and self._types and message.content:
            found = extract_text_calls(message.content, self._types, cut)
            message.content, message.tool_calls, message.unknown_calls = found.content, found.calls, found.unknown
        return message


def _complete(call: _Call) -> bool:
    if call.obj is not None:
        return True
    try:
        json.loads(call.raw)
        return True
    except ValueError:
        return False


def parse_usage(usage: dict) -> Usage:
    """Usage from an OpenAI `usage` object, with `prompt_tokens_details.cached_tokens` and
    `completion_tokens_details.reasoning_tokens` when present; missing counts are 0."""
    def count(obj: Any, key: str) -> int:
        value = obj.get(key) if isinstance(obj, dict) else None
        return value if isinstance(value, int) else 0
    return Usage(
        input_tokens=count(usage, "prompt_tokens"),
        output_tokens=count(usage, "completion_tokens"),
        thought_tokens=count(usage.get("completion_tokens_details"), "reasoning_tokens"),
        cached_tokens=count(usage.get("prompt_tokens_details"), "cached_tokens"),
    )


def usage_from_timings(timings: dict | None) -> Usage | None:
    """llama.cpp's `timings` when no `usage` came: input = prompt_n + cache_n, output = predicted_n."""
    if not timings or not isinstance(timings.get("predicted_n"), int):
        return None
    cached = timings.get("cache_n") if isinstance(timings.get("cache_n"), int) else 0
    prompt = timings.get("prompt_n") if isinstance(timings.get("prompt_n"), int) else 0
    return Usage(input_tokens=prompt + cached, output_tokens=timings["predicted_n"], cached_tokens=cached)
