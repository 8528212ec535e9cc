"""Every case of tests/cases/llm-streams/, served by the scripted server, through ChatClient.complete.

Checks `expect.message`, `finish_reason`, `usage` and `error`; the engine-level keys (`runs`,
`turn_ends`, `files_after`, `next_request_*`, `history_assistant_message`) belong to the engine tests.
"""

from __future__ import annotations

import json

import pytest

from mm.llm.client import ChatClient
from mm.llm.textcalls import TextCallFilter
from mm.llm.types import LLMError, StreamDelta

from harness import load_cases  # noqa: E402
CASES = load_cases("llm-streams")
MESSAGES = [{"role": "user", "content": "go"}]


def tool_schemas(names: list[str]) -> list[dict]:
    return [{"type": "function", "function": {"name": n, "description": n,
                                              "parameters": {"type": "object", "properties": {}}}}
            for n in names]


def test_every_case_is_found():
    assert len(CASES) >= 19, "llm-streams cases not found under tests/cases/llm-streams"


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
async def test_stream_case(case, scripted_server):
    scripted_server.add(case)
    client = ChatClient(scripted_server.base_url, "m", idle_timeout=10)
    deltas: list[StreamDelta] = []
    expect = case["expect"]
    tools = tool_schemas(case.get("tools", []))

    if "error" in expect:
        with pytest.raises(LLMError) as info:
            await client.complete(MESSAGES, tools, deltas.append)
        want, err = expect["error"], info.value
        assert err.kind == want["class"]
        if want.get("one_line"):
            assert "\n" not in str(err) and "\r" not in str(err) and str(err).strip()
        if want.get("names_url"):
            assert client.url in str(err) and err.url == client.url
        for text in want.get("message_contains", []):
            assert text in str(err)
        return

    message = await client.complete(MESSAGES, tools, deltas.append)
    want = expect.get("message", {})
    if "content" in want:
        assert message.content == want["content"]
    if "content_stripped" in want:
        assert message.content.strip() == want["content_stripped"]
    if "reasoning" in want:
        assert message.reasoning == want["reasoning"]
    if "tool_calls" in want:
        assert [c.name for c in message.tool_calls] == [c["name"] for c in want["tool_calls"]]
        for call, wanted in zip(message.tool_calls, want["tool_calls"]):
            assert call.arguments == wanted["arguments"] and call.error is None
            if wanted.get("generated"):
                assert call.id
            else:
                assert call.id == wanted["id"]
        ids = [c.id for c in message.tool_calls]
        assert len(set(ids)) == len(ids)
    if "finish_reason" in expect:
        assert message.finish_reason == expect["finish_reason"]
    if "usage" in expect:
        assert message.usage is not None
        assert message.usage.input_tokens == expect["usage"]["input_tokens"]
        assert message.usage.output_tokens == expect["usage"]["output_tokens"]

    # What goes back to the server: content never null, ids non-empty, arguments a JSON string.
    history = message.to_history()
    assert isinstance(history["content"], str)
    for wire, call in zip(history.get("tool_calls", []), message.tool_calls):
        assert wire["id"] and json.loads(wire["function"]["arguments"]) == call.arguments

    # The deltas carried the streamed text, and the shown text (through the filter) matches the content.
    streamed = "".join(d.text for d in deltas if d.kind == "text")
    shown_filter = TextCallFilter(case.get("tools", []))
    shown = "".join(shown_filter.feed(d.text) for d in deltas if d.kind == "text") + shown_filter.flush()
    assert shown.strip() == message.content.strip()
    if not message.unknown_calls and message.content == streamed:
        assert shown == streamed
