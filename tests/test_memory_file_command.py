"""`/memory-file` (docs/memory.md §Seeing it): MEMORY.md shown in line mode on a real
pseudo-terminal and by a real `mm -acp`, while `/memory` keeps searching past conversations
(mm-tools.md §search_memory)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from mm_runs import agent_file, line_mode
from test_commands_acp import command, start

from mm.commands.memory_file import OFF


def test_line_mode_shows_the_file_the_model_wrote(scripted_server, tmp_path):
    config = tmp_path / "config"
    agent_file(tmp_path, "toolsets: [core, memory]\n")
    scripted_server.add_tool_calls([{"name": "memory", "arguments": {"action": "add", "text": "[user] likes tea"}}])
    scripted_server.add_reply("Noted.")
    path, shown_as = config / "mm" / "MEMORY.md", "~/config/mm/MEMORY.md"  # HOME is tmp_path: said with ~
    with line_mode(scripted_server, tmp_path, env={"XDG_CONFIG_HOME": str(config)}) as (proc, term):
        term.write("/memory-file\r")
        term.expect(f"{shown_as}: no entry yet — the model adds them with the memory tool")
        term.expect("›")
        term.write("remember that I like tea\r")
        term.expect("Noted.")
        term.expect("›")
        term.write("/memory-file\r")
        shown = term.expect("[user] likes tea")
        assert f"{shown_as}: 1 entry, 17/2200 characters" in shown
        term.expect("›")
        term.write("/memory tea\r")  # still the search of past conversations
        term.expect("›")
        term.write("/quit\r")
        assert proc.wait(30) == 0
    assert path.read_text() == "[user] likes tea\n"
    assert "/memory tea" not in json.dumps(scripted_server.requests)  # neither command reached the model


def test_acp_advertises_and_answers_it(tmp_path, scripted_server):
    cwd = Path(os.path.realpath(tmp_path))
    memory = cwd / "home" / ".config" / "mm" / "MEMORY.md"  # the agent's XDG_CONFIG_HOME (tests/acp_cases.child_env)
    memory.parent.mkdir(parents=True)
    memory.write_text("one\n\n---\n\ntwo\n")
    agent, sid = start(cwd, scripted_server, {"toolsets": ["core", "memory"]})
    try:
        _, shown = command(agent, sid, "/memory-file")
        assert shown == "~/.config/mm/MEMORY.md: 2 entries, 14/2200 characters\none\n\n---\n\ntwo"
        _, helped = command(agent, sid, "/help")
        assert "/memory-file   Show MEMORY.md, the notes the memory tool keeps (docs/memory.md)" in helped
    finally:
        agent.stderr()
    assert scripted_server.requests == []
    bare = tmp_path / "bare"
    bare.mkdir()
    agent, sid = start(Path(os.path.realpath(bare)), scripted_server)
    try:
        _, shown = command(agent, sid, "/memory-file")
        assert shown == OFF
        _, helped = command(agent, sid, "/help")
        assert "/memory-file" not in helped  # advertised only with the tool
    finally:
        agent.stderr()


def test_an_editor_sees_the_memory_change_as_a_diff(tmp_path, scripted_server):
    """Over ACP the memory tool is a tool call of kind `edit` whose content is MEMORY.md's diff."""
    cwd = Path(os.path.realpath(tmp_path))
    memory = cwd / "home" / ".config" / "mm" / "MEMORY.md"
    scripted_server.add_tool_calls([{"name": "memory", "arguments": {"action": "add", "text": "[user] likes tea"}}])
    scripted_server.add_reply("Noted.")
    agent, sid = start(cwd, scripted_server, {"toolsets": ["core", "memory"]})
    try:
        answer, updates = agent.call("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "tea"}]})
        assert answer["result"]["stopReason"] == "end_turn"
    finally:
        agent.stderr()
    calls = [m["params"]["update"] for m in updates if m.get("method") == "session/update"
             and m["params"]["update"]["sessionUpdate"] in ("tool_call", "tool_call_update")]
    assert calls[0]["kind"] == "edit" and calls[0]["title"] == "memory: add [user] likes tea"
    (done,) = [c for c in calls if c.get("status") == "completed"]
    assert {"type": "diff", "path": str(memory), "newText": "[user] likes tea\n"} in done["content"]  # a new file
    assert memory.read_text() == "[user] likes tea\n"
