"""Cancellation, permissions and the watchdog, through a real conversation."""

import asyncio
import os
import signal
import subprocess
import sys
import time

from harness import RecordingUI, make_conversation, pids_matching
from mm.engine.events import ToolCallStarted


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
    from mm.engine.events import TextChunk

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
