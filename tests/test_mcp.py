"""MCP servers end to end through `mm -p` (docs/mcp.md; issue 12 point 2): a real stdio server
written with the `mcp` SDK (tests/mcp_server.py) and the same server on streamable HTTP on
loopback, the scripted model calling their tools; servers that never start, cannot start, or die
in the middle of a call; the per-call timeout; permission with `yolo: false`, `allow` and
`permissions: ask`; a hook denying an MCP tool; names prefixed on a clash; a project's .mcp.json.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from scripted_server import ScriptedServer
from test_ask_agent import agent_file, run_mm as run_mm_briefly, tool_messages

from mm.engine.toolrun import DENIED
from mm.mcp.connection import CALL_FAILED, CALL_GONE, CALL_TIMED_OUT, DID_NOT_START, SLOW, STOPPED_LINE
from mm.mcp.hub import LINE
from mm.tools.mcp_tools import IMAGE, TOOL_FAILED
from mm.ui.oneshot import NOBODY_TO_ASK

SERVER = str(Path(__file__).with_name("mcp_server.py"))
TOOLS = ["add", "look", "wipe", "boom", "refuse", "die", "slow", "picture", "bash", "headers"]
FS = [name if name != "bash" else "fs_bash" for name in TOOLS]  # `bash` is mm's: the server's is prefixed
BUILT_IN = ["bash", "read_file", "write_file", "edit_file", "ask_user", "unload_model"]


def stdio(**extra) -> dict:
    """An agent-file entry running tests/mcp_server.py on stdio."""
    return {"command": sys.executable, "args": [SERVER], **extra}


@pytest.fixture
def http_server():
    """tests/mcp_server.py on streamable HTTP on 127.0.0.1: (its URL, its process)."""
    proc = subprocess.Popen([sys.executable, SERVER, "--http"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True)
    try:
        yield proc.stdout.readline().strip(), proc
    finally:
        proc.kill()
        proc.wait()


def run_mm(args: list[str], cwd: Path, env_extra: dict[str, str] | None = None):
    """`mm` run to its end; servers start beside it (slowly on a loaded machine: the bound is for a hang)."""
    return run_mm_briefly(args, cwd, env_extra, timeout=300)


def declared(request: dict) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools", [])]


def said(line: str) -> str:
    return LINE.format(text=line)


def test_a_stdio_server_and_an_http_one_of_the_project(tmp_path, scripted_server, http_server):
    url, _ = http_server
    (tmp_path / ".git").mkdir()  # the project's root: .mcp.json is found there from a folder below
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "web": {"type": "http", "url": "${WEB_URL}", "headers": {"X-Test": "${WEB_TOKEN:-none}-ok"}}}}))
    work = tmp_path / "src"
    work.mkdir()
    srv = scripted_server
    srv.add_tool_calls([{"id": "a", "name": "add", "arguments": {"a": 2, "b": "40"}},
                        {"id": "b", "name": "web_headers", "arguments": {}},
                        {"id": "c", "name": "picture", "arguments": {}},
                        {"id": "d", "name": "boom", "arguments": {}},
                        {"id": "r", "name": "refuse", "arguments": {}},
                        {"id": "e", "name": "fs_bash", "arguments": {"command": "ls"}},
                        {"id": "f", "name": "web_add", "arguments": {"a": 1, "b": 1}}])
    srv.add_reply("done")
    agent_file(work / "agent.yaml", srv, mcpServers={"fs": stdio()})
    proc = run_mm(["-p", "go", "-c", "agent.yaml"], work, {"WEB_URL": url, "WEB_TOKEN": "secret"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "done\n"
    # one turn: both servers were waited for; the agent file's first, the second's names prefixed on a clash
    assert declared(srv.requests[0]) == BUILT_IN + FS + [f"web_{name}" for name in TOOLS]
    assert tool_messages(srv.requests[1]) == [
        "42", "secret-ok", IMAGE.format(mime="image/png", size=11) + "\na picture of the world",
        TOOL_FAILED.format(tool="boom", text="Error executing tool boom"),
        CALL_FAILED.format(tool="refuse", server="fs", message="refused on purpose"), "echo: ls", "2"]
    schema = next(t for t in srv.requests[0]["tools"] if t["function"]["name"] == "add")["function"]
    assert schema == {"name": "add", "description": "Add two integers.", "parameters": {
        "type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}}
    assert "🔌" not in proc.stderr  # nothing went wrong: nothing said


def test_servers_that_do_not_start_or_die_leave_mm_working(tmp_path, scripted_server, http_server):
    url, web = http_server
    srv = scripted_server
    srv.add_tool_calls([{"id": "a", "name": "die", "arguments": {}}])
    srv.add_tool_calls([{"id": "b", "name": "bash", "arguments": {"command": f"kill -9 {web.pid}"}}])
    srv.add_tool_calls([{"id": "c", "name": "web_add", "arguments": {"a": 1, "b": 2}}])
    srv.add_tool_calls([{"id": "d", "name": "web_add", "arguments": {"a": 1, "b": 2}},
                        {"id": "e", "name": "bash", "arguments": {"command": "echo still here"}}])
    srv.add_reply("done")
    agent_file(tmp_path / "agent.yaml", srv, mcpServers={
        "fs": stdio(), "web": {"url": url}, "nowhere": {"command": str(tmp_path / "no-such-program")},
        "mute": {"command": "sleep", "args": ["60"], "startupTimeout": 1}})
    proc = run_mm(["-p", "go", "-c", "agent.yaml"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "done\n"
    gone = "it exited: test-server: dying on purpose"
    lines = [line for line in proc.stderr.splitlines() if line.startswith("🔌")]
    assert sorted(lines[:2]) == sorted([
        said(DID_NOT_START.format(name="nowhere", why=f"cannot run {tmp_path}/no-such-program: No such file or "
                                                       "directory")),
        said(DID_NOT_START.format(name="mute", why=SLOW.format(seconds=1)))])
    assert lines[2] == said(STOPPED_LINE.format(name="fs", why=gone))
    (web_line,) = lines[3:]  # why depends on when it was cut: the stream it held read, or the next call's connection
    why = re.fullmatch(re.escape(said(STOPPED_LINE.format(name="web", why="@"))).replace("@", f"({url}: .+)"),
                       web_line).group(1)
    assert declared(srv.requests[0]) == BUILT_IN + FS + [f"web_{name}" for name in TOOLS]
    assert tool_messages(srv.requests[1]) == [CALL_GONE.format(tool="die", server="fs", why=gone)]
    assert declared(srv.requests[1])[len(BUILT_IN):] == [f"web_{name}" for name in TOOLS]  # fs's tools left
    assert tool_messages(srv.requests[3])[-1] == CALL_GONE.format(tool="web_add", server="web", why=why)
    assert declared(srv.requests[3]) == BUILT_IN
    assert tool_messages(srv.requests[4])[-2:] == [
        '[error: there is no tool named "web_add" — the tools are: bash, read_file, write_file, edit_file, '
        'ask_user, unload_model. Call one of them, with its arguments as a JSON object]', "still here\n"]


def test_the_timeout_of_a_call(tmp_path, scripted_server):
    srv = scripted_server
    srv.add_tool_calls([{"id": "a", "name": "slow", "arguments": {"seconds": 30}}])
    srv.add_tool_calls([{"id": "b", "name": "add", "arguments": {"a": 3, "b": 4}}])
    srv.add_reply("done")
    agent_file(tmp_path / "agent.yaml", srv, mcpServers={"fs": stdio(timeout=1)})
    proc = run_mm(["-p", "go", "-c", "agent.yaml"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert tool_messages(srv.requests[1]) == [CALL_TIMED_OUT.format(tool="slow", server="fs", seconds=1)]
    assert tool_messages(srv.requests[2])[-1] == "7"  # the server goes on serving
    assert "🔌" not in proc.stderr


def test_permission_allow_and_permissions_ask(tmp_path, scripted_server):
    srv = scripted_server
    srv.add_tool_calls([{"id": "a", "name": "add", "arguments": {"a": 1, "b": 2}},
                        {"id": "b", "name": "look", "arguments": {"path": "x"}},
                        {"id": "c", "name": "careful_look", "arguments": {"path": "y"}},
                        {"id": "d", "name": "careful_add", "arguments": {"a": 1, "b": 1}}])
    srv.add_reply("done")
    agent_file(tmp_path / "agent.yaml", srv, yolo=False, mcpServers={
        "fs": stdio(allow=["look"]), "careful": stdio(allow=["add"], permissions="ask")})
    proc = run_mm(["-p", "go", "-c", "agent.yaml"], tmp_path)
    assert tool_messages(srv.requests[1]) == ["[add rejected by the user]", "looked at x",
                                              "[careful_look rejected by the user]", "2"]
    assert NOBODY_TO_ASK.format(mode="-p") in proc.stderr
    # permissions: ask asks even with yolo: true — and nobody can answer in -p
    srv.add_tool_calls([{"id": "a", "name": "careful_look", "arguments": {"path": "y"}},
                        {"id": "b", "name": "add", "arguments": {"a": 1, "b": 2}}])
    srv.add_reply("done")
    agent_file(tmp_path / "agent.yaml", srv, mcpServers={"fs": stdio(), "careful": stdio(permissions="ask")})
    run_mm(["-p", "go", "-c", "agent.yaml"], tmp_path)
    assert tool_messages(srv.requests[3]) == ["[careful_look rejected by the user]", "3"]


def test_a_hook_denies_an_mcp_tool(tmp_path, scripted_server):
    srv = scripted_server
    srv.add_tool_calls([{"id": "a", "name": "wipe", "arguments": {"path": "/"}},
                        {"id": "b", "name": "look", "arguments": {"path": "/"}}])
    srv.add_reply("done")
    (tmp_path / "deny.sh").write_text("#!/bin/sh\necho 'no wiping here' >&2\nexit 2\n")
    (tmp_path / "deny.sh").chmod(0o755)
    (tmp_path / "seen.sh").write_text("#!/bin/sh\ncat >> seen.jsonl\necho >> seen.jsonl\n")
    (tmp_path / "seen.sh").chmod(0o755)
    agent_file(tmp_path / "agent.yaml", srv, mcpServers={"fs": stdio()},
               hooks={"preToolCall": [{"matcher": "wipe", "command": "./deny.sh"}],
                      "postToolCall": [{"matcher": "look", "command": "./seen.sh"}]})
    proc = run_mm(["-p", "go", "-c", "agent.yaml"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert tool_messages(srv.requests[1]) == [DENIED.format(reason="no wiping here"), "looked at /"]
    (seen,) = [json.loads(line) for line in (tmp_path / "seen.jsonl").read_text().splitlines() if line.strip()]
    assert (seen["event"], seen["tool_name"], seen["tool_input"], seen["tool_output"]) == (
        "postToolCall", "look", {"path": "/"}, "looked at /")


def test_no_server_no_mcp_import(tmp_path, scripted_server):
    """Start-up is unchanged without a server: neither the SDK nor mm's MCP client is imported."""
    scripted_server.add_reply("hi")
    code = ("import sys\nfrom mm.cli import main\ntry:\n    main(['-p', 'hello', '--base-url', sys.argv[1], "
            "'--model', 'm'])\nfinally:\n    print(sorted(m for m in sys.modules if m == 'mcp' or "
            "m.startswith(('mcp.', 'mm.mcp.', 'mm.tools.mcp'))), file=sys.stderr)\n")
    out = subprocess.run([sys.executable, "-c", code, scripted_server.base_url], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert out.stdout == "hi\n" and out.stderr.splitlines()[-1] == "[]", out.stderr
