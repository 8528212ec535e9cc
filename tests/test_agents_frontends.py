"""Sub-agents and ask_user_question in the real front ends (docs/subagents.md): `mm -p` as a
subprocess (nobody to ask; background runs awaited before the turn ends), line mode on a
pseudo-terminal and `mm -acp` over stdio, where a sub-agent's permission requests and questions
reach the user through the parent's front end."""

from __future__ import annotations

import json
import re
from pathlib import Path

from mm.tools.agents import question

AGENT_FILE = "toolsets: [core, agents]\nyolo: false\n"


def call(name: str, **arguments) -> dict:
    return {"name": name, "arguments": arguments}


def tool_messages(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def test_one_shot_refuses_a_sub_agents_permission_and_waits_for_background_reports(scripted_server, tmp_path):
    from mm_runs import agent_file, one_shot

    work = tmp_path / "work"
    work.mkdir()
    agent_file(work, AGENT_FILE)
    scripted_server.add_tool_calls([call("spawn_agent", agent_type="general-purpose", prompt="FG write",
                                         run_in_background=False),
                                    call("spawn_agent", agent_type="explore", prompt="BG look")])
    scripted_server.add_for("FG write", {"tool_calls": [call("bash", command="echo x > f.txt")]})
    scripted_server.add_for("FG write", {"reply": "not allowed"})
    scripted_server.add_for("BG look", {"reply": "looked around", "delay": 0.3})
    scripted_server.add_reply("Waiting for the explorer.")
    scripted_server.add_reply("All done: looked around.")
    done = one_shot(scripted_server, work, "go", {"XDG_CONFIG_HOME": str(tmp_path / "config")})
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith("All done: looked around.")
    assert not (work / "f.txt").exists()
    child = [r for r in scripted_server.requests if "FG write" in json.dumps(r["messages"][1:2])]
    assert tool_messages(child[-1]) == ["[command rejected by the user]"]
    last = scripted_server.requests[-1]["messages"][-1]["content"]
    assert last.startswith("[mm: Your background sub-agent 'explore-") and "looked around" in last


def test_line_mode_relays_a_sub_agents_permission_and_draws_the_picker(scripted_server, tmp_path):
    from mm_runs import agent_file, line_mode

    work = tmp_path / "work"
    work.mkdir()
    agent_file(work, AGENT_FILE)
    scripted_server.add_tool_calls([call("spawn_agent", agent_type="general-purpose", prompt="write f",
                                         run_in_background=False)])
    scripted_server.add_tool_calls([call("bash", command="echo hi > f.txt")])
    scripted_server.add_reply("I wrote f.txt.")
    scripted_server.add_tool_calls([call("ask_user_question", question="Which colour?",
                                         options=["red", " blue ", "RED", None])])
    scripted_server.add_reply("Blue it is.")
    with line_mode(scripted_server, work, {"XDG_CONFIG_HOME": str(tmp_path / "config")}) as (proc, term):
        term.write("go\r")
        shown = term.expect("asks: allow?")
        assert re.search(r"general-purpose-[0-9a-f]{6} · bash: echo hi > f\.txt", shown), shown
        term.write("a\r")
        shown = term.expect("❓ Which colour?")
        term.expect(f"3. {question.ESCAPE}")
        term.write("2\r")
        term.expect("Blue it is.")
        term.expect("›")
        term.write("/quit\r")
        assert proc.wait(30) == 0
    assert (work / "f.txt").read_text() == "hi\n"
    assert tool_messages(scripted_server.requests[-1])[-1] == question.CHOSE.format(choice="blue")


async def test_acp_relays_a_sub_agents_permission_and_question_and_draws_the_picker(tmp_path, scripted_server):
    from test_ask_agent import RecordingClient, agent_file, mm_acp, prompt

    config = agent_file(tmp_path / "parent.yaml", scripted_server, toolsets=["core", "agents"], yolo=False)
    scripted_server.add_tool_calls([call("spawn_agent", agent_type="general-purpose", prompt="write f",
                                         run_in_background=False)])
    scripted_server.add_tool_calls([call("ask_user", question="Which name?", options=["f", "g"])])
    scripted_server.add_tool_calls([call("bash", command="echo hi > f.txt")])
    scripted_server.add_reply("I wrote f.txt.")
    scripted_server.add_tool_calls([call("ask_user_question", question="Ship it?", options=["yes", "later"])])
    scripted_server.add_reply("Shipping.")
    client = RecordingClient(permissions=["allow"], forms=[{"q1": "f"}, {"q1": "later"}])
    async with mm_acp(client, tmp_path, config, {"XDG_CONFIG_HOME": str(tmp_path / "config")}) as (conn, session_id):
        done = await prompt(conn, session_id, "go")
    assert done.stop_reason == "end_turn"
    [asked] = client.permissions
    label = re.fullmatch(r"(general-purpose-[0-9a-f]{6}) · bash: echo hi > f\.txt", asked["toolCall"]["title"]).group(1)
    assert (tmp_path / "f.txt").read_text() == "hi\n"
    assert client.forms[0]["message"] == f"{label} asks: Which name?"
    assert client.forms[1]["message"] == "Ship it?"
    assert client.forms[1]["mode"]["requestedSchema"]["properties"]["q1"]["enum"] == ["yes", "later", question.ESCAPE]
    assert tool_messages(scripted_server.requests[-1])[-1] == question.CHOSE.format(choice="later")
    titles = [u["title"] for u in client.updates if u["sessionUpdate"] == "tool_call"]
    assert f"{label} · bash: echo hi > f.txt" in titles and f"{label} · ask_user: 1 question(s)" in titles


def test_resume_agent_in_a_second_mm_process(scripted_server, tmp_path):
    from mm_runs import agent_file, one_shot

    work = tmp_path / "work"
    work.mkdir()
    agent_file(work, AGENT_FILE)
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    scripted_server.add_tool_calls([call("spawn_agent", agent_type="plan", prompt="Plan the change.",
                                         run_in_background=False)])
    scripted_server.add_reply("Step 1: edit a.py.")
    scripted_server.add_reply("Planned.")
    first = one_shot(scripted_server, work, "plan it", env)
    assert first.returncode == 0, first.stderr
    found = re.search(r"agent_id '(plan-[0-9a-f]{6})'", tool_messages(scripted_server.requests[-1])[0]).group(1)
    scripted_server.add_tool_calls([call("resume_agent", agent_id=found, prompt="Add tests.")])  # in the background
    scripted_server.add_for("Plan the change.", {"reply": "Step 2: test a.py.", "delay": 0.2})
    scripted_server.add_reply("Waiting for the planner.")
    scripted_server.add_reply("Extended.")
    second = one_shot(scripted_server, work, "extend it", env)
    assert second.returncode == 0, second.stderr
    [child] = [r["messages"] for r in scripted_server.requests[3:] if r["messages"][1]["content"] == "Plan the change."]
    assert [m["content"] for m in child[1:3]] == ["Plan the change.", "Step 1: edit a.py."]
    assert child[3]["content"].endswith("Follow-up instruction:\nAdd tests.")
    assert "Step 2: test a.py." in scripted_server.requests[-1]["messages"][-1]["content"]
