"""Session files record what happened when it happened (saved after every tool result: a kill -9
mid-turn loses nothing that ran), load results paired with their calls by id wherever they are
in the file, and a conversation mm leaves (`/new`, `/sessions <id>`) is let go for another
process (docs/sessions.md)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from harness import RecordingUI, make_conversation, pids_matching
from mm.sessions.load import UNRECORDED_RESULT, load_session
from mm.sessions.store import BUSY, session_record, write_session
from test_line_mode_signals import stop, until
from test_line_mode_terminal import Terminal, spawn_on_terminal

SESSIONS = ".mm/sessions"



def env_for(cwd: Path) -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("MM_")} | {"HOME": str(cwd)}


def with_sessions(cwd: Path) -> Path:
    (cwd / ".mm").mkdir(exist_ok=True)
    (cwd / ".mm" / "agent.yaml").write_text("sessions: {enabled: true}\n")
    return cwd / SESSIONS


def test_a_kill_mid_turn_loses_nothing_that_ran(scripted_server, tmp_path):
    """`mm -p` SIGKILLed while its second command runs: the file holds the first call and its
    result (and the second call, answered as unrecorded when loaded)."""
    directory = with_sessions(tmp_path)
    marker = f"sleep 1021.{os.getpid()}"
    scripted_server.add_tool_calls([{"id": "c1", "name": "bash", "arguments": {"command": "echo first-result"}},
                                    {"id": "c2", "name": "bash", "arguments": {"command": marker}}])
    proc = subprocess.Popen([sys.executable, "-m", "mm", "-p", "go", "--base-url", scripted_server.base_url,
                             "--model", "m"], cwd=tmp_path, env=env_for(tmp_path), stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert until(lambda: pids_matching(marker)), f"{marker} never started"
        proc.kill()
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        for pid in pids_matching(marker):  # the command may outlive mm (not this test's subject)
            os.kill(pid, signal.SIGKILL)
    (path,) = directory.glob("*.json")
    saved = json.loads(path.read_text())["messages"]
    assert [m["role"] for m in saved] == ["system", "user", "assistant", "tool"]
    assert saved[3] == {"role": "tool", "tool_call_id": "c1", "content": "first-result\n"}
    meta, messages = load_session(path)
    assert meta.unanswered == ["c2"]
    assert [(m.get("tool_call_id"), m.get("content")) for m in messages[3:]] == [
        ("c1", "first-result\n"), ("c2", UNRECORDED_RESULT)]


def call(call_id: str, name: str = "read_file") -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}


def test_results_are_paired_with_their_calls_by_id_wherever_they_are(tmp_path):
    messages = [{"role": "system", "content": "S"}, {"role": "user", "content": "q"},
                {"role": "assistant", "content": "", "tool_calls": [call("a"), call("b")]},
                {"role": "tool", "tool_call_id": "a", "content": "A"},
                {"role": "user", "content": "[mm: a note between the calls and their results]"},
                {"role": "assistant", "content": "", "tool_calls": [call("c")]},
                {"role": "tool", "tool_call_id": "c", "content": "C"},
                {"role": "tool", "tool_call_id": "b", "content": "B, saved after a later call"},
                {"role": "tool", "tool_call_id": "nobody", "content": "answers no call"},
                {"role": "assistant", "content": "done"}]
    path = tmp_path / "s.json"
    write_session(path, session_record(id="s", messages=messages, created="", updated=""), index=False)
    meta, loaded = load_session(path)
    assert meta.unanswered == []
    assert [(m["role"], m.get("tool_call_id"), m.get("content")) for m in loaded[2:]] == [
        ("assistant", None, ""), ("tool", "a", "A"), ("tool", "b", "B, saved after a later call"),
        ("user", None, "[mm: a note between the calls and their results]"),
        ("assistant", None, ""), ("tool", "c", "C"), ("assistant", None, "done")]


def test_reused_ids_pair_with_the_nearest_call_made_before(tmp_path):
    """Some servers number calls per request (`call_0` every turn)."""
    messages = [{"role": "user", "content": "q"},
                {"role": "assistant", "content": "", "tool_calls": [call("call_0")]},
                {"role": "assistant", "content": "", "tool_calls": [call("call_0")]},
                {"role": "tool", "tool_call_id": "call_0", "content": "second"},
                {"role": "assistant", "content": "", "tool_calls": [call("call_0")]},
                {"role": "tool", "tool_call_id": "call_0", "content": "third"}]
    path = tmp_path / "r.json"
    write_session(path, session_record(id="r", messages=messages, created="", updated=""), index=False)
    meta, loaded = load_session(path)
    assert meta.unanswered == ["call_0"]
    assert [m.get("content") for m in loaded if m["role"] == "tool"] == [UNRECORDED_RESULT, "second", "third"]


async def test_a_call_of_an_unknown_tool_keeps_the_other_results_when_loaded(scripted_server, tmp_path):
    """mm's note about an unknown tool comes between the calls and their results in the history;
    the file loads with every result kept."""
    (tmp_path / "a.txt").write_text("content of a\n")
    scripted_server.add_tool_calls([{"id": "x", "name": "no_such_tool", "arguments": {}},
                                    {"id": "r", "name": "read_file", "arguments": {"path": "a.txt"}}])
    scripted_server.add_reply("done")
    conv = make_conversation(scripted_server.base_url, tmp_path, {"sessions": {"enabled": True}})
    assert (await conv.run_turn("go", RecordingUI())).stop_reason == "end_turn"
    meta, loaded = load_session(conv.session.path)
    assert meta.unanswered == []
    assert {"role": "tool", "tool_call_id": "r", "content": "content of a\n"} in loaded
    await conv.close()


async def test_the_file_is_saved_as_each_result_comes(scripted_server, tmp_path):
    """The second call reads the session file itself: it already holds the calls and the first
    result."""
    (tmp_path / "a.txt").write_text("A\n")
    conv = make_conversation(scripted_server.base_url, tmp_path, {"sessions": {"enabled": True}})
    itself = str(conv.session.path.relative_to(tmp_path))
    scripted_server.add_tool_calls([{"id": "c1", "name": "read_file", "arguments": {"path": "a.txt"}},
                                    {"id": "c2", "name": "read_file", "arguments": {"path": itself}}])
    scripted_server.add_reply("done")
    assert (await conv.run_turn("go", RecordingUI())).stop_reason == "end_turn"
    on_disk = json.loads(conv.history[-2]["content"])["messages"]
    assert [m.get("tool_call_id") or m["role"] for m in on_disk] == ["system", "user", "assistant", "c1"]
    assert on_disk[3]["content"] == "A\n"
    await conv.close()


def resume_elsewhere(cwd: Path, session_id: str, base_url: str) -> subprocess.CompletedProcess:
    """A second mm (line mode, prompts from a pipe) going on with `session_id`, then leaving."""
    return subprocess.run([sys.executable, "-m", "mm", "--resume", session_id, "--base-url", base_url,
                           "--model", "m"], cwd=cwd, env=env_for(cwd), input="/quit\n", capture_output=True,
                          text=True, timeout=60)


def ids_in(directory: Path) -> dict[str, list[str]]:
    """Session id -> the user messages its file holds."""
    found = {}
    for path in directory.glob("*.json"):
        messages = json.loads(path.read_text())["messages"]
        found[path.stem] = [m["content"] for m in messages if m["role"] == "user"]
    return found


def test_a_conversation_left_by_new_or_sessions_is_let_go(scripted_server, tmp_path):
    """Two processes: mm in line mode leaves a conversation with /new (the archived one) and
    with /sessions <id> (the one it was in); another mm can then go on with each at once."""
    directory = with_sessions(tmp_path)
    other = session_record(id="20260101-000000-dddddddd", created="2026-01-01T00:00:00+00:00",
                           updated="2026-01-01T00:00:00+00:00", messages=[{"role": "user", "content": "other"}])
    write_session(directory / f"{other['id']}.json", other, index=False)
    for text in ("first answer", "second answer"):
        scripted_server.add_reply(text)
    proc, fd = spawn_on_terminal([sys.executable, "-m", "mm", "--base-url", scripted_server.base_url, "--model", "m"],
                                 tmp_path, {"PROMPT_TOOLKIT_NO_CPR": "1", "COLUMNS": "160"}, size=(40, 160))
    term = Terminal(fd)
    try:
        term.expect("›")
        term.write("first\r")
        term.expect("first answer")
        term.write("/new\r")
        term.expect("New session: 2 message(s) forgotten.")
        (archived,) = [i for i, said in ids_in(directory).items() if said == ["first"]]
        moved_on = resume_elsewhere(tmp_path, archived, scripted_server.base_url)
        assert moved_on.returncode == 0, moved_on.stdout + moved_on.stderr
        assert f"resumed {archived}: 2 message(s)" in moved_on.stdout
        term.write("second\r")
        term.expect("second answer")
        (live,) = [i for i, said in ids_in(directory).items() if said == ["second"]]
        held = resume_elsewhere(tmp_path, live, scripted_server.base_url)  # still held: refused
        assert held.returncode == 2 and BUSY.format(id=live) in held.stdout + held.stderr
        term.write(f"/sessions {other['id']}\r")
        term.expect(f"resumed {other['id']}: 1 message(s)")
        moved_on = resume_elsewhere(tmp_path, live, scripted_server.base_url)
        assert moved_on.returncode == 0, moved_on.stdout + moved_on.stderr
        assert f"resumed {live}: 2 message(s)" in moved_on.stdout
        held = resume_elsewhere(tmp_path, other["id"], scripted_server.base_url)
        assert held.returncode == 2 and BUSY.format(id=other["id"]) in held.stdout + held.stderr
        term.write("/quit\r")
        assert proc.wait(15) == 0
    finally:
        stop(proc, term)
