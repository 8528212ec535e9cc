"""The `agents` group's sub-agents (mnemo-tools.md, Ask, plan, and delegate; notes/mnemoai.md
§2.10, §4.4; docs/subagents.md): spawn_agent and resume_agent through the real engine against the
scripted model server — the types and their tool sets, custom agents, every error text, the
foreground report, background reports, the concurrency limit, resuming after a restart, and the
depth limit resume_agent cannot get round."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from pathlib import Path

import pytest

from harness import RecordingUI, make_conversation
from test_tasks import call, work  # noqa: F401 - `work`: the fixture of a working folder
from mm.events import ToolCallDone, ToolCallStarted
from mm.tools.agents import relay, runs, spawn
from mm.tools.agents.types import EXPLORE_PROMPT, GENERAL_PROMPT, PLAN_PROMPT

AGENTS = {"toolsets": ["core", "agents"]}
NOTE = "\n\n(This result is not shown to the user — summarize what matters for them yourself.)"


@pytest.fixture(autouse=True)
def config_home(tmp_path, monkeypatch) -> Path:
    """The user's configuration folder (custom agents) under the test's own folder."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path / "config" / "mm"


@contextlib.asynccontextmanager
async def conversation(srv, cwd: Path, **config):
    conv = make_conversation(srv.base_url, cwd, AGENTS | config)
    try:
        yield conv
    finally:
        await conv.close()


def results(ui: RecordingUI, name: str) -> list[str]:
    return [e.result.text for e in ui.events if isinstance(e, ToolCallDone) and e.name == name]


def tool_names(request: dict) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools") or []]


def agent_id(text: str) -> str:
    return re.search(r"agent_id '([a-z0-9-]+)'|sub-agent '([a-z0-9-]+)'", text).group(1) or \
        re.search(r"sub-agent '([a-z0-9-]+)'", text).group(1)


async def foreground(srv, conv, agent_type: str, prompt: str, child: list[dict], ui=None) -> str:
    """A turn whose model spawns `agent_type` in the foreground, the sub-agent answering with the
    responses `child` (in add()'s form); returns spawn_agent's result."""
    srv.add_tool_calls([call("spawn_agent", agent_type=agent_type, prompt=prompt, run_in_background=False)])
    for response in child:
        srv.add(response)
    srv.add_reply("ok")
    ui = ui or RecordingUI()
    await conv.run_turn("go", ui)
    [text] = results(ui, "spawn_agent")
    return text


# ---------------------------------------------------------------------------------------------
# foreground runs and the types


async def test_a_foreground_run_returns_its_report(scripted_server, work):
    async with conversation(scripted_server, work) as conv:
        text = await foreground(scripted_server, conv, "general-purpose", "Count the files.",
                                [{"reply": "There are 3 files."}])
        [found] = re.findall(r"agent_id '(general-purpose-[0-9a-f]{6})'", text)
        assert text == ("[general-purpose sub-agent result]\nThere are 3 files." + NOTE +
                        spawn.AGENT_ID.format(id=found))
        child = scripted_server.requests[1]
        assert child["messages"][0]["content"] == GENERAL_PROMPT + f"\n\nWorking directory: {work}"
        assert child["messages"][1] == {"role": "user", "content": "Count the files."}
        assert len(child["messages"]) == 2  # isolated: nothing of the parent's conversation
        # the parent reads the report as the result, and its own history holds no sub-agent message
        assert conv.history[-2]["content"] == text
        assert not any(m.get("content") == "There are 3 files." for m in conv.history)


async def test_general_purpose_gets_the_parents_tools_but_never_the_agents_ones(scripted_server, work):
    async with conversation(scripted_server, work) as conv:
        await foreground(scripted_server, conv, "general-purpose", "x", [{"reply": "done"}])
        parent, child = tool_names(scripted_server.requests[0]), tool_names(scripted_server.requests[1])
        assert {"spawn_agent", "resume_agent", "ask_user_question"} <= set(parent)
        assert set(child) == set(parent) - {"spawn_agent", "resume_agent", "ask_user_question"}


@pytest.mark.parametrize("kind,prompt", [("explore", EXPLORE_PROMPT), ("plan", PLAN_PROMPT), ("EXPLORE", EXPLORE_PROMPT)])
async def test_explore_and_plan_are_read_only(scripted_server, work, kind, prompt):
    async with conversation(scripted_server, work, toolsets=["core", "files", "search", "commands", "agents"]) as conv:
        text = await foreground(scripted_server, conv, kind, "look", [{"reply": "seen"}])
        assert text.startswith(f"[{kind.lower()} sub-agent result]\nseen")
        child = scripted_server.requests[1]
        assert child["messages"][0]["content"].startswith(prompt)
        assert set(tool_names(child)) == {"read_file", "fs_read", "glob_search", "grep_search"}
    assert PLAN_PROMPT.endswith("List 3-5 files most critical for implementing this plan.")
    assert "READ-ONLY MODE" in EXPLORE_PROMPT


async def test_a_read_only_type_cannot_write_even_when_the_model_tries(scripted_server, work):
    async with conversation(scripted_server, work) as conv:
        text = await foreground(scripted_server, conv, "explore", "look", [
            {"tool_calls": [call("write_file", path="x.txt", content="no")]}, {"reply": "could not"}])
        assert not (work / "x.txt").exists()
        assert "there is no tool named \"write_file\"" in scripted_server.requests[2]["messages"][-1]["content"]
        assert "could not" in text


async def test_the_sub_agents_calls_stream_through_the_parents_display(scripted_server, work):
    (work / "a.txt").write_text("hello\n")
    ui = RecordingUI()
    async with conversation(scripted_server, work) as conv:
        await foreground(scripted_server, conv, "explore", "read a.txt",
                         [{"tool_calls": [call("read_file", path="a.txt")]}, {"reply": "it says hello"}], ui)
    started = [e for e in ui.events if isinstance(e, ToolCallStarted)]
    label = started[1].name
    assert re.fullmatch(r"explore-[0-9a-f]{6}", label)
    assert started[1].title == f"{label} · read_file: a.txt" and started[1].call_id.startswith(f"{label}/")
    assert started[1].kind == "read"
    done = [e for e in ui.done_calls() if e.name == label]
    assert len(done) == 1 and "hello" in done[0].result.text
    # the sub-agent's own text is not shown: only its report, as spawn_agent's result
    assert ui.text() == "ok"


async def test_a_sub_agent_s_unknown_or_refused_call_is_titled_with_its_tool(scripted_server, work):
    """An unknown tool's call has no ToolCallStarted: its ToolCallDone still says `<agent> · <tool>: …`,
    not `<agent>` and the arguments' JSON; ask_user_question shows its question."""
    ui = RecordingUI()
    async with conversation(scripted_server, work) as conv:
        await foreground(scripted_server, conv, "explore", "look", [
            {"tool_calls": [call("write_file", path="x.txt", content="no"),
                            call("ask_user_question", question="Which one?", options=["a", "b"])]},
            {"reply": "done"}], ui)
    done = [e for e in ui.done_calls() if e.name != "spawn_agent"]
    label = done[0].name
    assert [e.title for e in done] == [f"{label} · write_file: x.txt", f"{label} · ask_user_question: Which one?"]
    started = [e.title for e in ui.events if isinstance(e, ToolCallStarted) and e.name == label]
    assert started == [f"{label} · ask_user_question: Which one?"]


# ---------------------------------------------------------------------------------------------
# errors (notes §2.10)


async def test_the_error_texts(scripted_server, work):
    async with conversation(scripted_server, work) as conv:
        scripted_server.add_tool_calls([call("spawn_agent", agent_type="nope", prompt="x"),
                                        call("spawn_agent", agent_type="explore", prompt="  "),
                                        call("resume_agent", agent_id="explore-000000", prompt="more"),
                                        call("resume_agent", agent_id="explore-000000", prompt=" ")])
        scripted_server.add_reply("ok")
        ui = RecordingUI()
        await conv.run_turn("go", ui)
        assert [d.result.text for d in ui.done_calls()] == [
            "Unknown agent_type 'nope'. Available types: general-purpose, explore, plan.",
            "spawn_agent needs a non-empty prompt describing the task.",
            "Unknown agent_id 'explore-000000' (no live or persisted record). Known sub-agents this session: none.",
            "resume_agent needs a non-empty follow-up prompt.",
        ]
        assert len(scripted_server.requests) == 2  # no sub-agent ran


async def test_a_sub_agent_cannot_spawn_resume_or_ask_a_question(scripted_server, work):
    async with conversation(scripted_server, work) as conv:
        text = await foreground(scripted_server, conv, "general-purpose", "x", [
            {"tool_calls": [call("spawn_agent", agent_type="explore", prompt="deeper"),
                            call("resume_agent", agent_id="whatever", prompt="deeper"),
                            call("ask_user_question", question="Which?", options=["a", "b"])]},
            {"reply": "did it myself"}])
        answers = [m["content"] for m in scripted_server.requests[2]["messages"] if m["role"] == "tool"]
        assert answers == [relay.NESTED, relay.NESTED_RESUME, relay.IN_SUBAGENT]
        assert answers[0] == "A sub-agent cannot spawn its own sub-agents. Do the work directly with your tools."
        assert answers[2].startswith("You cannot ask the user a question here (you are a sub-agent with no direct user)")
        assert "did it myself" in text
        assert len(scripted_server.requests) == 4  # parent, child ×2, parent: nothing ran deeper


async def test_a_failing_sub_agent_is_an_error_result_and_the_turn_goes_on(scripted_server, work):
    async with conversation(scripted_server, work) as conv:
        scripted_server.add_tool_calls([call("spawn_agent", agent_type="explore", prompt="x",
                                             run_in_background=False)])
        scripted_server.add_json({"error": {"message": "boom"}}, status=500)
        scripted_server.add_reply("handled")
        ui = RecordingUI()
        done = await conv.run_turn("go", ui)
        [text] = results(ui, "spawn_agent")
        assert text.startswith("[explore sub-agent failed: ") and "boom" in text
        assert done.stop_reason == "end_turn" and ui.text() == "handled"


# ---------------------------------------------------------------------------------------------
# custom agents


def agent_file(folder: Path, name: str, text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(text)


async def test_a_custom_agent_its_prompt_tools_denials_and_model(scripted_server, work, config_home, capfd):
    agent_file(work / ".mm" / "agents", "Reviewer", "---\ndescription: reviews a diff\ntools: read_file, bash\n"
               "disallowed-tools: [bash]\nmodel: other-model\n---\nYou review code. Be terse.\n")
    agent_file(config_home / "agents", "broken", "no front matter here\n")
    agent_file(config_home / "agents", "nodesc", "---\nname: nodesc\n---\nbody\n")
    agent_file(config_home / "agents", "empty", "---\ndescription: x\n---\n\n")
    agent_file(config_home / "agents", "badyaml", "---\ndescription: [oops\n---\nbody\n")
    async with conversation(scripted_server, work) as conv:
        spawn_tool = conv.registry.get("spawn_agent")
        assert "- reviewer: reviews a diff (Tools: read_file)" in spawn_tool.description
        text = await foreground(scripted_server, conv, "Reviewer", "review", [{"reply": "LGTM"}])
        assert text.startswith("[reviewer sub-agent result]\nLGTM")
        child = scripted_server.requests[1]
        assert child["model"] == "other-model" and scripted_server.requests[2]["model"] == "m"
        assert child["messages"][0]["content"].startswith("You review code. Be terse.")
        assert set(tool_names(child)) == {"read_file"}  # fs_read is added only when declared
    err = capfd.readouterr().err
    for name, why in (("broken", "no front matter"), ("nodesc", "no description"), ("empty", "body"),
                      ("badyaml", "")):
        assert f"[agents: {config_home / 'agents' / name}.md skipped: " in err and why in err


async def test_a_project_agent_overrides_the_users_and_a_built_in(scripted_server, work, config_home):
    agent_file(config_home / "agents", "helper", "---\ndescription: the user's\n---\nUSER PROMPT\n")
    agent_file(work / ".mm" / "agents", "helper", "---\ndescription: the project's\n---\nPROJECT PROMPT\n")
    agent_file(work / ".mm" / "agents", "x", "---\nname: Explore\ndescription: mine\ndisallowed-tools: all\n---\nMINE\n")
    async with conversation(scripted_server, work) as conv:
        await foreground(scripted_server, conv, "helper", "x", [{"reply": "r"}])
        assert scripted_server.requests[1]["messages"][0]["content"].startswith("PROJECT PROMPT")
        await foreground(scripted_server, conv, "explore", "x", [{"reply": "r"}])
        assert scripted_server.requests[4]["messages"][0]["content"].startswith("MINE")
        assert tool_names(scripted_server.requests[4]) == []  # `all` denies everything


# ---------------------------------------------------------------------------------------------
# background runs, the concurrency limit


async def test_a_background_report_arrives_as_a_message_later(scripted_server, work):
    async with conversation(scripted_server, work) as conv:
        scripted_server.add_tool_calls([call("spawn_agent", agent_type="explore", prompt="BG-TASK look",
                                             description="the look")])
        scripted_server.add_for("BG-TASK", {"reply": "found it", "delay": 0.2})
        scripted_server.add_reply("carrying on")
        ui = RecordingUI()
        await conv.run_turn("go", ui)
        [started] = results(ui, "spawn_agent")
        found = re.fullmatch(r"Started background sub-agent '(explore-[0-9a-f]{6})' \(type: explore\)\. Its report "
                             r"will arrive as a message when it finishes\. Do not wait for it — carry on\.", started)
        assert found and ui.text() == "carrying on"
        runs = conv.registry.get("spawn_agent").runs
        while runs.busy():
            await asyncio.sleep(0.02)
        scripted_server.add_reply("thanks")
        await conv.run_turn("next", RecordingUI())
        report = (f"[mm: Your background sub-agent '{found.group(1)}' (explore, the look) finished while you were "
                  "working. Its report:\nfound it\n\nAddress this now: tell the user what matters, or carry on with it.]")
        last = scripted_server.requests[-1]["messages"]
        assert last[-2:] == [{"role": "user", "content": "next"}, {"role": "user", "content": report}]


async def test_a_background_run_cannot_ask_for_permission_and_says_why(scripted_server, work):
    async with conversation(scripted_server, work, yolo=False) as conv:
        scripted_server.add_tool_calls([call("spawn_agent", agent_type="general-purpose", prompt="BG write")])
        scripted_server.add_for("BG write", {"tool_calls": [call("write_file", path="w.txt", content="x")]})
        scripted_server.add_reply("started")
        ui = RecordingUI(["allow_once"])
        await conv.run_turn("go", ui)
        runs = conv.registry.get("spawn_agent").runs
        scripted_server.add_for("BG write", {"reply": "could not write"})
        while runs.busy():
            await asyncio.sleep(0.02)
        assert ui.asked == [] and not (work / "w.txt").exists()
        child = [r for r in scripted_server.requests if "BG write" in json.dumps(r["messages"][1])][-1]
        assert child["messages"][-1]["content"] == relay.HEADLESS_REFUSED.format(tool="write_file")


async def test_at_most_subagent_max_concurrency_run_at_once(scripted_server, work):
    async with conversation(scripted_server, work, subagentMaxConcurrency=2) as conv:
        conv.await_background = True  # as in `mm -p`
        scripted_server.add_tool_calls([call("spawn_agent", agent_type="explore", prompt=f"JOB-{i}")
                                        for i in range(5)])
        for i in range(5):
            scripted_server.add_for(f"JOB-{i}", {"reply": f"report {i}", "delay": 0.1})
        for _ in range(6):
            scripted_server.add_reply("waiting")
        ui = RecordingUI()
        done = await conv.run_turn("go", ui)
        assert done.stop_reason == "end_turn"
        assert scripted_server.most_routed_active == 2
        reports = [m["content"] for m in conv.history if m["role"] == "user" and "background sub-agent" in m["content"]]
        assert sorted(re.search(r"report (\d)", r).group(1) for r in reports) == ["0", "1", "2", "3", "4"]


async def test_in_one_shot_mode_the_turn_waits_for_the_background_report(scripted_server, work):
    async with conversation(scripted_server, work) as conv:
        conv.await_background = True
        scripted_server.add_tool_calls([call("spawn_agent", agent_type="explore", prompt="SLOW one")])
        scripted_server.add_for("SLOW one", {"reply": "slow report", "delay": 0.2})
        scripted_server.add_reply("I will wait")
        scripted_server.add_reply("The sub-agent says: slow report")
        ui = RecordingUI()
        done = await conv.run_turn("go", ui)
        assert done.stop_reason == "end_turn" and ui.text().endswith("The sub-agent says: slow report")
        assert "slow report" in scripted_server.requests[-1]["messages"][-1]["content"]


# ---------------------------------------------------------------------------------------------
# resume_agent, after a restart


async def test_resume_after_a_restart_keeps_the_sub_agents_own_history(scripted_server, work):
    async with conversation(scripted_server, work) as conv:
        text = await foreground(scripted_server, conv, "explore", "Find the config.", [{"reply": "It is in a.yaml."}])
        found = re.search(r"agent_id '([a-z0-9-]+)'", text).group(1)
    record = json.loads((work / ".mm" / "sessions" / "agents" / f"{found}.json").read_text())
    assert record["subagent"] == {"type": "explore", "description": "", "task": "Find the config.",
                                  "report": "It is in a.yaml.", "status": "finished"}
    async with conversation(scripted_server, work) as conv:  # a new mm: nothing of the first in memory
        scripted_server.add_tool_calls([call("resume_agent", agent_id=found, prompt="And its port?",
                                             run_in_background=False)])
        scripted_server.add_reply("Port 8080.")
        scripted_server.add_reply("ok")
        ui = RecordingUI()
        await conv.run_turn("go", ui)
        [result] = results(ui, "resume_agent")
        assert result.startswith("[explore sub-agent result]\nPort 8080.")
        child = scripted_server.requests[-2]["messages"]
        assert [m["content"] for m in child[1:3]] == ["Find the config.", "It is in a.yaml."]
        assert child[3]["content"] == ("You previously worked on this task:\nFind the config.\n\nYour prior report "
                                       "was:\nIt is in a.yaml.\n\nFollow-up instruction:\nAnd its port?")


async def test_resume_refuses_a_running_agent_and_a_type_that_is_gone(scripted_server, work):
    agent_file(work / ".mm" / "agents", "temp", "---\ndescription: temporary\n---\nTEMP\n")
    async with conversation(scripted_server, work) as conv:
        text = await foreground(scripted_server, conv, "temp", "x", [{"reply": "r"}])
        gone = re.search(r"agent_id '([a-z0-9-]+)'", text).group(1)
        scripted_server.add_tool_calls([call("spawn_agent", agent_type="explore", prompt="HOLD on")])
        scripted_server.add_for("HOLD on", {"reply": "held", "delay": 0.5})
        scripted_server.add_reply("ok")
        ui = RecordingUI()
        await conv.run_turn("go", ui)
        running = re.search(r"'([a-z0-9-]+)'", results(ui, "spawn_agent")[0]).group(1)
        scripted_server.add_tool_calls([call("resume_agent", agent_id=running, prompt="more")])
        scripted_server.add_reply("ok")
        ui = RecordingUI()
        await conv.run_turn("go", ui)
        assert results(ui, "resume_agent") == [spawn.STILL_RUNNING.format(id=running)]
        assert spawn.STILL_RUNNING.startswith(f"Sub-agent '{{id}}' is still running — wait for it to finish")
        runs = conv.registry.get("spawn_agent").runs
        while runs.busy():
            await asyncio.sleep(0.02)
    (work / ".mm" / "agents" / "temp.md").unlink()
    async with conversation(scripted_server, work) as conv:
        scripted_server.add_tool_calls([call("resume_agent", agent_id=gone, prompt="more")])
        scripted_server.add_reply("ok")
        ui = RecordingUI()
        await conv.run_turn("go", ui)
        assert results(ui, "resume_agent") == ["The 'temp' agent type no longer exists."]
        scripted_server.add_tool_calls([call("resume_agent", agent_id="nobody-123456", prompt="more")])
        scripted_server.add_reply("ok")
        ui = RecordingUI()
        await conv.run_turn("go", ui)
        assert results(ui, "resume_agent") == [
            f"Unknown agent_id 'nobody-123456' (no live or persisted record). Known sub-agents this session: {gone}."]


async def test_a_resumed_sub_agent_still_cannot_go_deeper(scripted_server, work):
    async with conversation(scripted_server, work) as conv:
        text = await foreground(scripted_server, conv, "general-purpose", "x", [{"reply": "r"}])
        found = re.search(r"agent_id '([a-z0-9-]+)'", text).group(1)
        scripted_server.add_tool_calls([call("resume_agent", agent_id=found, prompt="go deeper",
                                             run_in_background=False)])
        scripted_server.add_tool_calls([call("resume_agent", agent_id=found, prompt="myself"),
                                        call("spawn_agent", agent_type="plan", prompt="deeper")])
        scripted_server.add_reply("stayed")
        scripted_server.add_reply("ok")
        await conv.run_turn("go", RecordingUI())
        answers = [m["content"] for m in scripted_server.requests[-2]["messages"] if m["role"] == "tool"]
        assert answers == [relay.NESTED_RESUME, relay.NESTED]
        assert "resume_agent" not in tool_names(scripted_server.requests[-2])


async def test_records_are_kept_for_the_64_newest_runs(scripted_server, work):
    folder = work / ".mm" / "sessions" / "agents"
    folder.mkdir(parents=True)
    record = json.dumps({"version": 1, "messages": [], "subagent": {"type": "old"}})
    for i in range(70):
        (folder / f"old-{i:06x}.json").write_text(record)
    async with conversation(scripted_server, work) as conv:
        await foreground(scripted_server, conv, "explore", "x", [{"reply": "r"}])
    kept = list(folder.glob("*.json"))
    assert len(kept) == 64 and any(p.name.startswith("explore-") for p in kept)


async def test_pruning_deletes_only_records(scripted_server, work):
    """Past the 64 newest, a file of the user's is kept: not named as a record, not holding the
    record's key, not a regular file (a link to a file of the user's, a named pipe)."""
    import os
    import time

    folder = work / ".mm" / "sessions" / "agents"
    folder.mkdir(parents=True)
    users = work.parent / "users"
    users.mkdir()
    record = json.dumps({"version": 1, "messages": [], "subagent": {"type": "old"}})
    old = time.time() - 10_000
    own = {"data.json": record, "notes-00000g.json": record, "plain-000000.json": '{"user": 1}',
           "broken-000001.json": "{"}
    for name, text in own.items():
        (folder / name).write_text(text)
    (users / "linked.json").write_text(record)
    (folder / "linked-000002.json").symlink_to(users / "linked.json")
    os.mkfifo(folder / "fifo-000003.json")
    for i in range(70):
        (folder / f"old-{i:06x}.json").write_text(record)
    for path in folder.iterdir():
        os.utime(path, (old, old), follow_symlinks=False)
    async with conversation(scripted_server, work) as conv:
        await foreground(scripted_server, conv, "explore", "x", [{"reply": "r"}])
    left = {p.name for p in folder.iterdir()}
    assert set(own) | {"linked-000002.json", "fifo-000003.json"} <= left
    assert (users / "linked.json").read_text() == record
    assert len([n for n in left if n.startswith(("old-", "explore-"))]) == 64 - 2  # plain- and broken- count


async def test_a_symlinked_agents_folder_is_not_used(scripted_server, work, capfd):
    victim = work.parent / "victim"
    victim.mkdir()
    for i in range(70):
        (victim / f"data{i:02d}.json").write_text('{"user": %d}' % i)
        (victim / f"old-{i:06x}.json").write_text(json.dumps({"messages": [], "subagent": {"type": "x"}}))
    (work / ".mm" / "sessions").mkdir(parents=True)
    (work / ".mm" / "sessions" / "agents").symlink_to(victim)
    async with conversation(scripted_server, work) as conv:
        text = await foreground(scripted_server, conv, "explore", "x", [{"reply": "r"}])
        assert "agent_id" in text
    assert len(list(victim.iterdir())) == 140
    folder = work / ".mm" / "sessions" / "agents"
    assert runs.LINKED_FOLDER.format(folder=folder) in capfd.readouterr().err


async def test_a_failed_background_run_says_so_in_its_report(scripted_server, work):
    async with conversation(scripted_server, work) as conv:
        scripted_server.add_tool_calls([call("spawn_agent", agent_type="plan", prompt="BROKEN plan")])
        scripted_server.add_for("BROKEN plan", {"json": {"error": {"message": "the model crashed"}}, "status": 500})
        scripted_server.add_reply("started")
        await conv.run_turn("go", RecordingUI())
        runs = conv.registry.get("spawn_agent").runs
        while runs.busy():
            await asyncio.sleep(0.02)
        [report] = runs.take()
        found = re.fullmatch(r"\[mm: Your background sub-agent '(plan-[0-9a-f]{6})' \(plan\) failed while you were "
                             r"working\. Its report:\n\[error: (.+)\]\n\nAddress this now: tell the user what "
                             r"matters, or carry on with it\.\]", report, re.S)
        assert found and "the model crashed" in found.group(2)
        assert runs.find(found.group(1)).status == "failed"


async def test_the_types_are_listed_to_the_model(scripted_server, work):
    async with conversation(scripted_server, work, toolsets=["core", "search", "agents"]) as conv:
        description = conv.registry.get("spawn_agent").description
    assert description.endswith(
        "<available_subagents>\n"
        "- general-purpose: any multi-step task, with all your tools (Tools: all)\n"
        "- explore: find and read code (Tools: read-only)\n"
        "- plan: design an implementation plan (Tools: read-only)\n"
        "</available_subagents>")


async def test_a_tool_allowed_for_the_session_is_not_asked_again_in_a_sub_agent(scripted_server, work):
    async with conversation(scripted_server, work, yolo=False) as conv:
        scripted_server.add_tool_calls([call("bash", command="echo one > one.txt")])
        scripted_server.add_reply("ok")
        ui = RecordingUI(["allow_always"])
        await conv.run_turn("go", ui)
        await foreground(scripted_server, conv, "general-purpose", "two", [
            {"tool_calls": [call("bash", command="echo two > two.txt")]}, {"reply": "wrote two"}], ui)
        assert [name for name, _ in ui.asked] == ["bash"]  # asked once, for the parent
        assert (work / "two.txt").read_text() == "two\n"


async def test_a_foreground_sub_agent_asks_the_parents_user(scripted_server, work):
    async with conversation(scripted_server, work, yolo=False) as conv:
        ui = RecordingUI(["reject_once"])
        text = await foreground(scripted_server, conv, "general-purpose", "write", [
            {"tool_calls": [call("write_file", path="w.txt", content="x")]}, {"reply": "was refused"}], ui)
        [(name, arguments)] = ui.asked
        assert re.fullmatch(r"general-purpose-[0-9a-f]{6} asks", name) and arguments["path"] == "w.txt"
        assert not (work / "w.txt").exists() and "was refused" in text
        assert scripted_server.requests[2]["messages"][-1]["content"] == "[write_file rejected by the user]"


async def test_plan_mode_holds_a_general_purpose_sub_agent(scripted_server, work):
    """Issue 14 §1: in plan mode nothing writes, for sub-agents too (their conversation carries the
    parent's plan mode), and a sub-agent is never given exit_plan_mode to approve its parent's plan."""
    async with conversation(scripted_server, work, toolsets=["core", "agents", "plan"]) as conv:
        conv.set_plan_mode(True)
        text = await foreground(scripted_server, conv, "general-purpose", "write it", [
            {"tool_calls": [call("write_file", path="x.txt", content="no"),
                            call("bash", command=f"touch {work / 'ran'}")]}, {"reply": "refused"}])
        assert not (work / "x.txt").exists() and not (work / "ran").exists()
        assert "refused" in text
        assert "exit_plan_mode" in tool_names(scripted_server.requests[0])
        assert "exit_plan_mode" not in tool_names(scripted_server.requests[1])
        refusals = [m["content"] for m in scripted_server.requests[2]["messages"] if m.get("role") == "tool"]
        assert len(refusals) == 2 and all("plan mode" in r.lower() for r in refusals), refusals
