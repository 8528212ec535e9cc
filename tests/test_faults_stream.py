"""The fault suite, model streams (issue 10.5, 10.6): chunks of a type the format does not allow, fuzzed,
through the assembler and the client against the scripted server, and through every front end
(`mm -p`, line mode on a pseudo-terminal, `mm -acp`); U+2028, U+2029 and U+0085 unescaped inside
JSON strings, in text and in arguments.

A malformed chunk is one `malformed_stream` line naming the URL and the field; a `null` the format
allows is accepted; nothing else ever escapes. Hypothesis runs a fixed number of examples.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_cases import run_case
from harness import RecordingUI, make_conversation
from mm.llm.client import ChatClient
from mm.llm.stream import StreamAssembler
from mm.llm.types import LLMError
from test_line_mode_terminal import Terminal, spawn_on_terminal
from test_oneshot_e2e import run_mm

MESSAGES = [{"role": "user", "content": "go"}]
TOOLS = [{"type": "function", "function": {"name": "write_file", "parameters": {
    "type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}}}]
FAST = settings(max_examples=int(os.environ.get("FAULT_EXAMPLES", "300")), deadline=None, derandomize=True,
                database=None, suppress_health_check=list(HealthCheck))
SERVED = settings(max_examples=int(os.environ.get("FAULT_EXAMPLES", "25")), deadline=None, derandomize=True,
                  database=None, suppress_health_check=list(HealthCheck))
SEPARATORS = {"LINE SEPARATOR": "\u2028", "PARAGRAPH SEPARATOR": "\u2029", "NEXT LINE": "\u0085"}


def chunk(delta=None, finish=None, **extra) -> dict:
    return {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}],
            **extra}


def served(*chunks) -> list:
    """An event stream: a first text chunk, `chunks`, the finish and [DONE]."""
    return [chunk({"role": "assistant", "content": "Hello"}), *chunks, chunk({}, "stop"), "data: [DONE]"]


# -- the shapes the format does not allow -------------------------------------------------------------

MALFORMED = [
    ({"choices": 5}, "choices is a number where a list belongs"),
    ({"choices": "x"}, "choices is a string where a list belongs"),
    ({"choices": True}, "choices is a boolean where a list belongs"),
    ({"choices": None}, "choices is null where a list belongs"),
    ({"choices": {"index": 0}}, "choices is an object where a list belongs"),
    ({"choices": [7]}, "choices[0] is a number where an object belongs"),
    ({"choices": [{"index": 0, "delta": "text"}]}, "choices[0].delta is a string where an object belongs"),
    ({"choices": [{"index": 0, "delta": [1]}]}, "choices[0].delta is a list where an object belongs"),
    ({"choices": [{"index": 0, "delta": {"content": 5}}]},
     "choices[0].delta.content is a number where a string or a list belongs"),
    ({"choices": [{"index": 0, "delta": {"tool_calls": "bash"}}]},
     "choices[0].delta.tool_calls is a string where a list belongs"),
    ({"choices": [{"index": 0, "delta": {"tool_calls": [False]}}]},
     "choices[0].delta.tool_calls[0] is a boolean where an object belongs"),
    ({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": 3}]}}]},
     "choices[0].delta.tool_calls[0].function is a number where an object belongs"),
    ({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"name": 1}}]}}]},
     "choices[0].delta.tool_calls[0].function.name is a number where a string belongs"),
    ({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": True}}]}}]},
     "choices[0].delta.tool_calls[0].function.arguments is a boolean where a string or an object belongs"),
    ({"choices": [{"index": 0, "delta": {"function_call": "f"}}]},
     "choices[0].delta.function_call is a string where an object belongs"),
    ({"choices": [{"index": 0, "delta": {}, "finish_reason": 1}]},
     "choices[0].finish_reason is a number where a string belongs"),
    ({"choices": [], "usage": "10 tokens"}, "usage is a string where an object belongs"),
    ({"choices": [], "usage": [10, 5]}, "usage is a list where an object belongs"),
]
ALLOWED_NULLS = [
    chunk({"content": " world"}, usage=None),  # OpenAI: usage null in every chunk but the last
    chunk({"content": None, "tool_calls": None, "function_call": None, "role": None}),
    {"choices": [{"index": 0, "delta": None, "finish_reason": None}]},
    {"choices": [{"index": 0}]},  # no delta at all
    {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": None}]}}]},
    {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2}, "timings": None},
]


@pytest.mark.parametrize("bad, detail", MALFORMED, ids=[d for _, d in MALFORMED])
async def test_a_chunk_of_a_type_the_format_does_not_allow_is_one_malformed_stream_line(scripted_server, bad, detail):
    scripted_server.add_sse(served(bad))
    client = ChatClient(scripted_server.base_url, "m")
    with pytest.raises(LLMError) as info:
        await client.complete(MESSAGES, TOOLS)
    assert info.value.kind == "malformed_stream"
    assert str(info.value) == f"the model server at {client.url} sent a malformed stream: {detail}"


async def test_the_nulls_the_format_allows_are_accepted(scripted_server):
    scripted_server.add_sse(served(*ALLOWED_NULLS))
    message = await ChatClient(scripted_server.base_url, "m").complete(MESSAGES, TOOLS)
    assert message.content == "Hello world" and message.tool_calls == [] and message.usage.output_tokens == 2


async def test_a_non_streamed_answer_of_a_wrong_shape_is_malformed(scripted_server):
    scripted_server.add_json({"choices": [{"index": 0, "message": "Hello", "finish_reason": "stop"}]})
    with pytest.raises(LLMError) as info:
        await ChatClient(scripted_server.base_url, "m").complete(MESSAGES, TOOLS)
    assert info.value.kind == "malformed_stream" and str(info.value).endswith(
        "choices[0].message is a string where an object belongs")


# -- fuzzed chunk shapes ------------------------------------------------------------------------------

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                    max_leaves=6)


def shaped() -> st.SearchStrategy:
    """A chunk whose fields are, each, of the right shape or any JSON value."""
    def field(good):
        return st.one_of(good, JSON)

    function = st.fixed_dictionaries({}, optional={"name": field(st.sampled_from(["write_file", "bash", ""])),
                                                   "arguments": field(st.text(max_size=20))})
    entry = st.fixed_dictionaries({}, optional={"index": field(st.integers(0, 2)), "id": field(st.text(max_size=5)),
                                                "function": field(function), "type": st.just("function")})
    delta = st.fixed_dictionaries({}, optional={
        "content": field(st.text(max_size=20)), "role": st.just("assistant"),
        "reasoning_content": field(st.text(max_size=10)), "tool_calls": field(st.lists(field(entry), max_size=2)),
        "function_call": field(function)})
    choice = st.fixed_dictionaries({}, optional={"index": field(st.integers(0, 1)), "delta": field(delta),
                                                 "message": field(delta),
                                                 "finish_reason": field(st.sampled_from(["stop", "tool_calls"]))})
    usage = st.fixed_dictionaries({}, optional={"prompt_tokens": field(st.integers(0, 9)),
                                                "completion_tokens": field(st.integers(0, 9))})
    return st.fixed_dictionaries({}, optional={"choices": field(st.lists(field(choice), max_size=2)),
                                               "usage": field(usage), "timings": JSON, "error": st.none()})


@FAST
@given(chunks=st.lists(shaped(), min_size=1, max_size=6))
def test_fuzzed_chunks_are_assembled_or_refused_as_malformed(chunks):
    assembler = StreamAssembler(TOOLS, lambda delta: None, "http://127.0.0.1:1/v1/chat/completions")
    try:
        for c in chunks:
            assembler.feed(c)
    except LLMError as err:
        assert err.kind == "malformed_stream" and " where " in str(err) and "\n" not in str(err)
        return
    message = assembler.finish()
    assert isinstance(message.content, str)
    for call in message.tool_calls:
        assert call.arguments is not None or call.error


def test_fuzzed_chunks_through_the_client_end_in_an_answer_or_one_error_line(scripted_server):
    @SERVED
    @given(chunks=st.lists(shaped(), min_size=1, max_size=4))
    def run(chunks):
        scripted_server.add_sse(served(*chunks))
        client = ChatClient(scripted_server.base_url, "m", idle_timeout=20)
        try:
            message = asyncio.run(client.complete(MESSAGES, TOOLS))
        except LLMError as err:
            assert err.kind in ("malformed_stream", "server_error") and "\n" not in str(err)
            assert client.url in str(err)
            return
        assert message.content.startswith("Hello")

    run()


# -- U+2028, U+2029 and U+0085 unescaped inside JSON strings (llama.cpp sends them) ---------------------

def raw_data(obj: dict) -> str:
    """`obj` as a `data:` line whose strings hold the characters as they are (not \\u-escaped)."""
    text = "data: " + json.dumps(obj, ensure_ascii=False)
    assert all(c not in text for c in ("\\u2028", "\\u2029", "\\u0085"))
    return text


@pytest.mark.parametrize("name", SEPARATORS)
async def test_a_separator_inside_the_text_stays_in_its_line(scripted_server, name):
    char = SEPARATORS[name]
    scripted_server.add_sse([raw_data(chunk({"content": f"one{char}two"})),
                             raw_data(chunk({"content": f"{char}three{char}"}, "stop")), "data: [DONE]"])
    message = await ChatClient(scripted_server.base_url, "m").complete(MESSAGES, TOOLS)
    assert message.content == f"one{char}two{char}three{char}"


@pytest.mark.parametrize("name", SEPARATORS)
async def test_a_separator_inside_the_arguments_stays_in_its_line(scripted_server, name):
    char = SEPARATORS[name]
    args = json.dumps({"path": "notes.txt", "content": f"a{char}b"}, ensure_ascii=False)
    scripted_server.add_sse([
        raw_data(chunk({"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "write_file", "arguments": ""}}]})),
        raw_data(chunk({"tool_calls": [{"index": 0, "function": {"arguments": args[:20]}}]})),
        raw_data(chunk({"tool_calls": [{"index": 0, "function": {"arguments": args[20:]}}]}, "tool_calls")),
        "data: [DONE]"])
    message = await ChatClient(scripted_server.base_url, "m").complete(MESSAGES, TOOLS)
    assert message.tool_calls[0].arguments == {"path": "notes.txt", "content": f"a{char}b"}


def test_separators_through_mm_p_reach_the_file_and_the_answer(scripted_server, tmp_path):
    text = "".join(SEPARATORS.values())
    scripted_server.add_tool_calls([{"name": "write_file", "arguments": {"path": "seps.txt", "content": f"<{text}>"}}])
    scripted_server.add_reply(f"written{text}done")
    proc = run_mm(["-p", "go", "--base-url", scripted_server.base_url, "--model", "m"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "seps.txt").read_text(encoding="utf-8") == f"<{text}>"
    assert proc.stdout == f"written{text}done\n"


# -- every front end: one line, and mm goes on --------------------------------------------------------

def malformed_turn(srv) -> str:
    srv.add_sse(served({"choices": [{"index": 0, "delta": {"tool_calls": "oops"}}]}))
    return f"the model server at {srv.base_url}/chat/completions sent a malformed stream: " \
           "choices[0].delta.tool_calls is a string where a list belongs"


def test_mm_p_says_malformed_stream_in_one_line_and_exits_1(scripted_server, tmp_path):
    said = malformed_turn(scripted_server)
    proc = run_mm(["-p", "go", "--base-url", scripted_server.base_url, "--model", "m"], tmp_path)
    assert proc.returncode == 1
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip() and not ln.startswith("⚙")]
    assert lines == [f"mm: {said}"], proc.stderr
    assert "Traceback" not in proc.stderr


def test_line_mode_says_it_in_one_line_and_takes_the_next_prompt(scripted_server, tmp_path):
    said = malformed_turn(scripted_server)
    scripted_server.add_reply("Second answer.")
    argv = [sys.executable, "-m", "mm", "--base-url", scripted_server.base_url, "--model", "m"]
    proc, fd = spawn_on_terminal(argv, tmp_path, size=(40, 400))
    term = Terminal(fd)
    try:
        term.expect("›")
        term.write("first\r")
        term.expect(said)
        term.expect("›")
        term.write("second\r")
        term.expect("Second answer.")
        term.expect("›")
        term.write("/quit\r")
        assert proc.wait(15) == 0
        assert b"Traceback" not in term.raw
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(fd)


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": False, "writeTextFile": False},
                                                 "terminal": False}}}


def acp_steps_to_a_session() -> list[dict]:
    return [
        {"send": INIT},
        {"receive": {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": 1}}},
        {"send": {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "{cwd}", "mcpServers": []}}},
        {"receive": {"jsonrpc": "2.0", "id": 2, "result": {"sessionId": {"$capture": "sid"}}}},
        {"receive": {"jsonrpc": "2.0", "method": "session/update",
                     "params": {"update": {"sessionUpdate": "available_commands_update"}}}},
    ]


def prompt(ident: int, text: str) -> dict:
    return {"send": {"jsonrpc": "2.0", "id": ident, "method": "session/prompt",
                     "params": {"sessionId": "{sid}", "prompt": [{"type": "text", "text": text}]}}}


def test_acp_answers_the_prompt_with_the_error_and_serves_the_next(scripted_server, tmp_path):
    case = {
        "id": "faults-malformed-stream", "area": "acp", "agent_config": {},
        "model_script": [{"sse": served({"choices": [{"index": 0, "delta": {"tool_calls": "oops"}}]})},
                         {"content": "Second answer."}],
        "steps": acp_steps_to_a_session() + [
            prompt(3, "first"),
            {"receive_text": "Hello"},
            {"receive": {"jsonrpc": "2.0", "id": 3, "error": {"code": -32603, "data": {"error": {
                "$contains": "sent a malformed stream: choices[0].delta.tool_calls is a string where a list belongs"}}}}},
            prompt(4, "second"),
            {"receive_text": "Second answer."},
            {"receive": {"jsonrpc": "2.0", "id": 4, "result": {"stopReason": "end_turn"}}},
        ],
        "expect": {"steps_pass": True, "stdout_only_jsonrpc": True, "process_alive_after": True},
    }
    run_case(case, tmp_path, scripted_server)


async def test_the_engine_ends_the_turn_with_the_line_and_keeps_the_history(scripted_server, tmp_path):
    said = malformed_turn(scripted_server)
    conv = make_conversation(scripted_server.base_url, tmp_path)
    done = await conv.run_turn("go", RecordingUI())
    assert (done.stop_reason, done.error) == ("error", said)
    assert [m["role"] for m in conv.history] == ["system"]
