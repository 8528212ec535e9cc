"""Every case of tests/cases/loops/, through a real conversation and a scripted server."""

import json

import pytest

from harness import RecordingUI, load_cases, make_conversation, write_files
from mm.engine.loops import LOOP_DETECTED

CASES = load_cases("loops")
REPEATED = [c for c in CASES if "calls" in c]
RUNAWAY = [c for c in CASES if "stream_tool_call" in c]


@pytest.mark.parametrize("case", REPEATED, ids=[c["id"] for c in REPEATED])
async def test_repeated_calls(case, scripted_server, tmp_path):
    write_files(tmp_path, case.get("files", {}))
    for call in case["calls"]:
        scripted_server.add_tool_calls([{"name": call["tool"], "arguments": call["arguments"]}])
    for answer in case["model_script_after"]:
        scripted_server.add_reply(answer["content"])
    conv = make_conversation(scripted_server.base_url, tmp_path, case.get("config"))
    ui = RecordingUI()
    done = await conv.run_turn("go", ui)
    expect = case["expect"]
    calls = ui.done_calls()
    assert len(calls) == len(expect["per_call"])
    for call, want in zip(calls, expect["per_call"]):
        if "loop_detected_appended" in want:
            assert call.result.text.endswith(expect.get("appended_text", LOOP_DETECTED)) == want["loop_detected_appended"]
        if "output_starts_with" in want:
            assert call.result.text.startswith(want["output_starts_with"])
        if want.get("turn_stopped"):
            assert call.result.failed is want["tool_result_is_error"]
            assert call.result.text == want["output"]
            assert done.stop_reason == "error" and done.error == want["output"]
    if "model_requests" in expect:
        assert len(scripted_server.requests) == expect["model_requests"]
    if "history_keeps_calls" in expect:
        tool_msgs = [m for m in conv.history if m["role"] == "tool"]
        assert len(tool_msgs) == expect["history_keeps_calls"]
    if "final_answer" in expect:
        assert done.stop_reason == "end_turn"
        assert ui.text().strip() == expect["final_answer"]
        assert conv.history[-1] == {"role": "assistant", "content": expect["final_answer"]}
    if expect.get("turn_stopped") is False:
        assert done.stop_reason == "end_turn"
    for want in expect.get("session_errors", []):
        files = list((tmp_path / ".mm" / "sessions").glob("*.json"))
        assert len(files) == 1
        errors = json.loads(files[0].read_text())["errors"]
        assert any(e["where"] == want["where"] and want["message_contains"] in e["message"] for e in errors)


def runaway_chunks(spec: dict) -> list:
    if spec.get("repeat_unit"):
        body = spec["repeat_unit"] * spec["repeat_times"]
    else:
        body = "".join(f"line {i}\\n" for i in range(1, 40001)) + '"}'
    args = spec["arguments_prefix"] + body + spec.get("arguments_suffix", "")
    n = spec["chunk_chars"]
    head = {"index": 0, "id": spec["id"], "type": "function", "function": {"name": spec["name"], "arguments": ""}}
    chunks = [{"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [head]}, "finish_reason": None}]}]
    for i in range(0, len(args), n):
        piece = {"index": 0, "function": {"arguments": args[i:i + n]}}
        chunks.append({"choices": [{"index": 0, "delta": {"tool_calls": [piece]}, "finish_reason": None}]})
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    chunks.append("data: [DONE]")
    return chunks


@pytest.mark.parametrize("case", RUNAWAY, ids=[c["id"] for c in RUNAWAY])
async def test_runaway_arguments(case, scripted_server, tmp_path):
    scripted_server.add_sse(runaway_chunks(case["stream_tool_call"]))
    scripted_server.add_reply("should never be requested")
    conv = make_conversation(scripted_server.base_url, tmp_path)
    ui = RecordingUI()
    done = await conv.run_turn("write it", ui)
    expect = case["expect"]
    assert done.stop_reason == "error"
    assert done.error.startswith(expect["error_starts_with"])
    assert done.error.endswith(expect["error_ends_with"])
    n = int(done.error.split("(")[1].split(" characters so far")[0])
    assert expect["chars_so_far_in_error"]["min"] <= n <= expect["chars_so_far_in_error"]["max"]
    assert ui.done_calls() == [] and not expect["tool_run"]
    assert len(scripted_server.requests) == 1
    assert scripted_server.abandoned == [True]
    for rel in expect["files_absent"]:
        assert not (tmp_path / rel).exists()


async def test_calls_after_a_loop_stop_still_get_a_result(scripted_server, tmp_path):
    for _ in range(5):
        scripted_server.add_tool_calls([{"name": "read_file", "arguments": {"path": "x"}}])
    scripted_server.add_tool_calls([{"id": "last", "name": "read_file", "arguments": {"path": "x"}},
                                    {"id": "after", "name": "bash", "arguments": {"command": "touch ran"}}])
    conv = make_conversation(scripted_server.base_url, tmp_path)
    done = await conv.run_turn("go", RecordingUI())
    assert done.stop_reason == "error"
    assert conv.history[-1] == {"role": "tool", "tool_call_id": "after",
                                "content": "[error: not run — the turn was stopped before this call]"}
    assert not (tmp_path / "ran").exists()
