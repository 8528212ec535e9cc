"""The llm-streams and tool-args expectations that need the whole turn loop (runs, turn_ends…)."""

import json

import pytest

from harness import RecordingUI, load_cases, make_conversation, write_files
from mm.events import ToolCallStarted

ENGINE_KEYS = {"runs", "turn_ends", "files_after", "history_assistant_message", "tool_results_sent_back_in_order",
               "next_request_assistant_message", "next_request_last_message_contains",
               "next_request_ids_non_empty_and_matching", "note"}
STREAMS = [c for c in load_cases("llm-streams") if ENGINE_KEYS & set(c["expect"])]


async def run_case(case, srv, tmp_path):
    write_files(tmp_path, case.get("files", {}))
    srv.add(case)
    srv.add_reply("ok")
    srv.add_reply("ok")
    conv = make_conversation(srv.base_url, tmp_path, case.get("config"))
    ui = RecordingUI()
    done = await conv.run_turn("do it", ui)
    return conv, ui, done


@pytest.mark.parametrize("case", STREAMS, ids=[c["id"] for c in STREAMS])
async def test_stream_case_through_the_engine(case, scripted_server, tmp_path):
    srv = scripted_server
    conv, ui, done = await run_case(case, srv, tmp_path)
    expect = case["expect"]
    ran = [e.name for e in ui.events if isinstance(e, ToolCallStarted)]
    if "runs" in expect:
        assert ran == expect["runs"]
    if "turn_ends" in expect:
        assert (len(srv.requests) == 1) == expect["turn_ends"]
    for rel, content in expect.get("files_after", {}).items():
        path = tmp_path / rel
        assert (path.read_text() if path.exists() else None) == content
    if "history_assistant_message" in expect:
        want = expect["history_assistant_message"]
        msg = [m for m in conv.history if m["role"] == "assistant"][0]
        assert msg["content"] == want["content"] and bool(msg.get("tool_calls")) == want["has_tool_calls"]
    if "tool_results_sent_back_in_order" in expect:
        sent = [m["tool_call_id"] for m in srv.requests[1]["messages"] if m["role"] == "tool"]
        assert sent == expect["tool_results_sent_back_in_order"]
    if "next_request_assistant_message" in expect:
        want = expect["next_request_assistant_message"]
        msg = [m for m in srv.requests[1]["messages"] if m["role"] == "assistant"][0]
        assert msg["content"] == want["content"]
        args = msg["tool_calls"][0]["function"]["arguments"]
        assert isinstance(args, str) == want["arguments_is_json_string"]
        assert json.loads(args) == want["arguments_parse_to"]
    if "next_request_last_message_contains" in expect:
        last = srv.requests[1]["messages"][-1]["content"]
        for word in expect["next_request_last_message_contains"]:
            assert word in last
    if expect.get("next_request_ids_non_empty_and_matching"):
        msgs = srv.requests[1]["messages"]
        ids = [c["id"] for m in msgs if m["role"] == "assistant" for c in m.get("tool_calls", [])]
        assert ids and all(ids)
        assert [m["tool_call_id"] for m in msgs if m["role"] == "tool"] == ids
    if case["id"].startswith("stream-11"):
        assert done.stop_reason == "error" and srv.base_url in done.error


def structured_call(name: str, raw_arguments: str) -> list:
    call = {"index": 0, "id": "call_x", "type": "function", "function": {"name": name, "arguments": raw_arguments}}
    return [{"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [call]}, "finish_reason": None}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}, "data: [DONE]"]


ARGS = {c["id"]: c for c in load_cases("tool-args")}


async def test_args_09_xml_arguments_string_runs(scripted_server, tmp_path):
    case = ARGS["args-09-xml-in-arguments-string"]
    write_files(tmp_path, case["files"])
    scripted_server.add_sse(structured_call(case["tool"], case["arguments_raw"]))
    scripted_server.add_reply("ok")
    conv = make_conversation(scripted_server.base_url, tmp_path)
    ui = RecordingUI()
    done = await conv.run_turn("read it", ui)
    (call,) = ui.done_calls()
    assert call.arguments["path"] == case["expect"]["parsed_arguments"]["path"]
    for text in case["expect"]["output_contains"]:
        assert text in call.result.text
    assert done.stop_reason == "end_turn"


async def test_args_08_empty_call_does_not_end_the_turn(scripted_server, tmp_path):
    case = ARGS["args-08-read-file-empty-call"]
    scripted_server.add_sse(structured_call("read_file", json.dumps(case.get("arguments", {}))))
    scripted_server.add_reply("I will ask for the path.")
    conv = make_conversation(scripted_server.base_url, tmp_path)
    ui = RecordingUI()
    done = await conv.run_turn("read", ui)
    (call,) = ui.done_calls()
    for text in case["expect"]["output_contains"]:
        assert text in call.result.text
    assert not [e for e in ui.events if isinstance(e, ToolCallStarted)]
    assert done.stop_reason == "end_turn" and len(scripted_server.requests) == 2


@pytest.mark.parametrize("arguments", [
    {"path": "f.py", "old": "a = 1", "new": "a = 2"},
    {"path": "f.py", "old_string": "a = 1", "new_string": "a = 2"},
    {"path": "f.py", "edits": {"old": "a = 1", "new": "a = 2"}},
    {"path": "f.py", "edits": json.dumps([{"old": "a = 1", "new": "a = 2"}])},
])
async def test_edit_file_shapes_small_models_send(arguments, scripted_server, tmp_path):
    (tmp_path / "f.py").write_text("a = 1\n")
    scripted_server.add_tool_calls([{"name": "edit_file", "arguments": arguments}])
    scripted_server.add_reply("done")
    conv = make_conversation(scripted_server.base_url, tmp_path)
    ui = RecordingUI()
    await conv.run_turn("edit", ui)
    (call,) = ui.done_calls()
    assert not call.result.failed, call.result.text
    assert (tmp_path / "f.py").read_text() == "a = 2\n"


async def test_unknown_structured_tool_lists_the_tools(scripted_server, tmp_path):
    scripted_server.add_tool_calls([{"id": "c1", "name": "run_shell", "arguments": {"cmd": "ls"}}])
    scripted_server.add_reply("ok")
    conv = make_conversation(scripted_server.base_url, tmp_path)
    await conv.run_turn("go", RecordingUI())
    tool_msg = scripted_server.requests[1]["messages"][-1]
    assert tool_msg == {"role": "tool", "tool_call_id": "c1", "content":
                        '[error: there is no tool named "run_shell" — the tools are: bash, read_file, write_file, '
                        'edit_file, ask_user, unload_model. Call one of them, with its arguments as a JSON object]'}


async def test_max_turns_bounds_a_turn(scripted_server, tmp_path):
    for i in range(3):
        scripted_server.add_tool_calls([{"name": "bash", "arguments": {"command": f"echo {i}"}}])
    conv = make_conversation(scripted_server.base_url, tmp_path, {"maxTurns": 2})
    done = await conv.run_turn("loop", RecordingUI())
    assert done.stop_reason == "max_turn_requests"
    assert done.error == ("[error: the turn reached maxTurns (2 model requests) without a final answer — "
                          "turn stopped; ask again, or raise maxTurns]")
    assert len(scripted_server.requests) == 2


async def test_undeclared_call_in_text_gets_a_note(scripted_server, tmp_path):
    scripted_server.add_reply('{"name": "write", "arguments": {"path": "x"}}')
    scripted_server.add_reply("sorry")
    conv = make_conversation(scripted_server.base_url, tmp_path)
    await conv.run_turn("go", RecordingUI())
    assert scripted_server.requests[1]["messages"][-1] == {"role": "user", "content": (
        '[mm: your answer holds a call of "write", but there is no tool of that name — the tools are: bash, '
        'read_file, write_file, edit_file, ask_user, unload_model. Call one of them, with its arguments as a JSON '
        'object]')}
