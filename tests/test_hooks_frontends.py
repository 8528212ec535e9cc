"""Every hook event fires in each front end — `mm -p`, line mode on a pseudo-terminal, and a real
`mm -acp` driven by the ACP SDK's client — with the asked agent a real child `mm -acp` (docs/hooks.md;
mm-tools.md §ask_agent Hooks row; mm-acp.md §Transport Logs, `<tool> — denied by a hook`).

One scenario for the three: a preGeneration hook adds context; a preToolCall hook written in
Claude Code's output format denies `rm`; a preToolCall hook on read_file times out (reported by
its `🪝` line, the call goes on); a postToolCall hook adds context; the preAsk hook records the
hand-off and the postAsk hook replaces the answer. Every hook logs its input to hooks.log.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from scripted_server import ScriptedServer
from test_ask_agent import (RecordingClient, agent_file, assert_no_process, child_server, last_tool_message, mm_acp,
                            prompt, run_mm)

RECORD = """\
import json, sys
data = json.load(sys.stdin)
with open("hooks.log", "a", encoding="utf-8") as f:
    f.write(json.dumps(data, ensure_ascii=False) + "\\n")
if len(sys.argv) > 1:
    print(sys.argv[1])
"""
CLAUDE_DENY = """\
#!/bin/bash
input=$(cat)
if grep -q '"rm ' <<< "$input"; then
  echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
         "permissionDecisionReason": "rm is not allowed here"}}'
fi
"""
SLOW = f"#!/bin/bash\nsleep 89.{os.getpid()}\n"
HOOK_ANSWER = "The hook's answer."
DENIED = "[denied by a hook: rm is not allowed here]"
TIMED_OUT = "🪝 preToolCall hook ./slow.sh timed out after 1s — ignored"
REPLACED = f"helper answered; a hook replaced the answer ({len(HOOK_ANSWER)} characters)"
EVENTS = [("preGeneration", None), ("preToolCall", "bash"), ("preToolCall", "read_file"),
          ("postToolCall", "read_file"), ("preToolCall", "ask_agent"), ("preAsk", "helper"), ("postAsk", "helper")]


def scenario(cwd: Path, parent: ScriptedServer, child: ScriptedServer) -> Path:
    """The files, the hooks and the models' script; returns the parent's agent file."""
    (cwd / "keep").mkdir()
    (cwd / "keep" / "data.txt").write_text("precious\n")
    (cwd / "notes.txt").write_text("alpha\n")
    (cwd / "record.py").write_text(RECORD)
    for name, body in (("deny-rm.sh", CLAUDE_DENY), ("slow.sh", SLOW)):
        (cwd / name).write_text(body)
        (cwd / name).chmod(0o755)
    py = [sys.executable, "record.py"]
    agent_file(cwd / "child.yaml", child, "cm")
    config = agent_file(cwd / "parent.yaml", parent, mmConfigs={"helper": {"config": "child.yaml"}}, hooks={
        "preGeneration": [{"command": py + [json.dumps({"context": "Project rule: be brief"})]}],
        "preToolCall": [{"command": py},
                        {"matcher": "bash", "command": "./deny-rm.sh"},
                        {"matcher": "read_file", "command": "./slow.sh", "timeout": 1}],
        "postToolCall": [{"matcher": "read_.*", "command": py + [json.dumps({"context": "checked by the hook"})]}],
        "preAsk": [{"matcher": "helper", "command": py}],
        "postAsk": [{"command": py + [json.dumps({"replace": HOOK_ANSWER})]}],
    })
    parent.add_tool_calls([{"id": "b1", "name": "bash", "arguments": {"command": "rm -rf keep"}}])
    parent.add_tool_calls([{"id": "r1", "name": "read_file", "arguments": {"path": "notes.txt"}}])
    parent.add_tool_calls([{"id": "a1", "name": "ask_agent", "arguments": {"agent": "helper", "prompt": "Say hi"}}])
    child.add_reply("Hi from the child.")
    parent.add_reply("All done.")
    return config


def check_the_run(cwd: Path, parent: ScriptedServer, child: ScriptedServer) -> None:
    """What every front end must have done: the hooks' inputs, what the model read, the files."""
    seen = [json.loads(line) for line in (cwd / "hooks.log").read_text().splitlines()]
    assert [(s["event"], s.get("tool_name", s.get("agent"))) for s in seen] == EVENTS
    assert len({s["session_id"] for s in seen}) == 1 and seen[0]["session_id"]
    assert {s["cwd"] for s in seen} == {str(cwd)}
    assert seen[0]["prompt"] == "tidy up"
    assert seen[5]["prompt"] == "Say hi" and seen[6]["answer"] == "Hi from the child."
    assert parent.requests[0]["messages"][1]["content"] == (
        "tidy up\n\n[context added by a hook]\nProject rule: be brief")
    assert last_tool_message(parent.requests[1]) == DENIED
    read = last_tool_message(parent.requests[2])
    assert "alpha" in read and read.endswith("\n\n[context added by a hook]\nchecked by the hook")
    assert last_tool_message(parent.requests[3]) == HOOK_ANSWER
    assert child.requests[0]["messages"][-1]["content"] == "Say hi"
    assert (cwd / "keep" / "data.txt").read_text() == "precious\n"


def servers() -> tuple[ScriptedServer, ScriptedServer]:
    return child_server("m"), child_server("cm")


def test_every_event_in_oneshot(tmp_path):
    parent, child = servers()
    try:
        scenario(tmp_path, parent, child)
        proc = run_mm(["-p", "tidy up", "-c", "parent.yaml"], tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == "All done.\n"
        err = proc.stderr.splitlines()
        assert err.count(TIMED_OUT) == 1, proc.stderr  # reported once, on stderr
        assert "🛠️  bash: rm -rf keep" in err and f"   {DENIED}" in err
        assert f"   {HOOK_ANSWER}" in err  # nothing streamed in -p: the answer the model reads
        check_the_run(tmp_path, parent, child)
        assert_no_process(str(tmp_path / "child.yaml"))
    finally:
        parent.stop()
        child.stop()


def test_every_event_in_line_mode(tmp_path):
    from test_line_mode_terminal import Terminal, spawn_on_terminal

    parent, child = servers()
    try:
        scenario(tmp_path, parent, child)
        child.add_reply("Asked directly.")  # /ask: the same hooks around the hand-off
        env = {"PROMPT_TOOLKIT_NO_CPR": "1", "COLUMNS": "200", "LINES": "50"}
        proc, fd = spawn_on_terminal([sys.executable, "-m", "mm", "-c", "parent.yaml"], tmp_path, env, (50, 200))
        term = Terminal(fd)
        try:
            term.expect("›")
            term.write("tidy up\r")
            term.expect("🛠️  bash: rm -rf keep")
            term.expect(DENIED)
            term.expect(TIMED_OUT)
            term.expect("checked by the hook")
            term.expect("Hi from the child.")  # the asked agent's answer streams as it comes
            term.expect(REPLACED)  # then the call's output says the model read another one
            term.expect("All done.")
            term.expect("›")
            check_the_run(tmp_path, parent, child)
            term.write("/ask helper Again\r")
            term.expect("Asked directly.")
            term.expect(REPLACED)
            term.expect("›")
            seen = [json.loads(line) for line in (tmp_path / "hooks.log").read_text().splitlines()]
            assert [s["event"] for s in seen[len(EVENTS):]] == ["preAsk", "postAsk"]
            assert seen[-1]["prompt"] == "Again" and seen[-1]["answer"] == "Asked directly."
            term.write("/quit\r")
            assert proc.wait(30) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            os.close(fd)
        assert term.seen.decode(errors="replace").count(TIMED_OUT) == 1
        assert_no_process(str(tmp_path / "child.yaml"))
    finally:
        parent.stop()
        child.stop()


async def test_every_event_in_acp(tmp_path):
    parent, child = servers()
    try:
        config = scenario(tmp_path, parent, child)
        client = RecordingClient()
        async with mm_acp(client, tmp_path, config) as (conn, session_id):
            response = await prompt(conn, session_id, "tidy up")
        assert response.stop_reason == "end_turn"
        check_the_run(tmp_path, parent, child)
        seen = [json.loads(line) for line in (tmp_path / "hooks.log").read_text().splitlines()]
        assert {s["session_id"] for s in seen} == {session_id}
        denied = client.call_titled("bash — denied by a hook")
        assert denied["status"] == "failed" and denied["kind"] == "execute"
        assert denied["content"] == [{"type": "content", "content": {"type": "text", "text": DENIED}}]
        assert [u["status"] for u in client.updates if u.get("toolCallId") == denied["toolCallId"]] == [
            "pending", "failed"]  # no permission, nothing ran
        asked = [c for c in client.calls().values() if c.get("rawInput", {}).get("agent") == "helper"]
        assert [c["content"][0]["content"]["text"] for c in asked] == [REPLACED]
        assert client.permissions == []
        stderr = (tmp_path / "mm-stderr.txt").read_text().splitlines()
        assert stderr.count(TIMED_OUT) == 1, stderr
        assert_no_process(str(tmp_path / "child.yaml"))
    finally:
        parent.stop()
        child.stop()


def test_a_post_ask_denial_and_mm_ask(tmp_path):
    """postAsk denies with exit 2: the answer is withheld from the model; `mm --ask` runs the preAsk
    hooks too, and a denial there ends it with status 1 and the line, the agent never started."""
    parent, child = servers()
    try:
        agent_file(tmp_path / "child.yaml", child, "cm")
        (tmp_path / "deny.sh").write_text("#!/bin/bash\ninput=$(cat)\n"
                                          "grep -q '\"Secret' <<< \"$input\" && { echo 'not that one' >&2; exit 2; }\n"
                                          "grep -q token <<< \"$input\" && { echo 'the answer holds a token' >&2; exit 2; }\n"
                                          "exit 0\n")
        (tmp_path / "deny.sh").chmod(0o755)
        agent_file(tmp_path / "parent.yaml", parent, mmConfigs={"helper": {"config": "child.yaml"}},
                   hooks={"preAsk": [{"command": "./deny.sh"}], "postAsk": [{"command": "./deny.sh"}]})
        parent.add_tool_calls([{"id": "a1", "name": "ask_agent", "arguments": {"agent": "helper", "prompt": "Go"}}])
        child.add_reply("Here is the token: abc.")
        parent.add_reply("Understood.")
        proc = run_mm(["-p", "ask", "-c", "parent.yaml"], tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert last_tool_message(parent.requests[1]) == "[ask denied by a hook: the answer holds a token]"
        assert_no_process(str(tmp_path / "child.yaml"))

        proc = run_mm(["--ask", "helper", "Secret plans", "-c", "parent.yaml"], tmp_path)
        assert (proc.returncode, proc.stdout) == (1, ""), proc.stderr
        assert proc.stderr.splitlines()[-1] == "[ask denied by a hook: not that one]"
        assert len(child.requests) == 1  # the agent was not asked again
    finally:
        parent.stop()
        child.stop()
