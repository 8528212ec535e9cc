"""The `[acp] …` lines of mm-acp.md and the rows the cases leave out, through a real `mm -acp`:
the turn's recap line, the `/compact` line, the MCP servers counted, the banner line of a skill
that a real command shadows, and the tool kinds of §Tool kinds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from acp_cases import child_env

MCP = [{"name": n, "command": "x", "args": [], "env": []} for n in ("one", "two")]


class Agent:
    """`mm -acp` in `cwd`; `call(method, params)` sends a request and returns its answer and the
    notifications that came before it."""

    def __init__(self, cwd: Path, server, config: dict):
        (cwd / ".mm").mkdir(parents=True, exist_ok=True)
        (cwd / ".mm" / "agent.yaml").write_text(json.dumps({"baseUrl": server.base_url, "model": "m", **config}))
        (cwd / "home").mkdir(exist_ok=True)
        self.proc = subprocess.Popen([sys.executable, "-m", "mm", "-acp"], cwd=cwd, env=child_env(cwd / "home"),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.ids = iter(range(1, 1000))

    def call(self, method: str, params: dict) -> tuple[dict, list[dict]]:
        ident = next(self.ids)
        self.proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
                               + "\n").encode())
        self.proc.stdin.flush()
        updates = []
        while True:
            line = self.proc.stdout.readline()
            assert line, f"mm -acp ended: {self.proc.stderr.read().decode()[-2000:]}"
            message = json.loads(line)
            if message.get("id") == ident and "method" not in message:
                return message, updates
            if "method" in message and "id" in message:  # a request to this client: it cannot answer
                error = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "no"}}
                self.proc.stdin.write((json.dumps(error) + "\n").encode())
                self.proc.stdin.flush()
            updates.append(message)

    def stderr(self) -> str:
        try:
            return self.proc.communicate(timeout=20)[1].decode()  # (stdin closed: mm ends)
        finally:
            self.proc.kill()


def test_the_log_lines_and_the_tool_kinds(tmp_path, scripted_server):
    cwd = Path(os.path.realpath(tmp_path))
    (cwd / "skills").mkdir()
    (cwd / "skills" / "compact.md").write_text("---\ndescription: would shadow /compact\n---\nbody\n")
    scripted_server.add_tool_calls([{"name": "bash", "arguments": {"command": "true"}},
                                    {"name": "fetch_content", "arguments": {"url": "http://127.0.0.1:9/page"}},
                                    {"name": "ask_user", "arguments": {"question": "Sure?", "type": "confirm"}}])
    scripted_server.add_reply("done")
    agent = Agent(cwd, scripted_server, {"skillsDir": "skills", "fetchContentTool": True})
    agent.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    answer, _ = agent.call("session/new", {"cwd": str(cwd), "mcpServers": MCP})
    sid = answer["result"]["sessionId"]
    answer, updates = agent.call("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]})
    assert answer["result"]["stopReason"] == "end_turn"
    kinds = {u["params"]["update"]["title"].split(":")[0]: u["params"]["update"]["kind"]
             for u in updates if u.get("method") == "session/update"
             and u["params"]["update"]["sessionUpdate"] == "tool_call"}
    assert kinds == {"bash": "execute", "fetch_content": "fetch", "ask_user": "other"}  # mm-acp.md §Tool kinds
    answer, updates = agent.call("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "/compact"}]})
    (chunk,) = [u["params"]["update"]["content"]["text"] for u in updates
                if u.get("method") == "session/update" and u["params"]["update"]["sessionUpdate"] == "agent_message_chunk"]
    err = agent.stderr()
    assert f"[acp] session {sid} created in {cwd} (2 MCP server(s) ignored)" in err
    assert "[acp] turn done: 1 command(s) · 0 file op(s) · 0 skill(s)" in err
    assert f"[acp] session {sid}: /compact — {chunk}" in err and chunk.startswith("🗜️ nothing to compact")
    assert '[acp] the skill "compact" (' in err and "is not offered as /compact" in err
