"""MCP servers in line mode (a real pseudo-terminal) and over ACP (a real `mm -acp`): the banner,
`/mcp`, the permission prompt of an MCP tool, the ACP kinds of its calls (other, read, edit from the
server's annotations), a server that cannot start said once; and no server process outlives mm —
when it leaves, and when it is SIGKILLed (docs/mcp.md §Processes)."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

from harness import marked_left
from test_acp_logs import Agent
from test_commands_acp import chunk_of, command, text, updates_of
from test_commands_line import on_terminal
from test_line_mode_signals import until
from test_mcp import SERVER, stdio

from mm.mcp.connection import CANNOT_RUN, DID_NOT_START
from mm.mcp.hub import HEAD, LINE, NO_SERVER

READY = "fs · ready, 10 tools: add, look, wipe, boom, refuse, die, slow, picture, fs_bash, headers · stdio: "


def poll(ask, wanted: str, timeout: float = 90) -> str:
    """`ask()` again until what it answers holds `wanted` (a server starting, on a loaded machine)."""
    deadline = time.monotonic() + timeout
    while True:
        shown = ask()
        if wanted in shown or time.monotonic() > deadline:
            assert wanted in shown, shown
            return shown
        time.sleep(0.3)


def test_line_mode_banner_mcp_command_and_permission(tmp_path, scripted_server, mark):
    srv = scripted_server
    srv.add_tool_calls([{"id": "a", "name": "add", "arguments": {"a": 1, "b": 2}}])
    srv.add_reply("the sum is 3")
    (tmp_path / ".mm").mkdir()
    (tmp_path / ".mm" / "agent.yaml").write_text(json.dumps({"yolo": False, "mcpServers": {
        "fs": stdio(env={"MARK": mark}), "broken": {"command": "no-such-mcp-program"}}}))
    broken = LINE.format(text=DID_NOT_START.format(
        name="broken", why=CANNOT_RUN.format(program="no-such-mcp-program", reason="No such file or directory")))
    with on_terminal(srv, tmp_path) as term:
        assert "🔌 mcp: fs (" in term.seen.decode()  # the banner's line: starting, or its tools already

        def servers() -> str:
            term.write("/mcp\r")
            term.expect(HEAD)
            return term.expect("›")

        shown = poll(servers, READY)
        assert "broken · did not start: cannot run no-such-mcp-program: No such file or directory" in shown
        assert term.seen.decode().count(broken) == 1  # said once, between two commands
        term.write("add one and two\r")
        term.expect("🧰 add: {\"a\": 1, \"b\": 2}")
        term.expect("🔐 add: allow?")
        term.write("a\r")
        term.expect("3")
        term.expect("the sum is 3")
        term.expect("›")
    assert srv.requests[1]["messages"][-1] == {"role": "tool", "tool_call_id": "a", "content": "3"}
    assert marked_left(mark) == []  # /quit stopped the server


def test_acp_commands_kinds_and_the_banner(tmp_path, scripted_server):
    cwd = Path(os.path.realpath(tmp_path))
    srv = scripted_server
    srv.add_tool_calls([{"id": "a", "name": "look", "arguments": {"path": "x"}},
                        {"id": "b", "name": "wipe", "arguments": {"path": "y"}},
                        {"id": "c", "name": "add", "arguments": {"a": 2, "b": 2}}])
    srv.add_reply("done")
    agent = Agent(cwd, srv, {"mcpServers": {"fs": stdio()}})
    agent.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    answer, _ = agent.call("session/new", {"cwd": str(cwd), "mcpServers": []})
    sid = answer["result"]["sessionId"]
    _, updates = agent.call("session/prompt", {"sessionId": sid, "prompt": text("/help")})
    (advertised,) = updates_of(updates, "available_commands_update")
    assert {"name": "mcp", "description": "List the MCP servers, their state and their tools"} in \
        advertised["availableCommands"]
    shown = poll(lambda: command(agent, sid, "/mcp")[1], READY)
    assert shown == f"{HEAD}\n{READY}{sys.executable} {SERVER} (the agent file)"
    answer, updates = agent.call("session/prompt", {"sessionId": sid, "prompt": text("go")})
    assert answer["result"]["stopReason"] == "end_turn"
    calls = {u["toolCallId"]: u for u in updates_of(updates, "tool_call")}
    assert [(calls[i]["title"].split(":")[0], calls[i]["kind"]) for i in ("call_1", "call_2", "call_3")] == [
        ("look", "read"), ("wipe", "edit"), ("add", "other")]
    done = [u for u in updates_of(updates, "tool_call_update") if u.get("status") == "completed"]
    assert [u["rawOutput"]["output"] for u in done] == ["looked at x", "wiped y", "4"]
    err = agent.stderr()
    assert "[acp] 🔌 mcp: fs (" in err


def test_acp_without_a_server_does_not_offer_mcp(tmp_path, scripted_server):
    cwd = Path(os.path.realpath(tmp_path))
    agent = Agent(cwd, scripted_server, {})
    agent.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    answer, _ = agent.call("session/new", {"cwd": str(cwd), "mcpServers": []})
    sid = answer["result"]["sessionId"]
    _, updates = agent.call("session/prompt", {"sessionId": sid, "prompt": text("/help")})
    (advertised,) = updates_of(updates, "available_commands_update")
    assert "mcp" not in [c["name"] for c in advertised["availableCommands"]]
    assert "/mcp" not in chunk_of(updates)
    _, shown = command(agent, sid, "/mcp")  # still a command: it says why there is nothing to list
    assert shown == NO_SERVER
    agent.stderr()


def test_no_server_process_outlives_a_sigkilled_mm(tmp_path, scripted_server, mark):
    """The server, and the job it left behind, carry the command supervisor's tag: the supervisor
    kills them when mm dies, however it dies (mm.tools.supervisor)."""
    cwd = Path(os.path.realpath(tmp_path))
    pid_file = cwd / "server.pid"
    launcher = f"sleep 1000 & exec {sys.executable} {SERVER}"
    agent = Agent(cwd, scripted_server, {"mcpServers": {"fs": {
        "command": "bash", "args": ["-c", launcher], "env": {"MARK": mark, "MCP_PID_FILE": str(pid_file)}}}})
    agent.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    assert until(lambda: pid_file.exists() and pid_file.read_text(), timeout=60)
    assert len(marked_left(mark, timeout=0)) == 2  # the server and its sleep
    agent.proc.send_signal(signal.SIGKILL)
    agent.proc.wait()
    assert marked_left(mark, timeout=30) == []
