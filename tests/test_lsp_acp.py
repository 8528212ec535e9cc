"""The lsp tool through `mm -acp` with jedi-language-server: navigation is kind `read` and never
asks; a rename is kind `edit`, asks permission like edit_file (refused: `[rename rejected by the
user]`, nothing changed; allowed: applied on disk); no server outlives mm (mm-tools.md §lsp, ACP /
window; Server lifecycle)."""

from __future__ import annotations

import pytest

from lsp_helpers import jedi_entry, program, server_pids
from test_acp_sdk import ScriptedClient, calls_of, cwd, final_of, running_mm, turn_results, write_agent_file  # noqa: F401

pytestmark = pytest.mark.skipif(program("jedi-language-server") is None, reason="jedi-language-server is not installed")

TALK = 'def greet(name):\n    return "hello " + name\n'
MAIN = 'from talk import greet\n\nprint(greet("ana"))\n'


def lsp_call(call_id: str, **arguments) -> dict:
    return {"id": call_id, "name": "lsp", "arguments": arguments}


async def test_kinds_and_the_permission_of_a_rename(cwd, scripted_server):
    srv = scripted_server
    (cwd / "talk.py").write_text(TALK)
    (cwd / "main.py").write_text(MAIN)
    write_agent_file(cwd, srv.base_url, yolo=False, lsp={"servers": [jedi_entry()]})
    srv.add_tool_calls([lsp_call("d1", action="definition", path="main.py", symbol="greet", line=3)])
    srv.add_tool_calls([lsp_call("r1", action="rename", path="talk.py", symbol="greet", new_name="hello")])
    srv.add_tool_calls([lsp_call("r2", action="rename", path="talk.py", symbol="greet", new_name="salute")])
    srv.add_reply("renamed")
    client = ScriptedClient()
    client.permission_answers.extend(["reject", "allow"])
    async with running_mm(cwd, srv, client) as mm:
        sid = await mm.new_session()
        mark = len(mm.wire)
        assert (await mm.prompt(sid, "rename greet"))["result"]["stopReason"] == "end_turn"
        updates = mm.updates_after(mark, sid)
        started = {u["toolCallId"]: u for u in calls_of(updates) if u["sessionUpdate"] == "tool_call"}
        assert [(u["title"], u["kind"]) for u in started.values()] == [
            ("lsp: definition main.py:3 greet", "read"), ("lsp: rename talk.py greet → hello", "edit"),
            ("lsp: rename talk.py greet → salute", "edit")]
        asked = [m["params"]["toolCall"]["toolCallId"] for d, m in mm.wire[mark:]
                 if d == "in" and m.get("method") == "session/request_permission"]
        assert asked == list(started)[1:]  # navigation never asks
        assert turn_results(srv.requests[-1]) == [
            "talk.py:1:5  def greet(name):", "[rename rejected by the user]",
            "renamed to salute: 6 edit(s) in 2 file(s)\nmain.py: 4 edit(s)\ntalk.py: 2 edit(s)"]  # jedi: fine-grained edits
        assert [final_of(updates, i)["status"] for i in started] == ["completed", "failed", "completed"]
        assert (cwd / "talk.py").read_text() == TALK.replace("greet", "salute")
        assert (cwd / "main.py").read_text() == MAIN.replace("greet", "salute")
        assert len(server_pids(cwd, "jedi-language-server")) == 1
    assert server_pids(cwd, "jedi-language-server") == []  # stopped when mm left
