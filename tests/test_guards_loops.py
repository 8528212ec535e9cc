"""Cycles, the same error again and again, runaway answers and reasoning sent back (docs/engine.md
§Loops, §Reasoning): through a real conversation, the scripted server, real files and tools."""

import json

import pytest

from harness import RecordingUI, make_conversation, write_files
from mm.engine.loops import CYCLE_STOPPED, LOOP_DETECTED, SAME_ERROR_NOTE, SAME_ERROR_STOPPED
from mm.engine.runaway import ANSWER_RUNAWAY, RUNAWAY_MARKER

SESSIONS = {"sessions": {"enabled": True}}
CYCLE = [("edit_file", {"path": "a.py", "edits": [{"old": "x = 2", "new": "x = 3"}]}),
         ("read_file", {"path": "a.py"}),
         ("bash", {"command": "ls"})]


def session_errors(tmp_path) -> list[dict]:
    (path,) = (tmp_path / ".mm" / "sessions").glob("*.json")
    return json.loads(path.read_text())["errors"]


@pytest.mark.parametrize("length", [2, 3])
async def test_a_cycle_of_calls_is_stopped_at_its_sixth_repetition(length, scripted_server, tmp_path):
    write_files(tmp_path, {"a.py": "x = 1\n"})
    block = CYCLE[:length]
    for _ in range(6):
        for name, arguments in block:
            scripted_server.add_tool_calls([{"name": name, "arguments": arguments}])
    scripted_server.add_reply("never asked")
    conv = make_conversation(scripted_server.base_url, tmp_path, SESSIONS)
    ui = RecordingUI()
    done = await conv.run_turn("make x 3", ui)
    error = CYCLE_STOPPED.format(n=length, tools=", ".join(name for name, _ in block), count=6)
    assert done.stop_reason == "error" and done.error == error
    results = [call.result for call in ui.done_calls()]
    assert len(results) == 6 * length == len(scripted_server.requests)
    first_note = 3 * length - 1
    assert not any(r.text.endswith(LOOP_DETECTED) for r in results[:first_note])
    assert all(r.text.endswith("\n" + LOOP_DETECTED) for r in results[first_note:-1])
    assert results[-1].text == error and results[-1].failed
    assert session_errors(tmp_path) == [{"where": "generation", "message": error}]
    assert (tmp_path / "a.py").read_text() == "x = 1\n"


async def test_the_same_error_with_other_arguments_gets_a_note_then_stops(scripted_server, tmp_path):
    for i in range(6):
        scripted_server.add_tool_calls([{"name": "bash", "arguments": {"command": f"test -e missing{i}"}}])
    scripted_server.add_reply("never asked")
    conv = make_conversation(scripted_server.base_url, tmp_path, SESSIONS)
    ui = RecordingUI()
    done = await conv.run_turn("check the files", ui)
    texts = [call.result.text for call in ui.done_calls()]
    error = SAME_ERROR_STOPPED.format(tool="bash", count=6)
    assert done.stop_reason == "error" and done.error == error and texts[-1] == error
    plain = texts[0]
    assert plain.startswith("[") and texts[1] == plain  # the same error each time (exit status 1)
    assert texts[2:5] == [f"{plain}\n{SAME_ERROR_NOTE.format(tool='bash', count=n)}" for n in (3, 4, 5)]
    assert len(scripted_server.requests) == 6
    assert session_errors(tmp_path) == [{"where": "generation", "message": error}]


def text_chunks(*pieces: str) -> list:
    def chunk(delta: dict, finish=None) -> dict:
        return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    return [chunk({"role": "assistant", "content": ""})] + [chunk(p) for p in pieces] + [
        chunk({}, "stop"), "data: [DONE]"]


async def test_a_runaway_answer_is_stopped_and_kept_as_a_marker(scripted_server, tmp_path):
    pieces = [{"content": "Here is the plan: "}] + [{"content": "la la la la "} for _ in range(10_000)]
    scripted_server.add_sse(text_chunks(*pieces))
    conv = make_conversation(scripted_server.base_url, tmp_path, SESSIONS)
    ui = RecordingUI()
    done = await conv.run_turn("plan it", ui)
    assert done.stop_reason == "error"
    assert done.error.startswith("[error: the model's answer ran away: its text repeats the same pattern (")
    assert done.error == ANSWER_RUNAWAY.format(what="text", n=int(done.error.split("(")[1].split(" ")[0]),
                                               tail=done.error.split("…")[1].split(")")[0])
    assert scripted_server.abandoned == [True]  # generation stopped at once
    assert len(ui.text()) < 1000
    marker = "Here is the plan: la la\n" + RUNAWAY_MARKER.format(what="text", period=6)
    assert conv.history[-2:] == [{"role": "user", "content": "plan it"}, {"role": "assistant", "content": marker}]
    assert session_errors(tmp_path) == [{"where": "generation", "message": done.error}]
    scripted_server.add_reply("A short plan.")
    assert (await conv.run_turn("again, briefly", RecordingUI())).stop_reason == "end_turn"
    sent = scripted_server.requests[-1]["messages"]
    assert sent[-2:] == [{"role": "assistant", "content": marker}, {"role": "user", "content": "again, briefly"}]


async def test_runaway_reasoning_is_stopped_too(scripted_server, tmp_path):
    pieces = [{"reasoning_content": "Wait, maybe. "} for _ in range(5_000)]
    scripted_server.add_sse(text_chunks(*pieces))
    conv = make_conversation(scripted_server.base_url, tmp_path)
    done = await conv.run_turn("think", RecordingUI())
    assert done.stop_reason == "error"
    assert done.error.startswith("[error: the model's answer ran away: its reasoning repeats the same pattern (")
    assert conv.history[-1] == {"role": "assistant",
                                "content": RUNAWAY_MARKER.format(what="reasoning", period=13)}
    assert scripted_server.abandoned == [True]


async def test_text_with_short_repetition_is_not_stopped(scripted_server, tmp_path):
    answer = ("Results\n" + "=" * 200 + "\n| a | b |\n|---|---|\n" + "| 0 | 0 |\n" * 20
              + "ha" * 100 + "\n" + "".join(f"- step {i}\n" for i in range(60)))
    scripted_server.add_reply(answer)
    conv = make_conversation(scripted_server.base_url, tmp_path)
    done = await conv.run_turn("show", RecordingUI())
    assert done.stop_reason == "end_turn" and conv.history[-1] == {"role": "assistant", "content": answer}


async def test_reasoning_goes_back_within_the_turn_only(scripted_server, tmp_path):
    write_files(tmp_path, {"a.txt": "alpha\n"})
    scripted_server.add_tool_calls([{"id": "r1", "name": "read_file", "arguments": {"path": "a.txt"}}],
                                   reasoning="I should read a.txt first.")
    scripted_server.add_tool_calls([{"id": "r2", "name": "bash", "arguments": {"command": "echo hi"}}],
                                   reasoning="Now echo.")
    scripted_server.add_reply("It says alpha.", reasoning="Done thinking.")
    scripted_server.add_reply("Still alpha.")
    conv = make_conversation(scripted_server.base_url, tmp_path, SESSIONS)
    await conv.run_turn("what is in a.txt?", RecordingUI())

    def reasoning_of(request: dict) -> list:
        return [m.get("reasoning_content") for m in request["messages"] if m["role"] == "assistant"]

    assert reasoning_of(scripted_server.requests[1]) == ["I should read a.txt first."]
    assert reasoning_of(scripted_server.requests[2]) == ["I should read a.txt first.", "Now echo."]
    assert not any("reasoning_content" in m for m in conv.history)  # dropped when the turn ended
    (path,) = (tmp_path / ".mm" / "sessions").glob("*.json")
    assert "reasoning_content" not in path.read_text() and "Done thinking" not in path.read_text()
    await conv.run_turn("and now?", RecordingUI())
    assert reasoning_of(scripted_server.requests[3]) == [None, None, None]


async def test_the_users_refusals_are_not_the_same_error(scripted_server, tmp_path):
    for i in range(4):
        scripted_server.add_tool_calls([{"name": "bash", "arguments": {"command": f"touch f{i}"}}])
    scripted_server.add_reply("I will stop.")
    conv = make_conversation(scripted_server.base_url, tmp_path, {"yolo": False})
    ui = RecordingUI(["reject_once"] * 4)
    done = await conv.run_turn("make files", ui)
    assert done.stop_reason == "end_turn"
    assert [call.result.text for call in ui.done_calls()] == ["[command rejected by the user]"] * 4
    assert not list(tmp_path.glob("f*"))
