"""The commands of issue 11 point 6 over ACP, through a real `mm -acp` and the scripted model server:
/help, /clear, /model, /resume, /cost, /init — advertised, intercepted, logged (docs/acp.md §Commands)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from test_acp_logs import Agent

from mm.commands.init import INIT_EXISTS, INIT_PROMPT
from mm.commands.sessions import NO_SESSIONS

BIG = {"id": "big", "object": "model", "owned_by": "scripted", "max_model_len": 32768}


def text(message: str) -> list[dict]:
    return [{"type": "text", "text": message}]


def updates_of(messages: list[dict], kind: str) -> list[dict]:
    return [m["params"]["update"] for m in messages
            if m.get("method") == "session/update" and m["params"]["update"]["sessionUpdate"] == kind]


def chunk_of(messages: list[dict]) -> str:
    """The one agent_message_chunk a command answers with."""
    (chunk,) = [u["content"]["text"] for u in updates_of(messages, "agent_message_chunk")]
    return chunk


def start(cwd: Path, server, config: dict | None = None) -> tuple[Agent, str]:
    agent = Agent(cwd, server, config or {})
    agent.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    answer, _ = agent.call("session/new", {"cwd": str(cwd), "mcpServers": []})
    return agent, answer["result"]["sessionId"]


def command(agent: Agent, sid: str, typed: str) -> tuple[dict, str]:
    """Send `typed`; the answer (an end_turn) and the command's one chunk."""
    answer, updates = agent.call("session/prompt", {"sessionId": sid, "prompt": text(typed)})
    assert answer["result"]["stopReason"] == "end_turn", answer
    return answer, chunk_of(updates)


def test_help_cost_clear_and_model(tmp_path, scripted_server):
    cwd = Path(os.path.realpath(tmp_path))
    srv = scripted_server
    srv.models = ["m", BIG]
    srv.add_reply("first answer")
    srv.add_reply("on the big model")
    srv.add_reply("another session, the first model")
    (cwd / ".claude" / "skills").mkdir(parents=True)
    (cwd / ".claude" / "skills" / "greetings.md").write_text("---\ndescription: Greet somebody.\n---\nGreet.\n")
    (cwd / ".claude" / "skills" / "help.md").write_text("---\ndescription: would shadow /help\n---\nbody\n")
    agent, sid = start(cwd, srv)
    _, shown = command(agent, sid, "/help")
    for row in ("/new           Clear the history and start a new session",
                "/model [NAME]  List the server's models; /model NAME switches to one for the rest of the conversation",
                "/resume [ID]   List the saved conversations; /resume ID goes on with one",
                "/init          Ask the model to write an AGENTS.md for this project (build, test, run)",
                "skills (/name or $name, then what it needs):\n/greetings     Greet somebody."):
        assert row in shown
    assert "/help          List the commands" in shown and "/help    " not in shown.split("skills (")[1]
    assert "/usage" not in shown and "/quit" not in shown and "/edit" not in shown  # line mode's alone
    _, shown = command(agent, sid, "/cost")
    assert shown.startswith("📊 session: 0 input · 0 output · 0 thought · 0 cached tokens\n📊 context: ")
    assert shown.endswith("tokens (window size unknown)")
    agent.call("session/prompt", {"sessionId": sid, "prompt": text("hello")})
    _, shown = command(agent, sid, "/clear")
    assert shown == "🆕 New session: 2 message(s) forgotten."
    _, shown = command(agent, sid, "/model")
    assert shown == f"models at {srv.base_url}:\n● m\n  big\nswitch with /model NAME"
    answer, updates = agent.call("session/prompt", {"sessionId": sid, "prompt": text("/model big")})
    assert chunk_of(updates) == f"🔁 model: OpenAI-compatible big at {srv.base_url} · context window 32768 tokens"
    assert updates_of(updates, "usage_update")[-1]["size"] == 32768
    answer, updates = agent.call("session/prompt", {"sessionId": sid, "prompt": text("and now?")})
    assert answer["result"]["stopReason"] == "end_turn"
    answer, _ = agent.call("session/new", {"cwd": str(cwd), "mcpServers": []})  # another session: its own model
    agent.call("session/prompt", {"sessionId": answer["result"]["sessionId"], "prompt": text("which model?")})
    err = agent.stderr()
    assert [r["model"] for r in srv.requests] == ["m", "big", "m"]
    assert [m["content"] for m in srv.requests[1]["messages"][1:]] == ["and now?"]  # /clear forgot "hello"
    assert f"[acp] session {sid}: new session, 2 message(s) forgotten" in err
    assert f"[acp] session {sid}: /model — 🔁 model: OpenAI-compatible big at {srv.base_url} · context window" in err
    assert f"[acp] session {sid}: /help — /new " in err and "(+" in err  # a long answer: its first line
    assert '[acp] the skill "help" (' in err and "is not offered as /help: mm's own /help command wins" in err


def test_commands_that_take_words_and_those_that_do_not(tmp_path, scripted_server):
    cwd = Path(os.path.realpath(tmp_path))
    scripted_server.add_reply("handed to the model")
    agent, sid = start(cwd, scripted_server)
    _, shown = command(agent, sid, "/resume")
    assert shown == NO_SESSIONS
    _, shown = command(agent, sid, "/model nope")
    assert shown == f'the server at {scripted_server.base_url} has no model "nope": /model lists them'
    agent.call("session/prompt", {"sessionId": sid, "prompt": text("/help me with this")})  # not a command
    agent.stderr()
    assert [r["messages"][-1]["content"] for r in scripted_server.requests] == ["/help me with this"]


def test_resume_replays_then_goes_on(tmp_path, scripted_server):
    cwd = Path(os.path.realpath(tmp_path))
    srv = scripted_server
    srv.add_reply("Paris.")
    srv.add_reply("Rome.")
    agent, first = start(cwd, srv, {"sessions": {"enabled": True}})
    agent.call("session/prompt", {"sessionId": first, "prompt": text("capital of France?")})
    command(agent, first, "/clear")  # the conversation is kept under a new id, let go for another
    answer, _ = agent.call("session/new", {"cwd": str(cwd), "mcpServers": []})
    second = answer["result"]["sessionId"]
    _, listed = command(agent, second, "/resume")
    kept = re.search(r"^(\d{8}-\d{6}-[0-9a-f]{8}) · [0-9: -]+ · capital of France\?$", listed, re.M)
    assert kept is not None and listed.endswith("go on with one: /sessions <id> (or mm --resume <id>)"), listed
    answer, updates = agent.call("session/prompt", {"sessionId": second, "prompt": text(f"/resume {kept.group(1)}")})
    kinds = [m["params"]["update"]["sessionUpdate"] for m in updates if m.get("method") == "session/update"]
    assert kinds == ["user_message_chunk", "agent_message_chunk", "agent_message_chunk", "usage_update"]
    replayed = [m["params"]["update"]["content"]["text"] for m in updates if m.get("method") == "session/update"
                and m["params"]["update"]["sessionUpdate"] != "usage_update"]
    assert replayed == ["capital of France?", "Paris.", f"resumed {kept.group(1)}: 2 message(s)"]
    agent.call("session/prompt", {"sessionId": second, "prompt": text("and Italy?")})
    agent.stderr()
    assert [m["content"] for m in srv.requests[-1]["messages"][1:]] == ["capital of France?", "Paris.", "and Italy?"]


def test_init_runs_a_turn_through_write_file_and_its_permission(tmp_path, scripted_server):
    cwd = Path(os.path.realpath(tmp_path))
    srv = scripted_server
    srv.add_tool_calls([{"id": "w1", "name": "write_file", "arguments": {"path": "AGENTS.md", "content": "# P\n"}}])
    srv.add_reply("Not written: you said no.")
    agent, sid = start(cwd, srv, {"yolo": False})
    answer, updates = agent.call("session/prompt", {"sessionId": sid, "prompt": text("/init")})
    assert answer["result"]["stopReason"] == "end_turn"
    asked = [m for m in updates if m.get("method") == "session/request_permission"]
    assert len(asked) == 1 and asked[0]["params"]["toolCall"]["title"].startswith("write_file")
    assert not (cwd / "AGENTS.md").exists()  # the client could not answer: rejected
    (cwd / "AGENTS.md").write_text("# Mine\n")
    _, shown = command(agent, sid, "/init")
    agent.stderr()
    assert shown == INIT_EXISTS.format(path=cwd / "AGENTS.md")
    assert (cwd / "AGENTS.md").read_text() == "# Mine\n"
    assert len(srv.requests) == 2  # the second /init asked nothing
    assert srv.requests[0]["messages"][-1] == {"role": "user", "content": INIT_PROMPT}
    assert srv.requests[1]["messages"][-1] == {"role": "tool", "tool_call_id": "w1",
                                               "content": "[write_file rejected by the user]"}
