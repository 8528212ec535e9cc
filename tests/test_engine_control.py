"""Cancellation, permissions and the watchdog, through a real conversation."""

import asyncio
import os
import signal
import subprocess
import sys
import time

from harness import RecordingUI, make_conversation, pids_matching
from mm.events import ToolCallStarted


async def test_cancel_kills_the_running_command(scripted_server, tmp_path):
    marker = f"sleep 100{os.getpid() % 7}"
    scripted_server.add_tool_calls([{"id": "c1", "name": "bash", "arguments": {"command": marker}},
                                    {"id": "c2", "name": "bash", "arguments": {"command": "touch later"}}])
    conv = make_conversation(scripted_server.base_url, tmp_path)
    ui = RecordingUI()
    turn = asyncio.create_task(conv.run_turn("wait", ui))
    while not any(isinstance(e, ToolCallStarted) for e in ui.events):
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.3)
    conv.cancel()
    done = await turn
    assert done.stop_reason == "cancelled"
    (call,) = ui.done_calls()
    assert call.result.text.endswith("[error: cancelled]")
    assert conv.history[-2:] == [{"role": "tool", "tool_call_id": "c1", "content": call.result.text},
                                 {"role": "tool", "tool_call_id": "c2", "content": "[error: cancelled]"}]
    assert not (tmp_path / "later").exists()
    await asyncio.sleep(0.5)
    assert pids_matching(marker) == []


async def test_cancel_while_the_model_is_silent(scripted_server, tmp_path):
    scripted_server.add_stall(30)
    conv = make_conversation(scripted_server.base_url, tmp_path)
    turn = asyncio.create_task(conv.run_turn("hello", RecordingUI()))
    await asyncio.sleep(0.5)
    conv.cancel()
    done = await asyncio.wait_for(turn, 10)
    assert done.stop_reason == "cancelled"


async def test_watchdog_ends_a_silent_turn(scripted_server, tmp_path):
    scripted_server.add_stall(30)
    conv = make_conversation(scripted_server.base_url, tmp_path, {"watchdogTimeout": 1})
    done = await asyncio.wait_for(conv.run_turn("hello", RecordingUI()), 20)
    assert done.stop_reason == "error" and scripted_server.base_url in done.error
    assert conv.errors == [{"where": "generation", "message": done.error}]


async def test_permission_answers(scripted_server, tmp_path):
    calls = [("a1", "bash", {"command": "echo once"}), ("a2", "bash", {"command": "echo always"}),
             ("a3", "bash", {"command": "echo not-asked"}),
             ("w1", "write_file", {"path": "r.txt", "content": "x"}),
             ("w2", "write_file", {"path": "n.txt", "content": "x"}),
             ("w3", "write_file", {"path": "m.txt", "content": "x"}),
             ("r1", "read_file", {"path": "missing.txt"})]
    for call_id, name, args in calls:
        scripted_server.add_tool_calls([{"id": call_id, "name": name, "arguments": args}])
    scripted_server.add_reply("done")
    conv = make_conversation(scripted_server.base_url, tmp_path, {"yolo": False})
    ui = RecordingUI(["allow_once", "allow_always", "reject_once", "reject_always"])
    done = await conv.run_turn("go", ui)
    assert done.stop_reason == "end_turn"
    assert [name for name, _ in ui.asked] == ["bash", "bash", "write_file", "write_file"]
    results = {m["tool_call_id"]: m["content"] for m in conv.history if m["role"] == "tool"}
    assert results["a1"] == "once\n" and results["a2"] == "always\n" and results["a3"] == "not-asked\n"
    assert results["w1"] == results["w2"] == results["w3"] == "[write_file rejected by the user]"
    assert "does not exist" in results["r1"]  # read_file never asks
    assert not any((tmp_path / n).exists() for n in ("r.txt", "n.txt", "m.txt"))


def test_sigint_during_mm_p_exits_130_and_kills_the_command(scripted_server, tmp_path):
    marker = "sleep 1007"
    scripted_server.add_tool_calls([{"name": "bash", "arguments": {"command": marker}}])
    env = {k: v for k, v in os.environ.items() if not k.startswith("MM_")} | {"HOME": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "mm", "-p", "wait", "--base-url", scripted_server.base_url,
                             "--model", "m"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    for _ in range(200):
        if pids_matching(marker):
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    assert "[error: cancelled]" in err
    time.sleep(0.5)
    assert pids_matching(marker) == []


def test_a_loading_server_is_waited_for(scripted_server, tmp_path):
    from test_oneshot_e2e import run_mm

    scripted_server.add_json({"error": {"message": "Loading model"}}, status=503)
    scripted_server.add_json({"error": {"message": "Loading model"}}, status=503)
    scripted_server.add_reply("ready now")
    proc = run_mm(["-p", "hi", "--base-url", scripted_server.base_url, "--model", "m"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "ready now\n"


async def test_cancel_while_the_answer_streams_keeps_what_was_shown(scripted_server, tmp_path):
    """The question and the part of the answer the user saw stay in the history (mm-acp.md
    §session/prompt: the full history is kept after a cancellation); nothing unseen is added."""
    from mm.events import TextChunk

    scripted_server.add_reply("The first part, then a second part that never arrives.", delay=1.0)
    conv = make_conversation(scripted_server.base_url, tmp_path)
    ui = RecordingUI()
    turn = asyncio.create_task(conv.run_turn("tell me", ui))
    while not any(isinstance(e, TextChunk) for e in ui.events):
        await asyncio.sleep(0.05)
    conv.cancel()
    done = await asyncio.wait_for(turn, 10)
    assert done.stop_reason == "cancelled"
    shown = ui.text()
    assert shown and conv.history[-2:] == [{"role": "user", "content": "tell me"},
                                           {"role": "assistant", "content": shown}]


async def test_a_turn_that_fails_before_any_answer_leaves_the_history_as_it_was(scripted_server, tmp_path):
    """No question without an answer stays behind (mm-acp.md §session/prompt, History): the next
    request never holds two user messages in a row."""
    scripted_server.add_json({"error": {"message": "boom"}}, status=500)
    scripted_server.add_reply("Fine now.")
    conv = make_conversation(scripted_server.base_url, tmp_path)
    before = list(conv.history)
    assert (await conv.run_turn("first try", RecordingUI())).stop_reason == "error"
    assert conv.history == before
    assert (await conv.run_turn("second try", RecordingUI())).stop_reason == "end_turn"
    assert [m["role"] for m in scripted_server.requests[1]["messages"]] == ["system", "user"]


async def test_the_permission_preview_shows_what_a_file_call_will_do(scripted_server, tmp_path):
    """The 🔐 text of a file tool is the file, then the whole planned diff (not the output's, cut
    to maxOutput), or the refusal the call will meet; save_answer shows what it will write."""
    (tmp_path / "big.txt").write_text("".join(f"{n}\n" for n in range(1, 3001)))
    (tmp_path / "small.txt").write_text("one\n")
    scripted_server.add_tool_calls(
        [{"id": "w", "name": "write_file", "arguments": {"path": "big.txt",
                                                         "content": "".join(f"{n}\n" for n in range(2, 6001, 2))}},
         {"id": "e", "name": "edit_file", "arguments": {"path": "small.txt", "edits": [{"old": "two", "new": "2"}]}},
         {"id": "s", "name": "save_answer", "arguments": {"path": "answer.md"}}],
        content="The answer.")
    scripted_server.add_reply("done")
    conv = make_conversation(scripted_server.base_url, tmp_path, {"yolo": False, "saveAnswerTool": True,
                                                                 "maxOutput": 2000})
    ui = RecordingUI(["reject_once"] * 3)
    await conv.run_turn("go", ui)
    big, small, saved = ui.previews
    rows = big.split("\n")
    assert rows[0] == "big.txt" and len(rows) > 4000 and "truncated" not in big  # the whole change
    assert small.split("\n")[0] == "small.txt" and "old text not found" in small
    assert saved.split("\n") == ["answer.md", "@@ -0,0 +1 @@", "+1 │ The answer."]
    started = {e.name: e for e in ui.events if isinstance(e, ToolCallStarted)}
    assert started["write_file"].change is not None and started["edit_file"].change is None
