"""ChatClient failures and quirks, the stream assembler, calls written in the text, argument parsing."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mm.llm.args import parse_arguments
from mm.llm.client import ChatClient
from mm.llm.stream import StreamAssembler
from mm.llm.textcalls import TextCallFilter, extract_text_calls
from mm.llm.types import LLMError

MESSAGES = [{"role": "user", "content": "go"}]
TOOLS = [{"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": props}}}
         for n, props in (("bash", {"command": {"type": "string"}}),
                          ("read_file", {"path": {"type": "string"}, "start": {"type": "integer"}}),
                          ("edit_file", {"path": {"type": "string"}, "edits": {"type": "array"}}))]
NAMES = ["bash", "read_file", "edit_file"]


def chunk(delta: dict | None = None, finish: str | None = None, **extra) -> dict:
    return {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}],
            **extra}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def assert_one_line(err: LLMError, url: str) -> None:
    text = str(err)
    assert text and "\n" not in text and url in text


# -- failures -----------------------------------------------------------------------------------

async def test_unreachable_names_the_url():
    client = ChatClient(f"http://127.0.0.1:{free_port()}/v1", "m")
    with pytest.raises(LLMError) as info:
        await client.complete(MESSAGES, [])
    assert info.value.kind == "unreachable"
    assert_one_line(info.value, client.url)
    assert "nothing answers" in str(info.value) and "connection refused" in str(info.value)


async def test_503_loading_is_retried_then_succeeds(scripted_server):
    for _ in range(2):
        scripted_server.add_json({"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}}, 503)
    scripted_server.add_reply("ready")
    client = ChatClient(scripted_server.base_url, "m", loading_poll=0.01)
    message = await client.complete(MESSAGES, [])
    assert message.content == "ready"
    assert len(scripted_server.requests) == 3


async def test_503_for_too_long_gives_up(scripted_server):
    for _ in range(200):
        scripted_server.add_json({"error": {"code": 503, "message": "Loading model"}}, 503)
    client = ChatClient(scripted_server.base_url, "m", loading_timeout=0.05, loading_poll=0.01)
    with pytest.raises(LLMError) as info:
        await client.complete(MESSAGES, [])
    assert info.value.kind == "loading"
    assert_one_line(info.value, client.url)
    assert "Loading model" in str(info.value)


@pytest.mark.parametrize("body, words", [
    ({"error": {"message": "boom:\nout of memory"}}, "boom: out of memory"),
    ({"error": "plain string error"}, "plain string error"),
    ({"detail": "Not Found"}, "Not Found"),
    ("upstream exploded\n  at line 2", "upstream exploded at line 2"),
])
async def test_http_error_keeps_the_server_words_on_one_line(scripted_server, body, words):
    scripted_server.add_json(body, status=500, headers={"Content-Type": "text/plain"} if isinstance(body, str) else None)
    client = ChatClient(scripted_server.base_url, "m")
    with pytest.raises(LLMError) as info:
        await client.complete(MESSAGES, [])
    assert info.value.kind == "server_error"
    assert_one_line(info.value, client.url)
    assert words in str(info.value) and "HTTP 500" in str(info.value)


async def test_script_exhausted_is_http_500(scripted_server):
    client = ChatClient(scripted_server.base_url, "m")
    with pytest.raises(LLMError) as info:
        await client.complete(MESSAGES, [])
    assert "scripted server: no more responses" in str(info.value)


async def test_stream_without_end_is_incomplete(scripted_server):
    scripted_server.add_sse([chunk({"content": "Hel"}), chunk({"content": "lo"})])
    client = ChatClient(scripted_server.base_url, "m")
    with pytest.raises(LLMError) as info:
        await client.complete(MESSAGES, [])
    assert info.value.kind == "incomplete_stream"
    assert_one_line(info.value, client.url)


async def test_connection_cut_mid_body_is_incomplete(scripted_server):
    scripted_server.add_sse([chunk({"content": "Hel"}), {"$cut": True}, chunk({}, "stop"), "data: [DONE]"])
    client = ChatClient(scripted_server.base_url, "m")
    with pytest.raises(LLMError) as info:
        await client.complete(MESSAGES, [])
    assert info.value.kind == "incomplete_stream"
    assert_one_line(info.value, client.url)


async def test_finish_without_done_is_accepted(scripted_server):
    scripted_server.add_sse([chunk({"content": "Hi"}), chunk({}, "stop")])
    message = await ChatClient(scripted_server.base_url, "m").complete(MESSAGES, [])
    assert message.content == "Hi" and message.finish_reason == "stop" and message.usage is None


async def test_idle_watchdog_names_the_url(scripted_server):
    scripted_server.add_stall(30)
    client = ChatClient(scripted_server.base_url, "m", idle_timeout=0.2)
    with pytest.raises(LLMError) as info:
        await client.complete(MESSAGES, [])
    assert info.value.kind == "timeout"
    assert_one_line(info.value, client.url)
    assert scripted_server.abandoned == [True]


async def test_idle_watchdog_mid_stream(scripted_server):
    scripted_server.add_sse([chunk({"content": "a"}), {"$sleep": 30}, chunk({}, "stop"), "data: [DONE]"])
    client = ChatClient(scripted_server.base_url, "m", idle_timeout=0.2)
    with pytest.raises(LLMError) as info:
        await client.complete(MESSAGES, [])
    assert info.value.kind == "timeout"


async def test_raising_callback_abandons_the_stream(scripted_server):
    scripted_server.add_sse([chunk({"content": f"{i} "}) for i in range(50)] + [chunk({}, "stop"), "data: [DONE]"],
                            delay=0.02)
    seen = []

    class Stop(Exception):
        pass

    def on_delta(delta):
        seen.append(delta.text)
        if len(seen) == 2:
            raise Stop()

    with pytest.raises(Stop):
        await ChatClient(scripted_server.base_url, "m").complete(MESSAGES, [], on_delta)
    assert seen == ["0 ", "1 "]
    assert scripted_server.abandoned == [True]


async def test_normal_stream_is_not_abandoned(scripted_server):
    scripted_server.add_reply("fine", delay=0.001)
    await ChatClient(scripted_server.base_url, "m").complete(MESSAGES, [])
    assert scripted_server.abandoned == [False]


@pytest.mark.parametrize("lines, kind", [
    (["data: {\"choices\": [", "data: [DONE]"], "malformed_stream"),
    (["<html><body>hello</body></html>"], "malformed_stream"),
    (["data: [1, 2]", "data: [DONE]"], "malformed_stream"),
])
async def test_undecodable_streams(scripted_server, lines, kind):
    scripted_server.add_sse(lines)
    client = ChatClient(scripted_server.base_url, "m")
    with pytest.raises(LLMError) as info:
        await client.complete(MESSAGES, [])
    assert info.value.kind == kind
    assert_one_line(info.value, client.url)


async def test_error_object_inside_the_stream(scripted_server):
    scripted_server.add_sse([chunk({"content": "a"}), {"error": {"code": 500, "message": "context\nshifted"}}])
    client = ChatClient(scripted_server.base_url, "m")
    with pytest.raises(LLMError) as info:
        await client.complete(MESSAGES, [])
    assert info.value.kind == "server_error" and "context shifted" in str(info.value)
    assert_one_line(info.value, client.url)


async def test_tolerant_sse_reader(scripted_server):
    scripted_server.add_sse([
        ": keep-alive", "event: message", "id: 7", "retry: 100",
        "data:" + '{"choices":[{"index":0,"delta":{"content":"no space "}}]}',
        'data: {"choices":[{"index":0,\ndata: "delta":{"content":"two data lines "}}]}',
        'data: {"choices":[{"index":0,"delta":{"content":"end"},"finish_reason":"stop"}]}',
    ])
    message = await ChatClient(scripted_server.base_url, "m").complete(MESSAGES, [])
    assert message.content == "no space two data lines end"


@pytest.mark.parametrize("content_type", ["application/x-ndjson", "text/event-stream"])
async def test_a_body_of_bare_json_lines_is_read_chunk_by_chunk(scripted_server, content_type):
    lines = [json.dumps(chunk({"content": "bare \u2028 json "}), ensure_ascii=False), "",
             json.dumps(chunk({"content": "lines"}, "stop")),
             json.dumps({"choices": [], "usage": {"prompt_tokens": 4, "completion_tokens": 2}})]
    scripted_server.add_json("\n".join(lines) + "\n", headers={"Content-Type": content_type})
    message = await ChatClient(scripted_server.base_url, "m").complete(MESSAGES, [])
    assert message.content == "bare \u2028 json lines" and message.usage.output_tokens == 2


async def test_json_lines_that_stop_before_the_finish_are_incomplete(scripted_server):
    lines = [json.dumps(chunk({"content": "a"})), json.dumps(chunk({"content": "b"}))]
    scripted_server.add_json("\n".join(lines), headers={"Content-Type": "application/x-ndjson"})
    with pytest.raises(LLMError) as info:
        await ChatClient(scripted_server.base_url, "m").complete(MESSAGES, [])
    assert info.value.kind == "incomplete_stream"


async def test_json_body_with_event_stream_content_type(scripted_server):
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "plain",
                                                 "reasoning_content": "why"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1,
                      "prompt_tokens_details": {"cached_tokens": 2},
                      "completion_tokens_details": {"reasoning_tokens": 1}}}
    scripted_server.add_json(body, headers={"Content-Type": "text/event-stream"})
    message = await ChatClient(scripted_server.base_url, "m").complete(MESSAGES, [])
    assert (message.content, message.reasoning) == ("plain", "why")
    assert (message.usage.cached_tokens, message.usage.thought_tokens) == (2, 1)


async def test_request_body_and_headers(scripted_server):
    scripted_server.add_reply("ok")
    client = ChatClient(scripted_server.base_url, "qwen", api_key="sk-1", options={"temperature": 0.2, "top_p": None})
    history = [{"role": "user", "content": "a"},
               {"role": "assistant", "content": None, "tool_calls": [{"id": "x", "type": "function",
                                                                      "function": {"name": "bash", "arguments": "{}"}}]},
               {"role": "tool", "tool_call_id": "x", "content": "out"}]
    await client.complete(history, TOOLS, max_tokens=50)
    body = scripted_server.requests[0]
    assert body["model"] == "qwen" and body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["tools"] == TOOLS and body["temperature"] == 0.2 and body["max_tokens"] == 50
    assert "top_p" not in body
    assert body["messages"][1]["content"] == ""  # notes/local-model.md §5.1
    assert history[1]["content"] is None  # the caller's history is not changed
    assert scripted_server.request_headers[0]["authorization"] == "Bearer sk-1"


async def test_no_tools_key_when_none_declared(scripted_server):
    scripted_server.add_reply("ok")
    await ChatClient(scripted_server.base_url, "m").complete(MESSAGES, [])
    assert "tools" not in scripted_server.requests[0]


def test_importing_the_client_does_not_import_httpx():
    code = "import sys, mm.llm.client, mm.llm.servers, mm.llm.stream; print('httpx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# -- the assembler ------------------------------------------------------------------------------

def assemble(*chunks: dict, tools: list | None = None, deltas: list | None = None):
    asm = StreamAssembler(TOOLS if tools is None else tools, deltas.append if deltas is not None else None, "URL")
    for c in chunks:
        asm.feed(c)
    return asm.finish()


def tc(**entry) -> dict:
    return chunk({"tool_calls": [entry]})


def test_merge_by_id_when_index_is_missing():
    m = assemble(tc(id="a", function={"name": "bash", "arguments": '{"command":'}),
                 tc(id="b", function={"name": "read_file", "arguments": '{"path": "x"}'}),
                 tc(id="a", function={"arguments": '"ls"}'}), chunk(finish="tool_calls"))
    assert [(c.id, c.name, c.arguments) for c in m.tool_calls] == [
        ("a", "bash", {"command": "ls"}), ("b", "read_file", {"path": "x"})]


def test_no_index_no_id_continues_the_last_call_until_complete():
    m = assemble(tc(function={"name": "bash", "arguments": '{"command":'}), tc(function={"arguments": '"ls"}'}),
                 tc(function={"name": "read_file", "arguments": '{"path": "a"}'}), chunk(finish="tool_calls"))
    assert [(c.name, c.arguments) for c in m.tool_calls] == [("bash", {"command": "ls"}), ("read_file", {"path": "a"})]
    assert all(c.id for c in m.tool_calls) and m.tool_calls[0].id != m.tool_calls[1].id


def test_same_index_with_a_new_id_is_a_new_call():
    m = assemble(tc(index=0, id="a", function={"name": "bash", "arguments": '{"command": "ls"}'}),
                 tc(index=0, id="b", function={"name": "bash", "arguments": '{"command": "pwd"}'}))
    assert [c.arguments["command"] for c in m.tool_calls] == ["ls", "pwd"]


def test_new_id_without_a_name_continues_the_call():
    m = assemble(tc(index=0, id="a", function={"name": "bash", "arguments": '{"command":'}),
                 tc(index=0, id="b", function={"arguments": ' "ls"}'}))
    assert [(c.id, c.arguments) for c in m.tool_calls] == [("b", {"command": "ls"})]


def test_content_parts():
    m = assemble(chunk({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}, "stop"))
    assert m.content == "ab"


def test_duplicate_ids_are_made_unique():
    m = assemble(tc(index=0, id="same", function={"name": "bash", "arguments": "{}"}),
                 tc(index=1, id="same", function={"name": "bash", "arguments": "{}"}))
    assert m.tool_calls[0].id == "same" and m.tool_calls[1].id not in ("", "same")


def test_nameless_call_with_arguments_is_kept_with_an_error():
    m = assemble(tc(index=0, id="", function={"arguments": '{"command": "ls"}'}))
    assert m.tool_calls[0].name == "" and m.tool_calls[0].error and m.tool_calls[0].id


def test_unparsable_arguments_carry_an_error():
    m = assemble(tc(index=0, id="c", function={"name": "bash", "arguments": '{"command": "ls'}))
    call = m.tool_calls[0]
    assert call.arguments is None and call.raw_arguments == '{"command": "ls' and "cut off" in call.error


def test_legacy_function_call_only():
    m = assemble(chunk({"function_call": {"name": "bash", "arguments": '{"command": '}}),
                 chunk({"function_call": {"arguments": '"ls"}'}}), chunk(finish="function_call"))
    assert [(c.name, c.arguments) for c in m.tool_calls] == [("bash", {"command": "ls"})]


@pytest.mark.parametrize("key", ["reasoning_content", "reasoning", "thinking"])
def test_reasoning_keys(key):
    deltas = []
    m = assemble(chunk({key: "hmm"}), chunk({"content": "yes"}, "stop"), deltas=deltas)
    assert (m.reasoning, m.content) == ("hmm", "yes")
    assert [(d.kind, d.text) for d in deltas] == [("thought", "hmm"), ("text", "yes")]


def test_usage_from_timings_when_no_usage():
    m = assemble(chunk({"content": "a"}, "stop", timings={"prompt_n": 20, "cache_n": 100, "predicted_n": 7}))
    assert (m.usage.input_tokens, m.usage.output_tokens, m.usage.cached_tokens) == (120, 7, 100)


def test_tool_args_deltas_carry_the_arguments_so_far():
    deltas = []
    assemble(tc(index=0, id="a", function={"name": "bash", "arguments": '{"comm'}),
             tc(index=0, function={"arguments": 'and": "ls"}'}), deltas=deltas)
    assert [(d.kind, d.text, d.index, d.name) for d in deltas] == [
        ("tool_args", '{"comm', 0, "bash"), ("tool_args", '{"command": "ls"}', 0, "bash")]


def test_text_calls_only_without_structured_calls():
    text = '<tool_call>{"name": "bash", "arguments": {"command": "ls"}}</tool_call>'
    m = assemble(chunk({"content": text}), tc(index=0, id="a", function={"name": "read_file", "arguments": "{}"}))
    assert [c.name for c in m.tool_calls] == ["read_file"] and m.content == text


def test_no_text_calls_when_no_tools_declared():
    text = '{"name": "bash", "arguments": {"command": "ls"}}'
    m = assemble(chunk({"content": text}, "stop"), tools=[])
    assert m.tool_calls == [] and m.unknown_calls == [] and m.content == text


# -- calls written in the text ------------------------------------------------------------------

@pytest.mark.parametrize("text, name, args, rest", [
    ('I will look.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a"}}\n</tool_call>',
     "read_file", {"path": "a"}, "I will look."),
    ('<tool_call>\n<function=bash>\n<parameter=command>\nls -la\n</parameter>\n</function>\n</tool_call>',
     "bash", {"command": "ls -la"}, ""),
    ('<function=read_file>{"path": "a", "start": 2}</function>', "read_file", {"path": "a", "start": 2}, ""),
    ('<function=edit_file>\n<parameter=path>a</parameter>\n<parameter=edits>[{"old": "x", "new": "y"}]</parameter>\n</function>',
     "edit_file", {"path": "a", "edits": [{"old": "x", "new": "y"}]}, ""),
    ('```json\n{"name": "bash", "arguments": {"command": "ls"}}\n```', "bash", {"command": "ls"}, ""),
    ('Running it:\n{"name": "bash", "parameters": {"command": "ls"}}', "bash", {"command": "ls"}, "Running it:"),
    ('{"name": "bash", "arguments": "{\\"command\\": \\"ls\\"}"}', "bash", {"command": "ls"}, ""),
    ('<tool_call>{"name": "bash", "arguments": {"command": "ls"}}', "bash", {"command": "ls"}, ""),
    ('{"name": "bash", "arguments": {"command": "ls"}', "bash", {"command": "ls"}, ""),
])
def test_extract_text_calls(text, name, args, rest):
    found = extract_text_calls(text, {"bash": {}, "read_file": {}, "edit_file": {"edits": "array"}})
    assert [(c.name, c.arguments) for c in found.calls] == [(name, args)]
    assert found.content == rest and found.calls[0].id and not found.unknown


def test_broken_tag_call_becomes_a_call_with_an_error():
    found = extract_text_calls('<tool_call>{"name": "bash", "arguments": {"command": "ls}</tool_call>', NAMES)
    assert found.calls[0].name == "bash" and found.calls[0].arguments is None and found.calls[0].error


@pytest.mark.parametrize("text, unknown", [
    ('{"name":"write","arguments":{"path":"hi.py"}}', ["write"]),
    ('<tool_call>{"name": "write", "arguments": {}}</tool_call>', ["write"]),
    ('Example:\n{"name": "write", "arguments": {}}\nthat is all', []),
    ('{"name": "demo", "version": "1.0.0"}', []),
])
def test_undeclared_calls_stay_in_the_text(text, unknown):
    found = extract_text_calls(text, NAMES)
    assert found.calls == [] and [n for n, _ in found.unknown] == unknown and found.content == text


def feed_all(text: str, parts: list[int], names=NAMES) -> str:
    f = TextCallFilter(names)
    out, pos = [], 0
    for size in parts:
        out.append(f.feed(text[pos:pos + size]))
        pos += size
    out.append(f.feed(text[pos:]))
    return "".join(out) + f.flush()


def test_filter_holds_back_a_call_until_it_is_known():
    f = TextCallFilter(NAMES)
    assert f.feed("Let me check.\n<tool") == "Let me check.\n"
    assert f.feed('_call>\n{"name": "bash", "arguments": {}}') == ""
    assert f.feed("\n</tool_call>") == ""
    assert f.feed("\nDone") == "\nDone"
    assert f.flush() == ""


def test_filter_releases_what_is_not_a_call():
    f = TextCallFilter(NAMES)
    assert f.feed("a < b and <b>bold</b>") == "a < b and <b>bold</b>"
    assert f.feed("\n{") == "\n"
    assert f.feed('"path": 1}') == '{"path": 1}'
    assert f.feed('\n{"name": "demo", ') == "\n"
    assert f.feed('"version": "1"}\n') == '{"name": "demo", "version": "1"}\n'
    assert f.feed("<function=oops x>") == "<function=oops x>"
    assert f.feed("<tool_call>unclosed") == ""
    assert f.flush() == "<tool_call>unclosed"


def test_filter_shows_calls_to_undeclared_tools():
    text = '<tool_call>{"name": "write", "arguments": {}}</tool_call>'
    assert feed_all(text, [1] * len(text)) == text


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list('ab {}"<>\n:/_=') + ["<tool_call>", "</tool_call>", "<function=bash>",
                                                            "</function>", '{"name": "bash", "arguments": {}}']),
                max_size=40).map("".join), st.lists(st.integers(min_value=0, max_value=7), max_size=20))
def test_filter_output_does_not_depend_on_chunking(text, parts):
    whole = feed_all(text, [])
    assert feed_all(text, parts) == whole
    assert feed_all(text, parts, names=[]) == text  # nothing declared: everything is shown


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_extract_never_raises(text):
    found = extract_text_calls(text, NAMES)
    assert isinstance(found.content, str)


# -- arguments ----------------------------------------------------------------------------------

@pytest.mark.parametrize("raw, parsed", [
    ('{"path": "a", "path": "b"}', {"path": "b"}),
    ("", {}), (None, {}), ("  ", {}), ({"a": 1}, {"a": 1}),
    ("<parameter=path>\nsrc/a.py\n</parameter>", {"path": "src/a.py"}),
    ('<parameter name="path">a</parameter>', {"path": "a"}),
    ('{"a": 1}\n</tool_call>', {"a": 1}),
    ('{"a": {"b": 1}', {"a": {"b": 1}}),
    ('{"a": [1, 2,], }', {"a": [1, 2]}),
    ("{'a': True, 'b': None}", {"a": True, "b": None}),
    ('{"command": "grep a\\|b"}', {"command": "grep a\\|b"}),
    ('{"text": "line one\nline two"}', {"text": "line one\nline two"}),
    ('"{\\"a\\": 1}"', {"a": 1}),
    ('```json\n{"a": 1}\n```', {"a": 1}),
])
def test_parse_arguments(raw, parsed):
    assert parse_arguments(raw) == (parsed, None)


@pytest.mark.parametrize("raw, words", [
    ('{"command": "rm -rf bui', "cut off"),
    ("[1, 2]", "array"),
    ("42", "number"),
    ("list the files", "neither JSON"),
    ('{"a": 1} {"b": 2}', "they hold 2 objects"),
    ('{"a" 1}', "line 1, column 6"),
])
def test_parse_arguments_errors(raw, words):
    parsed, error = parse_arguments(raw)
    assert parsed is None and words in error and "\n" not in error


def test_xml_values_typed_by_the_schema():
    raw = "<parameter=start>\n3\n</parameter>\n<parameter=edits>[1]</parameter><parameter=path>[x]</parameter>"
    assert parse_arguments(raw, {"start": "integer", "edits": "array", "path": "string"}) == (
        {"start": 3, "edits": [1], "path": "[x]"}, None)


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.text(max_size=300),
                 st.lists(st.sampled_from(list('{}[]",:\'\\ a1\n') + ["<parameter=", "</parameter>"]),
                          max_size=60).map("".join)))
def test_parse_arguments_never_raises(text):
    parsed, error = parse_arguments(text)
    assert (parsed is None) != (error is None)
    assert parsed is None or isinstance(parsed, dict)
    assert error is None or (error and "\n" not in error)


# -- the scripted server as a subprocess ----------------------------------------------------------

async def test_scripted_server_main(tmp_path):
    import json
    from pathlib import Path

    script = tmp_path / "script.json"
    script.write_text(json.dumps({"models": ["tiny"], "responses": [
        {"content": "from a script"},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "ls"}, "id": "c1"}]},
        {"chunks": [chunk({"content": "case"}, "stop"), "data: [DONE]"]},
    ]}))
    log = tmp_path / "requests.json"
    server = Path(__file__).with_name("scripted_server.py")
    proc = subprocess.Popen([sys.executable, str(server), str(script), "--log", str(log)],
                            stdout=subprocess.PIPE, text=True)
    try:
        base_url = proc.stdout.readline().strip()
        client = ChatClient(base_url, "tiny")
        assert (await client.complete(MESSAGES, [])).content == "from a script"
        assert (await client.complete(MESSAGES, TOOLS)).tool_calls[0].arguments == {"command": "ls"}
        assert (await client.complete(MESSAGES, [])).content == "case"
        assert [r["model"] for r in json.loads(log.read_text())] == ["tiny"] * 3
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0


async def test_a_password_in_the_url_is_not_shown():
    from mm.llm.client import ChatClient
    from mm.llm.types import LLMError

    client = ChatClient("http://me:s3cret@127.0.0.1:9/v1", "m")
    with pytest.raises(LLMError) as info:
        await client.complete([{"role": "user", "content": "hi"}], [])
    assert "s3cret" not in str(info.value) and "http://me:***@127.0.0.1:9/v1/chat/completions" in str(info.value)


@pytest.mark.parametrize("size", [7, 1000])
def test_filter_holds_and_releases_long_texts_whatever_the_deltas(size):
    call = '<tool_call>{"name": "bash", "arguments": {"command": "' + "echo x; " * 3000 + '"}}</tool_call>'
    code = '\n{"name": "demo", "list": [' + ", ".join(["1"] * 5000) + "]}\n"
    text = "Before.\n" + call + "\nBetween." + code + "   \n" + "After " * 2000
    shown = feed_all(text, [size] * (len(text) // size))
    assert shown == "Before.\n\nBetween." + code + "   \n" + "After " * 2000
